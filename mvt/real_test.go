package mvt

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
)

// realDir holds real shapefiles nobody on this project made.
const realDir = "../testdata/real/"

// realFeature is one feature of a real shapefile, copied out of the reader.
type realFeature struct {
	values []any
	geom   []byte
	g      wkb.Geom
}

// readReal reads the shapefile base of realDir.
func readReal(t testing.TB, base string) ([]mapcommons.Attribute, []realFeature) {
	t.Helper()
	var files [3]*os.File
	for i, ext := range []string{".shp", ".dbf", ".shx"} {
		f, err := os.Open(realDir + base + ext)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		files[i] = f
	}
	cpg, _ := os.ReadFile(realDir + base + ".cpg")
	prj, _ := os.ReadFile(realDir + base + ".prj")
	r, err := shapefile.Open(files[0], files[1], files[2], shapefile.Options{CPG: string(cpg), PRJ: string(prj)})
	if err != nil {
		t.Fatal(err)
	}
	var out []realFeature
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		g, err := wkb.Decode(f.Geometry)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, realFeature{values: append([]any(nil), f.Values...), geom: append([]byte(nil), f.Geometry...), g: g})
	}
	return r.Attributes(), out
}

// tileRange returns the tiles of zoom z that the features touch.
func tileRange(feats []realFeature, z int) (x0, y0, x1, y1 int) {
	r := wkb.EmptyRect
	for _, f := range feats {
		if b, ok := f.g.Bounds(); ok {
			r = r.Extend(b)
		}
	}
	n := float64(int(1) << z)
	clamp := func(v float64) int { return min(max(int(v), 0), 1<<z-1) }
	return clamp(worldX(r.MinX) * n), clamp(worldY(r.MaxY) * n), clamp(worldX(r.MaxX) * n), clamp(worldY(r.MinY) * n)
}

// encodeAll encodes every tile of zoom z that feats touch, calling fn
// with each tile's bytes.
func encodeAll(t testing.TB, layer string, attrs []mapcommons.Attribute, feats []realFeature, z int, opt Options, fn func(x, y int, b []byte)) {
	t.Helper()
	x0, y0, x1, y1 := tileRange(feats, z)
	for x := x0; x <= x1; x++ {
		for y := y0; y <= y1; y++ {
			tile, err := NewTile(z, x, y, opt)
			if err != nil {
				t.Fatal(err)
			}
			l, err := tile.AddLayer(layer, attrs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range feats {
				if err := l.Add(uint64(i+1), f.geom, f.values); err != nil {
					t.Fatal(err)
				}
			}
			fn(x, y, tile.Encode())
		}
	}
}

func clampLat(lat float64) float64 { return math.Max(-MaxLat, math.Min(MaxLat, lat)) }

// worldArea returns the area of a (multi)polygon projected to the world
// pixel square of zoom z (extent 4096), holes subtracted.
func worldArea(g wkb.Geom, z int) float64 {
	s := float64(int64(1)<<z) * 4096
	switch g.Type {
	case wkb.Polygon:
		a := 0.0
		for i, r := range g.Rings {
			var s2 float64
			n := len(r)/2 - 1 // closed ring
			for k := 0; k < n; k++ {
				x0, y0 := worldX(r[2*k])*s, worldY(clampLat(r[2*k+1]))*s
				x1, y1 := worldX(r[2*k+2])*s, worldY(clampLat(r[2*k+3]))*s
				s2 += x0*y1 - x1*y0
			}
			if i == 0 {
				a += math.Abs(s2) / 2
			} else {
				a -= math.Abs(s2) / 2
			}
		}
		return a
	case wkb.MultiPolygon:
		a := 0.0
		for _, p := range g.Parts {
			a += worldArea(p, z)
		}
		return a
	}
	return 0
}

// TestRealPolygonsCloseUp cuts the countries and the North Carolina
// counties into the tiles of a zoom without buffer or simplification and
// checks that the pieces of each polygon add up to its projected area:
// the rings close along the tile edges with nothing lost or counted
// twice. Every tile decodes under the strict decoder (winding, closed
// rings, no zero-length segments).
//
// The subtests "rebuilt" have every feature rebuilt by snap rounding
// (snap.go), which must lose or add no more area than rounding does.
func TestRealPolygonsCloseUp(t *testing.T) {
	for _, tc := range []struct {
		base    string
		z       int
		rebuild bool
	}{{"naturalearth_lowres", 1, false}, {"naturalearth_lowres", 3, false}, {"nc", 7, false}, {"nc", 9, false},
		{"naturalearth_lowres", 1, true}, {"naturalearth_lowres", 3, true}, {"nc", 7, true}, {"nc", 9, true}} {
		name := tc.base
		if tc.rebuild {
			name += "/rebuilt"
		}
		t.Run(name, func(t *testing.T) {
			rebuildAll = tc.rebuild
			defer func() { rebuildAll = false }()
			attrs, feats := readReal(t, tc.base)
			opt := noCluster()
			opt.Buffer, opt.Tolerance = 0, 0
			got := make([]float64, len(feats)+1)
			tiles := 0
			encodeAll(t, tc.base, attrs, feats, tc.z, opt, func(x, y int, b []byte) {
				tiles++
				dt, err := decodeTile(b)
				if err != nil {
					t.Fatalf("%d/%d/%d: %v", tc.z, x, y, err)
				}
				for _, f := range dt.Layers[0].Features {
					for _, p := range f.Parts {
						for i := 0; i < len(p); i += 2 {
							if p[i] < 0 || p[i] > 4096 || p[i+1] < 0 || p[i+1] > 4096 {
								t.Fatalf("%d/%d/%d feature %d: point %d,%d outside the tile", tc.z, x, y, f.ID, p[i], p[i+1])
							}
						}
						got[f.ID] += float64(ringArea(p)) / 2
					}
				}
			})
			var sumGot, sumWant float64
			for i, f := range feats {
				want := worldArea(f.g, tc.z)
				sumGot += got[i+1]
				sumWant += want
				if want > 20000 && math.Abs(got[i+1]-want) > 0.02*want {
					t.Errorf("feature %d %v: pieces %.0f px², polygon %.0f px²", i+1, f.values[:2], got[i+1], want)
				}
			}
			if math.Abs(sumGot-sumWant) > 0.002*sumWant {
				t.Errorf("all pieces %.0f px², all polygons %.0f px²", sumGot, sumWant)
			}
			t.Logf("z%d, %d tiles: pieces %.0f px², polygons %.0f px² (%.4f%%)", tc.z, tiles, sumGot, sumWant, 100*(sumGot-sumWant)/sumWant)
		})
	}
}

// writeTiles writes the tiles of zoom z into dir as z/x/y.pbf (the path
// GDAL's MVT driver georeferences a tile by) and returns the paths.
func writeTiles(t testing.TB, dir, layer string, attrs []mapcommons.Attribute, feats []realFeature, z int, opt Options) []string {
	var paths []string
	encodeAll(t, layer, attrs, feats, z, opt, func(x, y int, b []byte) {
		p := filepath.Join(dir, itoa(z), itoa(x), itoa(y)+".pbf")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	})
	return paths
}

func itoa(i int) string { return strconv.Itoa(i) }
