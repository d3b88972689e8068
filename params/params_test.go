package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"mapcommons"
)

// tree renders a parameter tree as compact JSON with sorted keys.
func tree(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	return string(b)
}

// compact normalises a JSON literal written in a test.
func compact(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expectation %s: %v", s, err)
	}
	return tree(t, v)
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *mapcommons.Error %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("error code %s (%v), want %s", e.Code, err, code)
	}
}

// pyPut is the form body geoiq-python sent to PUT /maps/{id}.json
// (wire contract 3.3), with the extent the capture elides filled in.
const pyPut = "layers%5B%5D%5Bopacity%5D=1.0&layers%5B%5D%5Bsubtitle%5D=&layers%5B%5D%5Bvisible%5D=True&layers%5B%5D%5Blayer_id%5D=0&layers%5B%5D%5Btitle%5D=Renamed&layers%5B%5D%5Bsource%5D=finder%3A4&layers%5B%5D%5Btype%5D=POINT&projection=EPSG%3A3785&title=My+map+2&tags=&extent%5B%5D=-180.0&extent%5B%5D=-90.0&extent%5B%5D=180.0&extent%5B%5D=90.0&contributor=admin&basemap=Acetate"

func TestParseQueryRack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"plain", "a=1&b=2", `{"a":"1","b":"2"}`},
		{"plain key overwrites", "a=1&a=2", `{"a":"2"}`},
		{"list", "a[]=1&a[]=2", `{"a":["1","2"]}`},
		{"map", "a[b]=1&a[c]=2", `{"a":{"b":"1","c":"2"}}`},
		{"nested map", "a[b][c]=1&a[b][d]=2", `{"a":{"b":{"c":"1","d":"2"}}}`},
		{"string over map", "a[b]=1&a=2", `{"a":"2"}`},
		{"string over list", "a[]=1&a=2", `{"a":"2"}`},
		{"repeated key starts element", "layers[][source]=a&layers[][title]=x&layers[][source]=b",
			`{"layers":[{"source":"a","title":"x"},{"source":"b"}]}`},
		{"list inside element", "layers[][styles][fill][colors][]=1&layers[][styles][fill][colors][]=2",
			`{"layers":[{"styles":{"fill":{"colors":["1","2"]}}}]}`},
		{"nested child present starts element (Rack 2)", "layers[][styles][type]=A&layers[][styles][type]=B",
			`{"layers":[{"styles":{"type":"A"}},{"styles":{"type":"B"}}]}`},
		{"nested child absent joins element", "layers[][styles][type]=A&layers[][styles][fill][color]=B",
			`{"layers":[{"styles":{"fill":{"color":"B"},"type":"A"}}]}`},
		{"DOC map create", "layers[][source]=finder:92674&layers[][styles][fill][colors][]=15725567&layers[][styles][fill][colors][]=12441773&layers[][styles][type]=CHOROPLETH&layers[][title]=t&extent[]=-77&extent[]=38",
			`{"extent":["-77","38"],"layers":[{"source":"finder:92674","styles":{"fill":{"colors":["15725567","12441773"]},"type":"CHOROPLETH"},"title":"t"}]}`},
		{"DOC stray leading bracket", "layers[][source]=finder:1&[layers][][styles][fill][classificationType]=St+Deviation",
			`{"layers":[{"source":"finder:1","styles":{"fill":{"classificationType":"St Deviation"}}}]}`},
		{"permissions form (DEV)", "permissions[][group_id]=12&permissions[][permissions][view]=true&permissions[][permissions][download]=true&permissions[][group_id]=everyone&permissions[][permissions][view]=true",
			`{"permissions":[{"group_id":"12","permissions":{"download":"true","view":"true"}},{"group_id":"everyone","permissions":{"view":"true"}}]}`},
		{"PY permissions", "permissions[][group_id]=everyone&permissions[][permissions][view]=True&permissions[][permissions][download]=False",
			`{"permissions":[{"group_id":"everyone","permissions":{"download":"False","view":"True"}}]}`},
		{"filter AND-ed conditions", "filter[int_col][][max]=5&filter[int_col][][min]=3",
			`{"filter":{"int_col":[{"max":"5","min":"3"}]}}`},
		{"filter repeated op", "filter[x][][min]=1&filter[x][][min]=2",
			`{"filter":{"x":[{"min":"1"},{"min":"2"}]}}`},
		{"filter in (DHIS)", "filter[fosaid][][in]=a|b|c", `{"filter":{"fosaid":[{"in":"a|b|c"}]}}`},
		{"encoded brackets (HTTParty 0.21)", "filter%5BPERIMETER%5D%5B%5D%5Bmax%5D=0.3",
			`{"filter":{"PERIMETER":[{"max":"0.3"}]}}`},
		{"encoded attribute name", "filter[overdue%20request%20count][][min]=1",
			`{"filter":{"overdue request count":[{"min":"1"}]}}`},
		{"plus is space", "title=my+empty+map&a+b=c%20d", `{"a b":"c d","title":"my empty map"}`},
		{"RB map create query", "title=my%20empty%20map&description=&tags=&basemap=Acetate&extent%5B%5D=-180&extent%5B%5D=-90&extent%5B%5D=180&extent%5B%5D=90&layers%5B%5D=",
			`{"basemap":"Acetate","description":"","extent":["-180","-90","180","90"],"layers":[""],"tags":"","title":"my empty map"}`},
		{"bare key (groups API)", "kate", `{"kate":""}`},
		{"bare list key", "a[]", `{"a":[""]}`},
		{"empty pairs", "&&a=1&&;;", `{"a":"1"}`},
		{"semicolon separates (Rack)", "a=1;b=2", `{"a":"1","b":"2"}`},
		{"spaces after separator dropped (Rack)", "a=1&  b=2", `{"a":"1","b":"2"}`},
		{"first = splits", "a=x=y", `{"a":"x=y"}`},
		{"bad escapes kept", "a=%zz&b=%4&c=100%", `{"a":"%zz","b":"%4","c":"100%"}`},
		{"empty key ignored", "=x&a=1", `{"a":"1"}`},
		{"brackets only ignored", "[]=x&[[]]=y&]=z", `{}`},
		{"leading brackets skipped", "[a]=1&]]b=2", `{"a":"1","b":"2"}`},
		{"stray close bracket", "a]b=1", `{"a":{"b":"1"}}`},
		{"open bracket key (Rack 2)", "a[=1", `{"a[":"1"}`},
		{"nested open bracket key", "x[a[=1", `{"x":{"[a[":"1"}}`},
		{"junk subkey ignored", "a[[]]=1&a[]]=2&b[c][[]]=3&d=4", `{"d":"4"}`},
		{"doubled brackets", "a[[x]]=1", `{"a":{"x":"1"}}`},
		{"junk subkey leaves existing value", "a=1&a[[]]=2", `{"a":"1"}`},
		{"list of lists", "a[][]=1&a[][]=2", `{"a":[["1"],["2"]]}`},
		{"bare [] into a map dropped (Rack)", "a[][x]=1&a[][]=2", `{"a":[{"x":"1"}]}`},
		{"string then map elements", "a[]=1&a[][b]=2&a[][b]=3", `{"a":["1",{"b":"2"},{"b":"3"}]}`},
		{"child after list key", "a[]x=1", `{"a":[{"x":"1"}]}`},
		{"unicode", "name=%C3%A9t%C3%A9&%E5%9C%B0=x", `{"name":"été","地":"x"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Params{}
			if err := p.ParseQuery(c.in); err != nil {
				t.Fatalf("ParseQuery(%q): %v", c.in, err)
			}
			if got, want := tree(t, p), compact(t, c.want); got != want {
				t.Errorf("ParseQuery(%q)\n got %s\nwant %s", c.in, got, want)
			}
		})
	}
}

func TestParseQueryPYMapUpdate(t *testing.T) {
	t.Parallel()
	p := Params{}
	if err := p.ParseQuery(pyPut); err != nil {
		t.Fatal(err)
	}
	layers, ok := p.List("layers")
	if !ok || len(layers) != 1 {
		t.Fatalf("layers: %s", tree(t, p["layers"]))
	}
	want := map[string]string{"opacity": "1.0", "subtitle": "", "visible": "True", "layer_id": "0",
		"title": "Renamed", "source": "finder:4", "type": "POINT"}
	for k, v := range want {
		if got, ok := p.String("layers", "0", k); !ok || got != v {
			t.Errorf("layers[0][%s] = %q, %v; want %q", k, got, ok, v)
		}
	}
	if l, _ := p.Map("layers", "0"); len(l) != len(want) {
		t.Errorf("layer has %d keys: %s", len(l), tree(t, l))
	}
	if ext, ok := p.Strings("extent"); !ok || strings.Join(ext, ",") != "-180.0,-90.0,180.0,90.0" {
		t.Errorf("extent %v %v", ext, ok)
	}
	for k, v := range map[string]string{"projection": "EPSG:3785", "title": "My map 2", "tags": "", "contributor": "admin", "basemap": "Acetate"} {
		if got, _ := p.String(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if v, given, err := p.Bool("layers", "0", "visible"); !v || !given || err != nil {
		t.Errorf("visible: %v %v %v", v, given, err)
	}
}

func TestParseQueryErrors(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return "a" + strings.Repeat("[x]", n) + "=1" }
	for _, c := range []struct{ name, in, key string }{
		{"string then map", "a=1&a[b]=2", "a[b]"},
		{"list then map", "a[]=1&a[b]=2", "a[b]"},
		{"map then list", "a[b]=1&a[]=2", "a[]"},
		{"string then list", "a=1&a[]=2", "a[]"},
		{"string then list of maps", "a=1&a[][b]=2", "a[][b]"},
		{"nested string then map", "a[b]=1&a[b][c]=2", "a[b][c]"},
		{"element string then map", "a[][b]=1&a[][b][c]=2", "a[][b][c]"},
		{"too deep", deep(MaxParamDepth + 1), "a[x]"},
		{"too deep list", "a" + strings.Repeat("[][x]", MaxParamDepth/2+1) + "=1", "a[]"},
		{"too many", strings.Repeat("a[]=1&", MaxParams+1), "too many"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Params{}
			err := p.ParseQuery(c.in)
			wantCode(t, err, mapcommons.EINVALID)
			if !strings.Contains(mapcommons.ErrorMessage(err), c.key) {
				t.Errorf("message %q does not name %q", mapcommons.ErrorMessage(err), c.key)
			}
		})
	}
	p := Params{}
	if err := p.ParseQuery(deep(MaxParamDepth)); err != nil {
		t.Errorf("depth %d: %v", MaxParamDepth, err)
	}
	if err := (Params{}).ParseQuery(strings.Repeat("a[]=1&", MaxParams)); err != nil {
		t.Errorf("%d params: %v", MaxParams, err)
	}
	// The budget is per request: query and body together.
	req := httptest.NewRequest("POST", "/x?"+strings.Repeat("a[]=1&", MaxParams/2+1), strings.NewReader(strings.Repeat("b[]=1&", MaxParams/2)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err := ParseRequest(req, ParseOptions{})
	wantCode(t, err, mapcommons.EINVALID)
}

func TestSet(t *testing.T) {
	t.Parallel()
	p := Params{}
	for _, kv := range [][2]string{{"dataset[title]", "T"}, {"a%5Bb%5D", "x"}, {"v", "a+b%20"}} {
		if err := p.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := tree(t, p), compact(t, `{"a%5Bb%5D":"x","dataset":{"title":"T"},"v":"a+b%20"}`); got != want {
		t.Errorf("got %s want %s", got, want)
	}
	var nilP Params
	if err := nilP.Set("a", "b"); err == nil {
		t.Error("Set on nil Params: no error")
	}
}

func TestLookups(t *testing.T) {
	t.Parallel()
	p := Params{}
	if err := p.ParseQuery("user[login]=kate&user[admin]=1&extent[]=1&extent[]=2&tags=a&layers[1][source]=b&layers[0][source]=a&layers[10][source]=c&mixed[0]=x&mixed[y]=z&nums[]=1&nums[][a]=2"); err != nil {
		t.Fatal(err)
	}
	if v, ok := p.String("user", "login"); !ok || v != "kate" {
		t.Errorf("user.login %q %v", v, ok)
	}
	if _, ok := p.String("user"); ok {
		t.Error("String on a map")
	}
	if _, ok := p.String("user", "login", "x"); ok {
		t.Error("String below a string")
	}
	if _, ok := p.String("nope"); ok {
		t.Error("String of an absent key")
	}
	if m, ok := p.Map("user"); !ok || m["login"] != "kate" {
		t.Errorf("Map user: %v %v", m, ok)
	}
	if _, ok := p.Map("tags"); ok {
		t.Error("Map on a string")
	}
	if v, ok := p.Get(); !ok || !reflect.DeepEqual(v, map[string]any(p)) {
		t.Error("Get() is not p")
	}
	if v, ok := p.Get("extent", "1"); !ok || v != "2" {
		t.Errorf("Get extent 1: %v %v", v, ok)
	}
	for _, idx := range []string{"2", "-1", "+1", "x", ""} {
		if _, ok := p.Get("extent", idx); ok {
			t.Errorf("Get extent %q found", idx)
		}
	}
	if l, ok := p.List("extent"); !ok || len(l) != 2 {
		t.Errorf("List extent %v %v", l, ok)
	}
	l, ok := p.List("layers")
	if !ok || tree(t, l) != `[{"source":"a"},{"source":"b"},{"source":"c"}]` {
		t.Errorf("List of an index map: %s %v", tree(t, l), ok)
	}
	if _, ok := p.List("mixed"); ok {
		t.Error("List of a map with a non-index key")
	}
	if _, ok := p.List("tags"); ok {
		t.Error("List of a string")
	}
	if s, ok := p.Strings("extent"); !ok || !reflect.DeepEqual(s, []string{"1", "2"}) {
		t.Errorf("Strings extent %v %v", s, ok)
	}
	if s, ok := p.Strings("tags"); !ok || !reflect.DeepEqual(s, []string{"a"}) {
		t.Errorf("Strings tags %v %v", s, ok)
	}
	if _, ok := p.Strings("nums"); ok {
		t.Error("Strings of a list holding a map")
	}
	if _, ok := p.Strings("user"); ok {
		t.Error("Strings of a map")
	}
	q := Params{"l": map[string]any{"0": "a", "1": "b"}, "e": map[string]any{}}
	if s, ok := q.Strings("l"); !ok || !reflect.DeepEqual(s, []string{"a", "b"}) {
		t.Errorf("Strings of an index map %v %v", s, ok)
	}
	if l, ok := q.List("e"); !ok || len(l) != 0 {
		t.Errorf("List of an empty map %v %v", l, ok)
	}
	keys := []string{"10", "9", "01", "1", "0", "100000000000000000000000", "2"}
	sort.Slice(keys, func(i, j int) bool { return indexKeyLess(keys[i], keys[j]) })
	if got := strings.Join(keys, ","); got != "0,01,1,2,9,10,100000000000000000000000" {
		t.Errorf("index order %s", got)
	}
}

func TestBool(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"1": true, "true": true, "True": true, "TRUE": true, "yes": true, "on": true, "Yes": true, "ON": true, " true ": true,
		"0": false, "false": false, "False": false, "FALSE": false, "no": false, "off": false, "": false, "Off": false,
	} {
		p := Params{"include_features": s}
		v, given, err := p.Bool("include_features")
		if err != nil || !given || v != want {
			t.Errorf("Bool(%q) = %v, %v, %v; want %v", s, v, given, err, want)
		}
	}
	p := Params{"include_features": "maybe", "user": map[string]any{"admin": "2", "m": map[string]any{}}, "n": nil}
	_, given, err := p.Bool("include_features")
	wantCode(t, err, mapcommons.EINVALID)
	if msg := mapcommons.ErrorMessage(err); msg != `include_features: not a boolean: "maybe"` || !given {
		t.Errorf("message %q given %v", msg, given)
	}
	_, _, err = p.Bool("user", "admin")
	if msg := mapcommons.ErrorMessage(err); msg != `user[admin]: not a boolean: "2"` {
		t.Errorf("message %q", msg)
	}
	_, _, err = p.Bool("user", "m")
	wantCode(t, err, mapcommons.EINVALID)
	if v, given, err := p.Bool("absent"); v || given || err != nil {
		t.Errorf("absent: %v %v %v", v, given, err)
	}
	if v, given, err := p.Bool("n"); v || given || err != nil {
		t.Errorf("null: %v %v %v", v, given, err)
	}
}

func TestMergeJSON(t *testing.T) {
	t.Parallel()
	dec := func(s string) map[string]any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	p := Params{"title": "q", "user": map[string]any{"login": "kate"}, "extent": []any{"0"}}
	err := p.MergeJSON(dec(`{"title":"b","user":{"email":"e@x"},"extent":[-71.1,42.3,1e3,12],"n":null,"t":true,"f":false,
		"permissions":[{"group_id":12,"permissions":{"view":true,"download":true,"edit":false}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"extent":["-71.1","42.3","1e3","12"],"f":"false","n":null,"permissions":[{"group_id":"12","permissions":{"download":"true","edit":"false","view":"true"}}],"t":"true","title":"b","user":{"email":"e@x","login":"kate"}}`
	if got := tree(t, p); got != compact(t, want) {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// Without UseNumber: float64 and Go ints are formatted too.
	p = Params{}
	if err := p.MergeJSON(map[string]any{"a": 42.0, "b": -71.1, "c": 1e22, "d": 7, "e": int64(-3)}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, p); got != `{"a":"42","b":"-71.1","c":"1e+22","d":"7","e":"-3"}` {
		t.Errorf("floats: %s", got)
	}
	if err := p.MergeJSON(map[string]any{"x": struct{}{}}); err == nil {
		t.Error("unsupported type accepted")
	}
	var v any = "leaf"
	for i := 0; i < MaxParamDepth; i++ {
		v = []any{v}
	}
	if err := (Params{}).MergeJSON(map[string]any{"ok": v}); err != nil {
		t.Errorf("depth %d: %v", MaxParamDepth, err)
	}
	p = Params{"keep": "1"}
	err = p.MergeJSON(map[string]any{"deep": map[string]any{"x": v}, "other": "2"})
	wantCode(t, err, mapcommons.EINVALID)
	if tree(t, p) != `{"keep":"1"}` {
		t.Errorf("failed merge changed p: %s", tree(t, p))
	}
}

// newReq builds a request with a body (nil: none) and Content-Type.
func newReq(method, target, ct string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	return r
}

// emptyDir fails unless dir holds no files.
func emptyDir(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("temp dir not empty: %v", names)
	}
}

func parse(t *testing.T, r *http.Request, opt ParseOptions) *Request {
	t.Helper()
	if opt.TempDir == "" {
		opt.TempDir = t.TempDir()
	}
	q, err := ParseRequest(r, opt)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	t.Cleanup(func() { q.Cleanup(); emptyDir(t, opt.TempDir) })
	return q
}

func TestParseRequestBodies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, method, target, ct, body string
		want                           string
	}{
		{"query only, empty xml body (RB)", "POST", "/maps.json?title=my%20empty%20map&extent%5B%5D=-180&layers%5B%5D=", "application/xml; charset=utf-8", "",
			`{"extent":["-180"],"layers":[""],"title":"my empty map"}`},
		{"empty text/plain PUT (NET)", "PUT", "/datasets/1.json?tags=a%20b", "text/plain", "", `{"tags":"a b"}`},
		{"blank JSON body (NET analysis)", "POST", "/analysis.json?calculation=buffer&ds1=2", "application/json", " \r\n", `{"calculation":"buffer","ds1":"2"}`},
		{"blank xml body", "POST", "/x?a=1", "application/xml", "\r\n\t ", `{"a":"1"}`},
		{"form body merges with query", "POST", "/maps.json?a=q&title=q", "application/x-www-form-urlencoded", "title=b&extent[]=1&extent[]=2",
			`{"a":"q","extent":["1","2"],"title":"b"}`},
		{"form body with charset", "POST", "/x", "application/x-www-form-urlencoded; charset=UTF-8", "a=%C3%A9", `{"a":"é"}`},
		{"PY map update", "PUT", "/maps/1.json", "application/x-www-form-urlencoded", pyPut, ""},
		{"POST without Content-Type is a form (Rack)", "POST", "/groups/1/users.json", "", "kate", `{"kate":""}`},
		{"groups bare login (DOC curl -d)", "POST", "/groups/1/users.json", "application/x-www-form-urlencoded", "kate", `{"kate":""}`},
		{"JSON object (OGP)", "POST", "/maps.json", "application/json", `{"title":"t","basemap":"Acetate","extent":["-71.1","42.3","-71.0","42.4"]}`,
			`{"basemap":"Acetate","extent":["-71.1","42.3","-71.0","42.4"],"title":"t"}`},
		{"JSON numbers as strings", "POST", "/maps.json", "application/json; charset=utf-8", `{"extent":[-71.1,42.3,-71.0,42.4],"n":12}`,
			`{"extent":["-71.1","42.3","-71.0","42.4"],"n":"12"}`},
		{"JSON wrapper (OGP user)", "POST", "/users.json", "application/json", `{"user":{"full_name":"Tim MacSmith","login":"tim"}}`,
			`{"user":{"full_name":"Tim MacSmith","login":"tim"}}`},
		{"JSON deep-merges over query", "PUT", "/users/kate.json?user[login]=kate&title=q", "application/json", `{"user":{"email":"e"},"title":"b"}`,
			`{"title":"b","user":{"email":"e","login":"kate"}}`},
		{"JSON array under _json", "POST", "/x", "application/json", `[{"a":1},2]`, `{"_json":[{"a":"1"},"2"]}`},
		{"JSON with BOM and spaces", "POST", "/x", "application/json", "\xef\xbb\xbf {\"a\":true} \n", `{"a":"true"}`},
		{"text/json", "POST", "/x", "text/json", `{"a":"b"}`, `{"a":"b"}`},
		{"+json suffix", "POST", "/x", "application/vnd.api+json", `{"a":"b"}`, `{"a":"b"}`},
		{"form body under JSON type (DEV curl)", "POST", "/x", "application/json", "a=b&c[]=1", `{"a":"b","c":["1"]}`},
		{"JSON scalar read as form", "POST", "/x", "application/json", `"abc"`, `{"\"abc\"":""}`},
		{"JSON body of a BOM only", "POST", "/x?a=1", "application/json", "\xef\xbb\xbf\n", `{"a":"1"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			q := parse(t, newReq(c.method, c.target, c.ct, body), ParseOptions{MaxBody: 1 << 20})
			if q.Body != nil || len(q.Uploads) != 0 {
				t.Errorf("Body %+v Uploads %+v", q.Body, q.Uploads)
			}
			if c.want == "" {
				return
			}
			if got := tree(t, q.Params); got != compact(t, c.want) {
				t.Errorf("got %s\nwant %s", got, compact(t, c.want))
			}
		})
	}
}

