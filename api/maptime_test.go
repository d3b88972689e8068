package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestMapTimesAsGiven: slider takes the object form of the original
// documentation as well as a single value; slider and timeline times come
// back as they were given (milliseconds as milliseconds, offsets kept);
// a date without a time is a 400, not milliseconds.
func TestMapTimesAsGiven(t *testing.T) {
	ts := newServer(t)
	ds := strings.TrimPrefix(ts.createCSV("?title=Places", "name,lat,lon\na,1,2\n"), "/datasets/")
	create := func(styles map[string]any) (int, map[string]any) {
		body, _ := json.Marshal(map[string]any{"title": "T", "basemap": "Acetate",
			"layers": []any{map[string]any{"source": "finder:" + ds, "styles": styles}}})
		w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/json", body: body})
		if w.Code != 201 {
			return w.Code, decode[map[string]any](t, w.Body.Bytes())
		}
		path := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
		doc := mapDoc(t, ts, path, "alice")
		return 201, doc["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)
	}
	for _, c := range []struct {
		styles         map[string]any
		slider, timeln string
	}{
		{map[string]any{"slider": map[string]any{"period": 86400, "end": "now"}}, "map[begin:<nil> end:now period:86400]", "<nil>"},
		{map[string]any{"slider": "now"}, "now", "<nil>"},
		{map[string]any{"slider": 3600000, "timeline": map[string]any{"begin": 1262304000000, "end": "20100102T05:00:00+05:00"}},
			"3.6e+06", "map[begin:1.262304e+12 end:20100102T05:00:00+05:00 period:<nil>]"},
		{map[string]any{"slider": map[string]any{"begin": "20110310T15:33:00Z", "period": 3600}}, "map[begin:20110310T15:33:00Z end:<nil> period:3600]", "<nil>"},
	} {
		code, st := create(c.styles)
		if code != 201 {
			t.Fatalf("%v: %d %v", c.styles, code, st)
		}
		if got := fmt.Sprint(st["slider"]); got != c.slider {
			t.Errorf("%v: slider %s, want %s", c.styles, got, c.slider)
		}
		if got := fmt.Sprint(st["timeline"]); got != c.timeln {
			t.Errorf("%v: timeline %s, want %s", c.styles, got, c.timeln)
		}
	}
	for _, c := range []struct {
		styles map[string]any
		want   string
	}{
		{map[string]any{"timeline": map[string]any{"begin": "20100101"}}, "layers[0].styles.timeline.begin"},
		{map[string]any{"slider": map[string]any{"begin": 1, "end": 2, "period": 3}}, "layers[0].styles.slider"},
		{map[string]any{"slider": map[string]any{"end": "20100101"}}, "date without a time"},
	} {
		code, doc := create(c.styles)
		if code != 400 || !strings.Contains(fmt.Sprint(doc["error"]), c.want) {
			t.Errorf("%v: %d %v, want 400 %q", c.styles, code, doc, c.want)
		}
	}
}
