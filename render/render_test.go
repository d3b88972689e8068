package render

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/style"
)

// memFeatures serves features from memory: the box and the limit of a
// query, as a store answers them (in order).
type memFeatures struct {
	mapcommons.FeatureService
	feats []mapcommons.Feature
	scans int
}

func (m *memFeatures) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	m.scans++
	var n int64
	var f mapcommons.Feature
	for i := range m.feats {
		if err := ctx.Err(); err != nil {
			return err
		}
		if q.Limit >= 0 && n >= q.Limit {
			return nil
		}
		if b := q.BBox; b != nil {
			r, ok, err := wkb.BoundsOf(m.feats[i].Geometry)
			if err != nil || !ok || r.MaxX < b.W || r.MinX > b.E || r.MaxY < b.S || r.MinY > b.N {
				continue
			}
		}
		f = m.feats[i]
		if q.NoValues {
			f.Values = nil
		}
		n++
		if err := fn(&f); err != nil {
			return err
		}
	}
	return nil
}

func geom(t testing.TB, s string) []byte {
	t.Helper()
	b, err := wkb.ParseWKT(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return b
}

// dataset is a dataset of one float attribute v over geometries (WKT) and
// its features.
func dataset(t testing.TB, wkts ...string) (*mapcommons.Dataset, *memFeatures) {
	t.Helper()
	ds := &mapcommons.Dataset{ID: 1, Attributes: []mapcommons.Attribute{{Name: "v", Type: mapcommons.AttrFloat}}, FeatureCount: int64(len(wkts))}
	m := &memFeatures{}
	for i, s := range wkts {
		m.feats = append(m.feats, mapcommons.Feature{Position: int64(i), ID: int64(i + 1), Values: []any{float64(i)}, Geometry: geom(t, s)})
	}
	return ds, m
}

func ptr[T any](v T) *T { return &v }

// layer is a visible, opaque layer of type typ with no outline.
func layer(typ string) mapcommons.Layer {
	l := style.NewLayer()
	l.Styles.Type = typ
	l.Styles.Fill.Opacity = 1
	l.Styles.Stroke.Alpha = 0
	return l
}

func drawMap(t testing.TB, fs mapcommons.FeatureService, req Request) *Result {
	t.Helper()
	res, err := Draw(context.Background(), fs, style.NewClassifier(fs), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// at is the colour at x, y, not premultiplied.
func at(img *image.RGBA, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.RGBAAt(x, y)).(color.NRGBA)
}

func near(a, b uint8, tol int) bool { return math.Abs(float64(a)-float64(b)) <= float64(tol) }

func wantColor(t *testing.T, img *image.RGBA, x, y int, want color.NRGBA, tol int) {
	t.Helper()
	got := at(img, x, y)
	if !near(got.A, want.A, tol) || want.A > 0 && (!near(got.R, want.R, tol) || !near(got.G, want.G, tol) || !near(got.B, want.B, tol)) {
		t.Errorf("pixel %d,%d is %v, want %v", x, y, got, want)
	}
}

func wantEmpty(t *testing.T, img *image.RGBA, x, y int) {
	t.Helper()
	if c := img.RGBAAt(x, y); c.A != 0 {
		t.Errorf("pixel %d,%d is %v, want transparent", x, y, c)
	}
}

var red = color.NRGBA{0xff, 0, 0, 0xff}

// lonLat100 is the box 0..10 drawn 100×100 in plate carrée: lon 0.1° a
// pixel, latitude 10 at the top.
func lonLat100(layers ...Layer) Request {
	return Request{Layers: layers, BBox: [4]float64{0, 0, 10, 10}, Width: 100, Height: 100, CRS: CRSLonLat}
}

func TestPolygonFillAndHoles(t *testing.T) {
	// The hole of the first is given the shell's orientation, that of the
	// second the opposite: both stay empty. The second is a multipolygon
	// of two parts.
	ds, fs := dataset(t,
		"POLYGON ((1 1, 4 1, 4 9, 1 9, 1 1), (2 4, 3 4, 3 6, 2 6, 2 4))",
		"MULTIPOLYGON (((6 1, 9 1, 9 4, 6 4, 6 1), (7 2, 7 3, 8 3, 8 2, 7 2)), ((6 6, 9 6, 9 9, 6 9, 6 6)))")
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Fill.Color = ptr(0xff0000)
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	// pixel(lon, lat) of the middle of the 0.1° cell.
	px := func(lon, lat float64) (int, int) { return int(lon * 10), int((10 - lat) * 10) }
	for _, in := range [][2]float64{{1.5, 1.5}, {3.5, 8.5}, {2.5, 3.5}, {2.5, 6.5}, {6.5, 1.5}, {8.5, 3.5}, {7.5, 7.5}, {8.9, 8.9}} {
		x, y := px(in[0], in[1])
		wantColor(t, img, x, y, red, 0)
	}
	for _, out := range [][2]float64{{0.5, 0.5}, {5, 5}, {2.5, 5}, {7.5, 2.5}, {7.5, 5}, {9.5, 9.5}, {4.2, 5}} {
		x, y := px(out[0], out[1])
		wantEmpty(t, img, x, y)
	}
	// An outline: the stroke's colour astride the edge, over the fill.
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x000000), Alpha: 1, Weight: ptr(2.0)}
	img2 := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	for _, p := range [][2]int{{9, 50}, {10, 50}, {40, 50}, {39, 50}, {25, 10}, {25, 90}, {20, 45}} {
		wantColor(t, img2, p[0], p[1], color.NRGBA{0, 0, 0, 0xff}, 0)
	}
	wantColor(t, img2, 12, 50, red, 0)
	wantEmpty(t, img2, 7, 50)

	// The edge is antialiased: the pixel across x = 1 is red where it is
	// inside, empty left of it.
	wantEmpty(t, img, 9, 50)
	wantColor(t, img, 10, 50, red, 0)
}