func TestParseRequestJSONErrors(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", MaxParamDepth+1) + strings.Repeat("]", MaxParamDepth+1)
	for _, body := range []string{`{"a":`, `{"a":1} x`, `{}{}`, `[1,2`, `{"a":1}]`, `{a:1}`, `{"a":` + deep + `}`} {
		dir := t.TempDir()
		_, err := ParseRequest(newReq("POST", "/x", "application/json", strings.NewReader(body)), ParseOptions{TempDir: dir})
		wantCode(t, err, mapcommons.EINVALID)
		if body != `{"a":`+deep+`}` && !strings.HasPrefix(mapcommons.ErrorMessage(err), "malformed JSON body: ") {
			t.Errorf("%s: message %q", body, mapcommons.ErrorMessage(err))
		}
		emptyDir(t, dir)
	}
}

func TestParseRequestRawBodies(t *testing.T) {
	t.Parallel()
	csv := "name,latitude,longitude\nA,38.9,-77.0\n"
	for _, c := range []struct{ name, method, ct, body, wantCT string }{
		{"text/csv (RB csv_upload, A2G)", "POST", "text/csv; charset=utf-8", csv, "text/csv"},
		{"KML", "POST", "application/vnd.google-earth.kml+xml", "<kml/>", "application/vnd.google-earth.kml+xml"},
		{"xml with content", "POST", "application/xml", "\n<a/>", "application/xml"},
		{"GeoJSON is data", "POST", "application/geo+json", `{"type":"FeatureCollection","features":[]}`, "application/geo+json"},
		{"zip", "POST", "application/zip", "PK\x03\x04 \x00\x00", "application/zip"},
		{"PUT without Content-Type", "PUT", "", "x", ""},
		{"unparsable Content-Type", "POST", "text/csv;;; =", csv, "text/csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := parse(t, newReq(c.method, "/datasets.json?title=garden%20sculptures", c.ct, strings.NewReader(c.body)), ParseOptions{MaxBody: 1 << 20})
			if q.Body == nil {
				t.Fatal("no Body")
			}
			if q.Body.ContentType != c.wantCT || q.Body.Size != int64(len(c.body)) || q.Body.Field != "" || q.Body.Filename != "" {
				t.Errorf("Body %+v", q.Body)
			}
			b, err := os.ReadFile(q.Body.Path)
			if err != nil || string(b) != c.body {
				t.Errorf("spooled %q, %v", b, err)
			}
			if v, _ := q.Params.String("title"); v != "garden sculptures" {
				t.Errorf("title %q", v)
			}
		})
	}
	t.Run("SpoolJSON", func(t *testing.T) {
		body := `{"type":"FeatureCollection","features":[]}`
		q := parse(t, newReq("POST", "/datasets/1/features.json", "application/json", strings.NewReader(body)), ParseOptions{SpoolJSON: true})
		if q.Body == nil || q.Body.ContentType != "application/json" || q.Body.Size != int64(len(body)) || len(q.Params) != 0 {
			t.Fatalf("Body %+v Params %v", q.Body, q.Params)
		}
		path := q.Body.Path
		q.Cleanup()
		q.Cleanup()
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("Cleanup left %s", path)
		}
	})
	t.Run("SpoolJSON blank", func(t *testing.T) {
		q := parse(t, newReq("POST", "/x", "application/json", strings.NewReader("  ")), ParseOptions{SpoolJSON: true})
		if q.Body != nil {
			t.Fatalf("Body %+v", q.Body)
		}
	})
	t.Run("no body", func(t *testing.T) {
		q := parse(t, newReq("GET", "/x?a=1", "", nil), ParseOptions{})
		if q.Body != nil || q.Params["a"] != "1" {
			t.Fatalf("%+v", q)
		}
	})
}

