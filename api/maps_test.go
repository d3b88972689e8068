package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/gdaltest"
)

// createMap posts a form and returns the new map's path (/maps/<id>).
func (ts *testServer) createMap(t *testing.T, user, form string) string {
	t.Helper()
	w := ts.do(req{method: "POST", path: "/maps.json", user: user, ctype: "application/x-www-form-urlencoded", body: []byte(form)})
	must(t, w, http.StatusCreated)
	return strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
}

func mapDoc(t *testing.T, ts *testServer, path, user string) map[string]any {
	t.Helper()
	return decode[map[string]any](t, must(t, ts.get(path+".json", user), 200))
}

func TestMapCreate(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	t.Run("OKForm", func(t *testing.T) {
		// The spec's curl: form-encoded, with layers and styles.
		form := "basemap=Google+Terrain&title=mappy&description=Counties&tags=nc,+counties&extent[]=-84.5&extent[]=33.8&extent[]=-75.4&extent[]=36.6" +
			"&layers[][source]=finder:92674&layers[][title]=Births&layers[][styles][type]=CHOROPLETH" +
			"&layers[][styles][fill][selectedAttribute]=BIR74&layers[][styles][fill][classificationType]=St+Deviation" +
			"&layers[][styles][fill][categories]=3&layers[][styles][fill][colors][]=15725567&layers[][styles][fill][colors][]=0x9ECAE1&layers[][styles][fill][colors][]=%23084594"
		w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(form)})
		body := must(t, w, 201)
		if loc := w.Header().Get("Location"); !regexp.MustCompile(`^` + base + `/maps/\d+\.json$`).MatchString(loc) {
			t.Fatalf("Location %q", loc)
		}
		golden(t, "map_create.json", body)
	})
	t.Run("OKRubyQueryString", func(t *testing.T) {
		// Every attribute in the query string, an empty body declared XML,
		// and layers[]= meaning no layers.
		q := "title=Ruby+map&description=&tags=&basemap=Acetate&extent[]=-180&extent[]=-90&extent[]=180&extent[]=90&layers[]="
		w := ts.do(req{method: "POST", path: "/maps.xml?" + q, user: "alice", ctype: "application/xml"})
		must(t, w, 201)
		m := regexp.MustCompile(`/maps/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))
		if m == nil {
			t.Fatalf("Location %q", w.Header().Get("Location"))
		}
		doc := mapDoc(t, ts, "/maps/"+m[1], "alice")
		if doc["title"] != "Ruby map" || fmt.Sprint(doc["layers"]) != "[]" || fmt.Sprint(doc["extent"]) != "[-180 -90 180 90]" || doc["description"] != "" {
			t.Fatalf("map %v", doc)
		}
	})
	t.Run("OKJSONStrings", func(t *testing.T) {
		// OGP: a JSON body with the extent as strings and space-separated tags.
		w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/json",
			body: []byte(`{"title":"OGP","basemap":"Acetate","description":"d","tags":"a b c","extent":["-10","-5.5","10","5.5"],"projection":"EPSG:4326"}`)})
		doc := decode[map[string]any](t, must(t, w, 201))
		if _, ok := doc["id"].(float64); !ok || fmt.Sprint(doc["tags"]) != "[a b c]" || fmt.Sprint(doc["extent"]) != "[-10 -5.5 10 5.5]" || doc["projection"] != "EPSG:4326" {
			t.Fatalf("map %v", doc)
		}
	})
	t.Run("DefaultsAndShape", func(t *testing.T) {
		doc := mapDoc(t, ts, ts.createMap(t, "alice", "title=t&basemap=b"), "alice")
		if doc["description"] != nil || fmt.Sprint(doc["tags"]) != "[]" || doc["projection"] != "EPSG:3785" ||
			fmt.Sprint(doc["extent"]) != "[-180 -85 180 85]" || doc["contributor"] != "alice" || doc["classification"] != nil {
			t.Fatalf("defaults %v", doc)
		}
		if !regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \+0000$`).MatchString(doc["created_at"].(string)) {
			t.Fatalf("created_at %q", doc["created_at"])
		}
		if bm := doc["show_state"].(map[string]any)["basemap"].(map[string]any); bm["mapDisplayName"] != "b" {
			t.Fatalf("show_state %v", doc["show_state"])
		}
	})
	cases := []struct {
		name, form string
		status     int
		code, want string
	}{
		{"ErrNoTitle", "basemap=Acetate", 400, "invalid", "title"},
		{"ErrNoBasemap", "title=x", 400, "invalid", "basemap"},
		{"ErrProjection", "title=x&basemap=b&projection=EPSG:2263", 400, "invalid", "projection"},
		{"ErrExtentCount", "title=x&basemap=b&extent[]=1&extent[]=2", 400, "invalid", "extent"},
		{"ErrExtentRange", "title=x&basemap=b&extent[]=-190&extent[]=0&extent[]=10&extent[]=10", 400, "invalid", "extent"},
		{"ErrExtentOrder", "title=x&basemap=b&extent[]=0&extent[]=10&extent[]=10&extent[]=5", 400, "invalid", "south"},
		{"ErrSource", "title=x&basemap=b&layers[][source]=ftp:1", 400, "invalid", "layers[0].source"},
		{"ErrNoSource", "title=x&basemap=b&layers[][title]=x", 400, "invalid", "layers[0].source"},
		{"ErrOpacity", "title=x&basemap=b&layers[][source]=finder:1&layers[][opacity]=2", 400, "invalid", "layers[0].opacity"},
		{"ErrLayerType", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][type]=HEATMAP", 400, "invalid", "layers[0].styles.type"},
		{"ErrColor", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][stroke][color]=0xGG0000", 400, "invalid", "layers[0].styles.stroke.color"},
		{"ErrSymbol", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][icon][symbol]=star", 400, "invalid", "layers[0].styles.icon.symbol"},
		{"ErrLineStyle", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][icon][lineStyle]=wavy", 400, "invalid", "layers[0].styles.icon.lineStyle"},
		{"ErrDensity", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][density]=hexbins", 400, "invalid", `layers[0].styles.density: "hexbins" is not a density`},
		{"ErrCategories", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][categories]=x", 400, "invalid", "layers[0].styles.fill.categories"},
		{"ErrColorsVsCategories", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][categories]=4&layers[][styles][fill][colors][]=1&layers[][styles][fill][colors][]=2", 400, "invalid", "layers[0].styles.fill.categories"},
		{"ErrRampTooLong", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][colors][]=1&layers[][styles][fill][colors][]=2&layers[][styles][fill][colors][]=3&layers[][styles][fill][colors][]=4&layers[][styles][fill][colors][]=5&layers[][styles][fill][colors][]=6&layers[][styles][fill][colors][]=7&layers[][styles][fill][colors][]=8", 400, "invalid", "layers[0].styles.fill.colors"},
		{"ErrRampFamily", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][colors]=Pink-Yellow", 400, "invalid", "layers[0].styles.fill.colors"},
		{"ErrMethod", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][classificationType]=Guess", 400, "invalid", "layers[0].styles.fill.classificationType"},
		{"ErrManualNoBreaks", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][classificationType]=Manual", 400, "invalid", "classificationBreaks"},
		{"ErrBreaksOrder", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][classificationBreaks][]=3&layers[][styles][fill][classificationBreaks][]=1", 400, "invalid", "classificationBreaks"},
		{"ErrChoroplethNoAttribute", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][type]=CHOROPLETH", 400, "invalid", "selectedAttribute"},
		{"ErrTimelineThree", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][timeline][begin]=now&layers[][styles][timeline][end]=0&layers[][styles][timeline][period]=1000", 400, "invalid", "layers[0].styles.timeline"},
		{"ErrTimeline", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][timeline][begin]=yesterday", 400, "invalid", "layers[0].styles.timeline.begin"},
		{"ErrSlider", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][slider]=soon", 400, "invalid", "layers[0].styles.slider"},
		{"ErrRange", "title=x&basemap=b&layers[][source]=finder:1&layers[][styles][fill][range][]=5&layers[][styles][fill][range][]=1", 400, "invalid", "layers[0].styles.fill.range"},
		{"ErrPermissionsHosted", "title=x&basemap=b&permissions[][group_id]=everyone&permissions[][permissions][view]=false", 403, "forbidden", "permissions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errorOf(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(c.form)}), c.status, c.code, c.want)
		})
	}
	t.Run("ErrAnonymous", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "POST", path: "/maps.json", ctype: "application/x-www-form-urlencoded", body: []byte("title=x&basemap=b")}), 401, "unauthorized", "")
	})
}

