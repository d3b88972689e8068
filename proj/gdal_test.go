package proj

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mapcommons/internal/gdaltest"
)

// gdalTransform runs gdaltransform from src to dst (any SRS GDAL takes:
// a file, EPSG:n, a PROJ string) on the points and returns its output;
// points GDAL cannot convert come back as NaN.
func gdalTransform(t *testing.T, src, dst string, pts [][2]float64) [][2]float64 {
	t.Helper()
	bin := gdaltest.NeedTool(t, "gdaltransform")
	var in bytes.Buffer
	for _, p := range pts {
		fmt.Fprintf(&in, "%.17g %.17g\n", p[0], p[1])
	}
	cmd := exec.Command(bin, "-s_srs", src, "-t_srs", dst, "-output_xy")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdaltransform -s_srs %s -t_srs %s: %v\n%s", src, dst, err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pts) {
		t.Fatalf("gdaltransform gave %d lines for %d points:\n%s\n%s", len(lines), len(pts), out, stderr.Bytes())
	}
	res := make([][2]float64, len(pts))
	for i, l := range lines {
		f := strings.Fields(l)
		res[i] = [2]float64{math.NaN(), math.NaN()}
		if len(f) >= 2 {
			x, err1 := strconv.ParseFloat(f[0], 64)
			y, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
				res[i] = [2]float64{x, y}
			}
		}
	}
	return res
}

// geogcsOf returns the GEOGCS[...] of a WKT1 PROJCS, "" when there is none.
func geogcsOf(wkt string) string {
	i := strings.Index(wkt, "GEOGCS[")
	if i < 0 {
		return ""
	}
	depth := 0
	for j := i; j < len(wkt); j++ {
		switch wkt[j] {
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				return wkt[i : j+1]
			}
		}
	}
	return ""
}

