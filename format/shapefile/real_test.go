package shapefile

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// realDir holds real shapefiles nobody on this project made (see
// testdata/README.md).
const realDir = "../../testdata/real/"

// readOptional returns the contents of a sidecar file, "" when absent.
func readOptional(t testing.TB, path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// openReal opens the real shapefile base (without extension) in realDir,
// with its .shx, .cpg and .prj.
func openReal(t testing.TB, base string) *Reader {
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
	opt := Options{CPG: readOptional(t, realDir+base+".cpg"), PRJ: readOptional(t, realDir+base+".prj")}
	r, err := Open(files[0], files[1], files[2], opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// realFeat is a feature of a real file with its decoded geometry.
type realFeat struct {
	values []any
	geom   wkb.Geom
	bounds wkb.Rect
}

func readReal(t testing.TB, base string) (*Reader, []realFeat) {
	t.Helper()
	r := openReal(t, base)
	var out []realFeat
	for {
		f, err := r.Next()
		if err == io.EOF {
			return r, out
		} else if err != nil {
			t.Fatal(err)
		}
		if f.Position != int64(len(out)) {
			t.Fatalf("feature %d has position %d", len(out), f.Position)
		}
		g, err := wkb.Decode(f.Geometry)
		if err != nil {
			t.Fatalf("feature %d: %v", f.Position, err)
		}
		b, _ := g.Bounds()
		out = append(out, realFeat{values: append([]any(nil), f.Values...), geom: g, bounds: b})
	}
}

func extentOf(feats []realFeat) wkb.Rect {
	e := wkb.EmptyRect
	for _, f := range feats {
		e = e.Extend(f.bounds)
	}
	return e
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func nearRect(a, b wkb.Rect, tol float64) bool {
	return near(a.MinX, b.MinX, tol) && near(a.MinY, b.MinY, tol) && near(a.MaxX, b.MaxX, tol) && near(a.MaxY, b.MaxY, tol)
}

func attrList(attrs []mapcommons.Attribute) string {
	var b strings.Builder
	for i, a := range attrs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%s", a.Name, a.Type)
	}
	return b.String()
}

func TestRealNC(t *testing.T) {
	r, feats := readReal(t, "nc")
	if len(feats) != 100 {
		t.Fatalf("got %d features, want 100", len(feats))
	}
	if r.CRS() != "GCS_North_American_1927" {
		t.Errorf("CRS = %q", r.CRS())
	}
	want := "AREA:float PERIMETER:float CNTY_:float CNTY_ID:float NAME:string FIPS:string FIPSNO:float " +
		"CRESS_ID:integer BIR74:float SID74:float NWBIR74:float BIR79:float SID79:float NWBIR79:float"
	if got := attrList(r.Attributes()); got != want {
		t.Errorf("attributes = %s\nwant %s", got, want)
	}
	ashe := []any{0.114, 1.442, 1825.0, 1825.0, "Ashe", "37009", 37009.0, int64(5), 1091.0, 1.0, 10.0, 1364.0, 0.0, 19.0}
	if fmt.Sprint(feats[0].values) != fmt.Sprint(ashe) {
		t.Errorf("Ashe = %v, want %v", feats[0].values, ashe)
	}
	for i, v := range ashe {
		if feats[0].values[i] != v {
			t.Errorf("Ashe value %d = %#v, want %#v", i, feats[0].values[i], v)
		}
	}
	for _, tc := range []struct {
		index    int
		name     string
		cress    int64
		polygons int
		bounds   wkb.Rect
	}{
		{0, "Ashe", 5, 1, wkb.Rect{MinX: -81.7410736083984, MinY: 36.2343559265137, MaxX: -81.2398910522461, MaxY: 36.5896492004395}},
		{55, "Dare", 28, 3, wkb.Rect{MinX: -76.0212097167969, MinY: 35.189826965332, MaxX: -75.4569778442383, MaxY: 36.2292556762695}},
	} {
		f := feats[tc.index]
		if f.values[4] != tc.name || f.values[7] != tc.cress {
			t.Errorf("feature %d = %v, want %s", tc.index, f.values, tc.name)
		}
		n := 1
		if f.geom.Type == wkb.MultiPolygon {
			n = len(f.geom.Parts)
		} else if f.geom.Type != wkb.Polygon {
			t.Errorf("%s has type %d", tc.name, f.geom.Type)
		}
		if n != tc.polygons {
			t.Errorf("%s has %d polygons, want %d", tc.name, n, tc.polygons)
		}
		if !nearRect(f.bounds, tc.bounds, 1e-12) {
			t.Errorf("%s bounds = %+v, want %+v", tc.name, f.bounds, tc.bounds)
		}
	}
	if e := extentOf(feats); !nearRect(e, wkb.Rect{MinX: -84.323853, MinY: 33.881992, MaxX: -75.456978, MaxY: 36.589649}, 1e-6) {
		t.Errorf("extent = %+v", e)
	}
}

func TestRealNaturalEarthCountries(t *testing.T) {
	r, feats := readReal(t, "naturalearth_lowres")
	if len(feats) != 177 {
		t.Fatalf("got %d features, want 177", len(feats))
	}
	if r.CRS() != "GCS_WGS_1984" {
		t.Errorf("CRS = %q", r.CRS())
	}
	if got, want := attrList(r.Attributes()), "pop_est:float continent:string name:string iso_a3:string gdp_md_est:integer"; got != want {
		t.Errorf("attributes = %s, want %s", got, want)
	}
	fiji := feats[0]
	if fmt.Sprint(fiji.values) != "[889953 Oceania Fiji FJI 5496]" || fiji.values[0] != 889953.0 || fiji.values[4] != int64(5496) {
		t.Errorf("Fiji = %#v", fiji.values)
	}
	if fiji.geom.Type != wkb.MultiPolygon || len(fiji.geom.Parts) != 3 {
		t.Errorf("Fiji is not a MultiPolygon of 3 polygons")
	}
	if !nearRect(fiji.bounds, wkb.Rect{MinX: -180, MinY: -18.28799, MaxX: 180, MaxY: -16.0208822567412}, 1e-9) {
		t.Errorf("Fiji bounds = %+v", fiji.bounds)
	}
	byISO := map[string][]any{}
	for _, f := range feats {
		byISO[f.values[3].(string)] = f.values
	}
	if civ := byISO["CIV"]; civ == nil || civ[2] != "Côte d'Ivoire" {
		t.Errorf("CIV = %q, want Côte d'Ivoire", civ)
	}
	if e := extentOf(feats); !nearRect(e, wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 83.645130}, 1e-6) {
		t.Errorf("extent = %+v", e)
	}
}

func TestRealNaturalEarthCities(t *testing.T) {
	r, feats := readReal(t, "naturalearth_cities")
	if len(feats) != 243 {
		t.Fatalf("got %d features, want 243", len(feats))
	}
	if got := attrList(r.Attributes()); got != "name:string" {
		t.Errorf("attributes = %s", got)
	}
	if f := feats[0]; f.values[0] != "Vatican City" || f.geom.Type != wkb.Point ||
		f.geom.Coords[0] != 12.4533865 || f.geom.Coords[1] != 41.9032822 {
		t.Errorf("first city = %v %+v", f.values, f.geom)
	}
	names := map[string]bool{}
	for _, f := range feats {
		if f.geom.Type != wkb.Point {
			t.Errorf("%v is not a point", f.values)
		}
		names[f.values[0].(string)] = true
	}
	for _, n := range []string{"Lomé", "Reykjavík", "Asunción", "São Tomé", "København", "Ürümqi", "São Paulo"} {
		if !names[n] {
			t.Errorf("no city named %q", n)
		}
	}
	if e := extentOf(feats); !nearRect(e, wkb.Rect{MinX: -175.220564, MinY: -41.292068, MaxX: 179.216647, MaxY: 64.143459}, 1e-6) {
		t.Errorf("extent = %+v", e)
	}
}

// TestGDAL compares every feature of the real files, attributes and
// geometry, and their extent with what GDAL reads, when GDAL is installed.
func TestGDAL(t *testing.T) {
	for _, tool := range []string{"ogr2ogr", "ogrinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	for _, base := range []string{"nc", "naturalearth_lowres", "naturalearth_cities"} {
		t.Run("OK/"+base, func(t *testing.T) {
			r, feats := readReal(t, base)
			path := realDir + base + ".shp"

			out, err := exec.Command("ogrinfo", "-al", "-so", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`Extent: \(([-\d.]+), ([-\d.]+)\) - \(([-\d.]+), ([-\d.]+)\)`).FindSubmatch(out)
			if m == nil {
				t.Fatalf("no extent in ogrinfo's output:\n%s", out)
			}
			var ext [4]float64
			for i := range ext {
				ext[i], _ = strconv.ParseFloat(string(m[i+1]), 64)
			}
			if e := extentOf(feats); !nearRect(e, wkb.Rect{MinX: ext[0], MinY: ext[1], MaxX: ext[2], MaxY: ext[3]}, 1e-6) {
				t.Errorf("extent = %+v, ogrinfo says %v", e, ext)
			}

			out, err = exec.Command("ogr2ogr", "--config", "OGR_WKT_PRECISION", "17",
				"-f", "CSV", "/vsistdout/", path, "-lco", "GEOMETRY=AS_WKT").Output()
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows)-1 != len(feats) {
				t.Fatalf("GDAL reads %d features, we %d", len(rows)-1, len(feats))
			}
			attrs := r.Attributes()
			if want := len(attrs) + 1; len(rows[0]) != want {
				t.Fatalf("GDAL reads columns %v", rows[0])
			}
			for i, row := range rows[1:] {
				compareGDAL(t, i, attrs, feats[i], row)
			}
		})
	}
}

func compareGDAL(t *testing.T, i int, attrs []mapcommons.Attribute, f realFeat, row []string) {
	t.Helper()
	for j, a := range attrs {
		s, v := row[j+1], f.values[j]
		ok := false
		switch v := v.(type) {
		case nil:
			ok = s == ""
		case string:
			ok = s == v
		case int64:
			n, err := strconv.ParseInt(s, 10, 64)
			ok = err == nil && n == v
		case float64:
			x, err := strconv.ParseFloat(s, 64)
			ok = err == nil && near(x, v, 1e-12*math.Max(1, math.Abs(v)))
		}
		if !ok {
			t.Errorf("feature %d %s = %#v, GDAL reads %q", i, a.Name, v, s)
		}
	}
	gb, err := wkb.ParseWKT(row[0])
	if err != nil {
		t.Fatalf("feature %d: GDAL's WKT: %v", i, err)
	}
	g, err := wkb.Decode(gb)
	if err != nil {
		t.Fatal(err)
	}
	if d := geomDiff(f.geom, g); d != "" {
		t.Errorf("feature %d geometry differs from GDAL's: %s", i, d)
	}
}

// geomDiff describes the first difference between two geometries, with a
// tolerance for the decimal round trip of GDAL's WKT.
func geomDiff(a, b wkb.Geom) string {
	if a.Type != b.Type {
		return fmt.Sprintf("type %d, GDAL %d", a.Type, b.Type)
	}
	seq := func(what string, x, y []float64) string {
		if len(x) != len(y) {
			return fmt.Sprintf("%s has %d values, GDAL %d", what, len(x), len(y))
		}
		for k := range x {
			if !near(x[k], y[k], 1e-12*math.Max(1, math.Abs(x[k]))) {
				return fmt.Sprintf("%s value %d = %v, GDAL %v", what, k, x[k], y[k])
			}
		}
		return ""
	}
	if d := seq("coordinates", a.Coords, b.Coords); d != "" {
		return d
	}
	if len(a.Rings) != len(b.Rings) {
		return fmt.Sprintf("%d rings, GDAL %d", len(a.Rings), len(b.Rings))
	}
	for k := range a.Rings {
		if d := seq(fmt.Sprintf("ring %d", k), a.Rings[k], b.Rings[k]); d != "" {
			return d
		}
	}
	if len(a.Parts) != len(b.Parts) {
		return fmt.Sprintf("%d parts, GDAL %d", len(a.Parts), len(b.Parts))
	}
	for k := range a.Parts {
		if d := geomDiff(a.Parts[k], b.Parts[k]); d != "" {
			return fmt.Sprintf("part %d: %s", k, d)
		}
	}
	return ""
}
