package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The documentation is README.md and the pages of docs/; these tests keep
// it true to the code: every flag, every route, every link. (The README's
// first session is TestREADMETour's.)

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text of doc under the heading whose text is title, up to
// the next heading of its level or above.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(#+) ` + regexp.QuoteMeta(title) + `\n`)
	m := re.FindStringSubmatchIndex(doc)
	if m == nil {
		t.Fatalf("no heading %q", title)
	}
	rest := doc[m[1]:]
	level := m[3] - m[2]
	end := regexp.MustCompile(`(?m)^#{1,` + string(rune('0'+level)) + `} `)
	for _, loc := range end.FindAllStringIndex(rest, -1) {
		if !inFence(rest[:loc[0]]) {
			return rest[:loc[0]]
		}
	}
	return rest
}

// inFence says whether text ends inside a fenced code block.
func inFence(text string) bool {
	return strings.Count("\n"+text, "\n```")%2 == 1
}

// TestDocsServeFlags: every flag of serve, as serverFlags defines them, is
// in docs/configuration.md's table with its environment variable.
func TestDocsServeFlags(t *testing.T) {
	doc := readDoc(t, "docs/configuration.md")
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	if _, err := serverFlags(fs, testEnv); err != nil {
		t.Fatal(err)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		env := "MAPCOMMONS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if !strings.Contains(doc, "| `--"+f.Name+"` | `"+env+"` |") {
			t.Errorf("docs/configuration.md has no row | `--%s` | `%s` | for serve's flag", f.Name, env)
		}
	})
	if n < 20 {
		t.Fatalf("serverFlags defines %d flags: is this the server's flag set?", n)
	}
}