// TestMapStylesRoundTrip takes every style option through create, get,
// update and get.
func TestMapStylesRoundTrip(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=Places", "name,pop,when,lat,lon\na,10,2011-03-10,1,2\nb,20,2012-01-01,3,4\nc,35,2013-05-05,5,6\n")
	id := strings.TrimPrefix(ds, "/datasets/")
	layer := map[string]any{
		"source": "finder:" + id, "title": "People", "subtitle": "by town", "opacity": "0.6", "visible": "false",
		"styles": map[string]any{
			"type": "GRADUATED",
			"icon": map[string]any{"selectedAttribute": "pop", "color": "0xFF0000", "symbol": "http://example.com/pin.png",
				"opacity": 0.5, "dropshadow": 1, "lineStyle": "dashedThin", "size": 2, "classificationType": "Quantile",
				"categories": 3, "range": []any{0, 100}},
			"stroke":   map[string]any{"color": "#00FF00", "alpha": 0.3, "weight": 4},
			"fill":     map[string]any{"color": 255, "colors": "Blue-White", "opacity": 0.9, "categories": 3},
			"temporal": map[string]any{"attributes": []any{"when"}},
			"click":    "http://example.com/?n=$[name]", "hover": "$[name] has $[pop] people",
			"slider":   "86400000",
			"timeline": map[string]any{"begin": "20110310T15:33:00Z", "period": 3600000},
			"density":  "Heatmap",
		},
	}
	body, _ := json.Marshal(map[string]any{"title": "Styled", "basemap": "Acetate", "layers": []any{layer}})
	w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/json", body: body})
	created := decode[map[string]any](t, must(t, w, 201))
	path := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	got := mapDoc(t, ts, path, "alice")
	l := got["layers"].([]any)[0].(map[string]any)
	st := l["styles"].(map[string]any)
	icon, fill, stroke := st["icon"].(map[string]any), st["fill"].(map[string]any), st["stroke"].(map[string]any)
	checks := []struct {
		name string
		got  any
		want string
	}{
		{"source", l["source"], "finder:" + id}, {"title", l["title"], "People"}, {"subtitle", l["subtitle"], "by town"},
		{"opacity", l["opacity"], "0.6"}, {"visible", l["visible"], "false"}, {"layer_id", l["layer_id"], "0"}, {"type", l["type"], "GRADUATED"},
		{"icon.color", icon["color"], "16711680"}, {"icon.symbol", icon["symbol"], "http://example.com/pin.png"},
		{"icon.opacity", icon["opacity"], "0.5"}, {"icon.dropshadow", icon["dropshadow"], "1"}, {"icon.lineStyle", icon["lineStyle"], "dashedThin"},
		{"icon.size", icon["size"], "2"}, {"icon.classificationType", icon["classificationType"], "Quantile"}, {"icon.categories", icon["categories"], "3"},
		{"icon.range", icon["range"], "[0 100]"}, {"icon.selectedAttribute", icon["selectedAttribute"], "pop"},
		{"stroke", fmt.Sprint(stroke["color"], stroke["alpha"], stroke["weight"]), "65280 0.3 4"},
		{"fill.color", fill["color"], "255"}, {"fill.colors", fill["colors"], fmt.Sprint([]int{0x3182BD, 0x9ECAE1, 0xDEEBF7})},
		{"fill.opacity", fill["opacity"], "0.9"}, {"temporal", st["temporal"], "map[attributes:[when]]"},
		{"click", st["click"], "http://example.com/?n=$[name]"}, {"hover", st["hover"], "$[name] has $[pop] people"},
		{"slider", st["slider"], "86400000"}, {"timeline", st["timeline"], "map[begin:20110310T15:33:00Z end:<nil> period:3600000]"},
		{"density", st["density"], "heatmap"},
	}
	for _, c := range checks {
		if fmt.Sprint(integral(c.got)) != c.want {
			t.Errorf("%s = %v, want %s", c.name, c.got, c.want)
		}
	}
	cls, ok := icon["classification"].(map[string]any)
	if !ok || fmt.Sprint(cls["counts"]) != "[1 1 1]" || cls["method"] != "Quantile" || cls["classified"] != 3.0 {
		t.Fatalf("icon classification %v", icon["classification"])
	}
	if fmt.Sprint(created["layers"]) != fmt.Sprint(got["layers"]) {
		t.Fatalf("create answered\n%v\nGET answers\n%v", created["layers"], got["layers"])
	}
	// An update that echoes the layers back leaves them as they are.
	var echo map[string]any
	json.Unmarshal(must(t, ts.get(path+".json", "alice"), 200), &echo)
	echoBody, _ := json.Marshal(map[string]any{"title": "Styled again", "layers": echo["layers"]})
	w = ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json", body: echoBody})
	updated := decode[map[string]any](t, must(t, w, 200))
	if updated["title"] != "Styled again" || fmt.Sprint(updated["layers"]) != fmt.Sprint(got["layers"]) {
		t.Fatalf("after an echoing update:\n%v\nwant\n%v", updated["layers"], got["layers"])
	}
	if again := mapDoc(t, ts, path, "alice"); fmt.Sprint(again["layers"]) != fmt.Sprint(got["layers"]) {
		t.Fatalf("stored after update:\n%v", again["layers"])
	}
	t.Run("ErrAttributeChecks", func(t *testing.T) {
		for _, c := range []struct{ form, want string }{
			{"layers[][source]=finder:" + id + "&layers[][styles][type]=CHOROPLETH&layers[][styles][fill][selectedAttribute]=nope", "layers[0].styles.fill.selectedAttribute"},
			{"layers[][source]=finder:" + id + "&layers[][styles][type]=CHOROPLETH&layers[][styles][fill][selectedAttribute]=name", "not numeric"},
			{"layers[][source]=finder:" + id + "&layers[][styles][hover]=$[nope]", "layers[0].styles.hover"},
			{"layers[][source]=finder:" + id + "&layers[][styles][temporal][attributes][]=nope", "layers[0].styles.temporal.attributes"},
		} {
			errorOf(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(c.form)}), 400, "invalid", c.want)
		}
	})
}