// unsized hides the length of a body from httptest.
type unsized struct{ r io.Reader }

func (u unsized) Read(p []byte) (int, error) { return u.r.Read(p) }

func TestParseRequestLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x,1,2\n", 2000) // 12000 bytes
	for _, c := range []struct {
		name, ct, body string
		opt            ParseOptions
		code           string
	}{
		{"raw body over MaxBody", "text/csv", big, ParseOptions{MaxBody: 10000}, mapcommons.ETOOLARGE},
		{"form over MaxBody", "application/x-www-form-urlencoded", "a=" + big, ParseOptions{MaxBody: 10000}, mapcommons.ETOOLARGE},
		{"form over MaxForm", "application/x-www-form-urlencoded", "a=" + big, ParseOptions{MaxBody: 1 << 20, MaxForm: 1000}, mapcommons.ETOOLARGE},
		{"JSON over MaxForm", "application/json", `{"a":"` + big + `"}`, ParseOptions{MaxForm: 1000}, mapcommons.ETOOLARGE},
		{"multipart over MaxBody", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"dataset[csv]\"; filename=\"a.csv\"\r\n\r\n" + big + "\r\n--B--\r\n",
			ParseOptions{MaxBody: 10000}, mapcommons.ETOOLARGE},
		{"multipart text over MaxForm", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n" + big + "\r\n--B--\r\n",
			ParseOptions{MaxForm: 1000}, mapcommons.ETOOLARGE},
	} {
		for _, sized := range []bool{true, false} {
			t.Run(c.name, func(t *testing.T) {
				dir := t.TempDir()
				c.opt.TempDir = dir
				var body io.Reader = strings.NewReader(c.body)
				if !sized {
					body = unsized{body}
				}
				r := newReq("POST", "/datasets.json", c.ct, body)
				if !sized && r.ContentLength >= 0 {
					t.Fatalf("ContentLength %d", r.ContentLength)
				}
				q, err := ParseRequest(r, c.opt)
				if q != nil {
					t.Error("a Request with an error")
				}
				wantCode(t, err, c.code)
				emptyDir(t, dir)
			})
		}
	}
	// Exactly MaxBody bytes is accepted.
	q := parse(t, newReq("POST", "/x", "text/csv", unsized{strings.NewReader(big)}), ParseOptions{MaxBody: int64(len(big))})
	if q.Body == nil || q.Body.Size != int64(len(big)) {
		t.Fatalf("Body %+v", q.Body)
	}
	if msg := mapcommons.ErrorMessage(bodyTooLarge(10)); msg != "upload larger than 10 bytes" {
		t.Errorf("message %q", msg)
	}
}

