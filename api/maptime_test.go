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
	t.Parallel()
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

// TestMapRampCategories: a ramp keeps 2 to 7 colours, so without colors
// categories outside 2..7 is a 400; a classed layer's default of 5
// categories shows in its stored style.
func TestMapRampCategories(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := strings.TrimPrefix(ts.createCSV("?title=Places", "name,pop,lat,lon\na,1,1,2\nb,5,3,4\nc,9,5,6\n"), "/datasets/")
	post := func(fill map[string]any) (int, map[string]any) {
		body, _ := json.Marshal(map[string]any{"title": "T", "basemap": "Acetate", "layers": []any{map[string]any{"source": "finder:" + ds,
			"styles": map[string]any{"type": "CHOROPLETH", "fill": fill}}}})
		w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/json", body: body})
		return w.Code, decode[map[string]any](t, w.Body.Bytes())
	}
	for _, k := range []int{1, 8, 32} {
		code, doc := post(map[string]any{"selectedAttribute": "pop", "categories": k})
		if code != 400 || !strings.Contains(fmt.Sprint(doc["error"]), "styles.fill.categories") {
			t.Errorf("categories %d without colors: %d %v", k, code, doc)
		}
	}
	code, doc := post(map[string]any{"selectedAttribute": "pop"})
	if code != 201 {
		t.Fatalf("%d %v", code, doc)
	}
	fill := doc["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any)
	if fill["categories"] != 5.0 {
		t.Errorf("default categories %v", fill["categories"])
	}
	if code, doc := post(map[string]any{"selectedAttribute": "pop", "categories": 3, "colors": "White-Blue"}); code != 201 {
		t.Errorf("3 categories of a ramp: %d %v", code, doc)
	}
}

// TestMapKMLIconScale: icon size scales the area of the icon (0.1 is ten
// percent, 2 twice), so the KML scale, which scales its width, is the
// square root.
func TestMapKMLIconScale(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := strings.TrimPrefix(ts.createCSV("?title=Places", "name,lat,lon\na,1,2\n"), "/datasets/")
	for size, want := range map[string]string{"4": "<scale>2</scale>", "0.25": "<scale>0.5</scale>", "": "<scale>1</scale>"} {
		form := "title=T&basemap=Acetate&layers[][source]=finder:" + ds
		if size != "" {
			form += "&layers[][styles][icon][size]=" + size
		}
		body := must(t, ts.get(ts.createMap(t, "alice", form)+".kml", ""), 200)
		if !strings.Contains(string(body), want) {
			t.Errorf("size %q: no %s in\n%s", size, want, body)
		}
	}
}
