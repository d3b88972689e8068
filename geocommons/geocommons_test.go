package geocommons

import (
	"net/url"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/params"
	"mapcommons/style"
)

func parse(t testing.TB, query string) params.Params {
	t.Helper()
	p := params.Params{}
	if err := p.ParseQuery(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return p
}

func TestFeatureQuery(t *testing.T) {
	q, err := FeatureQuery(parse(t, "bbox=5,40,15,50&start=30&limit=50000000&order=desc&sort=x"+
		"&filter[x][][min]=1&filter[x][][max]=2&filter[cat][][in]=a|b&lat=45&lon=10&radius=100&units=mi&with_distance=1"))
	if err != nil {
		t.Fatal(err)
	}
	if *q.BBox != (mapcommons.BBox{W: 5, S: 40, E: 15, N: 50}) || q.Offset != 30 || q.Limit != mapcommons.MaxFeatureLimit ||
		!q.Descending || q.Sort != "x" || !q.WithDistance {
		t.Errorf("query %+v", q)
	}
	if n := q.Near; n == nil || n.Kind != mapcommons.NearPoint || n.Units != "miles" || n.Radius != 100 || n.XY[0] != 10 || n.XY[1] != 45 {
		t.Errorf("near %+v", q.Near)
	}
	// The filters in a stable order: by attribute, then by operator.
	if len(q.Filters) != 3 || q.Filters[0].Attr != "cat" || q.Filters[0].Op != mapcommons.OpIn || strings.Join(q.Filters[0].Values, ",") != "a,b" ||
		q.Filters[1].Op != "max" || q.Filters[2].Op != "min" {
		t.Errorf("filters %+v", q.Filters)
	}
	// Defaults: a page of the default size; grouped, every group.
	if q, err := FeatureQuery(parse(t, "")); err != nil || q.Limit != mapcommons.DefaultFeatureLimit || q.Near != nil || q.BBox != nil {
		t.Errorf("defaults %+v, %v", q, err)
	}
	if q, err := FeatureQuery(parse(t, "group_by[]=cat&aggregates[][name]=x&aggregates[][calc]=AVERAGE")); err != nil ||
		q.Limit != mapcommons.MaxFeatureLimit || q.GroupBy[0] != "cat" || q.Aggregates[0] != (mapcommons.Aggregate{Name: "x", Calc: "average"}) {
		t.Errorf("grouped %+v, %v", q, err)
	}
	for query, want := range map[string]string{
		"bbox=1,2,3":                       "bbox: needs 4 numbers",
		"bbox=0,50,10,40":                  "bbox: the south edge 50 is north of the north edge 40",
		"bbox=0,0,200,10":                  "bbox: longitude 200 outside -180..180",
		"bbox=a,0,1,1":                     `bbox: "a" is not a number`,
		"start=-1":                         "start: must not be negative",
		"limit=x":                          `limit: not an integer: "x"`,
		"order=sideways":                   "order:",
		"lat=45&lon=10":                    "radius: missing",
		"radius=5":                         "radius: needs lat/lon",
		"lat=45&lon=10&radius=-1":          "radius: must not be negative",
		"lat=95&lon=10&radius=1":           "lat: latitude 95 outside",
		"polygon=0,0,1,0,1,1,0,1":          "polygon: the ring is not closed",
		"points=1,2&line=0,0,1,1&radius=1": "line: give one of",
		"with_distance=1":                  "with_distance: needs a geometry",
		"aggregates[][name]=x":             "aggregates: element 0 needs both name and calc",
		"filter=x":                         "filter: expected",
		"units=furlongs&radius=1":          `units: "furlongs" is not one of`,
		"intersect=some&radius=1":          "intersect:",
	} {
		_, err := FeatureQuery(parse(t, query))
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(mapcommons.ErrorMessage(err), want) {
			t.Errorf("%s: %v, want EINVALID saying %q", query, err, want)
		}
	}
}

func TestMapParams(t *testing.T) {
	f, err := MapParams(parse(t, "map[title]=Wells&map[basemap]=Acetate&map[extent]=-80,35,-78,36&map[tags]=water,wells"+
		"&map[layers][][source]=finder:3&map[layers][][styles][type]=choropleth&map[layers][][styles][fill][selectedAttribute]=depth"))
	if err != nil {
		t.Fatal(err)
	}
	if *f.Title != "Wells" || *f.Basemap != "Acetate" || *f.Extent != [4]float64{-80, 35, -78, 36} || len(*f.Tags) != 2 || !f.LayersGiven || len(f.Layers) != 1 {
		t.Errorf("map fields %+v", f)
	}
	ds := &mapcommons.Dataset{ID: 3, Metadata: mapcommons.Metadata{Title: "Wells of the county"}, GeometryMask: 1 << 1}
	lookup := func(source string) *mapcommons.Dataset {
		if id, ok := DatasetOfSource(source); ok && id == 3 {
			return ds
		}
		return nil
	}
	l, err := LayerParams(f.Layers[0], nil, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if l.Source != "finder:3" || l.Title != ds.Title || !l.Visible || l.Opacity != mapcommons.DefaultLayerOpacity ||
		l.Styles.Type != mapcommons.LayerChoropleth || l.Styles.Fill.SelectedAttribute != "depth" || l.Styles.Icon.Size != mapcommons.DefaultIconSize {
		t.Errorf("layer %+v", l)
	}
	if f.Layers[0].Path() != "map.layers[0]" && f.Layers[0].Path() != "layers[0]" {
		t.Errorf("path %q", f.Layers[0].Path())
	}
	for query, want := range map[string]string{
		"layers[][source]=ftp:x":                                      `layers[0].source: "ftp:x" is neither`,
		"layers[][source]=finder:3&layers[][opacity]=2":               "layers[0].opacity",
		"layers[][source]=finder:3&layers[][styles][type]=hexbin":     `"HEXBIN" is not a layer type`,
		"layers[][source]=finder:3&layers[][styles][icon][color]=red": `"red" is not a colour`,
	} {
		f, err := MapParams(parse(t, query))
		if err == nil {
			_, err = LayerParams(f.Layers[0], nil, lookup)
		}
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(mapcommons.ErrorMessage(err), want) {
			t.Errorf("%s: %v, want EINVALID saying %q", query, err, want)
		}
	}
}

// TestLayerDensity: a layer's styles.density is read in any case and kept
// lower-case, kept when not given, cleared when blank, and an unknown one is
// refused naming its path.
func TestLayerDensity(t *testing.T) {
	read := func(query string, base *mapcommons.Layer) (mapcommons.Layer, error) {
		t.Helper()
		f, err := MapParams(parse(t, query))
		if err != nil {
			return mapcommons.Layer{}, err
		}
		return LayerParams(f.Layers[0], base, func(string) *mapcommons.Dataset { return nil })
	}
	for _, c := range []struct{ given, want string }{
		{"Heatmap", mapcommons.DensityHeatmap}, {"CLUSTERS", mapcommons.DensityClusters}, {" none ", mapcommons.DensityNone},
		{"auto", mapcommons.DensityAuto}, {"", ""},
	} {
		l, err := read("layers[][source]=finder:3&layers[][styles][density]="+url.QueryEscape(c.given), nil)
		if err != nil || l.Styles.Density != c.want {
			t.Errorf("density %q: %q, %v; want %q", c.given, l.Styles.Density, err, c.want)
		}
	}
	base := style.NewLayer()
	base.Source, base.Styles.Density = "finder:3", mapcommons.DensityHeatmap
	if l, err := read("layers[][title]=renamed", &base); err != nil || l.Styles.Density != mapcommons.DensityHeatmap {
		t.Errorf("not given: %q, %v", l.Styles.Density, err)
	}
	if l, err := read("layers[][styles][density]=", &base); err != nil || l.Styles.Density != "" {
		t.Errorf("blank: %q, %v", l.Styles.Density, err)
	}
	_, err := read("layers[][source]=finder:3&layers[][styles][density]=Hexbins", nil)
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(mapcommons.ErrorMessage(err), `layers[0].styles.density: "Hexbins" is not a density`) {
		t.Errorf("unknown density: %v", err)
	}
}

// FuzzFeatureQuery: any query string reads as a query or an EINVALID,
// never a panic.
func FuzzFeatureQuery(f *testing.F) {
	for _, s := range []string{"bbox=5,40,15,50&limit=30", "lat=45&lon=10&radius=100&units=mi", "filter[x][][min]=1&filter[c][][in]=a|b",
		"polygon=0,0,1,0,1,1,0,0&radius=0&intersect=full", "group_by[]=cat&aggregates[][name]=x&aggregates[][calc]=sum", "bbox[]=1&bbox[]=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		p := params.Params{}
		if p.ParseQuery(query) != nil {
			return
		}
		q, err := FeatureQuery(p)
		if err != nil && mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Fatalf("%q: %v", query, err)
		}
		if err == nil && q == nil {
			t.Fatalf("%q: no query and no error", query)
		}
	})
}

// FuzzMapParams: any query string reads as a map and layers or an
// EINVALID, never a panic.
func FuzzMapParams(f *testing.F) {
	for _, s := range []string{"title=A&basemap=B&layers[][source]=finder:1", "map[layers][][styles][fill][colors]=0xff0000,0x00ff00",
		"layers[][source]=finder:1&layers[][styles][temporal][timeline][begin]=2020", "permissions[][group_id]=everyone&permissions[][permissions][view]=True"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		p := params.Params{}
		if p.ParseQuery(query) != nil {
			return
		}
		m, err := MapParams(p)
		if err != nil {
			if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
				t.Fatalf("%q: %v", query, err)
			}
			return
		}
		for _, n := range m.Layers {
			if _, err := LayerParams(n, nil, func(string) *mapcommons.Dataset { return nil }); err != nil && mapcommons.ErrorCode(err) != mapcommons.EINVALID {
				t.Fatalf("%q: %v", query, err)
			}
		}
	})
}