// errReader fails after its data.
type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestParseRequestReadErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		code string
	}{
		{io.ErrUnexpectedEOF, mapcommons.EINVALID},
		{&http.MaxBytesError{Limit: 5}, mapcommons.ETOOLARGE},
	} {
		for _, ct := range []string{"text/csv", "application/x-www-form-urlencoded", "multipart/form-data; boundary=B"} {
			dir := t.TempDir()
			body := &errReader{data: []byte("--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.csv\"\r\n\r\na,b\n"), err: c.err}
			_, err := ParseRequest(newReq("POST", "/x", ct, body), ParseOptions{TempDir: dir})
			wantCode(t, err, c.code)
			emptyDir(t, dir)
		}
	}
	// A temp dir that cannot be written to is an internal error.
	_, err := ParseRequest(newReq("POST", "/x", "text/csv", strings.NewReader("a")), ParseOptions{TempDir: "/nonexistent/dir"})
	if err == nil || mapcommons.ErrorCode(err) != mapcommons.EINTERNAL {
		t.Errorf("unwritable temp dir: %v", err)
	}
}

// encodeRack writes a tree as a Rack query string the way
// obj_to_railsparams would, or reports that the tree has no such form
// (keys with brackets, empty containers, null, nested lists Rack cannot
// express).
func encodeRack(p Params) (string, bool) {
	var pairs []string
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !plainKey(k) {
			return "", false
		}
		if !encodeNode(url.QueryEscape(k), p[k], &pairs) {
			return "", false
		}
	}
	return strings.Join(pairs, "&"), true
}

