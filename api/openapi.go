// The OpenAPI 3.0 description of the API, served at /api: the document is
// kept as JSON files embedded in the binary (openapi/geocommons.json, the
// GeoCommons routes; openapi/ogc.json, the OGC API routes;
// openapi/basemap.json, the basemap routes; openapi/web.json, the browser
// application's pages), merged when
// first asked for. JSON files rather than Go structs: the document is data
// that readers, editors and validators know as JSON, and it stays one
// reviewable text beside the routes it describes (routes_openapi_test.go
// checks that the two agree, both ways).

package api

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"mapcommons"
	"mapcommons/web"
)

//go:embed openapi/geocommons.json openapi/ogc.json openapi/basemap.json openapi/web.json
var openAPIFiles embed.FS

// The parts of the document: the base, then the parts merged into it.
const (
	openAPIBase    = "openapi/geocommons.json"
	openAPIOGC     = "openapi/ogc.json"
	openAPIBasemap = "openapi/basemap.json"
	openAPIWeb     = "openapi/web.json" // the browser application's pages
)

// openAPIServed lists the parts the server serves.
func openAPIServed() []string {
	return []string{openAPIBase, openAPIOGC, openAPIBasemap, openAPIWeb}
}

// openAPIDocument is the document's top level, in the order written. Path
// items and components stay raw JSON: they are served as written.
type openAPIDocument struct {
	OpenAPI    string                                `json:"openapi"`
	Info       json.RawMessage                       `json:"info"`
	Servers    []openAPIServer                       `json:"servers,omitempty"`
	Security   json.RawMessage                       `json:"security,omitempty"`
	Tags       []json.RawMessage                     `json:"tags,omitempty"`
	Paths      map[string]json.RawMessage            `json:"paths"`
	Components map[string]map[string]json.RawMessage `json:"components,omitempty"`
}

type openAPIServer struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// loadOpenAPI reads the base part and merges the others into it: their
// tags are appended, their paths and components added; a path or a
// component named twice is an error.
func loadOpenAPI(parts ...string) (*openAPIDocument, error) {
	var doc openAPIDocument
	for i, name := range parts {
		b, err := openAPIFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var part openAPIDocument
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&part); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if i == 0 {
			doc = part
			continue
		}
		if part.OpenAPI != "" || part.Info != nil || part.Security != nil {
			return nil, fmt.Errorf("%s: a part holds only tags, paths and components", name)
		}
		doc.Tags = append(doc.Tags, part.Tags...)
		for p, item := range part.Paths {
			if _, dup := doc.Paths[p]; dup {
				return nil, fmt.Errorf("%s: path %s is described twice", name, p)
			}
			doc.Paths[p] = item
		}
		for kind, comps := range part.Components {
			if doc.Components[kind] == nil {
				doc.Components[kind] = map[string]json.RawMessage{}
			}
			for c, v := range comps {
				if _, dup := doc.Components[kind][c]; dup {
					return nil, fmt.Errorf("%s: component %s/%s is defined twice", name, kind, c)
				}
				doc.Components[kind][c] = v
			}
		}
	}
	return &doc, nil
}

// servedOpenAPI is the document the server serves, read once.
var servedOpenAPI = sync.OnceValues(func() (*openAPIDocument, error) {
	return loadOpenAPI(openAPIServed()...)
})

// openAPIFor is the document with the server's base URL as its server.
func (s *Server) openAPIFor(r *http.Request, doc *openAPIDocument) *openAPIDocument {
	d := *doc
	d.Servers = []openAPIServer{{URL: s.baseURL(r), Description: "this server"}}
	return &d
}

// openAPIContentType is the media type of the JSON document.
const openAPIContentType = "application/vnd.oai.openapi+json;version=3.0"

// handleOpenAPI answers GET /api: the document as JSON, or its HTML view
// for f=html, the .html suffix, or a browser's Accept: text/html.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkBody(r); err != nil {
		return err
	}
	html, err := wantsHTML(r)
	if err != nil {
		return err
	}
	base, err := servedOpenAPI()
	if err != nil {
		return err
	}
	doc := s.openAPIFor(r, base)
	w.Header().Set("Vary", "Accept")
	if html {
		return writeOpenAPIHTML(w, doc, s.assets)
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", openAPIContentType)
	_, err = w.Write(b)
	return err
}

