package mvt

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// mustTile encodes the features fn adds to one layer "l" of tile z/x/y
// and returns the decoded layer.
func mustTile(t *testing.T, z, x, y int, opt Options, attrs []mapcommons.Attribute, props []string, fn func(l *Layer)) *decLayer {
	t.Helper()
	tile, err := NewTile(z, x, y, opt)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tile.AddLayer("l", attrs, props)
	if err != nil {
		t.Fatal(err)
	}
	fn(l)
	dt, err := decodeTile(tile.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if len(dt.Layers) != 1 || dt.Layers[0].Name != "l" || dt.Layers[0].Extent != uint64(tile.opt.Extent) {
		t.Fatalf("layers %+v", dt.Layers)
	}
	return &dt.Layers[0]
}

func noCluster() Options {
	o := DefaultOptions()
	o.ClusterCell = 0
	return o
}

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func TestTileBounds(t *testing.T) {
	for _, tc := range []struct {
		z, x, y, buf int
		want         wkb.Rect
	}{
		{0, 0, 0, 0, wkb.Rect{MinX: -180, MinY: -MaxLat, MaxX: 180, MaxY: MaxLat}},
		{0, 0, 0, 64, wkb.Rect{MinX: -180, MinY: -MaxLat, MaxX: 180, MaxY: MaxLat}},
		{1, 1, 0, 0, wkb.Rect{MinX: 0, MinY: 0, MaxX: 180, MaxY: MaxLat}},
		{1, 0, 1, 0, wkb.Rect{MinX: -180, MinY: -MaxLat, MaxX: 0, MaxY: 0}},
		// 1/64 of a z1 tile is 180/64 degrees of longitude.
		{1, 0, 1, 64, wkb.Rect{MinX: -180, MinY: -MaxLat, MaxX: 180.0 / 64, MaxY: latOf(0.5 - 0.5/64)}},
		{2, 2, 1, 0, wkb.Rect{MinX: 0, MinY: 0, MaxX: 90, MaxY: latOf(0.25)}},
	} {
		got := TileBounds(tc.z, tc.x, tc.y, tc.buf, 4096)
		if !near(got.MinX, tc.want.MinX, 1e-9) || !near(got.MinY, tc.want.MinY, 1e-9) ||
			!near(got.MaxX, tc.want.MaxX, 1e-9) || !near(got.MaxY, tc.want.MaxY, 1e-9) {
			t.Errorf("%d/%d/%d buffer %d: %+v, want %+v", tc.z, tc.x, tc.y, tc.buf, got, tc.want)
		}
	}
	if latOf(0.25) < 66.51 || latOf(0.25) > 66.52 {
		t.Errorf("latOf(0.25) = %v", latOf(0.25))
	}
}

func TestValidTile(t *testing.T) {
	for _, tc := range []struct {
		z, x, y int
		ok      bool
	}{{0, 0, 0, true}, {0, 1, 0, false}, {3, 7, 7, true}, {3, 8, 0, false}, {3, 0, -1, false}, {-1, 0, 0, false}, {31, 0, 0, false}, {30, 1<<30 - 1, 0, true}} {
		if ValidTile(tc.z, tc.x, tc.y) != tc.ok {
			t.Errorf("ValidTile(%d,%d,%d) = %v", tc.z, tc.x, tc.y, !tc.ok)
		}
		_, err := NewTile(tc.z, tc.x, tc.y, DefaultOptions())
		if (err == nil) != tc.ok {
			t.Errorf("NewTile(%d,%d,%d): %v", tc.z, tc.x, tc.y, err)
		}
		var me *mapcommons.Error
		if err != nil && (!errors.As(err, &me) || me.Code != mapcommons.EINVALID) {
			t.Errorf("NewTile error %v is not EINVALID", err)
		}
	}
}

func TestProjector(t *testing.T) {
	p := newProjector(0, 0, 0, 4096)
	for _, tc := range []struct{ lon, lat, x, y float64 }{
		{0, 0, 2048, 2048}, {-180, MaxLat, 0, 0}, {180, -MaxLat, 4096, 4096},
		{90, 0, 3072, 2048}, {0, latOf(0.25), 2048, 1024},
	} {
		x, y := p.xy(tc.lon, tc.lat)
		if !near(x, tc.x, 1e-6) || !near(y, tc.y, 1e-6) {
			t.Errorf("%v,%v → %v,%v, want %v,%v", tc.lon, tc.lat, x, y, tc.x, tc.y)
		}
	}
	// z1 tile 1/1: (0,0) is its top-left corner.
	if x, y := newProjector(1, 1, 1, 4096).xy(0, 0); !near(x, 0, 1e-9) || !near(y, 0, 1e-9) {
		t.Errorf("z1 1/1 origin at %v,%v", x, y)
	}
}

var testAttrs = []mapcommons.Attribute{
	{Name: "name", Type: mapcommons.AttrString},
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "ok", Type: mapcommons.AttrBoolean},
}

