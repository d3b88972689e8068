package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format"
)

// pathParam matches a path template's parameters: the route check compares
// paths with their parameters unnamed ({id} and {collectionId} are alike).
var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// A pattern's {$} (the home page's "/{$}") is the document's bare path.
func unnamed(path string) string {
	return pathParam.ReplaceAllString(strings.ReplaceAll(path, "{$}", ""), "{}")
}

// documentOperations lists the document's operations as "METHOD /path"
// (parameters unnamed), each once.
func documentOperations(t *testing.T, doc *openAPIDocument) []string {
	t.Helper()
	var ops []string
	for p, raw := range doc.Paths {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(raw, &item); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for m := range item {
			if slices.Contains(openAPIMethods, m) {
				ops = append(ops, strings.ToUpper(m)+" "+unnamed(p))
			}
		}
	}
	sort.Strings(ops)
	return ops
}

// TestOpenAPIDescribesEveryRoute checks the served document against the
// patterns routes() registered, exactly and both ways: every route with a
// method is an operation of the document and every operation a route.
// Patterns without a method (the 405 answers, "/") are not operations;
// each described GeoCommons path must have its 405 pattern.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), Config{}, mapcommons.Services{})
	doc, err := servedOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	methodless := map[string]bool{}
	for _, p := range s.patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			methodless[unnamed(p)] = true
			continue
		}
		routes = append(routes, method+" "+unnamed(path))
	}
	sort.Strings(routes)
	if len(routes) < 30 {
		t.Fatalf("only %d routes recorded: %v", len(routes), routes)
	}
	ops := documentOperations(t, doc)
	for _, r := range routes {
		if !slices.Contains(ops, r) {
			t.Errorf("route %s is not in the OpenAPI document", r)
		}
	}
	for _, o := range ops {
		if !slices.Contains(routes, o) {
			t.Errorf("the OpenAPI document describes %s, which is no route", o)
		}
	}
	base, err := loadOpenAPI(openAPIBase)
	if err != nil {
		t.Fatal(err)
	}
	for p := range base.Paths {
		if !methodless[unnamed(p)] {
			t.Errorf("%s has no 405 pattern for the other methods (routes.go)", p)
		}
	}
}

// TestOpenAPIParts checks the parts: they merge, the OGC part holds the
// /ogc paths and the WMS's /wms and only them, the basemap part the /basemap ones, every reference resolves, operation ids are
// unique, and the formats the GeoCommons operations name are suffixes the
// server knows.
func TestOpenAPIParts(t *testing.T) {
	t.Parallel()
	if _, err := loadOpenAPI(openAPIBase, openAPIBase); err == nil || !strings.Contains(err.Error(), "only tags, paths and components") {
		t.Errorf("merging the base twice: %v", err)
	}
	base, err := loadOpenAPI(openAPIBase)
	if err != nil {
		t.Fatal(err)
	}
	full, err := loadOpenAPI(openAPIBase, openAPIOGC, openAPIBasemap)
	if err != nil {
		t.Fatal(err)
	}
	var ogcPaths int
	for p := range full.Paths {
		_, inBase := base.Paths[p]
		if p == "/basemaps" || strings.HasPrefix(p, "/basemap/") {
			// The basemap part's paths.
			if inBase {
				t.Errorf("%s: in the base part", p)
			}
			continue
		}
		if p == "/wms" { // the WMS, an OGC service outside the OGC API
			if inBase {
				t.Errorf("%s: in the base part", p)
			}
			continue
		}
		if isOGC := p == "/ogc" || strings.HasPrefix(p, "/ogc/"); isOGC == inBase {
			t.Errorf("%s: in the base part %v", p, inBase)
		} else if isOGC {
			ogcPaths++
		}
	}
	if ogcPaths != 20 { // 15, the map and its three tile paths, the styled map
		t.Errorf("%d OGC paths, want 20", ogcPaths)
	}
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var walk func(v any, where string)
	walk = func(v any, where string) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				var target any
				if err := full.resolve(ref, &target); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
			if id, ok := v["operationId"].(string); ok {
				if ids[id] {
					t.Errorf("operationId %s twice", id)
				}
				ids[id] = true
			}
			if fs, ok := v["x-formats"].([]any); ok && !strings.Contains(where, "/ogc") {
				for _, f := range fs {
					if _, known := format.ContentType(f.(string)); !known {
						t.Errorf("%s: format %v is no suffix normalizePath strips", where, f)
					}
				}
			}
			for k, x := range v {
				walk(x, where+"/"+k)
			}
		case []any:
			for _, x := range v {
				walk(x, where)
			}
		}
	}
	walk(tree, "")
	if len(ids) < 45 {
		t.Errorf("%d operation ids", len(ids))
	}
	// The HTML view reads every operation, parameter and response.
	v, err := full.view()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Paths) != len(full.Paths) {
		t.Errorf("view of %d paths, want %d", len(v.Paths), len(full.Paths))
	}
}