// wantsHTML decides between the document and its HTML view: the suffix
// first, then f, then Accept (HTML when it ranks text/html above JSON, as
// browsers do; a tie, */* say, is the document).
func wantsHTML(r *http.Request) (bool, error) {
	switch f := info(r).format; {
	case f == "html":
		return true, nil
	case f != "json":
		return false, mapcommons.Errorf(mapcommons.ENOTFOUND, "the API description is available as .json or .html, not .%s", f)
	case strings.HasSuffix(strings.ToLower(info(r).path), ".json"):
		return false, nil
	}
	switch f := r.URL.Query().Get("f"); f {
	case "html":
		return true, nil
	case "json":
		return false, nil
	case "":
	default:
		return false, mapcommons.Errorf(mapcommons.EINVALID, "f: %q is not json or html", f)
	}
	accept := r.Header.Get("Accept")
	html := acceptQ(accept, "text/html")
	return html > 0 && html > max(acceptQ(accept, "application/vnd.oai.openapi+json"), acceptQ(accept, "application/json")), nil
}

// acceptQ is the quality an Accept header value gives a media type: that of
// its most specific range (type/subtype, then type/*, then */*; RFC 9110
// 12.5.1), 0 when none matches.
func acceptQ(header, mediaType string) float64 {
	typ, _, _ := strings.Cut(mediaType, "/")
	best, q := 0, 0.0 // specificity 1 */*, 2 type/*, 3 exact
	for part := range strings.SplitSeq(header, ",") {
		rng, params, _ := strings.Cut(part, ";")
		rng = strings.ToLower(strings.TrimSpace(rng))
		spec := 0
		switch {
		case rng == mediaType:
			spec = 3
		case rng == typ+"/*":
			spec = 2
		case rng == "*/*":
			spec = 1
		}
		if spec <= best {
			continue
		}
		best, q = spec, 1.0
		for p := range strings.SplitSeq(params, ";") {
			if k, v, ok := strings.Cut(p, "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				} else {
					q = 0
				}
			}
		}
	}
	return q
}

// The HTML view: the document read into what a reader looks for.
type (
	apiView struct {
		Title, Version, Description, Server string
		Paths                               []apiPathView
		// The viewer's files (the apiview bundle), when the binary holds it.
		JS  string
		CSS []string
	}
	apiPathView struct {
		Path       string
		Operations []apiOperationView
	}
	apiOperationView struct {
		Method, ID, Summary, Description string
		Formats                          []string
		Auth                             bool
		Parameters                       []apiParamView
		Bodies                           []string
		Responses                        []apiResponseView
	}
	apiParamView struct {
		Name, In, Type, Description string
		Required                    bool
	}
	apiResponseView struct {
		Status, Description string
		Types, Headers      []string
	}
)

