// Package params reads a request's parameters the way a Rails 2/3 server
// (Rack 1.x/2.x) accepted them: the query string and the body (urlencoded
// form, JSON, multipart or a raw data body) are merged into one nested tree
// with Rack's bracket rules (wire contract 0.3, 3.2, 3.3). Files of a
// multipart body, and raw data bodies, are spooled to temporary files.
// Every part is bounded: depth, count, the size of a form and the memory
// all forms being read hold at once (FormBudget).
package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format"
)

// Limits of the parameter parser.
const (
	// MaxParamDepth is how deeply a parameter may nest: the number of
	// maps and lists between the top level and a value ("a" is 0,
	// "a[b]" and "a[]" are 1, "a[][b]" is 2).
	MaxParamDepth = 32
	// MaxParams is the number of key=value pairs (and multipart text
	// parts) accepted in one request.
	MaxParams = 10000
)

// Params is the merged, nested parameter tree of a request. A node is a
// string, a map[string]any, a []any, or nil (JSON null).
type Params map[string]any

// ParseQuery parses an urlencoded string (query string or form body) into p
// with Rack's rules, merging into what p already holds.
//
// As in Rack, pairs are separated by '&' or ';' (spaces right after a
// separator are dropped), a key without '=' gets the value "", empty pairs
// are skipped, and key and value are percent-decoded ('+' is a space)
// before the brackets of the key are read. A malformed escape ("%zz", a
// lone "%") is kept literally, as old Rack did, instead of failing. More
// than MaxParams pairs is an EINVALID error. On an error, p may already
// hold some of the pairs.
func (p Params) ParseQuery(s string) error {
	budget := MaxParams
	return p.parseQuery(s, &budget)
}

// parseQuery is ParseQuery sharing a request-wide budget of pairs.
func (p Params) parseQuery(s string, budget *int) error {
	for len(s) > 0 {
		i := strings.IndexAny(s, "&;")
		pair := s
		if i >= 0 {
			pair, s = s[:i], strings.TrimLeft(s[i+1:], " ")
		} else {
			s = ""
		}
		if pair == "" {
			continue
		}
		if *budget <= 0 {
			return mapcommons.Errorf(mapcommons.EINVALID, "too many parameters (more than %d)", MaxParams)
		}
		*budget--
		k, v, _ := strings.Cut(pair, "=")
		if err := p.Set(formUnescape(k), formUnescape(v)); err != nil {
			return err
		}
	}
	return nil
}