func TestPointsAndProperties(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		l := mustTile(t, 0, 0, 0, noCluster(), testAttrs, nil, func(l *Layer) {
			l.Add(7, wkb.AppendPoint(nil, 0, 0), []any{"a", int64(-3), 2.5, true})
			l.Add(8, wkb.AppendPoint(nil, 90, 0), []any{"a", int64(1 << 40), nil, false})
			l.Add(9, nil, []any{"none", int64(1), 1.0, true}) // no geometry: nothing
		})
		if len(l.Features) != 2 {
			t.Fatalf("%d features", len(l.Features))
		}
		f0, f1 := l.Features[0], l.Features[1]
		if f0.ID != 7 || f0.Type != 1 || len(f0.Parts) != 1 || f0.Parts[0][0] != 2048 || f0.Parts[0][1] != 2048 {
			t.Errorf("feature 0: %+v", f0)
		}
		if f1.ID != 8 || f1.Parts[0][0] != 3072 || f1.Parts[0][1] != 2048 {
			t.Errorf("feature 1: %+v", f1)
		}
		want0 := map[string]any{"name": "a", "n": int64(-3), "x": 2.5, "ok": true}
		for k, v := range want0 {
			if f0.Props[k] != v {
				t.Errorf("feature 0 %s = %#v, want %#v", k, f0.Props[k], v)
			}
		}
		if _, ok := f1.Props["x"]; ok || f1.Props["n"] != int64(1<<40) || f1.Props["ok"] != false || len(f1.Props) != 3 {
			t.Errorf("feature 1 props %v", f1.Props)
		}
		// "a" is stored once.
		if len(l.Values) != 6 {
			t.Errorf("values %v", l.Values)
		}
	})
	t.Run("Selected", func(t *testing.T) {
		l := mustTile(t, 0, 0, 0, noCluster(), testAttrs, []string{"ok", "name"}, func(l *Layer) {
			l.Add(1, wkb.AppendPoint(nil, 0, 0), []any{"a", int64(3), 2.5, true})
		})
		if p := l.Features[0].Props; len(p) != 2 || p["ok"] != true || p["name"] != "a" {
			t.Errorf("props %v", p)
		}
		if len(l.Keys) != 2 || l.Keys[0] != "ok" {
			t.Errorf("keys %v", l.Keys)
		}
	})
	t.Run("NoProperties", func(t *testing.T) {
		l := mustTile(t, 0, 0, 0, noCluster(), testAttrs, []string{}, func(l *Layer) {
			l.Add(1, wkb.AppendPoint(nil, 0, 0), []any{"a", int64(3), 2.5, true})
		})
		if len(l.Features[0].Props) != 0 || len(l.Keys) != 0 {
			t.Errorf("props %v", l.Features[0].Props)
		}
	})
	t.Run("Row", func(t *testing.T) {
		l := mustTile(t, 0, 0, 0, noCluster(), testAttrs, nil, func(l *Layer) {
			l.AddFeature(3, &mapcommons.Feature{Geometry: wkb.AppendPoint(nil, 0, 0), Row: testRow{"b", 4, 0.5, false, 2}})
		})
		if p := l.Features[0].Props; len(p) != 3 || p["name"] != "b" || p["n"] != int64(4) || p["ok"] != false {
			t.Errorf("props %v", p)
		}
	})
	t.Run("ErrUnknownProperty", func(t *testing.T) {
		tile, _ := NewTile(0, 0, 0, DefaultOptions())
		if _, err := tile.AddLayer("l", testAttrs, []string{"nope"}); err == nil {
			t.Error("no error")
		}
		tile.AddLayer("l", testAttrs, nil)
		if _, err := tile.AddLayer("l", testAttrs, nil); err == nil {
			t.Error("a layer name twice")
		}
	})
	t.Run("ErrInvalidWKB", func(t *testing.T) {
		tile, _ := NewTile(0, 0, 0, DefaultOptions())
		l, _ := tile.AddLayer("l", nil, nil)
		var me *mapcommons.Error
		if err := l.Add(1, []byte{1, 2, 0, 0}, nil); !errors.As(err, &me) || me.Code != mapcommons.EINVALID {
			t.Errorf("error %v", err)
		}
	})
	t.Run("OutsideAndBuffer", func(t *testing.T) {
		// Tile 1/1/0 (north-east): a point just west of lon 0 is in the
		// buffer, one further west is out, one in the south is out.
		l := mustTile(t, 1, 1, 0, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendPoint(nil, -1, 10), nil)
			l.Add(2, wkb.AppendPoint(nil, -10, 10), nil)
			l.Add(3, wkb.AppendPoint(nil, 10, -10), nil)
			l.Add(4, wkb.AppendMultiPoint(nil, []float64{10, 10, -10, 10, 20, 20}), nil)
		})
		if len(l.Features) != 2 || l.Features[0].ID != 1 || l.Features[0].Parts[0][0] >= 0 {
			t.Fatalf("features %+v", l.Features)
		}
		if mp := l.Features[1]; mp.ID != 4 || len(mp.Parts[0]) != 4 {
			t.Errorf("multipoint %+v", mp)
		}
	})
}

