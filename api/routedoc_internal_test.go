package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// handlerRoutes reads the api package's source: for each handler method
// (s.handleX) that a route table registers, the patterns it is
// registered for ("GET /datasets/{id}"), and the doc comment of its
// declaration.
func handlerRoutes(t *testing.T) (routes map[string][]string, docs map[string]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	routes, docs = map[string][]string{}, map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fn.Recv != nil && strings.HasPrefix(fn.Name.Name, "handle") {
				docs[fn.Name.Name] = fn.Doc.Text()
			}
			if fn.Body == nil {
				continue
			}
			// The strings a pattern is made of: literals, and the local
			// variables assigned from them (coll := "/ogc/…").
			locals := map[string]string{}
			var eval func(e ast.Expr) (string, bool)
			eval = func(e ast.Expr) (string, bool) {
				switch e := e.(type) {
				case *ast.BasicLit:
					if e.Kind == token.STRING {
						s, err := strconv.Unquote(e.Value)
						return s, err == nil
					}
				case *ast.Ident:
					s, ok := locals[e.Name]
					return s, ok
				case *ast.BinaryExpr:
					a, ok1 := eval(e.X)
					b, ok2 := eval(e.Y)
					return a + b, ok1 && ok2 && e.Op == token.ADD
				}
				return "", false
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
					if id, ok := as.Lhs[0].(*ast.Ident); ok {
						if s, ok := eval(as.Rhs[0]); ok {
							locals[id.Name] = s
						}
					}
				}
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Handle" {
					return true
				}
				pattern, ok := eval(call.Args[0])
				if !ok {
					return true
				}
				ast.Inspect(call.Args[1], func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "handle") && sel.Sel.Name != "handle" {
						if !slices.Contains(routes[sel.Sel.Name], pattern) {
							routes[sel.Sel.Name] = append(routes[sel.Sel.Name], pattern)
						}
					}
					return true
				})
				return true
			})
		}
	}
	return routes, docs
}

// TestHandlersNameTheirRoutes: the doc comment of every handler names
// each route it answers, as the route table registers it, so that one
// reading a handler knows what it serves.
func TestHandlersNameTheirRoutes(t *testing.T) {
	routes, docs := handlerRoutes(t)
	if len(routes) < 50 {
		t.Fatalf("found the routes of %d handlers: the reading of the route tables went wrong", len(routes))
	}
	for h, patterns := range routes {
		doc, ok := docs[h]
		if !ok {
			t.Errorf("%s is registered but not declared as a method", h)
			continue
		}
		flat := strings.Join(strings.Fields(doc), " ")
		for _, p := range patterns {
			if !strings.Contains(flat, p) {
				t.Errorf("%s's comment does not name its route %s", h, p)
			}
		}
	}
}