// TestDeepZoom: features far bigger than the image (millions of pixels
// across) are clipped, not drawn wrong.
func TestDeepZoom(t *testing.T) {
	ds, fs := dataset(t, "POLYGON ((1 1, 9 1, 9 9, 1 9, 1 1))", "LINESTRING (0 5.00005, 10 5.00005)")
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Fill.Color = ptr(0xff0000)
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x0000ff), Alpha: 1, Weight: ptr(2.0)}
	req := Request{Layers: []Layer{{Layer: l, Dataset: ds}}, BBox: [4]float64{5, 5, 5.0001, 5.0001}, Width: 100, Height: 100}
	img := drawMap(t, fs, req).Image
	for _, p := range [][2]int{{0, 0}, {99, 99}, {0, 99}, {99, 0}, {50, 20}} {
		wantColor(t, img, p[0], p[1], red, 0)
	}
	// The line across the middle, 2 pixels wide.
	y := int(math.Round((mercatorY(5.0001) - mercatorY(5.00005)) / (mercatorY(5.0001) - mercatorY(5)) * 100))
	for _, x := range []int{0, 50, 99} {
		wantColor(t, img, x, y-1, color.NRGBA{0, 0, 0xff, 0xff}, 2)
		wantColor(t, img, x, y+2, red, 0)
		wantColor(t, img, x, y-3, red, 0)
	}
}

func TestLine(t *testing.T) {
	ds, fs := dataset(t, "LINESTRING (1 5.05, 9 5.05)") // along the middle of row 49
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x0000ff), Alpha: 1, Weight: ptr(4.0)}
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	blue := color.NRGBA{0, 0, 0xff, 0xff}
	// Width 4 around y = 49.5: rows 48 to 50 full, 47 and 51 half.
	for _, y := range []int{48, 49, 50} {
		wantColor(t, img, 50, y, blue, 0)
	}
	for _, y := range []int{47, 51} {
		if a := img.RGBAAt(50, y).A; !near(a, 128, 2) {
			t.Errorf("row %d: alpha %d, want half", y, a)
		}
	}
	// Farther than width/2 + 1 from the line: nothing.
	for _, y := range []int{44, 45, 46, 52, 53, 54} {
		wantEmpty(t, img, 50, y)
	}
	// Butt caps: the line ends at x = 10 and 90.
	wantEmpty(t, img, 9, 49)
	wantEmpty(t, img, 90, 49)
	wantColor(t, img, 10, 49, blue, 0)
	wantColor(t, img, 89, 49, blue, 0)
}

// TestBinned: a stroke over a large box, drawn cell by cell, is the
// stroke drawn in one pass (translucent, so that a pixel composited twice
// would show).
func TestBinned(t *testing.T) {
	ds, fs := dataset(t, "LINESTRING (0.2 0.3, 9.7 9.1, 9.9 0.4, 0.3 4.1)", "POLYGON ((0.5 5, 5 9.5, 0.5 9.5, 0.5 5))")
	for _, ls := range []string{"regular", "dashedThick", "cased"} {
		l := layer(mapcommons.LayerPrimitive)
		l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x0000ff), Alpha: 0.5, Weight: ptr(3.0)}
		l.Styles.Icon.LineStyle = ls
		l.Styles.Fill.Opacity = 0
		req := lonLat100(Layer{Layer: l, Dataset: ds})
		req.Width, req.Height = 700, 700
		binned := drawMap(t, fs, req).Image
		old := binArea
		binArea = math.MaxInt
		one := drawMap(t, fs, req).Image
		binArea = old
		// The cells' rasterizers are small: x/image/vector's fixed-point
		// math (1/512 of a pixel), not the floating point of the whole
		// image's, some levels apart at antialiased edges; a pixel
		// composited twice would be 64 levels apart (0.5, then 0.75).
		diff, worst := 0, 0
		for i := range one.Pix {
			d := int(one.Pix[i]) - int(binned.Pix[i])
			worst = max(worst, d, -d)
			if d < -2 || d > 2 {
				diff++
			}
		}
		if worst > 20 || diff > len(one.Pix)/50 {
			t.Errorf("%s: %d bytes differ drawn in cells, by up to %d", ls, diff, worst)
		}
		// Along the first segment: half of blue, nowhere more.
		if ls == "regular" {
			for k := 1; k < 20; k++ {
				lon := 0.2 + 9.5*float64(k)/20
				lat := 0.3 + 8.8*float64(k)/20
				x, y := int(lon*70), int((10-lat)*70)
				wantColor(t, binned, x, y, color.NRGBA{0, 0, 0xff, 0x80}, 1)
			}
		}
	}
}