// testRow is a mapcommons.Row over fixed values; null is the null column.
type testRow struct {
	s    string
	n    int64
	x    float64
	b    bool
	null int
}

func (r testRow) IsNull(c int) bool { return c == r.null }
func (r testRow) Int(int) int64     { return r.n }
func (r testRow) Float(int) float64 { return r.x }
func (r testRow) Bytes(int) []byte  { return []byte(r.s) }
func (r testRow) Bool(int) bool     { return r.b }

func TestLines(t *testing.T) {
	t.Run("ClippedIntoParts", func(t *testing.T) {
		// z1 tile 0/0 covers lon -180..0, lat 0..85. The line goes in,
		// out across lon 0, back in, and ends outside.
		line := []float64{-90, 45, 45, 45, 45, 20, -45, 20, -45, -30}
		l := mustTile(t, 1, 0, 0, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendLineString(nil, line), nil)
		})
		f := l.Features[0]
		if f.Type != 2 || len(f.Parts) != 2 {
			t.Fatalf("%+v", f)
		}
		for _, p := range f.Parts {
			for i := 0; i < len(p); i += 2 {
				if p[i] < -64 || p[i] > 4096+64 || p[i+1] < -64 || p[i+1] > 4096+64 {
					t.Errorf("point %d,%d outside the buffer", p[i], p[i+1])
				}
			}
		}
		// The first part starts at lon -90 (x 2048) and ends on the east
		// buffer edge; the second starts there and ends on the south edge.
		p0, p1 := f.Parts[0], f.Parts[1]
		if p0[0] != 2048 || p0[len(p0)-2] != 4096+64 || p1[0] != 4096+64 || p1[len(p1)-1] != 4096+64 {
			t.Errorf("parts %v", f.Parts)
		}
	})
	t.Run("Simplified", func(t *testing.T) {
		var line []float64
		for i := 0; i <= 100; i++ {
			line = append(line, -100+float64(i), 10+0.001*float64(i%2)) // wiggles far below a pixel at z2
		}
		l := mustTile(t, 2, 1, 1, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendLineString(nil, line), nil)
		})
		if p := l.Features[0].Parts; len(p) != 1 || len(p[0]) != 4 {
			t.Errorf("parts %v", p)
		}
		o := noCluster()
		o.Tolerance = 0
		l = mustTile(t, 2, 1, 1, o, nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendLineString(nil, line), nil)
		})
		// Without simplification only repeated pixels go.
		if p := l.Features[0].Parts; len(p) != 1 || len(p[0]) < 20 {
			t.Errorf("unsimplified parts %v", p)
		}
	})
	t.Run("Vanishes", func(t *testing.T) {
		l := mustTile(t, 0, 0, 0, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendLineString(nil, []float64{1, 1, 1.001, 1.001}), nil)
		})
		if len(l.Features) != 0 {
			t.Errorf("%+v", l.Features)
		}
	})
}