// formUnescape decodes a form component: '+' is a space, %XX a byte; an
// invalid escape is kept as it is.
func formUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]):
			b = append(b, hexValue(s[i+1])<<4|hexValue(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// Set adds one key=value pair with Rack's bracket rules (used by ParseQuery
// and by multipart text parts). key and value are used as they are (no
// percent-decoding).
//
//   - "a" sets a (a later value overwrites an earlier one, whatever it was);
//   - "a[]" appends to the list a;
//   - "a[b]..." descends into the map a;
//   - "a[][b]..." adds to the last map of the list a, unless that map already
//     holds the child key (all of "b", "c" for "a[][b][c]"; a child key
//     containing "[]" never counts as present): then a new map is
//     appended. So the key that opens each element is arbitrary.
//
// Junk keys follow Rack's regular expression /\A[\[\]]*([^\[\]]+)\]*/:
// leading brackets are skipped ("[a]" is "a", the DOC's stray
// "[layers][][styles]..." is "layers[][styles]..."), brackets closing
// nothing are skipped ("a]b" is "a[b]"), and "a[" is the plain key "a["
// (Rack 2). Where Rack would store nil or silently drop the value (a key
// with no name: "", "[]", "a[[]]", "a[]]"; "a[][]" when the last element
// of a is a map), the pair is ignored and p is left unchanged. A key
// naming an existing node of another kind ("a=1&a[b]=2", "a[]=1&a[b]=2")
// and a key nested more than MaxParamDepth deep are EINVALID errors.
// Keys are plain bytes: a newline in a key is an ordinary byte here
// (Ruby's line-anchored expressions made such keys behave oddly).
func (p Params) Set(key, value string) error {
	if p == nil {
		return errors.New("api: Set on a nil Params")
	}
	ok, err := paramKeyUsable(key, key, 0)
	if err != nil || !ok {
		return err
	}
	return normalizeParam(p, key, value, 0, key)
}

// splitParamKey applies Rack's /\A[\[\]]*([^\[\]]+)\]*/ to name: k is the first
// run of non-bracket bytes, after what follows the ']'s closing it.
func splitParamKey(name string) (k, after string, ok bool) {
	i := 0
	for i < len(name) && (name[i] == '[' || name[i] == ']') {
		i++
	}
	j := i
	for j < len(name) && name[j] != '[' && name[j] != ']' {
		j++
	}
	if j == i {
		return "", "", false
	}
	k = name[i:j]
	for j < len(name) && name[j] == ']' {
		j++
	}
	return k, name[j:], true
}

// childParamKey is the key below "[]" in after (which starts with "[]" and is
// longer): "b" for "[][b]", else everything after the "[]" (Rack's
// /^\[\]\[([^\[\]]+)\]$/ then /^\[\](.+)$/).
func childParamKey(after string) string {
	rest := after[2:]
	if len(rest) > 2 && rest[0] == '[' && rest[len(rest)-1] == ']' && !strings.ContainsAny(rest[1:len(rest)-1], "[]") {
		return rest[1 : len(rest)-1]
	}
	return rest
}

// paramKeyUsable walks name the way normalizeParam will and reports whether it
// stores anything (false: Rack would store nil or drop the value), or an
// error when it nests too deeply. The walk is bounded by MaxParamDepth.
func paramKeyUsable(name, full string, depth int) (bool, error) {
	_, after, ok := splitParamKey(name)
	if !ok {
		return false, nil
	}
	switch {
	case after == "" || after == "[":
		return true, nil
	case after == "[]":
		return true, checkParamDepth(depth+1, full)
	case strings.HasPrefix(after, "[]"):
		if err := checkParamDepth(depth+2, full); err != nil {
			return false, err
		}
		child := childParamKey(after)
		if child == "[]" {
			return true, nil
		}
		return paramKeyUsable(child, full, depth+2)
	default:
		if err := checkParamDepth(depth+1, full); err != nil {
			return false, err
		}
		return paramKeyUsable(after, full, depth+1)
	}
}

func checkParamDepth(depth int, full string) error {
	if depth > MaxParamDepth {
		return mapcommons.Errorf(mapcommons.EINVALID, "%s: nested more than %d levels deep", ClipKey(full), MaxParamDepth)
	}
	return nil
}

// ClipKey bounds a key quoted in an error message.
func ClipKey(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// normalizeParam is Rack's normalize_params on a name paramKeyUsable accepted.
func normalizeParam(m map[string]any, name, v string, depth int, full string) error {
	k, after, _ := splitParamKey(name)
	switch {
	case after == "":
		m[k] = v
	case after == "[":
		m[name] = v
	case after == "[]":
		l, err := paramListAt(m, k, full)
		if err != nil {
			return err
		}
		m[k] = append(l, v)
	case strings.HasPrefix(after, "[]"):
		l, err := paramListAt(m, k, full)
		if err != nil {
			return err
		}
		child := childParamKey(after)
		if len(l) > 0 {
			if last, ok := NodeMap(l[len(l)-1]); ok && !paramHasKey(last, child) {
				if child == "[]" {
					return nil // Rack drops it: a map cannot take a bare "[]"
				}
				return normalizeParam(last, child, v, depth+2, full)
			}
		}
		if child == "[]" {
			m[k] = append(l, []any{v})
			return nil
		}
		nm := map[string]any{}
		m[k] = append(l, nm)
		return normalizeParam(nm, child, v, depth+2, full)
	default:
		var sub map[string]any
		switch cur := m[k].(type) {
		case nil:
			sub = map[string]any{}
			m[k] = sub
		case map[string]any:
			sub = cur
		case Params:
			sub = cur
		default:
			return paramTypeConflict(full, k, "a map", cur)
		}
		return normalizeParam(sub, after, v, depth+1, full)
	}
	return nil
}

// paramListAt returns the list m[k] (nil when absent or null).
func paramListAt(m map[string]any, k, full string) ([]any, error) {
	switch cur := m[k].(type) {
	case nil:
		return nil, nil
	case []any:
		return cur, nil
	default:
		return nil, paramTypeConflict(full, k, "a list", cur)
	}
}

func paramTypeConflict(full, k, want string, got any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "%s: conflicting parameters: %q is %s, not %s", ClipKey(full), ClipKey(k), nodeKind(got), want)
}

func nodeKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any, Params:
		return "a map"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

// paramHasKey is Rack 2's params_hash_has_key?: every part of the child key
// exists, nested; a child key with "[]" never counts as present.
func paramHasKey(m map[string]any, child string) bool {
	if strings.Contains(child, "[]") {
		return false
	}
	var cur any = m
	for _, part := range strings.FieldsFunc(child, func(r rune) bool { return r == '[' || r == ']' }) {
		h, ok := NodeMap(cur)
		if !ok {
			return false
		}
		if cur, ok = h[part]; !ok {
			return false
		}
	}
	return true
}

// NodeMap is a node of the tree as a map, when it is one (a
// map[string]any or a Params).
func NodeMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case Params:
		return m, true
	}
	return nil, false
}

