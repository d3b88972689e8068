package api_test

import (
	"net/url"
	"strings"
	"testing"
)

// cql2TemporalCases are the temporal-function predicates of the test
// dataset's table of predicates and expected results in the abstract test
// suite of CQL2 (OGC 21-065, Annex A, Temporal Functions, test-data), on
// its populated places (three of which have a date, a start and an end).
var cql2TemporalCases = []struct {
	filter string
	want   int
}{
	{`t_after("date",date('2022-04-16'))`, 1},
	{`t_before("date",date('2022-04-16'))`, 1},
	{`t_disjoint("date",date('2022-04-16'))`, 2},
	{`t_equals("date",date('2022-04-16'))`, 1},
	{`t_intersects("date",date('2022-04-16'))`, 1},
	{`t_after("date",interval('2022-01-01','2022-12-31'))`, 1},
	{`t_before("date",interval('2022-01-01','2022-12-31'))`, 1},
	{`t_disjoint("date",interval('2022-01-01','2022-12-31'))`, 2},
	{`t_equals("date",interval('2022-01-01','2022-12-31'))`, 0},
	{`t_equals("date",interval('2022-04-16','2022-04-16'))`, 1},
	{`t_intersects("date",interval('2022-01-01','2022-12-31'))`, 1},
	{`t_after(start,timestamp('2022-04-16T10:13:19Z'))`, 1},
	{`t_before(start,timestamp('2022-04-16T10:13:19Z'))`, 1},
	{`t_disjoint(start,timestamp('2022-04-16T10:13:19Z'))`, 2},
	{`t_equals(start,timestamp('2022-04-16T10:13:19Z'))`, 1},
	{`t_intersects(start,timestamp('2022-04-16T10:13:19Z'))`, 1},
	{`t_after(start,interval('2022-01-01T00:00:00Z','2022-12-31T23:59:59Z'))`, 0},
	{`t_before(start,interval('2022-01-01T00:00:00Z','2022-12-31T23:59:59Z'))`, 1},
	{`t_disjoint(start,interval('2022-01-01T00:00:00Z','2022-12-31T23:59:59Z'))`, 1},
	{`t_equals(start,interval('2022-01-01T00:00:00Z','2022-12-31T23:59:59Z'))`, 0},
	{`t_intersects(start,interval('2022-01-01T00:00:00Z','2022-12-31T23:59:59Z'))`, 2},
	{`t_after(interval(start,end),interval('..','2022-04-16T10:13:19Z'))`, 1},
	{`t_before(interval(start,end),interval('2023-01-01T00:00:00Z','..'))`, 2},
	{`t_disjoint(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:09Z'))`, 1},
	{`t_equals(interval(start,end),interval('2021-04-16T10:15:59Z','2022-04-16T10:16:06Z'))`, 1},
	{`t_intersects(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:09Z'))`, 2},
	{`T_CONTAINS(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:10Z'))`, 1},
	{`T_DURING(interval(start,end),interval('2022-01-01T00:00:00Z','2022-12-31T23:59:59Z'))`, 1},
	{`T_FINISHES(interval(start,end),interval('2020-04-16T10:13:19Z','2022-04-16T10:16:06Z'))`, 1},
	{`T_FINISHEDBY(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:16:06Z'))`, 1},
	{`T_MEETS(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:10Z'))`, 0},
	{`T_METBY(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:10Z'))`, 1},
	{`T_OVERLAPPEDBY(interval(start,end),interval('2020-04-16T10:13:19Z','2022-04-16T10:15:10Z'))`, 2},
	{`T_OVERLAPS(interval(start,end),interval('2022-04-16T10:13:19Z','2023-04-16T10:15:10Z'))`, 1},
	{`T_STARTEDBY(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:10Z'))`, 1},
	{`T_STARTS(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:10Z'))`, 0},
}

// temporalJSON turns a predicate of cql2TemporalCases into cql2-json:
// op(a,b), each a property (quoted or not), date('…'), timestamp('…')
// or interval(x,y) of properties and strings.
func temporalJSON(t *testing.T, text string) string {
	t.Helper()
	op, rest, _ := strings.Cut(text, "(")
	rest = strings.TrimSuffix(rest, ")")
	// Split at the top-level comma.
	depth, cut := 0, -1
	for i, c := range rest {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 && cut < 0 {
				cut = i
			}
		}
	}
	if cut < 0 {
		t.Fatalf("%s: no comma", text)
	}
	value := func(s string) string {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "'"):
			return `"` + strings.Trim(s, "'") + `"`
		case strings.HasPrefix(strings.ToLower(s), "date("), strings.HasPrefix(strings.ToLower(s), "timestamp("):
			kind, v, _ := strings.Cut(s, "(")
			return `{"` + strings.ToLower(kind) + `":"` + strings.Trim(strings.TrimSuffix(v, ")"), "'") + `"}`
		}
		return `{"property":"` + strings.Trim(s, `"`) + `"}`
	}
	arg := func(s string) string {
		s = strings.TrimSpace(s)
		if v, ok := strings.CutPrefix(strings.ToLower(s), "interval("); ok {
			x, y, _ := strings.Cut(strings.TrimSuffix(s[len(s)-len(v):], ")"), ",")
			return `{"interval":[` + value(x) + `,` + value(y) + `]}`
		}
		return value(s)
	}
	return `{"op":"` + strings.ToLower(op) + `","args":[` + arg(rest[:cut]) + `,` + arg(rest[cut+1:]) + `]}`
}