func square(x0, y0, x1, y1 float64, ccw bool) []float64 {
	if ccw {
		return []float64{x0, y0, x1, y0, x1, y1, x0, y1, x0, y0}
	}
	return []float64{x0, y0, x0, y1, x1, y1, x1, y0, x0, y0}
}

func TestPolygons(t *testing.T) {
	t.Run("Winding", func(t *testing.T) {
		for _, ccw := range []bool{true, false} {
			rings := [][]float64{square(-40, -40, 40, 40, ccw), square(-10, -10, 10, 10, ccw)}
			l := mustTile(t, 0, 0, 0, noCluster(), nil, nil, func(l *Layer) {
				l.Add(1, wkb.AppendPolygon(nil, rings), nil)
			})
			f := l.Features[0]
			if f.Type != 3 || len(f.Parts) != 2 || ringArea(f.Parts[0]) <= 0 || ringArea(f.Parts[1]) >= 0 {
				t.Errorf("ccw %v: %+v", ccw, f)
			}
		}
	})
	t.Run("ClippedToBuffer", func(t *testing.T) {
		// A square much larger than tile 2/1/1 becomes the buffered square.
		l := mustTile(t, 2, 1, 1, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendPolygon(nil, [][]float64{square(-170, -60, 170, 80, true)}), nil)
		})
		f := l.Features[0]
		if len(f.Parts) != 1 || ringArea(f.Parts[0]) != 2*(4096+128)*(4096+128) {
			t.Errorf("%+v area %d", f, ringArea(f.Parts[0]))
		}
	})
	t.Run("HoleAndExteriorDropped", func(t *testing.T) {
		// At z0 a 0.01° square is far below a pixel: the polygon goes; a
		// tiny hole goes, its exterior stays.
		l := mustTile(t, 0, 0, 0, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, wkb.AppendPolygon(nil, [][]float64{square(0, 0, 0.01, 0.01, true)}), nil)
			l.Add(2, wkb.AppendPolygon(nil, [][]float64{square(0, 0, 30, 30, true), square(1, 1, 1.01, 1.01, false)}), nil)
		})
		if len(l.Features) != 1 || l.Features[0].ID != 2 || len(l.Features[0].Parts) != 1 {
			t.Errorf("%+v", l.Features)
		}
	})
	t.Run("MultiPolygon", func(t *testing.T) {
		mp := wkb.AppendMultiPolygon(nil, [][][]float64{{square(0, 0, 10, 10, true)}, {square(20, 0, 30, 10, false), square(22, 2, 28, 8, true)}, {square(-170, 0, -160, 10, true)}})
		// Tile 1/1/0: the third polygon is outside.
		l := mustTile(t, 1, 1, 0, noCluster(), nil, nil, func(l *Layer) {
			l.Add(1, mp, nil)
		})
		f := l.Features[0]
		if len(l.Features) != 1 || len(f.Parts) != 3 {
			t.Fatalf("%+v", l.Features)
		}
		if ringArea(f.Parts[0]) <= 0 || ringArea(f.Parts[1]) <= 0 || ringArea(f.Parts[2]) >= 0 {
			t.Errorf("areas %d %d %d", ringArea(f.Parts[0]), ringArea(f.Parts[1]), ringArea(f.Parts[2]))
		}
	})
	t.Run("Collection", func(t *testing.T) {
		gc := wkb.AppendCollection(nil, [][]byte{
			wkb.AppendPoint(nil, 1, 1),
			wkb.AppendPolygon(nil, [][]float64{square(0, 0, 10, 10, true)}),
			wkb.AppendLineString(nil, []float64{0, 0, 20, 20}),
			wkb.AppendPoint(nil, 2, 2),
		})
		l := mustTile(t, 0, 0, 0, noCluster(), testAttrs, []string{"n"}, func(l *Layer) {
			l.Add(5, gc, []any{"", int64(2), 0.0, false})
		})
		if len(l.Features) != 3 {
			t.Fatalf("%+v", l.Features)
		}
		for i, f := range l.Features {
			if f.ID != 5 || f.Type != uint64(i+1) || f.Props["n"] != int64(2) {
				t.Errorf("feature %d: %+v", i, f)
			}
		}
		if len(l.Features[0].Parts[0]) != 4 {
			t.Errorf("points %v", l.Features[0].Parts)
		}
	})
}