// TestIslands: a multipolygon spread wide is filled in groups of the
// polygons whose boxes meet (an island in a lake with its lake), alike
// to one pass, and no pixel twice.
func TestIslands(t *testing.T) {
	ds, fs := dataset(t, "MULTIPOLYGON (((0.5 0.5, 3 0.5, 3 3, 0.5 3, 0.5 0.5), (1 1, 1 2.5, 2.5 2.5, 2.5 1, 1 1)), "+
		"((1.5 1.5, 2 1.5, 2 2, 1.5 2, 1.5 1.5)), ((7 7, 9.5 7, 9.5 9.5, 7 9.5, 7 7)), ((7 1, 8 1, 8 2, 7 1)), "+
		"((4 4, 6 4, 6 6, 4 6, 4 4)), ((5 5, 6.5 5, 6.5 6.5, 5 6.5, 5 5)))") // the last two overlap: counted once
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Fill.Color = ptr(0xff0000)
	l.Styles.Fill.Opacity = 0.5
	req := lonLat100(Layer{Layer: l, Dataset: ds})
	req.Width, req.Height = 700, 700
	grouped := drawMap(t, fs, req).Image
	old := binArea
	binArea = math.MaxInt
	one := drawMap(t, fs, req).Image
	binArea = old
	half := color.NRGBA{0xff, 0, 0, 0x80}
	for _, p := range [][2]float64{{0.7, 0.7}, {1.75, 1.75}, {8, 8}, {7.8, 1.5}, {4.5, 4.5}, {5.5, 5.5}, {6.2, 6.2}} {
		x, y := int(p[0]*70), int((10-p[1])*70)
		wantColor(t, grouped, x, y, half, 0)
	}
	wantEmpty(t, grouped, int(1.2*70), int((10-1.2)*70))
	worst := 0
	for i := range one.Pix {
		d := int(one.Pix[i]) - int(grouped.Pix[i])
		worst = max(worst, d, -d)
	}
	if worst > 20 {
		t.Errorf("filled in groups, a byte differs by %d", worst)
	}
}

func TestDashes(t *testing.T) {
	ds, fs := dataset(t, "LINESTRING (1 5.05, 9 5.05)")
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x00ff00), Alpha: 1, Weight: ptr(2.0)}
	l.Styles.Icon.LineStyle = "dashedThin"
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	// [3, 2] line widths: 6 pixels on from x = 10, 4 off, and so on.
	green := color.NRGBA{0, 0xff, 0, 0xff}
	for k := range 8 {
		x := 10 + 10*k
		for i := range 6 {
			wantColor(t, img, x+i, 49, green, 0)
		}
		for i := 6; i < 10; i++ {
			wantEmpty(t, img, x+i, 49)
		}
	}
	// dashedThick: three times as wide, dashes three times as long.
	l.Styles.Icon.LineStyle = "dashedThick"
	img = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	for _, x := range []int{10, 27, 40, 57} {
		wantColor(t, img, x, 47, green, 0)
	}
	for _, x := range []int{28, 39, 58} {
		wantEmpty(t, img, x, 49)
	}
}

func TestCasedAndThick(t *testing.T) {
	ds, fs := dataset(t, "LINESTRING (1 5.05, 9 5.05)")
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x000000), Alpha: 1, Weight: ptr(2.0)}
	l.Styles.Icon.LineStyle = "cased"
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	// Black 2 wide (rows 48, 49 around 49.5... 48.5 to 50.5), white 5
	// wide under it (47 to 52).
	wantColor(t, img, 50, 49, color.NRGBA{0, 0, 0, 0xff}, 0)
	wantColor(t, img, 50, 47, color.NRGBA{0xff, 0xff, 0xff, 0xff}, 0)
	wantColor(t, img, 50, 51, color.NRGBA{0xff, 0xff, 0xff, 0xff}, 0)
	wantEmpty(t, img, 50, 53)
	l.Styles.Icon.LineStyle = "thick"
	img = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	for y := 47; y <= 51; y++ { // 6 wide: 46.5 to 52.5
		wantColor(t, img, 50, y, color.NRGBA{0, 0, 0, 0xff}, 0)
	}
	wantEmpty(t, img, 50, 54)
}

