package mvt

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// encodeTouched encodes every tile of zoom z that the bounding box of some
// feature touches, feeding each tile only those features (as the store's
// bbox query would), and calls fn with the tile's bytes.
func encodeTouched(t testing.TB, layer string, attrs []mapcommons.Attribute, feats []realFeature, z int, opt Options, fn func(x, y int, b []byte)) {
	t.Helper()
	boxes := make([]wkb.Rect, len(feats))
	for i, f := range feats {
		boxes[i], _ = f.g.Bounds()
	}
	x0, y0, x1, y1 := tileRange(feats, z)
	for x := x0; x <= x1; x++ {
		for y := y0; y <= y1; y++ {
			tile, err := NewTile(z, x, y, opt)
			if err != nil {
				t.Fatal(err)
			}
			tb := tile.Bounds()
			l, err := tile.AddLayer(layer, attrs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range feats {
				if r := boxes[i]; r.MaxX < tb.MinX || r.MinX > tb.MaxX || r.MaxY < tb.MinY || r.MinY > tb.MaxY {
					continue
				}
				if err := l.Add(uint64(i+1), f.geom, f.values); err != nil {
					t.Fatal(err)
				}
			}
			if l.Len() > 0 {
				fn(x, y, tile.Encode())
			}
		}
	}
}

// polygonWKT writes the rings of a decoded polygon feature as a WKT
// MultiPolygon in tile coordinates, grouped as MVT 2.1 groups them (an
// exterior, positive area, then its interiors).
func polygonWKT(parts [][]int64) string {
	var sb strings.Builder
	sb.WriteString("MULTIPOLYGON(")
	for i, p := range parts {
		switch {
		case i == 0:
			sb.WriteString("((")
		case ringArea(p) > 0:
			sb.WriteString(")),((")
		default:
			sb.WriteString("),(")
		}
		for k := 0; k < len(p); k += 2 {
			fmt.Fprintf(&sb, "%d %d,", p[k], p[k+1])
		}
		fmt.Fprintf(&sb, "%d %d", p[0], p[1]) // closed, as WKT wants
	}
	sb.WriteString(")))")
	return sb.String()
}

// validZooms is how deep TestGDALTilePolygonsValid goes for each data set.
func validZooms(base string) int {
	if base == "naturalearth_lowres" && raceEnabled {
		// Zooms 7 and 8 of the countries are most of the test's work
		// (about 25,000 tiles); the race detector makes them several
		// times slower and finds nothing there that zoom 6 does not
		// exercise. The run without it (.ci/run) covers them.
		return 6
	}
	return 8
}

// TestGDALTilePolygonsValid encodes every tile of zooms 0–8 that holds a
// feature of the countries and of the North Carolina counties, and has
// GEOS (SpatiaLite's ST_IsValid, through GDAL's SQLite dialect) check every
// polygon feature of every tile, decoded in tile coordinates: rounding to
// the integer grid must not leave a ring that crosses or touches itself,
// a hole outside its shell, or two overlapping parts. All the polygons go
// into one CSV file (WKT) per data set, checked by one ogrinfo.
//
// In the subtests "rebuilt", every feature is rebuilt by snap rounding,
// not only those whose rounded rings are invalid, as a test of the
// rebuild on thousands of real polygons.
func TestGDALTilePolygonsValid(t *testing.T) {
	bin := gdaltest.Need(t)
	for _, tc := range []struct {
		base, layer string
		rebuild     bool
	}{{"naturalearth_lowres", "countries", false}, {"nc", "counties", false},
		{"naturalearth_lowres", "countries/rebuilt", true}, {"nc", "counties/rebuilt", true}} {
		t.Run(tc.layer, func(t *testing.T) {
			rebuildAll = tc.rebuild
			defer func() { rebuildAll = false }()
			attrs, feats := readReal(t, tc.base)
			path := filepath.Join(t.TempDir(), "polygons.csv")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w := bufio.NewWriter(f)
			w.WriteString("z,x,y,id,WKT\n")
			rows, tiles := 0, 0
			maxZ := validZooms(tc.base)
			for z := 0; z <= maxZ; z++ {
				encodeTouched(t, "polygons", attrs, feats, z, DefaultOptions(), func(x, y int, b []byte) {
					dt, err := decodeTile(b)
					if err != nil {
						t.Fatalf("%d/%d/%d: %v", z, x, y, err)
					}
					tiles++
					for _, ft := range dt.Layers[0].Features {
						if ft.Type != 3 {
							continue
						}
						if err := checkPolygon(ft.Parts); err != nil {
							t.Errorf("%d/%d/%d feature %d: %v", z, x, y, ft.ID, err)
						}
						fmt.Fprintf(w, "%d,%d,%d,%d,\"%s\"\n", z, x, y, ft.ID, polygonWKT(ft.Parts))
						rows++
					}
				})
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			// Every row read back with a geometry, and the invalid ones
			// with GEOS's reason.
			sql := "SELECT count(*) AS n, sum(GEOMETRY IS NOT NULL) AS g, " +
				"sum(NOT ST_IsValid(GEOMETRY)) AS bad FROM polygons"
			out := runOgrSQL(t, bin, path, sql)
			want := fmt.Sprintf("n=%d g=%d", rows, rows)
			if !strings.HasPrefix(out, want) {
				t.Fatalf("ogrinfo read %q, want %q (%d rows written)", out, want, rows)
			}
			if !strings.HasSuffix(out, " bad=0") {
				bad := runOgrSQL(t, bin, path, "SELECT z, x, y, id, ST_IsValidReason(GEOMETRY) AS reason FROM polygons WHERE NOT ST_IsValid(GEOMETRY)")
				t.Errorf("GEOS finds invalid polygons (%s):\n%s", out, bad)
			}
			t.Logf("zooms 0–%d: %d tiles, %d polygon features: %s", maxZ, tiles, rows, out)
		})
	}
}

// runOgrSQL runs one query of GDAL's SQLite dialect on path and returns
// its rows, one a line, each as its "column=value" pairs.
func runOgrSQL(t *testing.T, bin, path, sql string) string {
	t.Helper()
	cmd := exec.Command(bin, "-ro", "-q", "-dialect", "sqlite", "-sql", sql, path)
	var stderr strings.Builder
	cmd.Stderr = &stderr // GEOS warnings, one per invalid polygon
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ogrinfo %s: %v\n%s", sql, err, stderr.String())
	}
	var lines, cur []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "OGRFeature(") {
			if cur != nil {
				lines = append(lines, strings.Join(cur, " "))
			}
			cur = []string{}
		} else if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && cur != nil {
			name, _, _ := strings.Cut(k, " (")
			cur = append(cur, name+"="+v)
		}
	}
	if cur != nil {
		lines = append(lines, strings.Join(cur, " "))
	}
	return strings.Join(lines, "\n")
}