// openAPIMethods are the methods the view shows, in its order.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// openAPIParameter, openAPIOperation, … are what the view reads of the
// document's objects.
type (
	openAPIRef struct {
		Ref string `json:"$ref"`
	}
	openAPIParameter struct {
		openAPIRef
		Name        string          `json:"name"`
		In          string          `json:"in"`
		Required    bool            `json:"required"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
	}
	openAPIResponse struct {
		openAPIRef
		Description string                     `json:"description"`
		Content     map[string]json.RawMessage `json:"content"`
		Headers     map[string]json.RawMessage `json:"headers"`
	}
	openAPIOperation struct {
		OperationID string                     `json:"operationId"`
		Summary     string                     `json:"summary"`
		Description string                     `json:"description"`
		Parameters  []openAPIParameter         `json:"parameters"`
		RequestBody *openAPIResponse           `json:"requestBody"`
		Responses   map[string]openAPIResponse `json:"responses"`
		Security    []map[string][]string      `json:"security"`
		Formats     []string                   `json:"x-formats"`
	}
)

// resolve follows a local reference into the document's components
// ("#/components/parameters/x") and decodes what it names into v.
func (d *openAPIDocument) resolve(ref string, v any) error {
	rest, ok := strings.CutPrefix(ref, "#/components/")
	kind, name, ok2 := strings.Cut(rest, "/")
	raw, ok3 := d.Components[kind][name]
	if !ok || !ok2 || !ok3 {
		return fmt.Errorf("openapi: unresolved reference %s", ref)
	}
	return json.Unmarshal(raw, v)
}

// view reads the document into the HTML view.
func (d *openAPIDocument) view() (*apiView, error) {
	var info struct{ Title, Version, Description string }
	if err := json.Unmarshal(d.Info, &info); err != nil {
		return nil, err
	}
	v := &apiView{Title: info.Title, Version: info.Version, Description: info.Description}
	if len(d.Servers) > 0 {
		v.Server = d.Servers[0].URL
	}
	paths := make([]string, 0, len(d.Paths))
	for p := range d.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(d.Paths[p], &item); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", p, err)
		}
		var shared []openAPIParameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("openapi: %s: %w", p, err)
			}
		}
		pv := apiPathView{Path: p}
		for _, m := range openAPIMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			ov, err := d.operationView(m, raw, shared)
			if err != nil {
				return nil, fmt.Errorf("openapi: %s %s: %w", m, p, err)
			}
			pv.Operations = append(pv.Operations, ov)
		}
		v.Paths = append(v.Paths, pv)
	}
	return v, nil
}

// operationView reads one operation, with the path's shared parameters
// first and every reference followed.
func (d *openAPIDocument) operationView(method string, raw json.RawMessage, shared []openAPIParameter) (apiOperationView, error) {
	var o openAPIOperation
	if err := json.Unmarshal(raw, &o); err != nil {
		return apiOperationView{}, err
	}
	ov := apiOperationView{Method: strings.ToUpper(method), ID: o.OperationID, Summary: o.Summary, Description: o.Description, Formats: o.Formats}
	// An operation requires credentials when no alternative of its
	// security (or the document's, which has the anonymous {}) is empty.
	ov.Auth = o.Security != nil && !slices.ContainsFunc(o.Security, func(req map[string][]string) bool { return len(req) == 0 })
	for _, p := range append(slices.Clone(shared), o.Parameters...) {
		if p.Ref != "" {
			if err := d.resolve(p.Ref, &p); err != nil {
				return ov, err
			}
		}
		ov.Parameters = append(ov.Parameters, apiParamView{Name: p.Name, In: p.In, Type: schemaSummary(p.Schema), Description: p.Description, Required: p.Required})
	}
	if b := o.RequestBody; b != nil {
		ov.Bodies = sortedKeys(b.Content)
	}
	for _, code := range sortedKeys(o.Responses) {
		rsp := o.Responses[code]
		if rsp.Ref != "" {
			if err := d.resolve(rsp.Ref, &rsp); err != nil {
				return ov, err
			}
		}
		ov.Responses = append(ov.Responses, apiResponseView{Status: code, Description: rsp.Description, Types: sortedKeys(rsp.Content), Headers: sortedKeys(rsp.Headers)})
	}
	return ov, nil
}

// schemaSummary is a parameter's schema in a few words: its type, or its
// values when they are listed.
func schemaSummary(raw json.RawMessage) string {
	var s struct {
		Type  string `json:"type"`
		Enum  []any  `json:"enum"`
		Items *struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"items"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if len(s.Enum) > 0 {
		return enumText(s.Enum)
	}
	if s.Type == "array" && s.Items != nil {
		if len(s.Items.Enum) > 0 {
			return "array of " + enumText(s.Items.Enum)
		}
		return "array of " + s.Items.Type
	}
	return s.Type
}

// enumText lists the values of an enum: "km | m | ft".
func enumText(values []any) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, " | ")
}

// sortedKeys is a map's keys in order, for a view that does not change
// from one request to the next.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// inlineMarkdown renders the little Markdown the document's descriptions
// use, `code` and **strong**, escaping everything else.
func inlineMarkdown(s string) template.HTML {
	var b strings.Builder
	segments := strings.Split(s, "`")
	if len(segments)%2 == 0 { // an unpaired backtick: no code spans
		segments = []string{s}
	}
	for i, seg := range segments {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(seg) + "</code>")
			continue
		}
		strong := strings.Split(seg, "**")
		if len(strong)%2 == 0 {
			strong = []string{seg}
		}
		for j, part := range strong {
			if j%2 == 1 {
				b.WriteString("<strong>" + template.HTMLEscapeString(part) + "</strong>")
			} else {
				b.WriteString(template.HTMLEscapeString(part))
			}
		}
	}
	return template.HTML(b.String())
}