func TestLayerOpacityAndVisibility(t *testing.T) {
	ds, fs := dataset(t, "POLYGON ((1 1, 9 1, 9 9, 1 9, 1 1))")
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Fill.Color = ptr(0xff0000)
	l.Opacity = 0.5
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	wantColor(t, img, 50, 50, color.NRGBA{0xff, 0, 0, 0x80}, 1)
	// The fill's opacity multiplies it.
	l.Styles.Fill.Opacity = 0.5
	img = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	wantColor(t, img, 50, 50, color.NRGBA{0xff, 0, 0, 0x40}, 1)

	l.Visible = false
	res := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds}))
	for i, v := range res.Image.Pix {
		if v != 0 {
			t.Fatalf("an invisible layer drew byte %d", i)
		}
	}
	if fs.scans != 2 {
		t.Errorf("an invisible layer's features were read (%d scans)", fs.scans)
	}
	// A background fills the image under the layers.
	l.Visible = true
	req := lonLat100(Layer{Layer: l, Dataset: ds})
	req.Background = color.NRGBA{0, 0, 0xff, 0xff}
	img = drawMap(t, fs, req).Image
	wantColor(t, img, 0, 0, color.NRGBA{0, 0, 0xff, 0xff}, 0)
	wantColor(t, img, 50, 50, color.NRGBA{0x40, 0, 0xbf, 0xff}, 1)
}

// mercatorY is the Web Mercator y of a latitude (radians of the sphere).
func mercatorY(lat float64) float64 { return math.Log(math.Tan(math.Pi/4 + lat*math.Pi/360)) }

func TestCRS(t *testing.T) {
	ds, fs := dataset(t, "POINT (10 60)")
	l := layer(mapcommons.LayerPoint)
	l.Styles.Icon.Color = ptr(0x00ff00)
	box := [4]float64{-20, -70, 20, 70}
	green := color.NRGBA{0, 0xff, 0, 0xff}
	plate := [2]int{300, 28} // (70 - 60) / 140 × 400
	merc := [2]int{300, int((mercatorY(70) - mercatorY(60)) / (mercatorY(70) - mercatorY(-70)) * 400)}
	if merc[1]-plate[1] < 20 {
		t.Fatalf("the test's two places are too near: %v %v", plate, merc)
	}
	for _, c := range []struct {
		crs       string
		want, not [2]int
	}{{CRSLonLat, plate, merc}, {CRSMercator, merc, plate}, {mapcommons.ProjectionMercator, merc, plate}} {
		img := drawMap(t, fs, Request{Layers: []Layer{{Layer: l, Dataset: ds}}, BBox: box, Width: 400, Height: 400, CRS: c.crs}).Image
		wantColor(t, img, c.want[0], c.want[1], green, 0)
		// The circle: 8 pixels of radius in a white outline of 1.5.
		wantColor(t, img, c.want[0]+6, c.want[1], green, 0)
		wantColor(t, img, c.want[0]+8, c.want[1], color.NRGBA{0xff, 0xff, 0xff, 0xff}, 0)
		wantEmpty(t, img, c.want[0]+10, c.want[1])
		wantEmpty(t, img, c.not[0], c.not[1])
	}
}

// extent is the run of non-transparent pixels of row y through x.
func extent(img *image.RGBA, x, y int) int {
	n := 0
	for i := x; i < img.Rect.Max.X && img.RGBAAt(i, y).A > 0; i++ {
		n++
	}
	for i := x - 1; i >= 0 && img.RGBAAt(i, y).A > 0; i-- {
		n++
	}
	return n
}

func TestScale(t *testing.T) {
	ds, fs := dataset(t, "POINT (2.55 5.05)", "LINESTRING (5.05 1, 5.05 9)")
	l := layer(mapcommons.LayerPoint)
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0), Alpha: 1, Weight: ptr(3.0)}
	l.Styles.Icon.Size = 4 // twice as wide: sqrt(4)
	req := lonLat100(Layer{Layer: l, Dataset: ds})
	one := drawMap(t, fs, req).Image
	req.Scale = 2
	two := drawMap(t, fs, req).Image
	if b := two.Bounds(); b.Dx() != 200 || b.Dy() != 200 {
		t.Fatalf("scale 2: %v", b)
	}
	s1, s2 := extent(one, 25, 49), extent(two, 51, 99)
	// A circle of 16 + 1.5 pixels of radius at size 4: 35 across.
	if s1 < 34 || s1 > 37 {
		t.Errorf("the symbol is %d pixels across, want 35", s1)
	}
	if s2 < 2*s1-2 || s2 > 2*s1+2 {
		t.Errorf("the symbol is %d pixels across at scale 2, %d at 1", s2, s1)
	}
	l1, l2 := extent(one, 50, 20), extent(two, 100, 40)
	if l1 != 3 || l2 != 6 {
		t.Errorf("the line is %d pixels wide at scale 1 and %d at scale 2, want 3 and 6", l1, l2)
	}
}