// TestDocsImportFlags: every flag import --help lists is in the import
// section of docs/configuration.md.
func TestDocsImportFlags(t *testing.T) {
	doc := section(t, readDoc(t, "docs/configuration.md"), "mapcommons import")
	var errb bytes.Buffer
	if err := run(context.Background(), []string{"import", "--help"}, testEnv, nil, &bytes.Buffer{}, &errb); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("import --help: %v", err)
	}
	names := regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)\b`).FindAllStringSubmatch(errb.String(), -1)
	if len(names) < 5 {
		t.Fatalf("import --help lists %d flags:\n%s", len(names), errb.String())
	}
	for _, m := range names {
		if !strings.Contains(doc, "| `--"+m[1]+"` |") {
			t.Errorf("the import section of docs/configuration.md has no row for --%s", m[1])
		}
	}
}

// routesPage is the page whose route table lists the paths of an OpenAPI
// part: the OGC API's in ogc.md, the web application's pages in web.md,
// the GeoCommons API's (and the basemap's) in api.md.
func routesPage(part string) string {
	switch part {
	case "ogc.json":
		return "docs/ogc.md"
	case "web.json":
		return "docs/web.md"
	}
	return "docs/api.md"
}

// TestDocsRoutes: every path of the OpenAPI document the server serves at
// /api (api/openapi/*.json) has a row in the route table of its page, as
// the document writes it and with its methods; and every row of those
// tables is a path of the document.
func TestDocsRoutes(t *testing.T) {
	parts, err := filepath.Glob("../../api/openapi/*.json")
	if err != nil || len(parts) == 0 {
		t.Fatalf("no OpenAPI parts: %v", err)
	}
	documented := map[string]map[string]bool{} // page → paths of its table
	described := map[string]bool{}
	for _, part := range parts {
		b, err := os.ReadFile(part)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", part, err)
		}
		page := routesPage(filepath.Base(part))
		if documented[page] == nil {
			table := section(t, readDoc(t, page), "Routes")
			documented[page] = map[string]bool{}
			for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(table, -1) {
				documented[page][m[1]] = true
			}
		}
		table := section(t, readDoc(t, page), "Routes")
		for path, item := range doc.Paths {
			described[path] = true
			start := "\n| `" + path + "` |"
			i := strings.Index(table, start)
			if i < 0 {
				t.Errorf("%s: the route table has no row for %s (%s)", page, path, filepath.Base(part))
				continue
			}
			row, _, _ := strings.Cut(table[i+len(start):], "\n")
			methods, _, _ := strings.Cut(strings.TrimSpace(row), "|")
			var want []string
			for m := range item {
				switch m {
				case "get", "put", "post", "delete", "patch", "head", "options":
					want = append(want, strings.ToUpper(m))
				}
			}
			slices.Sort(want)
			got := strings.Split(strings.ReplaceAll(strings.TrimSpace(methods), " ", ""), ",")
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: the row of %s says %v, the document %v", page, path, got, want)
			}
		}
	}
	for page, paths := range documented {
		for p := range paths {
			if p != "path" && !described[p] {
				t.Errorf("%s: the route table lists %s, which the OpenAPI document does not", page, p)
			}
		}
	}
}

// TestDocsLinks: every relative link of the README and of docs/ names a
// file that exists and, with a #fragment, a heading of it; and the README
// links every page of docs/.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, name := range files {
		doc := readDoc(t, name)
		for _, m := range link.FindAllStringSubmatchIndex(doc, -1) {
			if inFence(doc[:m[0]]) {
				continue
			}
			target := doc[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.Join(filepath.Dir(name), file)
			}
			if _, err := os.Stat(filepath.Join("../..", path)); err != nil {
				t.Errorf("%s: the link %s names no file (%s)", name, target, path)
				continue
			}
			if frag != "" && !slices.Contains(headingSlugs(readDoc(t, path)), frag) {
				t.Errorf("%s: the link %s names no heading of %s", name, target, path)
			}
		}
	}
	readme := readDoc(t, "README.md")
	for _, p := range pages {
		if !strings.Contains(readme, "](docs/"+filepath.Base(p)+")") {
			t.Errorf("the README does not link docs/%s", filepath.Base(p))
		}
	}
}

// headingSlugs are the anchors GitHub gives the headings of doc: lower
// case, spaces as hyphens, punctuation other than - and _ left out.
func headingSlugs(doc string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatchIndex(doc, -1) {
		if inFence(doc[:m[0]]) {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(doc[m[2]:m[3]]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestDocsLayering: the rules docs/design.md states hold: the domain at
// the root does no I/O and imports of the module only the geometry
// encoding, and api reaches no store, however indirectly.
func TestDocsLayering(t *testing.T) {
	imports := func(pkg string) []string {
		t.Helper()
		dir := filepath.Join("../..", strings.TrimPrefix(strings.TrimPrefix(pkg, "mapcommons"), "/"))
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		return p.Imports
	}
	for _, imp := range imports("mapcommons") {
		if strings.HasPrefix(imp, "mapcommons/") && imp != "mapcommons/format/wkb" {
			t.Errorf("the domain (package mapcommons) imports %s", imp)
		}
		switch imp {
		case "os", "os/exec", "net/http", "database/sql", "io/fs":
			t.Errorf("the domain (package mapcommons) imports %s: it does no I/O", imp)
		}
	}
	seen := map[string]bool{}
	var walk func(pkg string, via []string)
	walk = func(pkg string, via []string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, imp := range imports(pkg) {
			if imp == "mapcommons/sqlite" || imp == "mapcommons/postgres" {
				t.Errorf("api reaches the store %s: %s", imp, strings.Join(append(via, pkg, imp), " → "))
			}
			if strings.HasPrefix(imp, "mapcommons/") {
				walk(imp, append(via, pkg))
			}
		}
	}
	walk("mapcommons/api", nil)
	if len(seen) < 5 {
		t.Fatalf("api imports %d packages of the module: the walk went wrong", len(seen))
	}
	if seen["mapcommons/segment"] {
		t.Error("api reaches the embedded engine, mapcommons/segment")
	}
	// api holds HTTP work: each of its files uses net/http, but for the
	// small helpers it alone uses.
	helpers := map[string]bool{"accesslog.go": true, "geojsonbody.go": true}
	apiFiles, err := filepath.Glob("../../api/*.go")
	if err != nil || len(apiFiles) < 20 {
		t.Fatalf("api's files: %d, %v", len(apiFiles), err)
	}
	for _, f := range apiFiles {
		if strings.HasSuffix(f, "_test.go") || helpers[filepath.Base(f)] {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"net/http"`) {
			t.Errorf("%s does no HTTP work: it belongs in a package of its own (docs/design.md)", f)
		}
	}
	// Only the embedded store reads segments: every other package of the
	// module finds the rules of features in mapcommons/feature, and the
	// PostgreSQL store's local copies are segments by the
	// mapcommons.LocalCopies the command gives it. (The command wires the
	// stores, so it may name segment.Copies.)
	var dirs []string
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		rel, _ := filepath.Rel("../..", dir)
		pkg := path.Join("mapcommons", filepath.ToSlash(rel))
		if pkg == "mapcommons/segment" || pkg == "mapcommons/sqlite" || pkg == "mapcommons/cmd/mapcommons" {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"mapcommons/segment"`) {
				t.Errorf("%s imports mapcommons/segment: only the embedded store reads segments", f)
			}
		}
	}
}