func TestCluster(t *testing.T) {
	// 1000 points around lon 10, lat 10 (within 0.01°) and one far away.
	var pts [][]byte
	for i := 0; i < 1000; i++ {
		pts = append(pts, wkb.AppendPoint(nil, 10+float64(i%10)*0.001, 10+float64(i/100)*0.001))
	}
	far := wkb.AppendPoint(nil, -120, -40)
	t.Run("OK", func(t *testing.T) {
		l := mustTile(t, 3, 4, 3, DefaultOptions(), testAttrs, []string{"n"}, func(l *Layer) {
			for i, p := range pts {
				l.Add(uint64(i+1), p, []any{"", int64(i), 0.0, false})
			}
		})
		if len(l.Features) != 1 {
			t.Fatalf("%d features", len(l.Features))
		}
		f := l.Features[0]
		if f.ID != 1 || f.Props[PointCount] != int64(1000) || len(f.Props) != 1 {
			t.Errorf("%+v", f)
		}
		l = mustTile(t, 0, 0, 0, DefaultOptions(), nil, nil, func(l *Layer) {
			for _, p := range pts {
				l.Add(1, p, nil)
			}
			l.Add(2, far, nil)
		})
		total := int64(0)
		for _, f := range l.Features {
			total += f.Props[PointCount].(int64)
		}
		if len(l.Features) != 2 || total != 1001 || l.Features[1].Props[PointCount] != int64(1) {
			t.Errorf("%+v", l.Features)
		}
		// Alone in its cell, a point keeps its properties; values of
		// clustered points stay out of the value table.
		l = mustTile(t, 0, 0, 0, DefaultOptions(), testAttrs, nil, func(l *Layer) {
			for i, p := range pts {
				l.Add(uint64(i+1), p, []any{"in", int64(i), 0.5, true})
			}
			l.AddRow(2000, far, testRow{"far", 7, 1.5, false, -1})
		})
		if len(l.Features) != 2 {
			t.Fatalf("%+v", l.Features)
		}
		want := map[string]any{"name": "far", "n": int64(7), "x": 1.5, "ok": false, PointCount: int64(1)}
		if p := l.Features[1].Props; len(p) != len(want) {
			t.Errorf("props %v", p)
		} else {
			for k, v := range want {
				if p[k] != v {
					t.Errorf("%s = %v, want %v", k, p[k], v)
				}
			}
		}
		for _, v := range l.Values {
			if v == "in" {
				t.Errorf("values %v", l.Values)
			}
		}
	})
	t.Run("DeepZoom", func(t *testing.T) {
		// Above ClusterMaxZoom every point is its own feature, no point_count.
		o := DefaultOptions()
		z := o.ClusterMaxZoom + 1
		n := 1 << z
		x := int((10.0 + 180) / 360 * float64(n))
		y := int(worldY(10) * float64(n))
		l := mustTile(t, z, x, y, o, nil, nil, func(l *Layer) {
			for _, p := range pts {
				l.Add(1, p, nil)
			}
		})
		if len(l.Features) != 1000 || len(l.Features[0].Props) != 0 {
			t.Errorf("%d features, props %v", len(l.Features), l.Features[0].Props)
		}
	})
}