// TestMapLayerDensity: a layer's density (an extension of the styles)
// is added with a layer, changed and cleared by a layer's update, and kept
// by an update that does not name it; the map's JSON shows it only when
// set.
func TestMapLayerDensity(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createMap(t, "alice", "title=Density&basemap=Acetate")
	density := func(layer string) any {
		t.Helper()
		l := decode[map[string]any](t, must(t, ts.get(path+"/layers/"+layer+".json", "alice"), 200))
		st := l["styles"].(map[string]any)
		if m := mapDoc(t, ts, path, "alice")["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any); fmt.Sprint(m["density"]) != fmt.Sprint(st["density"]) {
			t.Errorf("the map shows %v, its layer %v", m["density"], st["density"])
		}
		return st["density"]
	}
	must(t, ts.do(req{method: "POST", path: path + "/layers.json?source=finder%3A1&styles[density]=Clusters", user: "alice"}), 201)
	if d := density("0"); d != "clusters" {
		t.Errorf("added: density %v", d)
	}
	put := func(form string) {
		t.Helper()
		must(t, ts.do(req{method: "PUT", path: path + "/layers/0.json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(form)}), 200)
	}
	put("styles[density]=NONE")
	if d := density("0"); d != "none" {
		t.Errorf("updated: density %v", d)
	}
	put("title=Renamed")
	if d := density("0"); d != "none" {
		t.Errorf("an update not naming it: density %v", d)
	}
	put("styles[density]=")
	if d := density("0"); d != nil {
		t.Errorf("cleared: density %v", d)
	}
	errorOf(t, ts.do(req{method: "PUT", path: path + "/layers/0.json", user: "alice", ctype: "application/x-www-form-urlencoded",
		body: []byte("styles[density]=hexbins")}), 400, "invalid", `styles.density: "hexbins" is not a density (auto, clusters, heatmap, none)`)
}

// integral turns the whole numbers JSON decoding made float64 back into
// integers, in lists and objects too, so that they print as written.
func integral(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = integral(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k := range x {
			out[k] = integral(x[k])
		}
		return out
	}
	return v
}

// TestMapFlows are the map flows of wire-contract section 8, items 5 to 7,
// and the Python client's update.
func TestMapFlows(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createMap(t, "alice", "title=Flow&basemap=Acetate")
	t.Run("AddLayerRuby", func(t *testing.T) {
		// Dataset 1466 does not exist: the layer is kept and shows nothing.
		w := ts.do(req{method: "POST", path: path + "/layers.json?source=finder%3A1466", user: "alice"})
		if body := must(t, w, 201); len(body) != 0 {
			t.Fatalf("body %q", body)
		}
		if w.Header().Get("Status") != "201 Created" || w.Header().Get("Location") != base+path+"/layers/0.json" {
			t.Fatalf("Status %q Location %q", w.Header().Get("Status"), w.Header().Get("Location"))
		}
		doc := mapDoc(t, ts, path, "alice")
		l := doc["layers"].([]any)[0].(map[string]any)
		if l["source"] != "finder:1466" || l["visible"] != true || l["opacity"] != 1.0 || l["type"] != "POINT" {
			t.Fatalf("layer %v", l)
		}
		if feats := must(t, ts.get(path+"/layers/0/features.json", "alice"), 200); string(feats) != "[]" {
			t.Fatalf("features of a missing dataset: %s", feats)
		}
	})
	t.Run("AddLayerPythonForm", func(t *testing.T) {
		ds := ts.createCSV("?title=Towns", "name,pop,lat,lon\na,1,1,2\n")
		w := ts.do(req{method: "POST", path: path + "/layers.json", user: "alice", ctype: "application/x-www-form-urlencoded",
			body: []byte("source=finder%3A" + strings.TrimPrefix(ds, "/datasets/"))})
		must(t, w, 201)
		if w.Header().Get("Location") != base+path+"/layers/1.json" {
			t.Fatalf("Location %q", w.Header().Get("Location"))
		}
		l := decode[map[string]any](t, must(t, ts.get(path+"/layers/1.json", "alice"), 200))
		if l["title"] != "Towns" || l["layer_id"] != 1.0 {
			t.Fatalf("layer %v", l)
		}
		doc := mapDoc(t, ts, path, "alice")
		if fmt.Sprint(doc["extent"]) != "[2 1 2 1]" {
			t.Fatalf("extent from the layers: %v", doc["extent"])
		}
	})
	t.Run("UpdatePythonReplacesLayers", func(t *testing.T) {
		// The captured form of the Python client: the whole map echoed, one layer.
		form := "layers%5B%5D%5Bopacity%5D=1.0&layers%5B%5D%5Bsubtitle%5D=&layers%5B%5D%5Bvisible%5D=True&layers%5B%5D%5Blayer_id%5D=0" +
			"&layers%5B%5D%5Btitle%5D=Renamed&layers%5B%5D%5Bsource%5D=finder%3A4&layers%5B%5D%5Btype%5D=POINT&projection=EPSG%3A3785" +
			"&title=My+map+2&tags=&extent%5B%5D=-180.0&extent%5B%5D=-90.0&extent%5B%5D=180.0&extent%5B%5D=90.0&contributor=admin&basemap=Acetate"
		for i := 0; i < 2; i++ { // saving twice must not duplicate layers
			w := ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte(form)})
			doc := decode[map[string]any](t, must(t, w, 200))
			if w.Header().Get("Status") != "200 OK" || doc["title"] != "My map 2" {
				t.Fatalf("update: %v", doc)
			}
		}
		doc := mapDoc(t, ts, path, "alice")
		layers := doc["layers"].([]any)
		if len(layers) != 1 || layers[0].(map[string]any)["title"] != "Renamed" || layers[0].(map[string]any)["source"] != "finder:4" {
			t.Fatalf("layers %v", layers)
		}
		if doc["contributor"] != "alice" {
			t.Fatalf("contributor %v", doc["contributor"])
		}
	})
	t.Run("LayerUpdateAndDelete", func(t *testing.T) {
		ts.do(req{method: "POST", path: path + "/layers.json", user: "alice", ctype: "application/json", body: []byte(`{"source":"url:http://example.com/a.kml","title":"remote","visible":true}`)})
		w := ts.do(req{method: "PUT", path: path + "/layers/1.json", user: "alice", ctype: "application/x-www-form-urlencoded", body: []byte("opacity=0.25&styles[stroke][weight]=3")})
		l := decode[map[string]any](t, must(t, w, 200))
		if l["opacity"] != 0.25 || l["title"] != "remote" || l["styles"].(map[string]any)["stroke"].(map[string]any)["weight"] != 3.0 {
			t.Fatalf("layer after update %v", l)
		}
		must(t, ts.do(req{method: "DELETE", path: path + "/layers/0.json", user: "alice"}), 204)
		doc := mapDoc(t, ts, path, "alice")
		if layers := doc["layers"].([]any); len(layers) != 1 || layers[0].(map[string]any)["layer_id"] != 0.0 || layers[0].(map[string]any)["title"] != "remote" {
			t.Fatalf("layers after delete %v", layers)
		}
		errorOf(t, ts.get(path+"/layers/1.json", "alice"), 404, "not_found", "no layer")
		errorOf(t, ts.get(path+"/layers/x.json", "alice"), 404, "not_found", "no layer")
	})
	t.Run("Who", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "PUT", path: path + ".json", user: "bob", ctype: "application/x-www-form-urlencoded", body: []byte("title=mine")}), 403, "forbidden", "")
		errorOf(t, ts.do(req{method: "POST", path: path + "/layers.json?source=finder:1", user: "bob"}), 403, "forbidden", "")
		errorOf(t, ts.do(req{method: "DELETE", path: path + ".json"}), 401, "unauthorized", "")
		// A hosted instance shares new maps with everyone.
		must(t, ts.get(path+".json", ""), 200)
		// An administrator may make it private; then it needs credentials.
		w := ts.do(req{method: "PUT", path: path + ".json", user: "admin", ctype: "application/json", body: []byte(`{"permissions":[]}`)})
		must(t, w, 200)
		errorOf(t, ts.get(path+".json", ""), 401, "unauthorized", "")
		errorOf(t, ts.get(path+".json", "bob"), 404, "not_found", "")
		must(t, ts.get(path+".json", "alice"), 200)
		must(t, ts.get(path+".json", "admin"), 200)
	})
	t.Run("Delete", func(t *testing.T) {
		w := ts.do(req{method: "DELETE", path: path + ".json", user: "alice", ctype: "application/json"})
		if body := must(t, w, 204); len(body) != 0 || w.Header().Get("Status") != "204 No Content" {
			t.Fatalf("delete: %q %q", body, w.Header().Get("Status"))
		}
		errorOf(t, ts.get(path+".json", "alice"), 404, "not_found", "")
		errorOf(t, ts.do(req{method: "DELETE", path: path, user: "alice"}), 404, "not_found", "")
	})
}