// MergeJSON merges a decoded JSON object into p (body keys win over
// existing ones; where both are maps they are merged key by key). Numbers
// become strings in their literal form ("12", "-71.1", "1e3": decode with
// UseNumber to keep the literal; a float64 is formatted shortest),
// true/false become "true"/"false", null becomes nil, objects
// map[string]any, arrays []any. Keys are not bracket-parsed (as Rails).
// A value nested more than MaxParamDepth deep is an EINVALID error, and p
// is then unchanged.
func (p Params) MergeJSON(obj map[string]any) error {
	if p == nil {
		return errors.New("api: MergeJSON on a nil Params")
	}
	conv := make(map[string]any, len(obj))
	for k, v := range obj {
		c, err := jsonParamNode(v, 0, k)
		if err != nil {
			return err
		}
		conv[k] = c
	}
	mergeParams(p, conv)
	return nil
}

// mergeParams merges src into dst; src wins except that two maps merge.
func mergeParams(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := NodeMap(dst[k]); ok {
				mergeParams(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// jsonParamNode converts a decoded JSON value at container depth depth.
func jsonParamNode(v any, depth int, key string) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return jsonFloatString(x), nil
	case float32:
		return jsonFloatString(float64(x)), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case map[string]any, Params, []any:
		if err := checkParamDepth(depth+1, key); err != nil {
			return nil, err
		}
	default:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s: unsupported JSON value of type %T", ClipKey(key), v)
	}
	if l, ok := v.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			c, err := jsonParamNode(e, depth+1, key+"[]")
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	m, _ := NodeMap(v)
	out := make(map[string]any, len(m))
	for k, e := range m {
		c, err := jsonParamNode(e, depth+1, key+"["+k+"]")
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

func jsonFloatString(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Get returns the node at path, e.g. p.Get("user", "login"). A list is
// indexed by a decimal key ("layers", "0", "source"). An empty path gives p
// itself.
func (p Params) Get(path ...string) (any, bool) {
	var cur any = map[string]any(p)
	for _, k := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[k]
			if !ok {
				return nil, false
			}
			cur = v
		case Params:
			v, ok := c[k]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) || !isIndexKey(k) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// String returns the node at path when it is a string.
func (p Params) String(path ...string) (string, bool) {
	v, _ := p.Get(path...)
	s, ok := v.(string)
	return s, ok
}

// Bool reads a flag at path: "1", "true", "yes", "on" are true; "0",
// "false", "no", "off" and "" are false (the words in any letter case:
// True, TRUE, False... as Python's str(True) sends them; surrounding
// spaces are ignored). given is false when the parameter is absent or
// null. Anything else (another word, a map, a list) is an EINVALID error
// naming the parameter in bracket form, e.g.
// `include_features: not a boolean: "maybe"`.
func (p Params) Bool(path ...string) (v bool, given bool, err error) {
	n, ok := p.Get(path...)
	if !ok || n == nil {
		return false, false, nil
	}
	s, ok := n.(string)
	if !ok {
		return false, true, mapcommons.Errorf(mapcommons.EINVALID, "%s: not a boolean: %s", bracketPath(path), nodeKind(n))
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, true, nil
	case "0", "false", "no", "off", "":
		return false, true, nil
	}
	return false, true, mapcommons.Errorf(mapcommons.EINVALID, "%s: not a boolean: %q", bracketPath(path), ClipKey(s))
}

// bracketPath writes a path the way it is sent: a[b][c].
func bracketPath(path []string) string {
	if len(path) == 0 {
		return "parameters"
	}
	var b strings.Builder
	b.WriteString(path[0])
	for _, k := range path[1:] {
		b.WriteString("[" + k + "]")
	}
	return b.String()
}

// Map returns the map at path.
func (p Params) Map(path ...string) (Params, bool) {
	v, _ := p.Get(path...)
	m, ok := NodeMap(v)
	return Params(m), ok
}

// List returns the list at path. A map whose keys are all non-negative
// integers ("0", "1", ...) is also returned as a list of its values
// ordered by index (Rails' layers[0][source] form); an empty map gives an
// empty list.
func (p Params) List(path ...string) ([]any, bool) {
	v, _ := p.Get(path...)
	switch x := v.(type) {
	case []any:
		return x, true
	case map[string]any, Params:
		m, _ := NodeMap(x)
		keys := make([]string, 0, len(m))
		for k := range m {
			if !isIndexKey(k) {
				return nil, false
			}
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return indexKeyLess(keys[i], keys[j]) })
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = m[k]
		}
		return out, true
	}
	return nil, false
}

// isIndexKey reports whether k is a non-negative decimal integer.
func isIndexKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

// indexKeyLess orders decimal strings by value (any length), then textually.
func indexKeyLess(a, b string) bool {
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(ta) != len(tb) {
		return len(ta) < len(tb)
	}
	if ta != tb {
		return ta < tb
	}
	return a < b
}

// Strings returns the list of strings at path; a single string gives a
// one-element list. A list holding anything but strings gives false.
func (p Params) Strings(path ...string) ([]string, bool) {
	v, _ := p.Get(path...)
	if s, ok := v.(string); ok {
		return []string{s}, true
	}
	l, ok := p.List(path...)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// ParseOptions bounds parsing.
type ParseOptions struct {
	MaxBody   int64  // bytes of body accepted at all (uploads included); over it → ETOOLARGE; <= 0: no limit
	MaxForm   int64  // bytes of a form/JSON body (or of all multipart text parts) parsed into Params; over it → ETOOLARGE; <= 0: DefaultMaxForm
	TempDir   string // where uploads and raw bodies are spooled ("" = os.TempDir())
	SpoolJSON bool   // keep a JSON body as a raw Body instead of parsing it (for large feature uploads)
	// Budget, when set, bounds the memory of form and JSON bodies read at
	// once over every request sharing it.
	Budget *FormBudget
}

// Upload is a file part of a multipart body, or a raw body, spooled to a
// temp file.
type Upload struct {
	Field       string // the full part name, e.g. "dataset[shp]" or "overlay[csv]" ("" for a raw body)
	Filename    string // as sent, base name only (any directory part, either slash kind, stripped)
	ContentType string // the media type without parameters, lower case ("text/csv")
	Path        string // the temp file
	Size        int64  // bytes in the temp file
}

// Request is a parsed request.
type Request struct {
	Params  Params
	Uploads []Upload
	// Body is a non-empty raw body of any other content type (text/csv,
	// application/zip, application/vnd.google-earth.kml+xml, text/plain,
	// application/xml, ...), spooled; nil when the body was empty, a form,
	// JSON (unless SpoolJSON) or multipart.
	Body *Upload
}

// Cleanup removes the temp files. It may be called more than once, and on
// a nil Request.
func (q *Request) Cleanup() {
	if q == nil {
		return
	}
	for _, u := range q.Uploads {
		if u.Path != "" {
			os.Remove(u.Path)
		}
	}
	q.Uploads = nil
	if q.Body != nil && q.Body.Path != "" {
		os.Remove(q.Body.Path)
	}
	q.Body = nil
}

// ParseRequest merges the query string and the body (wire contract 0.3).
// The caller must call Cleanup.
//
// The query string is parsed first, then the body is merged into the same
// tree:
//   - a body that is empty or only whitespace is ignored whatever its
//     Content-Type (clients send Content-Type: application/xml or
//     text/plain with an empty body and everything in the query);
//   - application/x-www-form-urlencoded, and a POST without a
//     Content-Type (Rack's rule): ParseQuery;
//   - JSON (application/json, text/json, text/x-json, application/x-json,
//     application/jsonrequest, application/*+json but not GeoJSON):
//     an object is merged (MergeJSON), an array is stored under "_json"
//     (as Rails), a malformed '{'/'[' body is EINVALID, and a body not
//     starting with '{' or '[' is read as a form (curl -d "a=b" with a
//     JSON Content-Type); with SpoolJSON the body is kept as Body instead;
//   - multipart/form-data: see parseMultipart (three client dialects);
//   - anything else is spooled as Body.
//
// A body over opt.MaxBody is an ETOOLARGE error. On any error the temp
// files already written are removed and the Request is nil.
func ParseRequest(r *http.Request, opt ParseOptions) (*Request, error) {
	q := &Request{Params: Params{}}
	budget := MaxParams
	if r.URL != nil {
		if err := q.Params.parseQuery(r.URL.RawQuery, &budget); err != nil {
			return nil, err
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return q, nil
	}
	if opt.MaxForm <= 0 {
		opt.MaxForm = DefaultMaxForm
	}
	if opt.MaxBody > 0 && r.ContentLength > opt.MaxBody {
		return nil, bodyTooLarge(opt.MaxBody)
	}
	body := &countingReader{r: r.Body, max: opt.MaxBody}
	if err := parseRequestBody(q, r, body, opt, &budget); err != nil {
		q.Cleanup()
		return nil, err
	}
	return q, nil
}

func bodyTooLarge(n int64) error {
	return mapcommons.Errorf(mapcommons.ETOOLARGE, "upload larger than %d bytes", n)
}

// parseRequestBody reads the body into q by its Content-Type.
func parseRequestBody(q *Request, r *http.Request, body *countingReader, opt ParseOptions, budget *int) error {
	mt, mparams := ParseContentType(r.Header.Get("Content-Type"))
	switch {
	case mt == "multipart/form-data":
		return parseMultipart(q, body, mparams["boundary"], opt, budget)
	case mt == "application/x-www-form-urlencoded" || mt == "" && r.Method == http.MethodPost:
		if r.ContentLength > opt.MaxForm {
			return FormTooLarge(opt.MaxForm) // refused before a byte is read
		}
		b, release, err := readFormBody(body, opt)
		defer release()
		if err != nil || isBlankBytes(b) {
			return err
		}
		return q.Params.parseQuery(string(b), budget)
	case IsJSONMediaType(mt) && !opt.SpoolJSON:
		if r.ContentLength > opt.MaxForm {
			return FormTooLarge(opt.MaxForm)
		}
		b, release, err := readFormBody(body, opt)
		defer release()
		if err != nil || isBlankBytes(b) {
			return err
		}
		return mergeJSONBody(q.Params, b, budget)
	default:
		u, nonBlank, err := spoolTemp(body, opt.TempDir, "body-*", "", body.fail)
		if u != nil {
			q.Body = u
			u.ContentType = mt
		}
		if err == nil && !nonBlank {
			q.Cleanup() // an empty or blank body is no body
		}
		return err
	}
}

// readFormBody reads a body parsed into Params, bounded by MaxForm and by
// the server's FormBudget; release gives the memory back to the budget
// once the body has been parsed.
// ReadForm reads a form body whole within opt's bounds (MaxBody,
// MaxForm and the Budget); release gives back what it holds of the
// budget, and must be called, also after an error.
func ReadForm(body io.Reader, opt ParseOptions) (b []byte, release func(), err error) {
	return readFormBody(&countingReader{r: body, max: opt.MaxBody}, opt)
}

func readFormBody(body *countingReader, opt ParseOptions) (b []byte, release func(), err error) {
	br := &budgetReader{r: io.LimitReader(body, opt.MaxForm+1), limit: opt.MaxForm + 1, budget: opt.Budget}
	b, err = io.ReadAll(br)
	if err != nil {
		if errors.Is(err, errFormBusy) {
			return nil, br.release, formBusy()
		}
		return nil, br.release, body.fail(err)
	}
	if int64(len(b)) > opt.MaxForm {
		return nil, br.release, FormTooLarge(opt.MaxForm)
	}
	return b, br.release, nil
}

// MergeJSONBody merges a JSON body (or, when it is no JSON object or
// array, a form body under a JSON Content-Type) into p, within MaxParams.
func (p Params) MergeJSONBody(b []byte) error {
	budget := MaxParams
	return mergeJSONBody(p, b, &budget)
}

// mergeJSONBody merges a JSON body (or, when it is no JSON object or
// array, a form body under a JSON Content-Type) into p.
func mergeJSONBody(p Params, b []byte, budget *int) error {
	const space = " \t\r\n\f\v"
	t := bytes.TrimLeft(b, space)
	if bytes.HasPrefix(t, []byte("\xef\xbb\xbf")) { // a UTF-8 byte order mark
		t = bytes.TrimLeft(t[3:], space)
	}
	if len(t) == 0 {
		return nil
	}
	if t[0] != '{' && t[0] != '[' {
		return p.parseQuery(string(b), budget)
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: data after the JSON value")
	}
	switch x := v.(type) {
	case map[string]any:
		return p.MergeJSON(x)
	default: // a []any: t starts with '['
		return p.MergeJSON(map[string]any{"_json": x})
	}
}

// IsJSONMediaType reports whether a body of media type mt is parsed as JSON
// parameters. An upload type of the format registry (GeoJSON) is data,
// spooled as Body.
func IsJSONMediaType(mt string) bool {
	switch mt {
	case "application/json", "text/json", "text/x-json", "application/x-json", "application/jsonrequest":
		return true
	}
	if format.BodyKind(mt) != "" {
		return false
	}
	return strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

func isBlankByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isBlankBytes(b []byte) bool {
	for _, c := range b {
		if !isBlankByte(c) {
			return false
		}
	}
	return true
}

// spoolTemp copies r to a new temp file in dir. The Upload is returned
// whenever a file was created (also with an error, for Cleanup); nonBlank
// reports whether anything but whitespace was written. A read error is
// reported through readErr; a write error as it is (an internal error).
func spoolTemp(r io.Reader, dir, pattern, filename string, readErr func(error) error) (u *Upload, nonBlank bool, err error) {
	f, err := os.CreateTemp(dir, pattern+tempExt(filename))
	if err != nil {
		return nil, false, fmt.Errorf("spooling upload: %w", err)
	}
	u = &Upload{Filename: filename, Path: f.Name()}
	w := &blankWriter{w: f}
	n, err := io.Copy(w, r)
	if cerr := f.Close(); err == nil && cerr != nil {
		w.err = cerr
	}
	switch {
	case w.err != nil:
		return u, false, fmt.Errorf("spooling upload: %w", w.err)
	case err != nil:
		return u, false, readErr(err)
	}
	u.Size = n
	return u, w.seen, nil
}

// blankWriter notes whether anything but whitespace went through, and
// keeps its own write error apart from read errors.
type blankWriter struct {
	w    io.Writer
	seen bool
	err  error
}

func (b *blankWriter) Write(p []byte) (int, error) {
	if !b.seen && !isBlankBytes(p) {
		b.seen = true
	}
	n, err := b.w.Write(p)
	if err != nil {
		b.err = err
	}
	return n, err
}

// tempExt is a safe extension for a temp file named after filename
// (".shp"), or "".
func tempExt(filename string) string {
	i := strings.LastIndexByte(filename, '.')
	if i < 0 || len(filename)-i > 11 || i == len(filename)-1 {
		return ""
	}
	for _, c := range []byte(filename[i+1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return ""
		}
	}
	return strings.ToLower(filename[i:])
}

// countingReader fails with ETOOLARGE once more than max bytes were read
// (max <= 0: no limit) and remembers that it did.
type countingReader struct {
	r        io.Reader
	max      int64
	n        int64
	exceeded bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.exceeded {
		return 0, bodyTooLarge(c.max)
	}
	if c.max > 0 && int64(len(p)) > c.max-c.n+1 {
		p = p[:c.max-c.n+1]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.max > 0 && c.n > c.max {
		c.exceeded = true
		return n - int(c.n-c.max), bodyTooLarge(c.max)
	}
	return n, err
}

// fail turns a read error into the error to report: ETOOLARGE when the
// limit was hit (here or by an http.MaxBytesReader upstream), else
// EINVALID.
func (c *countingReader) fail(err error) error {
	if c.exceeded {
		return bodyTooLarge(c.max)
	}
	return bodyReadError(err)
}

// bodyReadError reports a failed read of the body: an *Error as it is, else
// EINVALID (a truncated or aborted body is the client's).
func bodyReadError(err error) error {
	var e *mapcommons.Error
	if errors.As(err, &e) {
		return e
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return bodyTooLarge(mb.Limit)
	}
	if mapcommons.ErrorCode(err) == mapcommons.EFULL {
		return err // spooling it met a full disk
	}
	return mapcommons.Errorf(mapcommons.EINVALID, "reading the request body: %v", err)
}
