package api_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestOGCCQL2PropertyPropertyArithmetic: comparisons of two properties and
// of arithmetic over the populated places of CQL2's test data, in both
// encodings, through /ogc/collections/{id}/items; the counts are SQLite's
// (GDAL's SQLite dialect over testdata/ogc/ne110m4cql2.gpkg, its integer
// division for div). Two literals fold (the standard's clause7_16: a
// spatial function of two geometries), and the conformance classes are
// declared.
func TestOGCCQL2PropertyPropertyArithmetic(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadCQL2Layer(t, ts, "ne_110m_populated_places_simple")
	count := func(query string) int { t.Helper(); return filteredCount(t, ts, id, query) }
	for _, c := range []struct {
		text, json string
		want       int
	}{
		{`pop_max - pop_min > 10000000`, `{"op":">","args":[{"op":"-","args":[{"property":"pop_max"},{"property":"pop_min"}]},10000000]}`, 3},
		{`pop_max = pop_min`, `{"op":"=","args":[{"property":"pop_max"},{"property":"pop_min"}]}`, 27},
		{`pop_other > pop_max`, `{"op":">","args":[{"property":"pop_other"},{"property":"pop_max"}]}`, 58},
		{`pop_max div 1000000 >= 10 AND pop_min * 2 < pop_max`,
			`{"op":"and","args":[{"op":">=","args":[{"op":"div","args":[{"property":"pop_max"},1000000]},10]},{"op":"<","args":[{"op":"*","args":[{"property":"pop_min"},2]},{"property":"pop_max"}]}]}`, 7},
		{`pop_max / 0 > 1 OR NOT pop_max / 0 > 1`, `{"op":"or","args":[{"op":">","args":[{"op":"/","args":[{"property":"pop_max"},0]},1]},{"op":"not","args":[{"op":">","args":[{"op":"/","args":[{"property":"pop_max"},0]},1]}]}]}`, 0},
		{`S_CROSSES(LINESTRING(0 0, 2 2), POLYGON((1 0, 3 0, 3 3, 1 3, 1 0))) AND 2 ^ 10 = 1024`,
			`{"op":"and","args":[{"op":"s_crosses","args":[{"type":"LineString","coordinates":[[0,0],[2,2]]},{"type":"Polygon","coordinates":[[[1,0],[3,0],[3,3],[1,3],[1,0]]]}]},{"op":"=","args":[{"op":"^","args":[2,10]},1024]}]}`, 243},
	} {
		if n := count("filter=" + url.QueryEscape(c.text)); n != c.want {
			t.Errorf("%s: %d features, want %d", c.text, n, c.want)
		}
		if n := count("filter-lang=cql2-json&filter=" + url.QueryEscape(c.json)); n != c.want {
			t.Errorf("%s: %d features, want %d", c.json, n, c.want)
		}
	}
	for _, c := range []struct{ filter, want string }{
		{"pop_max = name", "a number cannot be compared with a string"},
		{"name + 1 > 2", `arithmetic of numbers, not of \"name\", a string property`},
		{"pop_max + 'x' > 2", `+: arithmetic of numbers, not of \"x\"`},
	} {
		w := ts.get("/ogc/collections/"+id+"/items?filter="+url.QueryEscape(c.filter), "alice")
		if body := string(must(t, w, 400)); !strings.Contains(body, `"code":"invalid"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s, want it to say %s", c.filter, body, c.want)
		}
	}
	conf := string(must(t, ts.get("/ogc/conformance", ""), 200))
	for _, c := range []string{"property-property", "arithmetic"} {
		if !strings.Contains(conf, `"http://www.opengis.net/spec/cql2/1.0/conf/`+c+`"`) {
			t.Errorf("conformance does not declare %s: %s", c, conf)
		}
	}
}