// checkPolygon is the test's own check of a decoded polygon feature, for
// the properties the encoder guarantees: every ring has three points or
// more and a non-zero area, the first ring is an exterior, no ring crosses
// or touches itself, no two rings cross (they may touch at a point), and
// every interior ring lies inside its exterior. It is quadratic: meant
// for the fuzz target's small polygons and crafted cases.
func checkPolygon(parts [][]int64) error {
	if len(parts) == 0 {
		return fmt.Errorf("no rings")
	}
	if ringArea(parts[0]) <= 0 {
		return fmt.Errorf("first ring is not an exterior")
	}
	type seg struct{ ax, ay, bx, by int64 }
	segs := func(p []int64) []seg {
		n := len(p) / 2
		out := make([]seg, n)
		for i := 0; i < n; i++ {
			j := (i + 1) % n
			out[i] = seg{p[2*i], p[2*i+1], p[2*j], p[2*j+1]}
		}
		return out
	}
	all := make([][]seg, len(parts))
	shell := 0
	for i, p := range parts {
		if len(p) < 6 {
			return fmt.Errorf("ring %d of %d points", i, len(p)/2)
		}
		a := ringArea(p)
		if a == 0 {
			return fmt.Errorf("ring %d of zero area", i)
		}
		all[i] = segs(p)
		if a > 0 {
			shell = i
			continue
		}
		// A hole: inside its exterior, tested at the midpoint of an edge
		// (doubled coordinates keep the test exact), which touching at a
		// vertex cannot put on the exterior.
		s := all[i][0]
		if !inRing2(s.ax+s.bx, s.ay+s.by, parts[shell]) {
			return fmt.Errorf("hole %d outside its exterior %d", i, shell)
		}
	}
	for i, si := range all {
		n := len(si)
		for k := 0; k < n; k++ {
			for j := i; j < len(all); j++ {
				l0 := 0
				if j == i {
					l0 = k + 1
				}
				for l := l0; l < len(all[j]); l++ {
					a, b := si[k], all[j][l]
					adjacent := j == i && (l == k+1 || (k == 0 && l == n-1))
					kind := segIntersect(a.ax, a.ay, a.bx, a.by, b.ax, b.ay, b.bx, b.by)
					switch {
					case kind == 0:
					case adjacent && kind == 1:
						// Consecutive edges meet at their shared vertex only.
					case j == i:
						return fmt.Errorf("ring %d touches itself: edges %d and %d", i, k, l)
					case kind == 2:
						return fmt.Errorf("rings %d and %d cross: edges %d and %d", i, j, k, l)
					}
				}
			}
		}
	}
	return nil
}