// gdalCases are the .prj files of testdata, each with an area (lon/lat
// degrees on its own datum: west, south, east, north) to sample and, for
// the comparison of the whole conversion with GDAL's own choice of datum
// transformation, the tolerance in metres.
var gdalCases = []struct {
	file     string
	bbox     [4]float64
	datumTol float64
}{
	{"utm33n_wgs84.esri.prj", [4]float64{3, -80, 27, 84}, 0.001},
	{"utm33n_wgs84.ogc.prj", [4]float64{3, -80, 27, 84}, 0.001},
	// Up to 3700 km from the central meridian, where the n-series still
	// holds to well under a millimetre.
	{"utm33n_wgs84.esri.prj", [4]float64{-18, -75, 48, 75}, 0.001},
	{"utm55s_wgs84.esri.prj", [4]float64{135, -80, 159, 0}, 0.001},
	{"nad83_utm17n.esri.prj", [4]float64{-90, 0, -72, 84}, 0.001},
	{"nad83_utm17n.ogc.prj", [4]float64{-90, 0, -72, 84}, 0.001},
	{"nad83_nc_ftus.esri.prj", [4]float64{-84.5, 33.5, -75.3, 36.7}, 0.001},
	{"nad83_nc_ftus.ogc.prj", [4]float64{-84.5, 33.5, -75.3, 36.7}, 0.001},
	{"nad83_nc_ftus.arcgis.prj", [4]float64{-84.5, 33.5, -75.3, 36.7}, 0.001}, // as ArcGIS writes it
	{"epsg2264.wkt2.prj", [4]float64{-84.5, 33.5, -75.3, 36.7}, 0.001},
	{"nad27_texas_south_central.esri.prj", [4]float64{-100.5, 27.5, -93.5, 30.5}, 15},
	{"nad27_texas_south_central.ogc.prj", [4]float64{-100.5, 27.5, -93.5, 30.5}, 15},
	{"osgb36_bng.esri.prj", [4]float64{-6, 50.2, 1.5, 58.5}, 0.001},
	{"osgb36_bng.ogc.prj", [4]float64{-6, 50.2, 1.5, 58.5}, 0.001},
	{"epsg27700.wkt2.prj", [4]float64{-6, 50.2, 1.5, 58.5}, 0.001},
	{"osgb36_towgs84.ogc.prj", [4]float64{-6, 50.2, 1.5, 58.5}, 0.001},
	{"osgb36_bound.wkt2.prj", [4]float64{-6, 50.2, 1.5, 58.5}, 0.001},
	{"web_mercator.esri.prj", [4]float64{-179, -85, 179, 85}, 0.001},
	{"web_mercator.ogc.prj", [4]float64{-179, -85, 179, 85}, 0.001},
	{"epsg3857.wkt2.prj", [4]float64{-179, -85, 179, 85}, 0.001},
	{"world_mercator.esri.prj", [4]float64{-179, -80, 179, 84}, 0.001},
	{"world_mercator.ogc.prj", [4]float64{-179, -80, 179, 84}, 0.001},
	{"nsidc_north.esri.prj", [4]float64{-179, 30, 179, 90}, 0.001},
	{"nsidc_north.ogc.prj", [4]float64{-179, 30, 179, 90}, 0.001},
	{"epsg3413.wkt2.prj", [4]float64{-179, 30, 179, 90}, 0.001},
	{"antarctic_ps.esri.prj", [4]float64{-179, -90, 179, -50}, 0.001},
	{"antarctic_ps.ogc.prj", [4]float64{-179, -90, 179, -50}, 0.001},
	{"ups_north.esri.prj", [4]float64{-179, 60, 179, 90}, 0.001},
	{"ups_north.ogc.prj", [4]float64{-179, 60, 179, 90}, 0.001},
	{"conus_albers.esri.prj", [4]float64{-125, 24, -66, 50}, 0.001},
	{"conus_albers.ogc.prj", [4]float64{-125, 24, -66, 50}, 0.001},
	{"gda94_albers.esri.prj", [4]float64{110, -45, 155, -10}, 0.001},
	{"gda94_albers.ogc.prj", [4]float64{110, -45, 155, -10}, 0.001},
	{"gda94_lambert.esri.prj", [4]float64{110, -45, 155, -10}, 0.001},
	{"gda94_lambert.ogc.prj", [4]float64{110, -45, 155, -10}, 0.001},
	{"rgf93_lambert93.esri.prj", [4]float64{-5, 41, 10, 51.5}, 0.001},
	{"rgf93_lambert93.ogc.prj", [4]float64{-5, 41, 10, 51.5}, 0.001},
	{"etrs89_lcc.esri.prj", [4]float64{-20, 30, 40, 70}, 0.001},
	{"etrs89_lcc.ogc.prj", [4]float64{-20, 30, 40, 70}, 0.001},
	{"dhdn_gk3.esri.prj", [4]float64{6, 47.5, 12, 55}, 5},
	{"dhdn_gk3.ogc.prj", [4]float64{6, 47.5, 12, 55}, 5},
	{"ed50_utm31n.esri.prj", [4]float64{0, 38, 6, 52}, 15},
	{"ed50_utm31n.ogc.prj", [4]float64{0, 38, 6, 52}, 15},
	{"ntf_paris_lambert2.esri.prj", [4]float64{-4.5, 42.5, 8, 51}, 5},
	{"ntf_paris_lambert2.ogc.prj", [4]float64{-4.5, 42.5, 8, 51}, 5},
	// (GDAL 3.6 fails on the ESRI form of NTF (Paris) geographic: "Too deep
	// recursion in createOperations()".)
	{"ntf_paris_geographic.ogc.prj", [4]float64{-4.5, 42.5, 8, 51}, 5},
	{"nad27_geographic.esri.prj", [4]float64{-122, 30, -75, 44}, 20}, // GDAL picks regional parameters (Canada's near the border): up to 18 m apart
	{"ed50_geographic.esri.prj", [4]float64{-9, 36, 30, 70}, 15},
	{"wgs84_geographic.esri.prj", [4]float64{-180, -90, 180, 90}, 0.001},
}

// grid samples a lon/lat box, n by n, boundaries included.
func grid(b [4]float64, n int) [][2]float64 {
	var pts [][2]float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			lon := b[0] + (b[2]-b[0])*float64(i)/float64(n-1)
			lat := b[1] + (b[3]-b[1])*float64(j)/float64(n-1)
			pts = append(pts, [2]float64{lon, lat})
		}
	}
	return pts
}