// TestOGCCQL2TemporalFunctions runs the temporal-function predicates of
// CQL2's abstract test suite over its test data (the populated places of
// testdata/ogc/ne110m4cql2.gpkg), in both encodings, through
// /ogc/collections/{id}/items; checks that T_DISJOINT is NOT
// T_INTERSECTS over the features with a value, that errors name the
// function, and the conformance class declared.
func TestOGCCQL2TemporalFunctions(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadCQL2Layer(t, ts, "ne_110m_populated_places_simple")
	count := func(query string) int { t.Helper(); return filteredCount(t, ts, id, query) }
	for _, c := range cql2TemporalCases {
		if n := count("filter=" + url.QueryEscape(c.filter)); n != c.want {
			t.Errorf("%s: %d features, want %d", c.filter, n, c.want)
		}
		js := temporalJSON(t, c.filter)
		if n := count("filter-lang=cql2-json&filter=" + url.QueryEscape(js)); n != c.want {
			t.Errorf("%s: %d features, want %d", js, n, c.want)
		}
	}
	// The features without a value are in neither a predicate nor its
	// negation (UNKNOWN); with one, T_DISJOINT is NOT T_INTERSECTS.
	for _, f := range []string{
		`t_intersects(interval(start,end),interval('2022-04-16T10:13:19Z','2022-04-16T10:15:09Z'))`,
		`t_intersects("date",interval('2022-01-01','2022-12-31'))`,
		`t_intersects(start,timestamp('2022-04-16T10:13:19Z'))`,
	} {
		in, notIn := count("filter="+url.QueryEscape(f)), count("filter="+url.QueryEscape("NOT "+f))
		disjoint := count("filter=" + url.QueryEscape(strings.Replace(f, "t_intersects", "t_disjoint", 1)))
		if in+notIn != 3 || disjoint != notIn {
			t.Errorf("%s: %d, %d not, %d disjoint", f, in, notIn, disjoint)
		}
	}
	// A date compared with a timestamp: the date is its whole day.
	for _, c := range []struct {
		filter string
		want   int
	}{
		{`t_equals("date",timestamp('2022-04-16T23:59:59Z'))`, 1},
		{`t_after("date",timestamp('2022-04-16T10:00:00Z'))`, 1},
		{`t_during("date",interval('2022-04-16T12:00:00Z','2023-04-16T00:00:00Z'))`, 0},
		{`t_intersects("date",interval('2022-04-16T12:00:00Z','2023-04-16T00:00:00Z'))`, 2},
		{`t_intersects(interval(start,end),interval('2022-04-16','2022-04-16'))`, 3},
		{`t_before(interval(start,end),date('2022-12-16'))`, 1},
	} {
		if n := count("filter=" + url.QueryEscape(c.filter)); n != c.want {
			t.Errorf("%s: %d features, want %d", c.filter, n, c.want)
		}
	}
	for _, c := range []struct{ filter, want string }{
		{"T_AFTER(start)", "T_AFTER takes two arguments"},
		{"T_BEFORE(start, end)", "T_BEFORE: comparing two properties"},
		{"T_DURING(interval(start,end), interval('2022-01-01','soon'))", `T_DURING: \"soon\" is neither a date`},
		{"T_EQUALS(pop_max, date('2022-01-01'))", `\"pop_max\"`},
	} {
		w := ts.get("/ogc/collections/"+id+"/items?filter="+url.QueryEscape(c.filter), "alice")
		if body := string(must(t, w, 400)); !strings.Contains(body, `"code":"invalid"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s, want it to say %s", c.filter, body, c.want)
		}
	}
	conf := string(must(t, ts.get("/ogc/conformance", ""), 200))
	if !strings.Contains(conf, `"http://www.opengis.net/spec/cql2/1.0/conf/temporal-functions"`) {
		t.Errorf("conformance does not declare temporal-functions: %s", conf)
	}
}