func TestProportionalAndGraduated(t *testing.T) {
	ds, fs := dataset(t, "POINT (2.05 5.05)", "POINT (5.05 5.05)", "POINT (8.05 5.05)")
	// v is 0, 1, 2; the largest magnitude 4 (the stats): sizes 1.6 ×
	// sqrt(v/4) of 24 pixels.
	ds.Stats = map[string]mapcommons.Stats{"v": {Min: 0, Max: 4}}
	l := layer(mapcommons.LayerProportional)
	l.Styles.Icon.SelectedAttribute = "v"
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	if n := extent(img, 20, 49); n != 0 {
		t.Errorf("a value of 0 drew a symbol %d pixels across", n)
	}
	for i, v := range []float64{1, 2} {
		want := 35 * 1.6 * math.Sqrt(v/4) / 2 // 17.5 at size 1
		if n := extent(img, 50+30*i, 49); math.Abs(float64(n)-want) > 2 {
			t.Errorf("value %g: %d pixels across, want %.1f", v, n, want)
		}
	}
	// An attribute the features lack reads as 0 (MapLibre's to-number).
	l.Styles.Icon.SelectedAttribute = "gone"
	if r := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Layers[0]; r.Points != 0 {
		t.Errorf("%d symbols sized by an attribute the dataset lacks", r.Points)
	}
	// GRADUATED: sizes by class, 0.6 to 1.5; colours by class.
	l = layer(mapcommons.LayerGraduated)
	l.Styles.Icon.SelectedAttribute = "v"
	l.Styles.Icon.ClassificationType = "Equal Interval"
	l.Styles.Icon.Categories = 3
	l.Styles.Fill.Colors = []int{0xff0000, 0x00ff00, 0x0000ff}
	img = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	for i, c := range l.Styles.Fill.Colors {
		x := 20 + 30*i
		want := 17.5 * (0.6 + 0.9*float64(i)/2)
		if n := extent(img, x, 49); math.Abs(float64(n)-want) > 2 {
			t.Errorf("class %d: %d pixels across, want %.1f", i, n, want)
		}
		wantColor(t, img, x, 49, color.NRGBA{uint8(c >> 16), uint8(c >> 8), uint8(c), 0xff}, 0)
	}
}

// TestSymbolicPolygons: a GRADUATED layer's polygons are a faint ground
// (the fill's colour at 0.3 of its opacity) under a symbol at each one's
// centroid, coloured by its class; a PRIMITIVE layer draws no symbol on
// them; multi and collection members are drawn each.
func TestSymbolicPolygons(t *testing.T) {
	ds, fs := dataset(t, "POLYGON ((1 1, 4 1, 4 4, 1 4, 1 1))", "POLYGON ((6 6, 9 6, 9 9, 6 9, 6 6))")
	l := layer(mapcommons.LayerGraduated)
	l.Styles.Fill.Opacity = 0.75
	l.Styles.Fill.Color = ptr(0x0000ff)
	l.Styles.Fill.SelectedAttribute = "v"
	l.Styles.Fill.Categories = 2
	l.Styles.Fill.Colors = []int{0xff0000, 0x00ff00}
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	faint := color.NRGBA{0, 0, 0xff, uint8(math.Round(0.75 * 0.3 * 255))}
	wantColor(t, img, 12, 87, faint, 1)
	wantColor(t, img, 62, 37, faint, 1)
	wantColor(t, img, 25, 75, red, 0)
	wantColor(t, img, 75, 25, color.NRGBA{0, 0xff, 0, 0xff}, 0)
	l.Styles.Type = mapcommons.LayerPrimitive
	img = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	wantColor(t, img, 25, 75, color.NRGBA{0, 0, 0xff, 0xbf}, 1)

	ds, fs = dataset(t, "MULTIPOINT ((2.05 2.05), (8.05 8.05))", "MULTILINESTRING ((1 5.05, 3 5.05), (7 5.05, 9 5.05))",
		"GEOMETRYCOLLECTION (POINT (2.05 8.05), LINESTRING (5.05 1, 5.05 3))")
	l = layer(mapcommons.LayerPoint)
	l.Styles.Stroke = mapcommons.Stroke{Color: ptr(0x0000ff), Alpha: 1, Weight: ptr(2.0)}
	res := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds}))
	orange := color.NRGBA{0xe6, 0x55, 0x0d, 0xff}
	for _, p := range [][2]int{{20, 79}, {80, 19}, {20, 19}} {
		wantColor(t, res.Image, p[0], p[1], orange, 0)
	}
	for _, p := range [][2]int{{20, 49}, {80, 49}, {50, 80}} {
		wantColor(t, res.Image, p[0], p[1], color.NRGBA{0, 0, 0xff, 0xff}, 0)
	}
	if res.Layers[0].Points != 3 {
		t.Errorf("%d symbols, want 3", res.Layers[0].Points)
	}
}