// segIntersect classifies how segments a–b and c–d meet: 0 not at all,
// 1 at one point that is an endpoint of both, 3 at one point that is an
// endpoint of one only (a vertex on the other's interior), 2 properly
// crossing or overlapping along a stretch.
func segIntersect(ax, ay, bx, by, cx, cy, dx, dy int64) int {
	o := func(px, py, qx, qy, rx, ry int64) int64 {
		v := (qx-px)*(ry-py) - (qy-py)*(rx-px)
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		}
		return 0
	}
	on := func(px, py, qx, qy, rx, ry int64) bool { // r on segment p–q, given collinear
		return min(px, qx) <= rx && rx <= max(px, qx) && min(py, qy) <= ry && ry <= max(py, qy)
	}
	d1, d2 := o(cx, cy, dx, dy, ax, ay), o(cx, cy, dx, dy, bx, by)
	d3, d4 := o(ax, ay, bx, by, cx, cy), o(ax, ay, bx, by, dx, dy)
	if d1 == 0 && d2 == 0 { // collinear
		n := 0
		for _, p := range [][2]int64{{ax, ay}, {bx, by}} {
			if on(cx, cy, dx, dy, p[0], p[1]) {
				n++
			}
		}
		for _, p := range [][2]int64{{cx, cy}, {dx, dy}} {
			if on(ax, ay, bx, by, p[0], p[1]) {
				n++
			}
		}
		shared := (ax == cx && ay == cy) || (ax == dx && ay == dy) || (bx == cx && by == cy) || (bx == dx && by == dy)
		switch {
		case n == 0:
			return 0
		case n == 2 && shared:
			return 1 // end to end
		}
		return 2
	}
	if d1*d2 > 0 || d3*d4 > 0 {
		return 0
	}
	if d1 != 0 && d2 != 0 && d3 != 0 && d4 != 0 {
		return 2
	}
	if (ax == cx && ay == cy) || (ax == dx && ay == dy) || (bx == cx && by == cy) || (bx == dx && by == dy) {
		return 1
	}
	return 3
}

