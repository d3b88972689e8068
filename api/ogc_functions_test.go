package api_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestOGCFunctionsAndArrays: /ogc/functions lists the functions a filter
// may call, the landing page links it and the conformance declares the
// functions and array-functions classes; filters over a GeoJSON upload
// whose properties hold arrays select, in both encodings, the features the
// standard's semantics give.
func TestOGCFunctionsAndArrays(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	fns := decode[struct {
		Functions []struct {
			Name    string
			Args    []struct{ Type []string }
			Returns []string
		}
	}](t, must(t, ts.get("/ogc/functions", ""), 200))
	got := map[string]string{}
	for _, f := range fns.Functions {
		var args []string
		for _, a := range f.Args {
			args = append(args, strings.Join(a.Type, "|"))
		}
		got[f.Name] = strings.Join(args, ",") + "→" + strings.Join(f.Returns, "|")
	}
	for name, want := range map[string]string{"lower": "string|datetime→string", "length": "string|datetime→number", "round": "number→number"} {
		if got[name] != want {
			t.Errorf("/ogc/functions %s: %q, want %q (all: %v)", name, got[name], want, got)
		}
	}
	if body := string(must(t, ts.get("/ogc/functions?f=html", ""), 200)); !strings.Contains(body, "<td>upper</td>") {
		t.Errorf("HTML functions page lacks upper: %s", body)
	}
	must(t, ts.get("/ogc/functions?x=1", ""), 400)
	must(t, ts.do(req{method: "POST", path: "/ogc/functions"}), http.StatusMethodNotAllowed)
	if landing := string(must(t, ts.get("/ogc", ""), 200)); !strings.Contains(landing, `"href":"`+base+`/ogc/functions","rel":"http://www.opengis.net/def/rel/ogc/1.0/functions"`) {
		t.Errorf("the landing page does not link the functions: %s", landing)
	}
	conf := string(must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{"functions", "array-functions"} {
		if !strings.Contains(conf, `"http://www.opengis.net/spec/cql2/1.0/conf/`+c+`"`) {
			t.Errorf("conformance does not declare %s: %s", c, conf)
		}
	}

	gj := `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Point","coordinates":[1,1]},"properties":{"name":" Alpha ","tags":["red","green"],"sizes":[1,2,3],"v":1.4}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[2,2]},"properties":{"name":"beta","tags":["green"],"sizes":[2,3],"v":-2.6}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[3,3]},"properties":{"name":"GAMMA","tags":["blue","red","green"],"sizes":[],"v":2.5}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[4,4]},"properties":{"name":"delta","tags":null,"sizes":[7],"v":null}}]}`
	w := ts.do(req{method: "POST", path: "/datasets.json?title=arrays", user: "alice", ctype: "application/geo+json", body: []byte(gj)})
	must(t, w, http.StatusCreated)
	id := strconv.FormatInt(int64(decode[map[string]any](t, w.Body.Bytes())["id"].(float64)), 10)
	names := func(query string) string {
		t.Helper()
		fc := items(t, ts, "/ogc/collections/"+id+"/items?limit=100&sortby=name&"+query, "alice")
		var out []string
		for _, f := range fc.Features {
			out = append(out, strings.TrimSpace(f.Properties["name"].(string)))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ text, json, want string }{
		{`A_CONTAINS(tags, ('red'))`, `{"op":"a_contains","args":[{"property":"tags"},["red"]]}`, "Alpha,GAMMA"},
		{`A_EQUALS(tags, ('green'))`, `{"op":"a_equals","args":[{"property":"tags"},["green"]]}`, "beta"},
		{`A_CONTAINEDBY(tags, ('red', 'green', 'yellow'))`, `{"op":"a_containedby","args":[{"property":"tags"},["red","green","yellow"]]}`, "Alpha,beta"},
		{`A_OVERLAPS(sizes, (3, 7))`, `{"op":"a_overlaps","args":[{"property":"sizes"},[3,7]]}`, "Alpha,beta,delta"},
		{`NOT A_OVERLAPS(tags, ('blue'))`, `{"op":"not","args":[{"op":"a_overlaps","args":[{"property":"tags"},["blue"]]}]}`, "Alpha,beta"},
		{`trim(name) = 'Alpha'`, `{"op":"=","args":[{"op":"trim","args":[{"property":"name"}]},"Alpha"]}`, "Alpha"},
		{`lower(name) IN ('gamma', 'delta')`, `{"op":"in","args":[{"op":"lower","args":[{"property":"name"}]},["gamma","delta"]]}`, "GAMMA,delta"},
		{`length(name) = 5`, `{"op":"=","args":[{"op":"length","args":[{"property":"name"}]},5]}`, "GAMMA,delta"},
		{`round(v) = 3 OR abs(floor(v)) = 3`, `{"op":"or","args":[{"op":"=","args":[{"op":"round","args":[{"property":"v"}]},3]},{"op":"=","args":[{"op":"abs","args":[{"op":"floor","args":[{"property":"v"}]}]},3]}]}`, "GAMMA,beta"},
		{`upper(name) LIKE 'B%'`, `{"op":"like","args":[{"op":"upper","args":[{"property":"name"}]},"B%"]}`, "beta"},
	} {
		if n := names("filter=" + url.QueryEscape(c.text)); n != c.want {
			t.Errorf("%s: %q, want %q", c.text, n, c.want)
		}
		if n := names("filter-lang=cql2-json&filter=" + url.QueryEscape(c.json)); n != c.want {
			t.Errorf("%s: %q, want %q", c.json, n, c.want)
		}
	}
	w = ts.get("/ogc/collections/"+id+"/items?filter="+url.QueryEscape("soundex(name) = 'x'"), "alice")
	if body := string(must(t, w, 400)); !strings.Contains(body, "soundex") {
		t.Errorf("an unknown function: %s", body)
	}
}
