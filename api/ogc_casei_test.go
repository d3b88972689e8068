package api_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestOGCCQL2CaseAccentInsensitive: CASEI and ACCENTI over the populated
// places of CQL2's test data (testdata/ogc/ne110m4cql2.gpkg), in both
// encodings, through /ogc/collections/{id}/items (the ASCII LIKE count
// is SQLite's case-insensitive LIKE's on the same file), and the
// conformance classes declared.
func TestOGCCQL2CaseAccentInsensitive(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadCQL2Layer(t, ts, "ne_110m_populated_places_simple")
	count := func(query string) int { t.Helper(); return filteredCount(t, ts, id, query) }
	for _, c := range []struct {
		text, json string
		want       int
	}{
		{`CASEI(name) LIKE '%san%'`, `{"op":"like","args":[{"op":"casei","args":[{"property":"name"}]},"%san%"]}`, 7},
		{`CASEI(name) = CASEI('SÃO PAULO')`, `{"op":"=","args":[{"op":"casei","args":[{"property":"name"}]},{"op":"casei","args":["SÃO PAULO"]}]}`, 1},
		{`CASEI(ACCENTI(name)) = 'sao paulo'`, `{"op":"=","args":[{"op":"casei","args":[{"op":"accenti","args":[{"property":"name"}]}]},"sao paulo"]}`, 1},
		{`ACCENTI(name) IN ('Lome', 'Reykjavik', 'Sao Tome', 'Urumqi', 'Osaka', 'Chisinau')`,
			`{"op":"in","args":[{"op":"accenti","args":[{"property":"name"}]},["Lome","Reykjavik","Sao Tome","Urumqi","Osaka","Chisinau"]]}`, 6},
		{`ACCENTI(name) = ACCENTI('København')`, `{"op":"=","args":[{"op":"accenti","args":[{"property":"name"}]},{"op":"accenti","args":["København"]}]}`, 1}, // ø is a letter, not o and an accent
		{`ACCENTI(name) LIKE 'Sao%' AND pop_max > 0`, `{"op":"and","args":[{"op":"like","args":[{"op":"accenti","args":[{"property":"name"}]},"Sao%"]},{"op":">","args":[{"property":"pop_max"},0]}]}`, 2},
		{`name LIKE CASEI('SAN%')`, `{"op":"like","args":[{"property":"name"},{"op":"casei","args":["SAN%"]}]}`, 0},
	} {
		if n := count("filter=" + url.QueryEscape(c.text)); n != c.want {
			t.Errorf("%s: %d features, want %d", c.text, n, c.want)
		}
		if n := count("filter-lang=cql2-json&filter=" + url.QueryEscape(c.json)); n != c.want {
			t.Errorf("%s: %d features, want %d", c.json, n, c.want)
		}
	}
	for _, c := range []struct{ filter, want string }{
		{"CASEI(pop_max) = 'x'", `CASEI(\"pop_max\"): the property is integer, not a string`},
		{"ACCENTI(name, 'x') = 'x'", "ACCENTI takes one argument"},
	} {
		w := ts.get("/ogc/collections/"+id+"/items?filter="+url.QueryEscape(c.filter), "alice")
		if body := string(must(t, w, 400)); !strings.Contains(body, `"code":"invalid"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s, want it to say %s", c.filter, body, c.want)
		}
	}
	conf := string(must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{"case-insensitive-comparison", "accent-insensitive-comparison"} {
		if !strings.Contains(conf, `"http://www.opengis.net/spec/cql2/1.0/conf/`+c+`"`) {
			t.Errorf("conformance does not declare %s: %s", c, conf)
		}
	}
}
