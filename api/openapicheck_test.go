package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"mapcommons/api"
)

// Every answer the tests receive through testServer.doBody is checked
// against the OpenAPI document the server serves (checkOpenAPI): the
// request is looked up among the document's operations as the server's
// routes would see it (normalizePath), its status must be one the
// operation lists (a success explicitly, an error at least by the
// operation's default), its Content-Type one that status describes, its
// documented headers must match, and a JSON body must match the schema.

// openAPIBodyLimit is the largest body whose content is validated: a larger
// one (a big download, a stress test's page) is checked for its status and
// Content-Type only, which keeps the cost of the check small under -race.
const openAPIBodyLimit = 2 << 20

// openAPIChecker validates answers against one document.
type openAPIChecker struct {
	router routers.Router
	valid  sync.Map // bodies found valid: operation, status, type and body hash
}

// servedChecker is the checker of the served document, built once per test
// binary.
var servedChecker = sync.OnceValues(func() (*openAPIChecker, error) {
	b, err := api.OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	return newOpenAPIChecker(b)
})

func init() {
	// A body of any other type (CSV, KML, HTML, a zip) is read as a string
	// for the schemas that describe it as one; +json types fall back to the
	// JSON decoder on their own.
	openapi3filter.RegisterBodyDecoder("*/*", openapi3filter.PlainBodyDecoder)
}

// newOpenAPIChecker loads a document (JSON) and routes its operations by
// path alone (the document's servers are this server's address).
func newOpenAPIChecker(doc []byte) (*openAPIChecker, error) {
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	d.Servers = nil
	router, err := legacy.NewRouter(d)
	if err != nil {
		return nil, err
	}
	return &openAPIChecker{router: router}, nil
}

// openAPIUndocumented are the answers the document deliberately does not
// describe: requests to a path or with a method no operation of it has,
// answered as the server is meant to answer them. Anything else the
// document does not describe is an error.
var openAPIUndocumented = []struct {
	why string
	ok  func(r req, u *url.URL, status int, described bool) bool
}{
	{"a path no route serves: routes.go's catch-all \"/\" answers 404 not_found",
		func(r req, u *url.URL, status int, described bool) bool {
			return !described && status == http.StatusNotFound
		}},
	{"another method on a described path: routes.go's methodless patterns (and net/http's) answer 405 method_not_allowed",
		func(r req, u *url.URL, status int, described bool) bool {
			return described && status == http.StatusMethodNotAllowed
		}},
	{"a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method): answered before routing, on every path",
		func(r req, u *url.URL, status int, described bool) bool {
			return r.method == http.MethodOptions && r.header["Origin"] != "" && r.header["Access-Control-Request-Method"] != ""
		}},
	{"an empty path (a test's \"\" + \".html\" names another host): net/http's ServeMux redirects it to /",
		func(r req, u *url.URL, status int, described bool) bool {
			return u.Path == "" && status == http.StatusTemporaryRedirect
		}},
}

// describes reports whether the document has an operation on path, with
// any method.
func (c *openAPIChecker) describes(path string) bool {
	for _, m := range []string{"GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "TRACE"} {
		if _, _, err := c.router.FindRoute(&http.Request{Method: m, URL: &url.URL{Path: path}}); err == nil {
			return true
		}
	}
	return false
}