// TestMapAppliancePrivate: on an appliance new maps are private.
func TestMapAppliancePrivate(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	path := ts.createMap(t, "alice", "title=Private&basemap=Acetate")
	errorOf(t, ts.get(path+".json", ""), 401, "unauthorized", "")
	errorOf(t, ts.get(path+".json", "bob"), 404, "not_found", "")
	must(t, ts.get(path+".json", "alice"), 200)
	// On an appliance the owner may share.
	w := ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/x-www-form-urlencoded",
		body: []byte("permissions[][group_id]=everyone&permissions[][permissions][view]=true")})
	doc := decode[map[string]any](t, must(t, w, 200))
	if fmt.Sprint(doc["permissions"]) != "[map[group_id:everyone permissions:map[download:false edit:false view:true]]]" {
		t.Fatalf("permissions %v", doc["permissions"])
	}
	must(t, ts.get(path+".json", ""), 200)
}

// TestMapChoropleth classes the North Carolina counties by births and
// checks the classes against the features themselves.
func TestMapChoropleth(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	body, ct := multipartBody(t, ncFiles("dataset"), nil)
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	id := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	var births []float64
	for _, f := range decode[[]map[string]any](t, must(t, ts.get("/datasets/"+id+"/features.json?limit=200", ""), 200)) {
		births = append(births, f["BIR74"].(float64))
	}
	sort.Float64s(births)
	for _, method := range []string{"Equal Interval", "Quantile", "Standard Deviation", "Max Breaks", "Natural Breaks", "Critical Value"} {
		t.Run(strings.ReplaceAll(method, " ", ""), func(t *testing.T) {
			form := "title=Births&basemap=Acetate&layers[][source]=finder:" + id + "&layers[][styles][type]=CHOROPLETH" +
				"&layers[][styles][fill][selectedAttribute]=BIR74&layers[][styles][fill][colors]=White-Red" +
				"&layers[][styles][fill][classificationType]=" + url.QueryEscape(method) +
				"&layers[][styles][hover]=" + url.QueryEscape("$[NAME]: $[BIR74] births")
			path := ts.createMap(t, "alice", form)
			doc := mapDoc(t, ts, path, "")
			fill := doc["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any)
			cls := fill["classification"].(map[string]any)
			var breaks []float64
			for _, b := range cls["breaks"].([]any) {
				breaks = append(breaks, b.(float64))
			}
			counts := cls["counts"].([]any)
			if len(breaks) != len(counts)+1 || len(counts) == 0 || len(counts) > 5 {
				t.Fatalf("%d breaks for %d classes: %v", len(breaks), len(counts), cls)
			}
			if cls["min"] != births[0] || cls["max"] != births[len(births)-1] || cls["classified"] != 100.0 {
				t.Fatalf("min/max/classified %v %v %v, want %v %v 100", cls["min"], cls["max"], cls["classified"], births[0], births[len(births)-1])
			}
			// Every feature's class, as the layer's features say, holds its value,
			// and the classes hold as many features as the counts say.
			per := make([]int, len(counts))
			feats := decode[[]map[string]any](t, must(t, ts.get(path+"/layers/0/features.json?limit=200", ""), 200))
			for _, f := range feats {
				k := int(f["class"].(float64))
				v := f["BIR74"].(float64)
				last := k == len(counts)-1
				if v < breaks[k] || v > breaks[k+1] || (!last && v == breaks[k+1]) {
					t.Fatalf("%v in class %d [%v, %v]", v, k, breaks[k], breaks[k+1])
				}
				if want := fmt.Sprintf("%v: %v births", f["NAME"], v); f["hover"] != want {
					t.Fatalf("hover %q, want %q", f["hover"], want)
				}
				per[k]++
			}
			for k := range per {
				if float64(per[k]) != counts[k].(float64) {
					t.Fatalf("class %d holds %d features, counts say %v", k, per[k], counts[k])
				}
			}
			if colors := cls["colors"].([]any); len(colors) != len(counts) {
				t.Fatalf("%d colours for %d classes", len(colors), len(counts))
			}
			if method == "Equal Interval" {
				width := (births[len(births)-1] - births[0]) / 5
				for i, b := range breaks {
					if math.Abs(b-(births[0]+float64(i)*width)) > 1e-6 {
						t.Fatalf("equal interval breaks %v", breaks)
					}
				}
			}
		})
	}
}

// TestMapKML downloads a map with a classed layer, a plain layer, a layer
// whose dataset does not exist and a url: layer as KML: a golden file for
// the small map, GDAL for the counties, and a style per class.
func TestMapKML(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=Towns", "name,pop,lat,lon\nAsh,10,35.1,-80.2\nBirch,20,35.2,-80.1\nCedar,35,35.3,-80.0\nDogwood,,35.4,-79.9\n")
	id := strings.TrimPrefix(ds, "/datasets/")
	form := "title=Towns+%26+trails&basemap=Acetate&description=A+%3Csmall%3E+map" +
		"&layers[][source]=finder:" + id + "&layers[][title]=Population&layers[][styles][type]=CHOROPLETH" +
		"&layers[][styles][fill][selectedAttribute]=pop&layers[][styles][fill][classificationType]=Equal+Interval" +
		"&layers[][styles][fill][categories]=2&layers[][styles][fill][colors]=White-Red&layers[][styles][stroke][color]=0x00FF00" +
		"&layers[][styles][stroke][weight]=3&layers[][styles][click]=" + url.QueryEscape("$[name]: $[pop]") +
		"&layers[][source]=finder:" + id + "&layers[][title]=Hidden&layers[][visible]=false" +
		"&layers[][source]=finder:999&layers[][title]=Missing" +
		"&layers[][source]=url:http://example.com/a.kml&layers[][title]=Remote"
	path := ts.createMap(t, "alice", form)
	w := ts.get(path+".kml", "")
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); ct != "application/vnd.google-earth.kml+xml" {
		t.Fatalf("Content-Type %q", ct)
	}
	goldenRaw(t, "map.kml", body)
	for _, want := range []string{"<Folder>", "<NetworkLink>", "http://example.com/a.kml", "#layer0-class0", "#layer0-class1", "Ash: 10",
		"<PolyStyle>", "<LineStyle>", "<width>3</width>"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the KML lacks %q", want)
		}
	}
	if strings.Contains(string(body), "Hidden") {
		t.Error("an invisible layer is in the KML")
	}
	file := filepath.Join(t.TempDir(), "map.kml")
	os.WriteFile(file, body, 0o644)
	info := gdaltest.Ogrinfo(t, file)
	var n int64
	for _, l := range info.Layers {
		n += l.Count
	}
	if n != 4 {
		t.Fatalf("GDAL reads %d placemarks, want 4\n%s", n, info.Output)
	}

	t.Run("Counties", func(t *testing.T) {
		body, ct := multipartBody(t, ncFiles("dataset"), nil)
		w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
		must(t, w, 201)
		nc := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
		path := ts.createMap(t, "alice", "title=Births&basemap=Acetate&layers[][source]=finder:"+nc+"&layers[][styles][type]=CHOROPLETH"+
			"&layers[][styles][fill][selectedAttribute]=BIR74&layers[][styles][fill][classificationType]=Quantile&layers[][styles][fill][colors]=Blue-White")
		kml := must(t, ts.get(path+".kml", ""), 200)
		file := filepath.Join(t.TempDir(), "births.kml")
		os.WriteFile(file, kml, 0o644)
		info := gdaltest.Ogrinfo(t, file)
		if len(info.Layers) != 1 || info.Layers[0].Count != 100 || !gdaltest.Near(info.Layers[0].Extent, [4]float64{-84.32385, 33.88199, -75.45698, 36.58965}, 1e-4) {
			t.Fatalf("GDAL reads\n%s", info.Output)
		}
		doc := mapDoc(t, ts, path, "")
		counts := doc["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any)["classification"].(map[string]any)["counts"].([]any)
		for k, c := range counts {
			if got := strings.Count(string(kml), "<styleUrl>#layer0-class"+strconv.Itoa(k)+"</styleUrl>"); float64(got) != c.(float64) {
				t.Fatalf("class %d: %d placemarks, counts say %v", k, got, c)
			}
		}
	})
	t.Run("ErrPrivate", func(t *testing.T) {
		ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
		path := ts.createMap(t, "alice", "title=Mine&basemap=Acetate")
		w := ts.get(path+".kml", "")
		errorOf(t, w, 401, "unauthorized", "")
		must(t, ts.get(path+".kml", "alice"), 200)
	})
}