// inRing2 reports whether the point (px/2, py/2) is inside ring p
// (even–odd), the point being given in doubled coordinates and off the
// ring.
func inRing2(px, py int64, p []int64) bool {
	in := false
	n := len(p) / 2
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		xi, yi, xj, yj := 2*p[2*i], 2*p[2*i+1], 2*p[2*j], 2*p[2*j+1]
		if (yi > py) != (yj > py) {
			// x of the edge at py, compared without division.
			lhs := (px - xi) * (yj - yi)
			rhs := (xj - xi) * (py - yi)
			if (yj > yi) == (lhs < rhs) {
				in = !in
			}
		}
	}
	return in
}

// pixelRing returns the lon/lat ring (closed) whose points project to the
// given pixels of tile 0/0/0 at extent 4096.
func pixelRing(px ...float64) []float64 {
	var out []float64
	for i := 0; i+1 < len(px); i += 2 {
		out = append(out, lonOf(px[i]/4096), latOf(px[i+1]/4096))
	}
	return append(out, out[0], out[1])
}

// TestPolygonsStayValid: shapes that rounding to the grid (or the
// simplification before it) would make invalid come out valid, with the
// rings the rebuild gives them.
func TestPolygonsStayValid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tol   float64
		geom  []byte
		rings []int64 // the area (doubled) of each ring, in order
	}{
		// Two lobes joined by a channel 0.15 pixels wide: rounded, the
		// ring would touch itself at 1010,1000; rebuilt, two exteriors
		// touching there.
		{"Pinch", 0, wkb.AppendPolygon(nil, [][]float64{pixelRing(1000, 1000, 1010, 1000.3, 1020, 1000, 1020, 1010, 1010, 1000.45, 1000, 1010)}),
			[]int64{100, 100}},
		// Two parts of a MultiPolygon 0.2 pixels apart: rounded, they
		// would share the edge x = 1010; rebuilt, one exterior.
		{"PartsMeet", 0, wkb.AppendMultiPolygon(nil, [][][]float64{
			{pixelRing(1000, 1000, 1010.2, 1000, 1010.2, 1010, 1000, 1010)},
			{pixelRing(1010.4, 1000, 1020, 1000, 1020, 1010, 1010.4, 1010)}}),
			[]int64{400}},
		// A hole 0.05 pixels inside the exterior's edge: rounded, it
		// would share a stretch of that edge; rebuilt, a notch.
		{"HoleOnEdge", 0, wkb.AppendPolygon(nil, [][]float64{
			pixelRing(1000.4, 1000, 1100, 1000, 1100, 1100, 1000.4, 1100),
			pixelRing(1000.45, 1040, 1020, 1050, 1000.45, 1060)}),
			[]int64{19600}},
		// Overlapping parts (an invalid input) come out as their union.
		{"Overlap", 0, wkb.AppendMultiPolygon(nil, [][][]float64{
			{pixelRing(1000, 1000, 1020, 1000, 1020, 1020, 1000, 1020)},
			{pixelRing(1010, 1010, 1030, 1010, 1030, 1030, 1010, 1030)}}),
			[]int64{1400}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := noCluster()
			opt.Tolerance = tc.tol
			l := mustTile(t, 0, 0, 0, opt, nil, nil, func(l *Layer) {
				if err := l.Add(1, tc.geom, nil); err != nil {
					t.Fatal(err)
				}
			})
			if len(l.Features) != 1 {
				t.Fatalf("%d features", len(l.Features))
			}
			f := l.Features[0]
			if err := checkPolygon(f.Parts); err != nil {
				t.Errorf("%v: %v", f.Parts, err)
			}
			var areas []int64
			for _, p := range f.Parts {
				areas = append(areas, ringArea(p))
			}
			if fmt.Sprint(areas) != fmt.Sprint(tc.rings) {
				t.Errorf("ring areas %v, want %v: %v", areas, tc.rings, f.Parts)
			}
		})
	}
}
