package render

import (
	"context"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
	"mapcommons/internal/sqlitetest"
	"mapcommons/style"
)

// counties loads testdata/real/nc.shp (North Carolina's 100 counties)
// into an embedded store.
func counties(tb testing.TB) (mapcommons.Services, *mapcommons.Dataset) {
	tb.Helper()
	open := func(ext string) *os.File {
		f, err := os.Open("../testdata/real/nc" + ext)
		if err != nil {
			tb.Skipf("real data: %v", err)
		}
		tb.Cleanup(func() { f.Close() })
		return f
	}
	prj, _ := os.ReadFile("../testdata/real/nc.prj")
	r, err := shapefile.Open(open(".shp"), open(".dbf"), open(".shx"), shapefile.Options{PRJ: string(prj)})
	if err != nil {
		tb.Fatal(err)
	}
	s := sqlitetest.Open(tb, filepath.Join(tb.TempDir(), "store.db")).Services()
	ds := &mapcommons.Dataset{Type: "shp", Metadata: mapcommons.Metadata{Title: "North Carolina"}}
	if err := s.Datasets.CreateDataset(context.Background(), ds, r); err != nil {
		tb.Fatal(err)
	}
	if ds.FeatureCount != 100 || ds.Extent == nil {
		tb.Fatalf("%d counties, extent %v", ds.FeatureCount, ds.Extent)
	}
	return s, ds
}

var ramp = []int{0xfee5d9, 0xfcae91, 0xfb6a4a, 0xde2d26, 0xa50f15}

func choropleth(attr string) mapcommons.Layer {
	l := style.NewLayer() // the default outline: 0x333333, 1 pixel, alpha 0.75
	l.Styles.Type = mapcommons.LayerChoropleth
	l.Styles.Fill.SelectedAttribute = attr
	l.Styles.Fill.ClassificationType = "Quantile"
	l.Styles.Fill.Categories = 5
	l.Styles.Fill.Colors = ramp
	l.Styles.Fill.Opacity = 1
	return l
}

// interior is a pixel well inside a polygon (device pixels of px): the
// middle of the widest run inside it along one of a few rows, the one
// farthest from any edge, and that distance.
func interior(polys [][][]float64, px func(lon, lat float64) (float64, float64)) (x, y int, dist float64) {
	var rings [][][2]float64
	y0, y1 := math.Inf(1), math.Inf(-1)
	for _, p := range polys {
		for _, r := range p {
			var pr [][2]float64
			for i := 0; i+1 < len(r); i += 2 {
				a, b := px(r[i], r[i+1])
				pr = append(pr, [2]float64{a, b})
				y0, y1 = min(y0, b), max(y1, b)
			}
			rings = append(rings, pr)
		}
	}
	dist = -1
	for k := 1; k < 20; k++ {
		yc := math.Floor(y0+(y1-y0)*float64(k)/20) + 0.5
		var xs []float64
		for _, r := range rings {
			for i := 1; i < len(r); i++ {
				a, b := r[i-1], r[i]
				if (a[1] <= yc) != (b[1] <= yc) {
					xs = append(xs, a[0]+(yc-a[1])/(b[1]-a[1])*(b[0]-a[0]))
				}
			}
		}
		slices.Sort(xs)
		for i := 0; i+1 < len(xs); i += 2 {
			xc := math.Floor((xs[i]+xs[i+1])/2) + 0.5
			d := math.Inf(1)
			for _, r := range rings {
				for j := 1; j < len(r); j++ {
					d = min(d, segDist(xc, yc, r[j-1], r[j]))
				}
			}
			if d > dist {
				x, y, dist = int(xc), int(yc), d
			}
		}
	}
	return x, y, dist
}

func segDist(x, y float64, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = max(0, min(1, ((x-a[0])*dx+(y-a[1])*dy)/l))
	}
	return math.Hypot(x-a[0]-t*dx, y-a[1]-t*dy)
}