// check validates the answer w to r. Its error names what is wrong, not the
// request: the caller does.
func (c *openAPIChecker) check(r req, w *httptest.ResponseRecorder) error {
	u, err := url.Parse(base + r.path) // as doBody's request has it
	if err != nil {
		return err
	}
	path, _ := api.NormalizePath(u.Path)
	method := r.method
	if method == http.MethodHead { // a GET route answers HEAD (net/http)
		method = http.MethodGet
	}
	hr := &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: u.RawQuery}, Header: http.Header{}}
	route, params, err := c.router.FindRoute(hr)
	if u.Path == "" {
		route = nil // not a path the server routes: it redirects
	}
	if route == nil {
		described := c.describes(path)
		for _, a := range openAPIUndocumented {
			if a.ok(r, u, w.Code, described) {
				return nil
			}
		}
		if !described {
			return fmt.Errorf("%s is no path of the document", path)
		}
		return fmt.Errorf("the document describes no %s on %s", method, path)
	}
	responses := route.Operation.Responses
	described := responses.Status(w.Code)
	if described == nil && (w.Code < 400 || responses.Default() == nil) {
		return fmt.Errorf("status %d is not documented for %s %s", w.Code, method, route.Path)
	}
	if r.method == http.MethodHead {
		return nil // no body to check
	}
	body := w.Body.Bytes()
	header := w.Header().Clone()
	skipBody := len(body) > openAPIBodyLimit
	switch enc := strings.ToLower(header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		if !skipBody {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				return fmt.Errorf("Content-Encoding gzip: %v", err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				return fmt.Errorf("Content-Encoding gzip: %v", err)
			}
			skipBody = len(body) > openAPIBodyLimit
		}
	default:
		skipBody = true
	}
	// The same body of the same operation, status and type was valid
	// before (the access matrix asks the same question of every role):
	// its schema is not walked again.
	key := ""
	if !skipBody {
		sum := sha256.Sum256(body)
		key = fmt.Sprintf("%s %s %d %s %x", method, route.Path, w.Code, header.Get("Content-Type"), sum)
		if _, ok := c.valid.Load(key); ok {
			skipBody = true
		}
	}
	if skipBody && described != nil && described.Value != nil && len(described.Value.Content) > 0 {
		// ValidateResponse does not look at the Content-Type when it
		// leaves the body out.
		if ct := header.Get("Content-Type"); described.Value.Content.Get(ct) == nil {
			return fmt.Errorf("Content-Type %q is not one the document gives status %d", ct, w.Code)
		}
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
		Status:                 w.Code,
		Header:                 header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   skipBody,
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{
				openapi3.DisableSchemaErrorDetails(),
			},
		},
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return err
	}
	if key != "" {
		c.valid.Store(key, struct{}{})
	}
	return nil
}

// checkOpenAPI validates an answer the tests received against the served
// document, failing ts's test with the request, the status and what is
// wrong.
func (ts *testServer) checkOpenAPI(r req, w *httptest.ResponseRecorder) {
	ts.t.Helper()
	c, err := ts.openAPI, error(nil)
	if c == nil {
		c, err = servedChecker()
	}
	if err != nil {
		ts.t.Errorf("OpenAPI document: %v", err)
		return
	}
	if err := c.check(r, w); err != nil {
		body := w.Body.String()
		if w.Header().Get("Content-Encoding") != "" {
			body = "(" + w.Header().Get("Content-Encoding") + ")"
		}
		if len(body) > 300 {
			body = body[:300] + "…"
		}
		ts.t.Errorf("OpenAPI: %s %s answered %d (%s): %v; body: %s", r.method, r.path, w.Code, w.Header().Get("Content-Type"), err, body)
	}
}