func plainKey(k string) bool { return k != "" && !strings.ContainsAny(k, "[]") }

func encodeNode(prefix string, v any, out *[]string) bool {
	switch x := v.(type) {
	case string:
		*out = append(*out, prefix+"="+url.QueryEscape(x))
		return true
	case map[string]any:
		if len(x) == 0 {
			return false
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !plainKey(k) || !encodeNode(prefix+"["+url.QueryEscape(k)+"]", x[k], out) {
				return false
			}
		}
		return true
	case []any:
		if len(x) == 0 {
			return false
		}
		for i, e := range x {
			var prev any
			if i > 0 {
				prev = x[i-1]
			}
			prevMap, prevIsMap := prev.(map[string]any)
			switch el := e.(type) {
			case string:
				*out = append(*out, prefix+"[]="+url.QueryEscape(el))
			case []any:
				s, ok := el[0].(string)
				if len(el) != 1 || !ok || prevIsMap {
					return false
				}
				*out = append(*out, prefix+"[][]="+url.QueryEscape(s))
			case map[string]any:
				var sub []string
				if !encodeNode(prefix+"[]", el, &sub) {
					return false
				}
				if prevIsMap {
					// Open the element with a key the previous one holds.
					open := ""
					for _, path := range leafPaths(el, nil) {
						if paramHasKey(prevMap, "["+strings.Join(path, "][")+"]") {
							open = prefix + "[]"
							for _, k := range path {
								open += "[" + url.QueryEscape(k) + "]"
							}
							break
						}
					}
					if open == "" {
						return false
					}
					for j, s := range sub {
						if strings.HasPrefix(s, open+"=") {
							sub[0], sub[j] = sub[j], sub[0]
							break
						}
					}
				}
				*out = append(*out, sub...)
			default:
				return false
			}
		}
		return true
	}
	return false
}