// TestChoroplethCounties: each county's interior has the colour of its
// class, by the classes style.Classifier gives the layer.
func TestChoroplethCounties(t *testing.T) {
	s, ds := counties(t)
	ctx := context.Background()
	l := choropleth("BIR74")
	classifier := style.NewClassifier(s.Features)
	classes, err := classifier.Classify(ctx, &l, ds)
	if err != nil || classes == nil || len(classes.Counts) != 5 {
		t.Fatalf("classes %+v, %v", classes, err)
	}
	e := ds.Extent
	for _, crs := range []string{CRSMercator, CRSLonLat} {
		req := Request{Layers: []Layer{{Layer: l, Dataset: ds}}, BBox: [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, Width: 1000, Height: 400, CRS: crs}
		res, err := Draw(ctx, s.Features, classifier, req)
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Layers[0]; r.Read != 100 || r.Capped {
			t.Fatalf("%+v", r)
		}
		// The test's own projection.
		w, h := float64(res.Image.Rect.Dx()), float64(res.Image.Rect.Dy())
		py := func(lat float64) float64 { return lat }
		if crs == CRSMercator {
			py = mercatorY
		}
		px := func(lon, lat float64) (float64, float64) {
			return (lon - e.MinX) / (e.MaxX - e.MinX) * w, (py(e.MaxY) - py(lat)) / (py(e.MaxY) - py(e.MinY)) * h
		}
		col := mapcommons.AttrIndex(ds.Attributes, "BIR74")
		checked, perClass := 0, map[int]int{}
		err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
			g, err := wkb.Decode(f.Geometry)
			if err != nil {
				return err
			}
			polys := [][][]float64{g.Rings}
			if g.Type == wkb.MultiPolygon {
				polys = nil
				for _, p := range g.Parts {
					polys = append(polys, p.Rings)
				}
			}
			x, y, d := interior(polys, px)
			if d < 3 {
				return nil // too thin here for its outline to stay off
			}
			v := style.NumberOf(f.Values[col])
			b := classes.Breaks
			k := -1
			for i := range classes.Counts {
				if v >= b[i] && (v < b[i+1] || i == len(classes.Counts)-1 && v <= b[i+1]) {
					k = i
					break
				}
			}
			if k < 0 {
				t.Errorf("county %d: %g is in no class of %v", f.ID, v, b)
				return nil
			}
			c := classes.Colors[k]
			want := color.NRGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 0xff}
			if got := at(res.Image, x, y); got != want {
				t.Errorf("%s: county %d (%s %g, class %d) at %d,%d is %v, want %v", crs, f.ID, "BIR74", v, k, x, y, got, want)
			}
			checked++
			perClass[k]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if checked < 90 || len(perClass) != 5 {
			t.Errorf("%s: %d counties checked, by class %v", crs, checked, perClass)
		}
	}
}

// BenchmarkDraw draws 1024×768 maps: 100,000 random points and 2,000
// long lines (from memory), and the counties' choropleth (from the
// embedded store).
func BenchmarkDraw(b *testing.B) {
	ctx := context.Background()
	b.Run("Points100k", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		fs := &memFeatures{}
		for i := range 100_000 {
			fs.feats = append(fs.feats, mapcommons.Feature{Position: int64(i), ID: int64(i + 1),
				Geometry: wkb.AppendPoint(nil, -100+rng.Float64()*40, 25+rng.Float64()*25)})
		}
		ds := &mapcommons.Dataset{ID: 1, FeatureCount: 100_000}
		l := style.NewLayer()
		l.Styles.Type = mapcommons.LayerPoint
		req := Request{Layers: []Layer{{Layer: l, Dataset: ds}}, BBox: [4]float64{-100, 25, -60, 50}, Width: 1024, Height: 768}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Draw(ctx, fs, nil, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("TileZ0Points1M", func(b *testing.B) {
		// The zoom 0 map tile of a million points over the world.
		rng := rand.New(rand.NewPCG(5, 6))
		fs := &memFeatures{}
		for i := range 1_000_000 {
			fs.feats = append(fs.feats, mapcommons.Feature{Position: int64(i), ID: int64(i + 1),
				Geometry: wkb.AppendPoint(nil, -180+rng.Float64()*360, -85+rng.Float64()*170)})
		}
		ds := &mapcommons.Dataset{ID: 1, FeatureCount: 1_000_000}
		l := style.NewLayer()
		l.Styles.Type = mapcommons.LayerPoint
		req := Request{Layers: []Layer{{Layer: l, Dataset: ds}}, BBox: [4]float64{-180, -maxMercatorLat, 180, maxMercatorLat}, Width: 256, Height: 256}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Draw(ctx, fs, nil, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Lines2k", func(b *testing.B) {
		// 2,000 lines of 20 vertices wandering across the map.
		rng := rand.New(rand.NewPCG(3, 4))
		fs := &memFeatures{}
		for i := range 2000 {
			var xy []float64
			x, y := -100+rng.Float64()*40, 25+rng.Float64()*25
			for range 20 {
				xy = append(xy, x, y)
				x, y = max(-100, min(-60, x+rng.NormFloat64()*4)), max(25, min(50, y+rng.NormFloat64()*3))
			}
			fs.feats = append(fs.feats, mapcommons.Feature{Position: int64(i), ID: int64(i + 1), Geometry: wkb.AppendLineString(nil, xy)})
		}
		ds := &mapcommons.Dataset{ID: 1, FeatureCount: 2000, GeometryMask: 1 << wkb.LineString}
		l := style.NewLayer()
		l.Styles.Type = mapcommons.LayerPrimitive
		req := Request{Layers: []Layer{{Layer: l, Dataset: ds}}, BBox: [4]float64{-100, 25, -60, 50}, Width: 1024, Height: 768}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Draw(ctx, fs, nil, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Counties", func(b *testing.B) {
		s, ds := counties(b)
		classifier := style.NewClassifier(s.Features)
		e := ds.Extent
		req := Request{Layers: []Layer{{Layer: choropleth("BIR74"), Dataset: ds}}, BBox: [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, Width: 1024, Height: 768}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Draw(ctx, s.Features, classifier, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