// openAPIStyle is the style sheet of the HTML view, inline: the
// documents' Content-Security-Policy (docCSP) allows it by its hash.
const openAPIStyle = `
body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;line-height:1.4}
h2{border-top:1px solid #ccc;padding-top:.5em;font-family:monospace}
.op{margin:0 0 1em 1em}.m{font-weight:bold;font-family:monospace}
table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}
code,.mono{font-family:monospace}.desc{white-space:pre-wrap}
`

var openAPIHTML = template.Must(template.New("api").Funcs(template.FuncMap{"md": inlineMarkdown}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>` + openAPIStyle + `</style>
<link rel="icon" href="/app/assets/favicon.svg" type="image/svg+xml">
{{if .JS}}{{range .CSS}}<link rel="stylesheet" href="/app/assets/{{.}}">
{{end}}<script type="module" src="/app/assets/{{.JS}}"></script>
{{end}}</head>
<body>{{if .JS}}<div id="swagger-ui" data-spec="{{.Server}}/api.json"></div>
{{end}}<div id="description"><h1>{{.Title}} <small>{{.Version}}</small></h1>
<p>The <a href="{{.Server}}/api.json">OpenAPI 3.0 document</a> (JSON) of {{.Server}}.</p>
<div class="desc">{{md .Description}}</div>
<nav><ul>{{range .Paths}}<li><a href="#{{.Path}}" class="mono">{{.Path}}</a>{{range .Operations}} {{.Method}}{{end}}</li>{{end}}</ul></nav>
{{range .Paths}}<h2 id="{{.Path}}">{{.Path}}</h2>
{{range .Operations}}<div class="op" id="{{.ID}}"><p><span class="m">{{.Method}}</span> {{.Summary}}{{if .Auth}} (credentials required){{end}}</p>
<p class="desc">{{md .Description}}</p>
{{with .Formats}}<p>Formats: {{range .}}<code>.{{.}}</code> {{end}}</p>{{end}}
{{with .Parameters}}<table><tr><th>parameter</th><th>in</th><th>type</th><th>meaning</th></tr>
{{range .}}<tr><td class="mono">{{.Name}}{{if .Required}} (required){{end}}</td><td>{{.In}}</td><td>{{.Type}}</td><td>{{md .Description}}</td></tr>
{{end}}</table>{{end}}
{{with .Bodies}}<p>Body: {{range .}}<code>{{.}}</code> {{end}}</p>{{end}}
<table><tr><th>status</th><th>answer</th><th>types</th><th>headers</th></tr>
{{range .Responses}}<tr><td>{{.Status}}</td><td>{{md .Description}}</td><td>{{range .Types}}<code>{{.}}</code> {{end}}</td><td>{{range .Headers}}<code>{{.}}</code> {{end}}</td></tr>
{{end}}</table></div>
{{end}}{{end}}</div>
</body></html>
`))

// apiViewCSP is the Content-Security-Policy of the HTML view with its
// viewer (Swagger UI, the apiview bundle): the documents' (docCSP) with
// this server's script and style sheets, images also from data: URLs (the
// viewer's icons), and requests to this server only (the document, and the
// requests its "Try it out" sends); no inline script, no eval, and no
// inline style but the view's own, by its hash.
var apiViewCSP = func() string {
	sum := sha256.Sum256([]byte(openAPIStyle))
	return "default-src 'none'; script-src 'self'; style-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}()

// writeOpenAPIHTML answers with the HTML view of doc: the description,
// and the viewer that lets one try the requests when the binary holds it.
func writeOpenAPIHTML(w http.ResponseWriter, doc *openAPIDocument, assets *web.Assets) error {
	v, err := doc.view()
	if err != nil {
		return err
	}
	js, css, _, viewer := assets.Bundle("apiview")
	if viewer {
		v.JS, v.CSS = js, css
	}
	var b bytes.Buffer
	if err := openAPIHTML.Execute(&b, v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if viewer {
		setPageSecurity(w.Header(), apiViewCSP)
	}
	_, err = w.Write(b.Bytes())
	return err
}