func TestEmptyTile(t *testing.T) {
	tile, _ := NewTile(4, 3, 3, DefaultOptions())
	l, _ := tile.AddLayer("l", nil, nil)
	l.Add(1, wkb.AppendPoint(nil, 170, -80), nil)
	if !tile.Empty() || l.Len() != 0 {
		t.Error("not empty")
	}
	dt, err := decodeTile(tile.Encode())
	if err != nil || len(dt.Layers) != 1 || len(dt.Layers[0].Features) != 0 {
		t.Errorf("%+v %v", dt, err)
	}
}

// TestMercatorTable bounds the interpolation error of the table used to
// find thinning cells: at zoom 8, under 0.15 pixel of a 4096 extent
// within the tile matrix set's latitudes.
func TestMercatorTable(t *testing.T) {
	tab := mercatorTable()
	worst, worstPole := 0.0, 0.0
	for lat := -89.99; lat <= 89.99; lat += 0.000731 {
		d := math.Abs(tab.y(lat) - worldY(lat))
		if math.Abs(lat) <= MaxLat {
			worst = max(worst, d)
		} else {
			worstPole = max(worstPole, d)
		}
	}
	if px := worst * 256 * 4096; px > 0.15 {
		t.Errorf("error %g of the world: %.3f px at z8", worst, px)
	}
	t.Logf("worst error %.2g within ±%.2f°, %.2g beyond", worst, MaxLat, worstPole)
	if y := tab.y(math.NaN()); !(y > 1) {
		t.Errorf("NaN → %v", y)
	}
}

// TestClipPieces checks the polygon clipper where Sutherland–Hodgman
// would join pieces with zero-width edges: shapes that leave the tile and
// come back, holes crossing the tile edge, holes around the tile. The
// rings are wound either way (AppendPolygon keeps them as given).
func TestClipPieces(t *testing.T) {
	// Tile 1/0/0 spans lon -180..0, lat 0..85; its buffer reaches 2.8125°
	// east of lon 0.
	p := newProjector(1, 0, 0, 4096)
	// area is the area in tile pixels of a lon/lat box within the
	// buffered tile.
	area := func(lon0, lat0, lon1, lat1 float64) float64 {
		c := func(v float64) float64 { return math.Max(-64, math.Min(4096+64, v)) }
		x0, y0 := p.xy(lon0, lat1)
		x1, y1 := p.xy(lon1, lat0)
		return (c(x1) - c(x0)) * (c(y1) - c(y0))
	}
	for _, tc := range []struct {
		name  string
		rings [][]float64
		want  []float64
	}{
		{"TwoArms", [][]float64{{-90, 10, 30, 10, 30, 60, -90, 60, -90, 50, 20, 50, 20, 20, -90, 20, -90, 10}},
			[]float64{area(-90, 50, 20, 60), area(-90, 10, 20, 20)}},
		{"HoleAcrossTheEdge", [][]float64{square(-90, 10, 30, 60, true), square(-60, 20, 20, 50, false)},
			[]float64{area(-90, 10, 30, 60) - area(-60, 20, 20, 50)}},
		{"HoleAroundTheTile", [][]float64{square(-200, -20, 60, 89, true), square(-190, -10, 50, 88, false)}, nil},
		{"AroundTheTileWithAHole", [][]float64{square(-200, -10, 40, 88, true), square(-60, 20, -50, 50, false)},
			[]float64{area(-200, -10, 40, 88), -area(-60, 20, -50, 50)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustTile(t, 1, 0, 0, noCluster(), nil, nil, func(l *Layer) {
				l.Add(1, wkb.AppendPolygon(nil, tc.rings), nil)
			})
			if tc.want == nil {
				if len(l.Features) != 0 {
					t.Errorf("%+v", l.Features)
				}
				return
			}
			if len(l.Features) != 1 || len(l.Features[0].Parts) != len(tc.want) {
				t.Fatalf("%+v, want %d rings", l.Features, len(tc.want))
			}
			for i, r := range l.Features[0].Parts {
				got := float64(ringArea(r)) / 2
				if math.Abs(got-tc.want[i]) > 0.01*math.Abs(tc.want[i]) {
					t.Errorf("ring %d: area %.0f, want %.0f", i, got, tc.want[i])
				}
			}
		})
	}
}