func TestSymbols(t *testing.T) {
	ds, fs := dataset(t, "POINT (5.05 5.05)")
	for _, sym := range []string{"circle", "propCircle", "outlineCircle", "hollowCircle", "square", "propSquare", "outlineSquare",
		"hollowSquare", "balloonIcon", "pushpinIcon", "circleIcon", "featherIcon", "flagIcon", "ringIcon", "squareIcon", "xPointIcon"} {
		l := layer(mapcommons.LayerPoint)
		l.Styles.Icon.Symbol = sym
		l.Styles.Icon.Color = ptr(0xff0000)
		img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
		reds := 0
		for y := 30; y < 70; y++ {
			for x := 30; x < 70; x++ {
				if c := at(img, x, y); c.R > 200 && c.G < 50 && c.A > 200 {
					reds++
				}
			}
		}
		// At most the canvas, 24 pixels square; at least a ring's worth.
		if reds < 20 || reds > 24*24 {
			t.Errorf("%s: %d red pixels", sym, reds)
		}
		for _, p := range [][2]int{{37, 37}, {62, 62}, {37, 62}, {62, 37}} {
			wantEmpty(t, img, p[0], p[1])
		}
	}
	// A drop shadow darkens below and right of the symbol.
	l := layer(mapcommons.LayerPoint)
	l.Styles.Icon.Dropshadow = true
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	if c := img.RGBAAt(50+9, 50+9); c.A == 0 || c.R > 20 {
		t.Errorf("no shadow: %v", c)
	}
}

func TestPointsThinnedAndCapped(t *testing.T) {
	var wkts []string
	for range 1000 {
		wkts = append(wkts, "POINT (5.01 5.01)")
	}
	wkts = append(wkts, "POINT (2.05 2.05)")
	ds, fs := dataset(t, wkts...)
	l := layer(mapcommons.LayerPoint)
	res := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds}))
	if r := res.Layers[0]; r.Read != 1001 || r.Points != 2 || r.Capped || res.Capped() {
		t.Errorf("%+v, want 1001 read, 2 drawn, not capped", r)
	}
	req := lonLat100(Layer{Layer: l, Dataset: ds})
	req.MaxFeatures = 10
	res = drawMap(t, fs, req)
	if r := res.Layers[0]; r.Read != 10 || !r.Capped || !res.Capped() {
		t.Errorf("%+v, want 10 read and capped", r)
	}
	// The query is limited to the box grown by a symbol's reach.
	ds, fs = dataset(t, "POINT (-0.5 5)", "POINT (-5 5)", "POINT (5 15)")
	res = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds}))
	if r := res.Layers[0]; r.Read != 1 || r.Points != 1 {
		t.Errorf("%+v: want the one point within reach", r)
	}
}

func TestRequestBounds(t *testing.T) {
	ds, fs := dataset(t, "POINT (5 5)")
	ok := lonLat100(Layer{Layer: layer(mapcommons.LayerPoint), Dataset: ds})
	for _, c := range []struct {
		name string
		edit func(*Request)
	}{
		{"too wide", func(r *Request) { r.Width = MaxSide + 1 }},
		{"too many pixels", func(r *Request) { r.Width, r.Height, r.Scale = 4096, 4096, 2 }},
		{"scale", func(r *Request) { r.Scale = 5 }},
		{"scale below 1", func(r *Request) { r.Scale = 0.5 }},
		{"empty", func(r *Request) { r.Height = 0 }},
		{"crs", func(r *Request) { r.CRS = "EPSG:27700" }},
		{"box", func(r *Request) { r.BBox = [4]float64{10, 0, 0, 10} }},
		{"nan", func(r *Request) { r.BBox[0] = math.NaN() }},
		{"outside", func(r *Request) { r.BBox[3] = 91 }},
		{"mercator pole", func(r *Request) { r.CRS, r.BBox = CRSMercator, [4]float64{0, 86, 10, 89} }},
	} {
		req := ok
		c.edit(&req)
		_, err := Draw(context.Background(), fs, nil, req)
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Errorf("%s: %v, want EINVALID", c.name, err)
		}
	}
	if _, err := Draw(context.Background(), fs, nil, ok); err != nil {
		t.Fatal(err)
	}
}

// cancelling cancels its context after n features.
type cancelling struct {
	mapcommons.FeatureService
	n, seen int
	cancel  context.CancelFunc
}

