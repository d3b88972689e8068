package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestSetupTokenMatches: only the token itself matches, and the check
// compares in constant time: setupState.matches calls
// crypto/subtle.ConstantTimeCompare on digests of one length and compares
// nothing itself (no == or != but on the comparison's result), so that how
// long a wrong token takes says nothing of how much of it was right.
func TestSetupTokenMatches(t *testing.T) {
	tok := NewSetupToken()
	if len(tok) < 22 || tok == NewSetupToken() {
		t.Fatalf("tokens %q: shorter than 128 bits, or not random", tok)
	}
	st := newSetupState(tok)
	if !st.matches(tok) {
		t.Fatal("the token does not match itself")
	}
	for _, wrong := range []string{"", tok[:len(tok)-1], tok + "A", "!" + tok[1:], tok[:len(tok)-1] + "!", string(make([]byte, len(tok)))} {
		if st.matches(wrong) {
			t.Errorf("%q matches %q", wrong, tok)
		}
	}
	if newSetupState("") != nil {
		t.Error("no token, yet a set-up link")
	}

	f, err := parser.ParseFile(token.NewFileSet(), "setup.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Name.Name == "matches" {
			fn = d
		}
	}
	if fn == nil {
		t.Fatal("no setupState.matches in setup.go")
	}
	subtle := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ConstantTimeCompare" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "subtle" {
					subtle = true
				}
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				if _, isCall := n.X.(*ast.CallExpr); !isCall {
					t.Errorf("setupState.matches compares with %s outside subtle.ConstantTimeCompare", n.Op)
				}
			}
		}
		return true
	})
	if !subtle {
		t.Error("setupState.matches does not compare with subtle.ConstantTimeCompare")
	}
	// And the handler checks the token through matches alone.
	ast.Inspect(f, func(n ast.Node) bool {
		if n, ok := n.(*ast.BinaryExpr); ok && (n.Op == token.EQL || n.Op == token.NEQ) {
			for _, side := range []ast.Expr{n.X, n.Y} {
				if id, ok := side.(*ast.Ident); ok && (id.Name == "given" || id.Name == "token") {
					if lit, ok := (map[bool]ast.Expr{true: n.Y, false: n.X})[side == n.X].(*ast.BasicLit); !ok || lit.Value != `""` {
						t.Errorf("setup.go compares the token with %s", n.Op)
					}
				}
			}
		}
		return true
	})
}