func TestDropCollinear(t *testing.T) {
	for _, tc := range []struct{ in, want []int32 }{
		{[]int32{0, 0, 5, 0, 10, 0, 10, 10, 0, 10}, []int32{0, 0, 10, 0, 10, 10, 0, 10}},
		// A spike out and back along x = 10.
		{[]int32{0, 0, 10, 0, 10, 10, 10, 5, 10, 20, 0, 20}, []int32{0, 0, 10, 0, 10, 20, 0, 20}},
		// Across the seam: the first point is on the line last → second.
		{[]int32{5, 0, 10, 0, 10, 10, 0, 10, 0, 0}, []int32{10, 0, 10, 10, 0, 10, 0, 0}},
	} {
		got := dropCollinear(append([]int32(nil), tc.in...))
		if len(got) != len(tc.want) {
			t.Errorf("%v → %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%v → %v, want %v", tc.in, got, tc.want)
				break
			}
		}
	}
}

// TestClusterAnyOrder: a thinned layer of points added with AddFeature
// comes out byte for byte the same whatever order the points come in:
// each cell's first point is the one of the least Position, alone in
// its cell it keeps its values, and the cells are written in the order
// of their first points. Points near the tile's edges (outside the
// buffer by a hair) are among them.
func TestClusterAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var feats []*mapcommons.Feature
	for i := range 5000 {
		lon, lat := -180+360*r.Float64(), -85+170*r.Float64()
		if i%7 == 0 { // a cluster of its own far from the rest
			lon, lat = 10+r.Float64()*1e-3, 10+r.Float64()*1e-3
		}
		if i%11 == 0 { // at the edges of tile 1/1/0's buffer
			lon = []float64{0, 180, -180, 5.625, -5.625}[i%5] + (r.Float64()-0.5)*1e-9
		}
		feats = append(feats, &mapcommons.Feature{Position: int64(i), Geometry: wkb.AppendPoint(nil, lon, lat),
			Values: []any{"p" + strconv.Itoa(i), int64(i), float64(i) / 3, i%2 == 0}})
	}
	for _, tile := range [][3]int{{0, 0, 0}, {1, 1, 0}, {3, 4, 3}} {
		encode := func(order []*mapcommons.Feature) []byte {
			tl, err := NewTile(tile[0], tile[1], tile[2], DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			l, err := tl.AddLayer("pts", testAttrs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range order {
				if err := l.AddFeature(uint64(f.Position+1), f); err != nil {
					t.Fatal(err)
				}
			}
			return tl.Encode()
		}
		want := encode(feats)
		shuffled := slices.Clone(feats)
		for range 3 {
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if got := encode(shuffled); !bytes.Equal(got, want) {
				t.Fatalf("tile %v: %d bytes shuffled, %d in order", tile, len(got), len(want))
			}
		}
		if len(want) < 100 {
			t.Fatalf("tile %v: %d bytes", tile, len(want))
		}
	}
}