// TestGDAL compares Parse's transforms with GDAL's (gdaltransform, PROJ
// underneath) on a grid of points over each CRS's area:
//   - the inverse projection alone, to the CRS's own geographic CRS: within
//     1 mm;
//   - the whole conversion to WGS 84 (OGC:CRS84, lon/lat): within 1 mm when
//     GDAL applies the same datum transformation (WGS 84, NAD83, ETRS89,
//     GRS 1980 datums: null; OSGB36: EPSG 1314; explicit TOWGS84), within
//     datumTol where GDAL picks another (regional parameters, grids);
//   - the datum shift alone, with our parameters given to GDAL as
//     +towgs84: within 1 mm.
func TestGDAL(t *testing.T) {
	gdaltest.NeedTool(t, "gdaltransform")
	for _, c := range gdalCases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", c.file)
			wkt := readPRJ(t, c.file)
			tr := mustParse(t, wkt)

			var in [][2]float64
			for _, p := range grid(c.bbox, 13) {
				x, y := project(tr, p[0], p[1])
				if !math.IsNaN(x) && !math.IsNaN(y) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
					in = append(in, [2]float64{x, y})
				}
			}

			// The projection alone.
			geog := "+proj=longlat +a=" + strconv.FormatFloat(tr.src.a, 'g', -1, 64) +
				" +rf=" + strconv.FormatFloat(1/nonzero(tr.src.f), 'g', -1, 64) + " +no_defs +type=crs"
			if g := geogcsOf(wkt); g != "" && tr.angUnit == degree && strings.Contains(g, `PRIMEM["Greenwich"`) {
				gf := filepath.Join(t.TempDir(), "geog.prj")
				if err := os.WriteFile(gf, []byte(g), 0o644); err != nil {
					t.Fatal(err)
				}
				geog = gf
			}
			if tr.proj != nil {
				ref := gdalTransform(t, path, geog, in)
				worst, n := 0.0, 0
				for i, p := range in {
					if math.IsNaN(ref[i][0]) {
						continue
					}
					lon, lat := unproject(tr, p[0], p[1])
					d := metres(lon, lat, ref[i][0], ref[i][1])
					if !(d <= 0.001) {
						t.Errorf("(%.3f, %.3f): ours %.10f %.10f, GDAL %.10f %.10f: %.3g m", p[0], p[1], lon, lat, ref[i][0], ref[i][1], d)
					}
					worst, n = math.Max(worst, d), n+1
				}
				if n < len(in)*9/10 {
					t.Errorf("GDAL converted only %d of %d points", n, len(in))
				}
				t.Logf("projection: %d points, worst %.2g m", n, worst)
			}

			// The whole conversion, against GDAL's choice of datum
			// transformation.
			ref := gdalTransform(t, path, "OGC:CRS84", in)
			worst, n := 0.0, 0
			for i, p := range in {
				if math.IsNaN(ref[i][0]) {
					continue
				}
				lon, lat, err := tr.Forward(p[0], p[1])
				if err != nil {
					t.Errorf("Forward(%g, %g): %v", p[0], p[1], err)
					continue
				}
				d := metres(lon, lat, ref[i][0], ref[i][1])
				if !(d <= c.datumTol) {
					t.Errorf("(%.3f, %.3f): ours %.10f %.10f, GDAL %.10f %.10f: %.3g m", p[0], p[1], lon, lat, ref[i][0], ref[i][1], d)
				}
				worst, n = math.Max(worst, d), n+1
			}
			if n < len(in)*9/10 {
				t.Errorf("GDAL converted only %d of %d points", n, len(in))
			}
			t.Logf("to WGS 84: %d points, worst %.2g m (GDAL's datum transformation)", n, worst)

			// The datum shift alone, with our parameters.
			if tr.shift != nil {
				h := tr.shift
				src := fmt.Sprintf("+proj=longlat +a=%.17g +rf=%.17g +towgs84=%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g +no_defs +type=crs",
					tr.src.a, 1/nonzero(tr.src.f), h.tx, h.ty, h.tz, h.rx/arcsec, h.ry/arcsec, h.rz/arcsec, h.s*1e6)
				geo := make([][2]float64, len(in))
				for i, p := range in {
					geo[i][0], geo[i][1] = unproject(tr, p[0], p[1])
				}
				ref := gdalTransform(t, src, "OGC:CRS84", geo)
				worst := 0.0
				for i, p := range in {
					lon, lat, err := tr.Forward(p[0], p[1])
					if err != nil {
						continue
					}
					d := metres(lon, lat, ref[i][0], ref[i][1])
					if !(d <= 0.001) {
						t.Errorf("shift of %.9f %.9f: ours %.10f %.10f, GDAL %.10f %.10f: %.3g m", geo[i][0], geo[i][1], lon, lat, ref[i][0], ref[i][1], d)
					}
					worst = math.Max(worst, d)
				}
				t.Logf("datum shift alone: worst %.2g m", worst)
			}
		})
	}
}