// goldenRaw compares got with testdata/golden/name as bytes, rewriting it
// with -update.
func goldenRaw(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file:\n%s", name, got)
	}
}

// TestMapClassesByOriginalName: a layer may name its attribute by the
// column's original name (here "POP", stored as "POP_2" beside "pop"), as
// its features find it; its classes are made over that column too, and
// say the name the features carry.
func TestMapClassesByOriginalName(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	var csv strings.Builder
	csv.WriteString("lat,lon,pop,POP\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&csv, "%d,%d,%d,%d\n", i, i, i, 100*i)
	}
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: []byte(csv.String())})
	must(t, w, 201)
	id := regexp.MustCompile(`/datasets/(\d+)\.json$`).FindStringSubmatch(w.Header().Get("Location"))[1]
	ds := decode[map[string]any](t, must(t, ts.get("/datasets/"+id+".json?include_attributes=1", "alice"), 200))
	var names []string
	for _, a := range ds["data_attributes"].([]any) {
		a := a.(map[string]any)
		names = append(names, fmt.Sprint(a["name"], "/", a["original_name"]))
	}
	if !slices.Contains(names, "POP_2/POP") {
		t.Fatalf("attributes %v: want POP stored as POP_2", names)
	}
	path := ts.createMap(t, "alice", "title=P&basemap=Acetate&layers[][source]=finder:"+id+"&layers[][styles][type]=CHOROPLETH"+
		"&layers[][styles][fill][selectedAttribute]=POP&layers[][styles][fill][classificationType]=Quantile")
	fill := mapDoc(t, ts, path, "alice")["layers"].([]any)[0].(map[string]any)["styles"].(map[string]any)["fill"].(map[string]any)
	cls, ok := fill["classification"].(map[string]any)
	if !ok {
		t.Fatalf("no classes: %v", fill)
	}
	if cls["attribute"] != "POP_2" || cls["max"] != 4000.0 || cls["classified"] != 40.0 {
		t.Fatalf("classes %v: want POP_2's 40 values up to 4000", cls)
	}
	for _, f := range decode[[]map[string]any](t, must(t, ts.get(path+"/layers/0/features.json?limit=100", "alice"), 200)) {
		if k, ok := f["class"].(float64); !ok || k < 0 {
			t.Fatalf("feature without its class: %v", f)
		}
	}
}