func (c *cancelling) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return c.FeatureService.ScanFeatures(ctx, id, q, func(f *mapcommons.Feature) error {
		c.seen++
		if c.seen == c.n {
			c.cancel()
		}
		return fn(f)
	})
}

func TestCancel(t *testing.T) {
	var wkts []string
	for i := range 5000 {
		wkts = append(wkts, "POINT ("+ftoa(float64(i%100)/10)+" "+ftoa(float64(i/100)/5)+")")
	}
	ds, fs := dataset(t, wkts...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &cancelling{FeatureService: fs, n: 100, cancel: cancel}
	_, err := Draw(ctx, c, nil, lonLat100(Layer{Layer: layer(mapcommons.LayerPoint), Dataset: ds}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if c.seen > c.n+1 {
		t.Errorf("%d features read after the cancel", c.seen-c.n)
	}
	// A cancel while a polygon of many vertices is read stops it too.
	var xy []float64
	for i := range 100000 {
		a := float64(i) / 100000 * 2 * math.Pi
		xy = append(xy, 5+4*math.Cos(a), 5+4*math.Sin(a))
	}
	xy = append(xy, xy[0], xy[1])
	fs = &memFeatures{feats: []mapcommons.Feature{{Geometry: wkb.AppendPolygon(nil, [][]float64{xy})}}}
	ctx, cancel = context.WithCancel(context.Background())
	c = &cancelling{FeatureService: fs, n: 1, cancel: cancel}
	if _, err := Draw(ctx, c, nil, lonLat100(Layer{Layer: layer(mapcommons.LayerPrimitive), Dataset: ds})); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
}

func ftoa(v float64) string { return string(wkb.AppendFloat(nil, v)) }

func TestEncodePNGReadsBack(t *testing.T) {
	ds, fs := dataset(t, "POLYGON ((1 1, 9 1, 9 9, 1 9, 1 1))")
	l := layer(mapcommons.LayerPrimitive)
	l.Styles.Fill.Color = ptr(0xff0000)
	img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	var buf bytes.Buffer
	if err := EncodePNG(&buf, img); err != nil {
		t.Fatal(err)
	}
	back, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if c := color.NRGBAModel.Convert(back.At(50, 50)).(color.NRGBA); c != red {
		t.Errorf("read back %v", c)
	}
}

func TestLayersOf(t *testing.T) {
	ds, _ := dataset(t, "POINT (1 1)")
	m := &mapcommons.Map{Projection: mapcommons.ProjectionLonLat, Layers: []mapcommons.Layer{
		{Source: "finder:1"}, {Source: "url:http://example.com/a.kml"}, {Source: "finder:2"}}}
	got := LayersOf(m, func(id int64) *mapcommons.Dataset {
		if id == 1 {
			return ds
		}
		return nil
	})
	if len(got) != 3 || got[0].Dataset != ds || got[1].Dataset != nil || got[2].Dataset != nil || got[2].Layer.Source != "finder:2" {
		t.Errorf("%+v", got)
	}
	if CRSOf(m) != CRSLonLat || CRSOf(&mapcommons.Map{Projection: mapcommons.ProjectionMercator}) != CRSMercator {
		t.Error("CRSOf")
	}
}

func TestTileRequest(t *testing.T) {
	r := TileRequest(1, 0, 0, 2, nil)
	if r.BBox[0] != -180 || r.BBox[2] != 0 || r.BBox[1] != 0 || math.Abs(r.BBox[3]-maxMercatorLat) > 1e-9 {
		t.Errorf("tile 1/0/0: %v", r.BBox)
	}
	ds, fs := dataset(t, "POINT (-90 0.0001)")
	l := layer(mapcommons.LayerPoint)
	l.Styles.Icon.Color = ptr(0x0000ff)
	r.Layers = []Layer{{Layer: l, Dataset: ds}}
	img := drawMap(t, fs, r).Image
	// The point is at the middle of the tile's bottom edge: 512 pixels.
	wantColor(t, img, 256, 510, color.NRGBA{0, 0, 0xff, 0xff}, 0)
}

// TestHeatmap: a layer whose styles ask for a heatmap is drawn as the web
// application's MapLibre heatmap: its densest place in the ramp's darkest
// colour, a lone point a pale spot without its symbol, nothing far from
// them; close to (past style.HeatFade), its points' own symbols instead.
func TestHeatmap(t *testing.T) {
	var wkts []string
	for i := range 1024 { // a lattice of 0.2° from 5, 5
		wkts = append(wkts, "POINT ("+ftoa(5+0.2*float64(i%32)/32)+" "+ftoa(5+0.2*float64(i/32)/32)+")")
	}
	wkts = append(wkts, "POINT (2 2)")
	ds, fs := dataset(t, wkts...)
	l := layer(mapcommons.LayerPoint)
	l.Styles.Density = mapcommons.DensityHeatmap
	l.Styles.Icon.Color = ptr(0x2b8cbe)
	// Zoom 2.8 (0.1° a pixel): the lattice a few pixels wide; weighed by
	// point, and as the tiles' cells (the dataset drawn from its tiles).
	densest := style.HeatRamp(0x2b8cbe)[4]
	for _, n := range []int64{ds.FeatureCount, style.HeatTiledMin + 1} {
		ds := *ds
		ds.FeatureCount = n
		img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: &ds})).Image
		wantColor(t, img, 51, 49, color.NRGBA{uint8(densest.Color >> 16), uint8(densest.Color >> 8 & 0xff), uint8(densest.Color & 0xff), uint8(densest.Alpha * 255)}, 3)
		if c := at(img, 20, 80); c.A < 40 || c.A > 200 || c.B < c.R {
			t.Errorf("%d features: the lone point is %v, want a pale blue spot", n, c)
		}
		for x := 14; x < 27; x++ { // no symbol: nowhere the icon's own colour
			if c := at(img, x, 80); c.R == 0x2b && c.G == 0x8c && c.A == 0xff {
				t.Errorf("%d features: a symbol at %d,80", n, x)
			}
		}
		wantEmpty(t, img, 80, 20)
		wantEmpty(t, img, 20, 50)
	}

	// Zoom 13.8 (0.00005° a pixel): the symbols, no heatmap.
	req := lonLat100(Layer{Layer: l, Dataset: ds})
	req.BBox = [4]float64{4.999, 4.999, 5.004, 5.004}
	img := drawMap(t, fs, req).Image
	wantColor(t, img, 20, 80, color.NRGBA{0x2b, 0x8c, 0xbe, 0xff}, 2)
	wantEmpty(t, img, 20+15, 80)

	// Without the option, the same points are symbols at every zoom.
	l.Styles.Density = ""
	img = drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
	wantColor(t, img, 20, 80, color.NRGBA{0x2b, 0x8c, 0xbe, 0xff}, 2)
}