// TestOpenAPILint runs an independent validator, Redocly's CLI from npm
// (package.json), on the served document and on the document with the OGC
// part, with redocly.yaml (the recommended rules, warnings as errors). It
// skips without node_modules unless MAPCOMMONS_REQUIRE_NPM=1 (CI).
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	redocly := filepath.Join(root, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(redocly); err != nil {
		if os.Getenv("MAPCOMMONS_REQUIRE_NPM") == "1" {
			t.Fatalf("%s is missing (npm ci) and MAPCOMMONS_REQUIRE_NPM=1", redocly)
		}
		t.Skipf("%s is missing: run npm ci", redocly)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed but node_modules is: %v", err)
	}
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), Config{BaseURL: "https://maps.example.org"}, mapcommons.Services{})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/api", nil))
	if w.Code != 200 {
		t.Fatalf("GET /api: %d %s", w.Code, w.Body)
	}
	full, err := loadOpenAPI(openAPIBase, openAPIOGC, openAPIBasemap)
	if err != nil {
		t.Fatal(err)
	}
	withOGC, err := json.Marshal(s.openAPIFor(httptest.NewRequest("GET", "/api", nil), full))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"served.json": w.Body.Bytes(), "with-ogc.json": withOGC} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, redocly, "lint", "--config", filepath.Join(root, "redocly.yaml"), "--format=stylish", file)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("redocly lint %s: %v\n%s", name, err, out)
		} else if !strings.Contains(string(out), "valid") {
			t.Errorf("redocly lint %s said nothing of validity:\n%s", name, out)
		}
	}
}

func TestAcceptQ(t *testing.T) {
	t.Parallel()
	browser := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, c := range []struct {
		header, media string
		want          float64
	}{
		{browser, "text/html", 1}, {browser, "application/json", 0.8}, {"*/*", "text/html", 1},
		{"application/json, text/*;q=0.3", "text/html", 0.3}, {"text/html;q=0, */*", "text/html", 0},
		{"application/json", "text/html", 0}, {"", "application/json", 0}, {"text/html;q=x", "text/html", 0},
	} {
		if got := acceptQ(c.header, c.media); got != c.want {
			t.Errorf("acceptQ(%q, %s) = %v, want %v", c.header, c.media, got, c.want)
		}
	}
}

// TestOpenAPIUploads checks the upload body of POST /datasets against the
// format registry, exactly both ways: its raw content types are the ones
// format.BodyKind reads, and its multipart file parts dataset[<ext>] the
// extensions format knows.
func TestOpenAPIUploads(t *testing.T) {
	t.Parallel()
	doc, err := loadOpenAPI(openAPIBase)
	if err != nil {
		t.Fatal(err)
	}
	var item struct {
		Post struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]struct{ Format string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(doc.Paths["/datasets"], &item); err != nil {
		t.Fatal(err)
	}
	content := item.Post.RequestBody.Content
	var raw []string
	for ct := range content {
		switch ct {
		case "multipart/form-data", "application/x-www-form-urlencoded", "application/json":
		default:
			raw = append(raw, ct)
		}
	}
	sort.Strings(raw)
	if want := format.BodyTypes(); !slices.Equal(raw, want) {
		t.Errorf("raw upload types\n%v, the server reads\n%v", raw, want)
	}
	var parts []string
	for name, p := range content["multipart/form-data"].Schema.Properties {
		if ext, ok := strings.CutPrefix(name, "dataset["); ok {
			parts = append(parts, strings.TrimSuffix(ext, "]"))
			if p.Format != "binary" {
				t.Errorf("%s is not a file", name)
			}
		}
	}
	sort.Strings(parts)
	if want := format.PartExtensions(); !slices.Equal(parts, want) {
		t.Errorf("upload parts\n%v, the server reads\n%v", parts, want)
	}
}

// TestOpenAPIErrors checks the document's errors against the one error
// table (error.go): the codes of the Error body are its codes, and every
// error answer an operation lists under a status is that of its code
// (x-code).
func TestOpenAPIErrors(t *testing.T) {
	t.Parallel()
	doc, err := loadOpenAPI(openAPIBase, openAPIOGC, openAPIBasemap)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct{ Code struct{ Enum []string } }
	}
	if err := json.Unmarshal(doc.Components["schemas"]["Error"], &schema); err != nil {
		t.Fatal(err)
	}
	codes := schema.Properties.Code.Enum
	sort.Strings(codes)
	if want := sortedKeys(codeStatus); !slices.Equal(codes, want) {
		t.Errorf("error codes\n%v, error.go has\n%v", codes, want)
	}
	checked := 0
	for p, raw := range doc.Paths {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(raw, &item); err != nil {
			t.Fatal(err)
		}
		for _, m := range openAPIMethods {
			var op struct{ Responses map[string]openAPIRef }
			if item[m] == nil {
				continue
			}
			if err := json.Unmarshal(item[m], &op); err != nil {
				t.Fatal(err)
			}
			for status, ref := range op.Responses {
				if ref.Ref == "" || status == "default" {
					continue
				}
				var rsp struct {
					Code string `json:"x-code"`
				}
				if err := doc.resolve(ref.Ref, &rsp); err != nil {
					t.Fatal(err)
				}
				if got := strconv.Itoa(codeStatus[rsp.Code]); got != status {
					t.Errorf("%s %s: %s answers %s (code %q is %s)", m, p, status, ref.Ref, rsp.Code, got)
				}
				checked++
			}
		}
	}
	if checked < 200 {
		t.Errorf("%d error answers checked", checked)
	}
}

func TestInlineMarkdown(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"`a<b>` and **c&d**": "<code>a&lt;b&gt;</code> and <strong>c&amp;d</strong>",
		"odd ` tick <x>":     "odd ` tick &lt;x&gt;",
		"`**not bold**`":     "<code>**not bold**</code>",
		"a ** b":             "a ** b",
	} {
		if got := string(inlineMarkdown(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