// leafPaths lists the paths through maps only that end at a string.
func leafPaths(m map[string]any, path []string) [][]string {
	var out [][]string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := append(append([]string(nil), path...), k)
		switch x := m[k].(type) {
		case string:
			out = append(out, p)
		case map[string]any:
			out = append(out, leafPaths(x, p)...)
		}
	}
	return out
}

// checkTree verifies the shape of a parsed tree: only strings, maps and
// lists, nested at most MaxParamDepth deep; it returns the leaf count.
func checkTree(t testing.TB, v any, depth int) int {
	switch x := v.(type) {
	case string:
		return 1
	case map[string]any:
		if depth > MaxParamDepth {
			t.Fatalf("nested %d deep", depth)
		}
		n := 0
		for _, e := range x {
			n += checkTree(t, e, depth+1)
		}
		return n
	case []any:
		if depth > MaxParamDepth {
			t.Fatalf("nested %d deep", depth)
		}
		n := 0
		for _, e := range x {
			n += checkTree(t, e, depth+1)
		}
		return n
	}
	t.Fatalf("node of type %T in a parsed query", v)
	return 0
}

func TestEncodeRackRoundTrip(t *testing.T) {
	t.Parallel()
	for _, q := range []string{pyPut, "a[][b]=1&a[][c][d]=2&a[][b]=3&a[][c][e][]=4", "a[]=1&a[][b]=2&a[][b]=3&x[y][z]=1", "a[][]=1&a[][]=2"} {
		p := Params{}
		if err := p.ParseQuery(q); err != nil {
			t.Fatal(err)
		}
		enc, ok := encodeRack(p)
		if !ok {
			t.Fatalf("%s: not encodable", q)
		}
		p2 := Params{}
		if err := p2.ParseQuery(enc); err != nil || !reflect.DeepEqual(p, p2) {
			t.Fatalf("%s: round trip %s gives %s, %v", q, tree(t, p), tree(t, p2), err)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		pyPut,
		"layers[][source]=a&layers[][title]=x&layers[][source]=b",
		"layers[][styles][fill][colors][]=1&layers[][styles][fill][colors][]=2",
		"filter%5BPERIMETER%5D%5B%5D%5Bmax%5D=0.3&filter[overdue%20request%20count][][min]=1",
		"a=1&a[b]=2", "a[]=1&a[b]=2", "[]=x&a]b=1&a[=2&x[a[=3&a[[x]]=1&a[[]]=1&a[]]=2&a[][]=1",
		"kate", "&&;;a", "a%zz=%", "permissions[][group_id]=12&permissions[][permissions][view]=true&permissions[][group_id]=everyone",
		"a" + strings.Repeat("[x]", MaxParamDepth) + "=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Params{}
		err := p.ParseQuery(s)
		if err != nil {
			var e *mapcommons.Error
			if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		pairs := strings.Count(s, "&") + strings.Count(s, ";") + 1
		if n := checkTree(t, map[string]any(p), 0); n > pairs {
			t.Fatalf("%d values from %d pairs", n, pairs)
		}
		// The same input gives the same tree.
		p2 := Params{}
		if err := p2.ParseQuery(s); err != nil || !reflect.DeepEqual(p, p2) {
			t.Fatalf("not deterministic: %v", err)
		}
		// What Rack could have been sent to build this tree builds it again.
		if enc, ok := encodeRack(p); ok {
			p3 := Params{}
			if err := p3.ParseQuery(enc); err != nil {
				t.Fatalf("re-encoded %q: %v", enc, err)
			}
			if !reflect.DeepEqual(p, p3) {
				t.Fatalf("round trip of %q\n  via %q\n  got %s\n want %s", s, enc, tree(t, p3), tree(t, p))
			}
		}
		// Lookups never panic on what was built.
		for k := range p {
			p.Get(k, "0", "x")
			p.String(k)
			p.Bool(k)
			p.Map(k)
			p.List(k)
			p.Strings(k)
		}
	})
}

func FuzzJSONBody(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}]}`, `[1]`, `a=b`, `{"a":1} x`, "\xef\xbb\xbf{}", `{"a":` + strings.Repeat("[", 40)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := Params{}
		budget := MaxParams
		if err := mergeJSONBody(p, b, &budget); err != nil {
			if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
				t.Fatalf("error %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(map[string]any(p)); err != nil {
			t.Fatal(err)
		}
	})
}