// recordTB is a testing.TB that keeps what is reported as an error.
type recordTB struct {
	testing.TB
	errs []string
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestOpenAPIResponseCheck checks the check: the served document passes
// the server's answers, and a document changed to be wrong about them
// fails them, through the request helper, with the request, the status and
// what is wrong.
func TestOpenAPIResponseCheck(t *testing.T) {
	t.Parallel()
	served, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t)
	csv := "name,lat,lon,pop\n"
	for i := range 200 { // enough for the features to be compressed
		csv += fmt.Sprintf("town %d,%d,%d,%d\n", i, i%80, i%170, i)
	}
	ds := ts.createCSV("?title=towns", csv)
	schemas := func(d map[string]any) map[string]any {
		return d["components"].(map[string]any)["schemas"].(map[string]any)
	}
	operation := func(d map[string]any, path, method string) map[string]any {
		return d["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
	}
	health200 := func(d map[string]any) map[string]any {
		return operation(d, "/healthz", "get")["responses"].(map[string]any)["200"].(map[string]any)
	}
	gzipped := map[string]string{"Accept-Encoding": "gzip"}
	for _, c := range []struct {
		name   string
		r      req
		mutate func(d map[string]any)
		says   string
	}{
		{"a property the answer lacks is required", req{method: "GET", path: "/healthz"}, func(d map[string]any) {
			schema := health200(d)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			schema["required"] = []any{"status", "uptime"}
		}, `property "uptime" is missing`},
		{"a property of another type", req{method: "GET", path: ds + ".json"}, func(d map[string]any) {
			schemas(d)["Dataset"].(map[string]any)["properties"].(map[string]any)["title"] = map[string]any{"type": "integer"}
		}, `Error at "/title"`},
		{"a compressed answer is read", req{method: "GET", path: ds + "/features.json", header: gzipped}, func(d map[string]any) {
			schemas(d)["FlatFeature"].(map[string]any)["required"] = []any{"nothing"}
		}, `doesn't match any schema from "anyOf"`},
		{"a status the operation does not list", req{method: "GET", path: "/healthz"}, func(d map[string]any) {
			delete(operation(d, "/healthz", "get")["responses"].(map[string]any), "200")
		}, "status 200 is not documented"},
		{"an error status only the default covers passes, a success does not", req{method: "GET", path: "/ramps"}, func(d map[string]any) {
			delete(operation(d, "/ramps", "get")["responses"].(map[string]any), "200")
		}, "status 200 is not documented"},
		{"a Content-Type the status does not give", req{method: "GET", path: "/healthz"}, func(d map[string]any) {
			content := health200(d)["content"].(map[string]any)
			content["application/xml"] = content["application/json"]
			delete(content, "application/json")
		}, `unexpected value: "application/json; charset=utf-8"`},
		{"a header that does not match", req{method: "GET", path: ds + ".json"}, func(d map[string]any) {
			d["components"].(map[string]any)["headers"].(map[string]any)["ETag"] = map[string]any{"schema": map[string]any{"type": "string", "pattern": "^x$"}}
		}, `response header "ETag" doesn't match`},
		{"a path the document does not describe", req{method: "GET", path: "/healthz"}, func(d map[string]any) {
			delete(d["paths"].(map[string]any), "/healthz")
		}, "/healthz is no path of the document"},
		{"a method the document does not describe", req{method: "GET", path: "/ramps"}, func(d map[string]any) {
			item := d["paths"].(map[string]any)["/ramps"].(map[string]any)
			item["post"] = item["get"]
			delete(item, "get")
		}, "the document describes no GET on /ramps"},
	} {
		var doc map[string]any
		if err := json.Unmarshal(served, &doc); err != nil {
			t.Fatal(err)
		}
		c.mutate(doc)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		checker, err := newOpenAPIChecker(b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The served document passes the answer.
		w := ts.do(c.r)
		if w.Code != 200 {
			t.Fatalf("%s: %s %s answered %d", c.name, c.r.method, c.r.path, w.Code)
		}
		if c.r.header != nil && w.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: not compressed", c.name)
		}
		// The changed one fails it, and the test that made the request.
		rec := &recordTB{TB: t}
		wrong := *ts
		wrong.t, wrong.openAPI = rec, checker
		wrong.do(c.r)
		if len(rec.errs) != 1 {
			t.Errorf("%s: %d errors reported: %q", c.name, len(rec.errs), rec.errs)
			continue
		}
		for _, want := range []string{"OpenAPI: " + c.r.method + " " + c.r.path + " answered 200", c.says} {
			if !strings.Contains(rec.errs[0], want) {
				t.Errorf("%s: the report does not say %q: %s", c.name, want, rec.errs[0])
			}
		}
	}
	// An error status the operation does not list is covered by its
	// default, with the error's schema.
	c, err := servedChecker()
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(req{method: "DELETE", path: "/groups/999.json", user: "admin"})
	if w.Code != 404 {
		t.Fatalf("DELETE a missing group: %d", w.Code)
	}
	if err := c.check(req{method: "GET", path: "/ramps"}, w); err != nil {
		t.Errorf("a 404 by GET /ramps's default: %v", err)
	}
	w.Body.Reset()
	w.Body.WriteString(`{"message": "not the error schema"}`)
	if err := c.check(req{method: "GET", path: "/ramps"}, w); err == nil || !strings.Contains(err.Error(), "schemas/Error") {
		t.Errorf("a 404 with another body: %v", err)
	}
}
