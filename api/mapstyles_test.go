package api_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// sldDoc is what the tests read of an SLD 1.0 or 1.1 document (element
// names without their namespaces).
type sldDoc struct {
	Layers []struct {
		Name  string `xml:"Name"`
		Rules []struct {
			Name   string `xml:"Name"`
			Filter struct {
				Lo   []string `xml:"And>PropertyIsGreaterThanOrEqualTo>Literal"`
				Hi   []string `xml:"And>PropertyIsLessThan>Literal"`
				HiIn []string `xml:"And>PropertyIsLessThanOrEqualTo>Literal"`
			} `xml:"Filter"`
			Fill []struct {
				Params []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:",chardata"`
				} `xml:",any"`
			} `xml:"PolygonSymbolizer>Fill"`
		} `xml:"UserStyle>FeatureTypeStyle>Rule"`
	} `xml:"NamedLayer"`
}

// fillOf is a rule's fill colour.
func (d sldDoc) fillOf(layer, rule int) string {
	for _, f := range d.Layers[layer].Rules[rule].Fill {
		for _, p := range f.Params {
			if p.Name == "fill" {
				return p.Value
			}
		}
	}
	return ""
}

// TestMapStyles: a map's styles as SLD 1.0, SLD 1.1 and MapLibre: one
// rule per class of a choropleth, in the classes' colours, whose filters
// select the classes' counts of features; the list links every format; a
// layer whose dataset the caller may not download is in none of them.
func TestMapStyles(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	public := uploadNC(t, ts, "")
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + public + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
	private := uploadNC(t, ts, "")
	m := postMap(t, ts, "alice", map[string]any{"title": "Births 1974", "basemap": "Acetate",
		"permissions": []any{map[string]any{"group_id": "everyone", "permissions": map[string]any{"view": true}}},
		"layers": []any{
			map[string]any{"source": "finder:" + public, "title": "Births", "opacity": 1,
				"styles": map[string]any{"type": "CHOROPLETH", "stroke": map[string]any{"weight": 0.5, "color": "0x333333"},
					"fill": map[string]any{"selectedAttribute": "BIR74", "classificationType": "Quantile", "categories": 5, "colors": "White-Red", "opacity": 1}}},
			map[string]any{"source": "finder:" + private, "title": "Outline",
				"styles": map[string]any{"type": "PRIMITIVE", "stroke": map[string]any{"weight": 4, "color": "0xff0000"}, "icon": map[string]any{"lineStyle": "dashedThin"}}},
		}})
	classes := apiClasses(t, ts, m, "alice", 0)

	// The list: the map and each layer the caller may see.
	type list struct {
		Styles []struct {
			ID    string
			Links []struct{ Href, Rel, Type string }
		}
	}
	ids := func(who string) string {
		var out []string
		for _, s := range decode[list](t, must(t, ts.get(m+"/styles", who), 200)).Styles {
			out = append(out, s.ID)
			if want := map[bool]int{true: 4, false: 3}[s.ID == "map"]; len(s.Links) != want {
				t.Errorf("%s: style %s links %v", who, s.ID, s.Links)
			}
		}
		return strings.Join(out, ",")
	}
	if got := ids("alice"); got != "map,0,1" {
		t.Errorf("alice's styles %s", got)
	}
	if got := ids("bob"); got != "map,0" {
		t.Errorf("bob's styles %s", got)
	}
	for _, l := range decode[list](t, must(t, ts.get(m+"/styles", "bob"), 200)).Styles[0].Links {
		if l.Rel == "http://www.opengis.net/def/rel/ogc/1.0/map" {
			decodePNG(t, ts.get(strings.TrimPrefix(l.Href, base)+"?width=64", "bob"))
		}
	}
	must(t, ts.get(m+"/styles/1?f=sld10", "bob"), 404)
	must(t, ts.get(m+"/styles/2", "alice"), 404)
	must(t, ts.get(m+"/styles/0?f=svg", "alice"), 400)
	must(t, ts.get(m+"/styles/0?x=1", "alice"), 400)
	must(t, ts.get("/maps/999999/styles", "alice"), 404)

	// The choropleth's rules, in both versions.
	for _, f := range []string{"sld10", "sld11"} {
		w := ts.get(m+"/styles/0?f="+f, "bob")
		body := must(t, w, 200)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.ogc.sld+xml") {
			t.Errorf("%s: Content-Type %s", f, ct)
		}
		var d sldDoc
		if err := xml.Unmarshal(body, &d); err != nil {
			t.Fatalf("%s: %v\n%s", f, err, body)
		}
		if len(d.Layers) != 1 || d.Layers[0].Name != "nc-"+public || len(d.Layers[0].Rules) != len(classes) {
			t.Fatalf("%s: %d layers, rules %+v; want one layer nc-%s of %d rules\n%s", f, len(d.Layers), d.Layers, public, len(classes), body)
		}
		for i, c := range classes {
			r := d.Layers[0].Rules[i]
			hi := append(r.Filter.Hi, r.Filter.HiIn...)
			if d.fillOf(0, i) != c.Color || len(r.Filter.Lo) != 1 || len(hi) != 1 || r.Filter.Lo[0] != fmt.Sprint(c.Lo) || hi[0] != fmt.Sprint(c.Hi) {
				t.Errorf("%s: rule %d %+v fill %s, want class %+v", f, i, r, d.fillOf(0, i), c)
			}
			if (i == len(classes)-1) != (len(r.Filter.HiIn) == 1) {
				t.Errorf("%s: rule %d: only the last class includes its upper break: %+v", f, i, r.Filter)
			}
		}
		if f == "sld11" && !strings.Contains(string(body), `<se:SvgParameter name="fill">`) {
			t.Errorf("SLD 1.1 without SE parameters:\n%.600s", body)
		}
	}
	// The map's: both layers for alice, the dashed red outline second.
	full := string(must(t, ts.get(m+"/styles/map?f=sld10", "alice"), 200))
	if n := strings.Count(full, "<NamedLayer>"); n != 2 || !strings.Contains(full, `<CssParameter name="stroke">#ff0000</CssParameter>`) ||
		!strings.Contains(full, `<CssParameter name="stroke-dasharray">12 8</CssParameter>`) {
		t.Errorf("alice's map style: %d layers\n%s", n, full)
	}
	if bobs := string(must(t, ts.get(m+"/styles/map?f=sld10", "bob"), 200)); strings.Count(bobs, "<NamedLayer>") != 1 || strings.Contains(bobs, "nc-"+private) || strings.Contains(bobs, "Outline") {
		t.Errorf("bob's map style shows the private layer:\n%s", bobs)
	}

	// MapLibre: the source is the dataset's tiles, the fill its classes.
	w := ts.get(m+"/styles/map", "bob")
	if ct := w.Header().Get("Content-Type"); ct != "application/vnd.maplibre.style+json" {
		t.Errorf("MapLibre Content-Type %s", ct)
	}
	doc := decode[struct {
		Version int
		Sources map[string]struct{ Type, URL string }
		Layers  []struct {
			ID, Type, Source string
			SourceLayer      string `json:"source-layer"`
			Paint            map[string]any
		}
	}](t, must(t, w, 200))
	src, ok := doc.Sources["nc-"+public]
	if doc.Version != 8 || len(doc.Sources) != 1 || !ok || src.Type != "vector" {
		t.Fatalf("MapLibre style %+v", doc)
	}
	must(t, ts.get(strings.TrimPrefix(src.URL, base), "bob"), 200)
	fill, _ := json.Marshal(doc.Layers[0].Paint["fill-color"])
	for _, c := range classes {
		if !strings.Contains(string(fill), `"`+c.Color+`"`) {
			t.Errorf("fill-color %s lacks class colour %s", fill, c.Color)
		}
	}
	if l := doc.Layers[0]; l.Type != "fill" || l.Source != "nc-"+public || l.SourceLayer != "nc-"+public {
		t.Errorf("first layer %+v", l)
	}

	// Tagged: If-None-Match gives a 304.
	w = ts.get(m+"/styles/0?f=sld10", "bob")
	etag := w.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	must(t, ts.do(req{method: "GET", path: m + "/styles/0?f=sld10", user: "bob", header: map[string]string{"If-None-Match": etag}}), 304)
}

// TestMapStyleInQGIS: QGIS loads a choropleth's SLD onto the layer it
// reads through OGC API Features and shows the same classes: a rule per
// class in its colour, selecting the class's features.
func TestMapStyleInQGIS(t *testing.T) {
	t.Parallel()
	py := qgisPython(t)
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	m := createChoroplethMap(t, ts, "alice", id)
	classes := apiClasses(t, ts, m, "alice", 0)
	for _, f := range []string{"sld10", "sld11"} {
		path := filepath.Join(t.TempDir(), "style.sld")
		if err := os.WriteFile(path, must(t, ts.get(m+"/styles/0?f="+f, "alice"), 200), 0o600); err != nil {
			t.Fatal(err)
		}
		out := runQGIS(t, py, "testdata/sld_qgis.py", listen(t, ts.handler), "nc-"+id, path)
		var got struct {
			Valid, Loaded bool
			Message       string
			Renderer      string
			Rules         []struct {
				Label, Filter, Color string
				Count                int64
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("qgis said: %s", out)
		}
		if !got.Valid || !got.Loaded || got.Renderer != "RuleRenderer" || len(got.Rules) != len(classes) {
			t.Fatalf("%s: qgis %+v, want %d rules", f, got, len(classes))
		}
		for i, c := range classes {
			if r := got.Rules[i]; r.Color != c.Color || r.Count != c.Count {
				t.Errorf("%s: QGIS rule %d %+v, class %+v", f, i, r, c)
			}
		}
	}
}

// TestMapStyleValidMapLibre: the MapLibre style of a map of every kind of
// layer (classes, graduated and proportional symbols, cased and dashed
// lines) is valid by MapLibre's own style specification.
func TestMapStyleValidMapLibre(t *testing.T) {
	t.Parallel()
	needStyleSpec(t)
	ts := newServer(t)
	nc := uploadNC(t, ts, "")
	towns := uploadCSV(t, ts, "towns", "name,lat,lon,pop\nAlpha,35,-79,5000\nBeta,36,-78,700\nGamma,35.5,-80,\n")
	m := postMap(t, ts, "alice", map[string]any{"title": "Every kind", "basemap": "Acetate", "layers": []any{
		map[string]any{"source": "finder:" + nc, "styles": map[string]any{"type": "CHOROPLETH",
			"fill": map[string]any{"selectedAttribute": "BIR74", "classificationType": "Quantile", "categories": 5, "colors": "White-Red"}}},
		map[string]any{"source": "finder:" + nc, "styles": map[string]any{"type": "GRADUATED", "icon": map[string]any{"lineStyle": "cased", "symbol": "square"},
			"fill": map[string]any{"selectedAttribute": "SID74", "classificationType": "Equal Interval", "categories": 4, "colors": "White-Blue"}}},
		map[string]any{"source": "finder:" + towns, "styles": map[string]any{"type": "PROPORTIONAL", "icon": map[string]any{"selectedAttribute": "pop", "size": 2}}},
		map[string]any{"source": "finder:" + nc, "styles": map[string]any{"type": "PRIMITIVE", "icon": map[string]any{"lineStyle": "dashedThick"}, "stroke": map[string]any{"weight": 2}}},
		map[string]any{"source": "finder:" + towns, "styles": map[string]any{"type": "POINT", "density": "heatmap", "icon": map[string]any{"color": "0x2b8cbe"}}},
	}})
	body := must(t, ts.get(m+"/styles/map", "alice"), 200)
	// The heatmap layer's points are a heatmap of the layer's colour,
	// giving way to its circles from zoom 11.
	var doc struct {
		Layers []map[string]any `json:"layers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	var heats []map[string]any
	for _, l := range doc.Layers {
		if l["type"] == "heatmap" {
			heats = append(heats, l)
		}
	}
	if len(heats) != 1 || !strings.Contains(fmt.Sprint(heats[0]["paint"]), "rgba(43,140,190,0.85)") || heats[0]["maxzoom"] != 13.0 {
		t.Fatalf("heatmap layers %v", heats)
	}
	// It is the web application's heatmap (style.js heatmapSpecs), to the
	// number: the Go and JavaScript copies of its stops agree.
	// (Output: node warns on stderr that style.js is a module of a
	// package not marked as one.)
	out, err := exec.Command("node", "testdata/heatmap_paint.mjs", "#2b8cbe", "1").Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var web map[string]any
	if err := json.Unmarshal(out, &web); err != nil {
		t.Fatalf("heatmap_paint.mjs said: %s", out)
	}
	if got := map[string]any{"paint": heats[0]["paint"], "maxzoom": heats[0]["maxzoom"]}; !reflect.DeepEqual(got, web) {
		t.Errorf("the style's heatmap is not the web application's:\n%v\n%v", got, web)
	}
	if errs := mapLibreErrors(t, body); len(errs) > 0 {
		t.Errorf("the map's MapLibre style is invalid: %v\n%s", errs, body)
	}
	if n := strings.Count(string(body), `"source-layer"`); n < 16 {
		t.Errorf("%d layers in the style, want the 3 or 4 of each of the 5 map layers:\n%s", n, body)
	}
	// The check can fail: a style made wrong is refused.
	bad := strings.Replace(string(body), `"version":8`, `"version":7`, 1)
	if errs := mapLibreErrors(t, []byte(bad)); len(errs) == 0 {
		t.Error("a style of version 7 passes")
	}
}

// needStyleSpec skips the test without node and MapLibre's style
// specification (npm ci), or fails it when MAPCOMMONS_REQUIRE_NPM=1.
func needStyleSpec(t *testing.T) {
	t.Helper()
	spec := filepath.Join("..", "node_modules", "@maplibre", "maplibre-gl-style-spec")
	_, err := os.Stat(spec)
	_, nerr := exec.LookPath("node")
	if err != nil || nerr != nil {
		if os.Getenv("MAPCOMMONS_REQUIRE_NPM") == "1" {
			t.Fatalf("node or %s is missing (npm ci) and MAPCOMMONS_REQUIRE_NPM=1", spec)
		}
		t.Skipf("node or %s is missing: run npm ci", spec)
	}
}

// mapLibreErrors are the errors MapLibre's style specification finds in a
// style document (testdata/maplibre_validate.mjs); none when it is valid.
func mapLibreErrors(t *testing.T, style []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "style.json")
	if err := os.WriteFile(path, style, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", "testdata/maplibre_validate.mjs", path).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var errs []string
	if err := json.Unmarshal(out, &errs); err != nil {
		t.Fatalf("the validator said: %s", out)
	}
	return errs
}