// TestHeatmapKeepsCentroids: the symbols at a layer's polygons' centroids
// are drawn whatever its density, as the web application draws them (its
// heatmap fades its points only, and a layer of polygons has none).
func TestHeatmapKeepsCentroids(t *testing.T) {
	for _, tc := range []struct {
		name string
		wkts []string
		mask uint32
	}{
		{"polygons", []string{"POLYGON ((1 1, 4 1, 4 4, 1 4, 1 1))"}, 1 << wkb.Polygon},
		{"polygons and points", []string{"POLYGON ((1 1, 4 1, 4 4, 1 4, 1 1))", "POINT (8 8)"}, 1<<wkb.Polygon | 1<<wkb.Point},
	} {
		ds, fs := dataset(t, tc.wkts...)
		ds.GeometryMask = tc.mask
		l := layer(mapcommons.LayerPoint)
		l.Styles.Icon.Color = ptr(0xff0000)
		l.Styles.Fill.Opacity = 0
		l.Styles.Density = mapcommons.DensityHeatmap
		img := drawMap(t, fs, lonLat100(Layer{Layer: l, Dataset: ds})).Image
		wantColor(t, img, 25, 75, red, 0) // the centroid's symbol
		if len(tc.wkts) == 1 {
			wantEmpty(t, img, 25+12, 75) // no heatmap around it
			continue
		}
		// The point: a heatmap's spot, not its symbol.
		if c := at(img, 80, 20); c.A == 0 || c == red {
			t.Errorf("%s: the point is %v, want the heatmap's spot", tc.name, c)
		}
	}
}

// BenchmarkHeatmap draws 1,200 points spread over every row of a
// 1024×1024 image at scale 4, zoom 12.9 (the kernel's widest: 28 CSS
// pixels, 112 device pixels), as symbols and as a heatmap: the heatmap's
// cost is of its quarter-resolution grid, not of the image times the
// kernel.
func BenchmarkHeatmap(b *testing.B) {
	dx := 360 * 4096 / 4 / 512 / math.Exp2(12.9)
	var wkts []string
	for i := range 1200 {
		wkts = append(wkts, "POINT ("+ftoa(5-dx/2+dx*float64(i%7)/7)+" "+ftoa(5-dx/2+dx*float64(i)/1200)+")")
	}
	ds, fs := dataset(b, wkts...)
	for _, density := range []string{"", mapcommons.DensityHeatmap} {
		l := layer(mapcommons.LayerPoint)
		l.Styles.Density = density
		req := Request{Layers: []Layer{{Layer: l, Dataset: ds}}, Width: 1024, Height: 1024, Scale: 4, CRS: CRSLonLat,
			BBox: [4]float64{5 - dx/2, 5 - dx/2, 5 + dx/2, 5 + dx/2}}
		name := "symbols"
		if density != "" {
			name = "heatmap"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Draw(context.Background(), fs, style.NewClassifier(fs), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
