package proj

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// realDir holds real shapefiles nobody on this project made (see
// shared/testdata/README.md), in lon/lat; CI checks the repository out
// beside shared/.
const realDir = "../testdata/real/"

// readShapes reads the geometries of a shapefile (path without extension)
// as raw coordinates: no .prj is passed to the reader, whose CRS check
// refuses projected ones.
func readShapes(t *testing.T, base string) []wkb.Geom {
	t.Helper()
	var files [3]*os.File
	for i, ext := range []string{".shp", ".dbf", ".shx"} {
		f, err := os.Open(base + ext)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	r, err := shapefile.Open(files[0], files[1], files[2], shapefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []wkb.Geom
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		var g wkb.Geom
		if f.Geometry != nil {
			if g, err = wkb.Decode(f.Geometry); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, g)
	}
}

// flat returns all the coordinates of g, in order.
func flat(g wkb.Geom, dst []float64) []float64 {
	dst = append(dst, g.Coords...)
	for _, r := range g.Rings {
		dst = append(dst, r...)
	}
	for _, p := range g.Parts {
		dst = flat(p, dst)
	}
	return dst
}

// TestRealShapefiles reprojects real lon/lat shapefiles with ogr2ogr to
// projected CRSs, reads the projected files back with the shapefile reader
// and converts them with the Transform of the .prj GDAL wrote (ESRI WKT):
// every vertex must come back to the original lon/lat within 1e-6 degrees
// (the original converted to WGS 84 by our own transform of its .prj when
// that is NAD27: both sides then carry the same datum shift). Where the
// datum is the same on both sides the inverse projection alone must give
// the original back within 1e-9 degrees (0.1 mm).
func TestRealShapefiles(t *testing.T) {
	gdaltest.NeedTool(t, "ogr2ogr")
	if _, err := os.Stat(realDir + "nc.shp"); err != nil {
		t.Skipf("real data not available: %v", err)
	}
	cases := []struct {
		src, srs string
		filter   []string // ogr2ogr options selecting the features
		sameDtm  bool     // the target CRS is on the source's datum
		tol      float64  // degrees; 0: 1e-6
	}{
		{"nc", "EPSG:26717", nil, true, 0}, // NAD27 / UTM 17N
		{"nc", "EPSG:32019", nil, true, 0}, // NAD27 / North Carolina (ftUS), LCC
		// NAD83(HARN) / North Carolina: GDAL shifts NAD27 its own way (about
		// 10 m from our NAD27 -> WGS 84).
		{"nc", "EPSG:3358", nil, false, 1e-4},
		{"naturalearth_cities", "EPSG:3857", nil, true, 0}, // Web Mercator
		{"naturalearth_cities", "EPSG:32633", []string{"-spat", "3", "-80", "27", "84"}, true, 0},
		{"naturalearth_cities", "EPSG:3413", []string{"-spat", "-180", "40", "180", "90"}, true, 0},
		{"naturalearth_cities", "EPSG:3031", []string{"-spat", "-180", "-90", "180", "-30"}, true, 0},
		{"naturalearth_lowres", "EPSG:5070", []string{"-spat", "-125", "24", "-66", "50"}, true, 0},
		{"naturalearth_lowres", "EPSG:2264", []string{"-where", "name = 'United States of America'"}, true, 0},
		// OSGB36: GDAL uses EPSG 1314 in the UK, as we do (it picks other
		// parameters in the Republic of Ireland, outside 1314's area).
		{"naturalearth_lowres", "EPSG:27700", []string{"-where", "name = 'United Kingdom'"}, false, 1e-6},
		{"naturalearth_lowres", "EPSG:3035", nil, false, 0}, // LAEA: refused
	}
	for _, c := range cases {
		t.Run(c.src+"_"+strings.ReplaceAll(c.srs, ":", ""), func(t *testing.T) {
			dir := t.TempDir()
			sub := filepath.Join(dir, "sub.shp")
			out := filepath.Join(dir, "out.shp")
			gdaltest.Ogr2ogr(t, append(append([]string{"-f", "ESRI Shapefile"}, c.filter...), sub, realDir+c.src+".shp")...)
			gdaltest.Ogr2ogr(t, "-f", "ESRI Shapefile", "-t_srs", c.srs, out, sub)
			prj, err := os.ReadFile(filepath.Join(dir, "out.prj"))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Parse(string(prj))
			if c.srs == "EPSG:3035" {
				wantInvalid(t, err, "ETRS_1989_LAEA", "Lambert_Azimuthal_Equal_Area")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			srcPRJ, err := os.ReadFile(realDir + c.src + ".prj")
			if err != nil {
				t.Fatal(err)
			}
			srcTr := mustParse(t, string(srcPRJ))

			orig := readShapes(t, strings.TrimSuffix(sub, ".shp"))
			proj := readShapes(t, strings.TrimSuffix(out, ".shp"))
			if len(orig) != len(proj) || len(orig) == 0 {
				t.Fatalf("%d features read back for %d", len(proj), len(orig))
			}
			var worst, worstSrc float64
			var worstAt [4]float64
			n := 0
			for i := range orig {
				a := flat(orig[i], nil)
				b := flat(proj[i], nil)
				if len(a) != len(b) {
					t.Fatalf("feature %d: %d coordinates, %d projected", i, len(a), len(b))
				}
				for j := 0; j+1 < len(a); j += 2 {
					lon, lat, err := tr.Forward(b[j], b[j+1])
					if err != nil {
						t.Fatalf("feature %d: %v", i, err)
					}
					wlon, wlat, err := srcTr.Forward(a[j], a[j+1])
					if err != nil {
						t.Fatal(err)
					}
					d := math.Max(math.Abs(math.Remainder(lon-wlon, 360)), math.Abs(lat-wlat))
					if d > worst {
						worst, worstAt = d, [4]float64{a[j], a[j+1], b[j], b[j+1]}
					}
					if c.sameDtm {
						slon, slat := unproject(tr, b[j], b[j+1])
						worstSrc = math.Max(worstSrc, math.Max(math.Abs(math.Remainder(slon-a[j], 360)), math.Abs(slat-a[j+1])))
					}
					n++
				}
				// WKB() agrees with Forward.
				geomWKB := proj[i].AppendWKB(nil)
				got, err := tr.WKB(geomWKB, nil)
				if err != nil {
					t.Fatalf("feature %d: WKB: %v", i, err)
				}
				g, err := wkb.Decode(got)
				if err != nil {
					t.Fatal(err)
				}
				for j, v := range flat(g, nil) {
					if w := b[j]; j%2 == 0 {
						lon, _, _ := tr.Forward(w, b[j+1])
						if v != lon {
							t.Fatalf("feature %d: WKB gives %v, Forward %v", i, v, lon)
						}
					}
				}
			}
			tol := c.tol
			if tol == 0 {
				tol = 1e-6
			}
			if worst > tol {
				t.Errorf("worst difference %.3g degrees over %d vertices, at %v", worst, n, worstAt)
			}
			if c.sameDtm && worstSrc > 1e-9 {
				t.Errorf("inverse projection alone: worst difference %.3g degrees", worstSrc)
			}
			t.Logf("%s (%s): %d features, %d vertices; worst %.2g° (%.2g° by the projection alone)", c.srs, tr.Name(), len(orig), n, worst, worstSrc)
		})
	}
}
