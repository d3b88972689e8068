package gdaltest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOgrinfo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.csv")
	os.WriteFile(p, []byte("WKT,name,n\n\"POINT (1 2)\",a,1\n\"LINESTRING (0 0,3 4)\",b,2\n"), 0o644)
	info := Ogrinfo(t, p, "-oo", "GEOM_POSSIBLE_NAMES=WKT")
	if info.Driver != "CSV" || len(info.Layers) != 1 {
		t.Fatalf("%+v", info)
	}
	l := info.Layers[0]
	if l.Name != "t" || l.Count != 2 || !l.HasExt || !Near(l.Extent, [4]float64{0, 0, 3, 4}, 1e-9) {
		t.Errorf("%+v", l)
	}
	if len(l.Fields) != 3 {
		t.Errorf("fields %q", l.Fields)
	}
}

func TestFeatures(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.csv")
	os.WriteFile(p, []byte("WKT,name,n\n\"POINT (1 2)\",a b,1\n\"LINESTRING (0 0,3 4)\",b,2\n"), 0o644)
	fs := Features(t, p, "-oo", "GEOM_POSSIBLE_NAMES=WKT", "-oo", "KEEP_GEOM_COLUMNS=NO", "t")
	if len(fs) != 2 || fs[0].FID != "1" || fs[0].Fields["name"] != "a b" || fs[1].Fields["n"] != "2" ||
		fs[0].WKT != "POINT (1 2)" || fs[1].WKT != "LINESTRING (0 0,3 4)" {
		t.Errorf("%+v", fs)
	}
	rows := SQL(t, p, `SELECT name AS x FROM t WHERE n = '2'`)
	if len(rows) != 1 || rows[0]["x"] != "b" {
		t.Errorf("%v", rows)
	}
	if n, out := Count(t, p, "t", "-oo", "GEOM_POSSIBLE_NAMES=WKT", "-spat", "-1", "-1", "1.5", "2.5"); n != 2 {
		t.Errorf("count %d\n%s", n, out)
	}
	if n, out := Count(t, p, "t", "-oo", "GEOM_POSSIBLE_NAMES=WKT", "-spat", "5", "5", "6", "6"); n != 0 {
		t.Errorf("count %d\n%s", n, out)
	}
}

func TestOgr2ogr(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.csv")
	os.WriteFile(p, []byte("WKT,name\n\"POINT (1 2)\",a\n"), 0o644)
	out := filepath.Join(dir, "t.geojson")
	Ogr2ogr(t, "-f", "GeoJSON", "-oo", "GEOM_POSSIBLE_NAMES=WKT", out, p)
	info := Ogrinfo(t, out)
	if info.Driver != "GeoJSON" || info.Layers[0].Count != 1 || info.Layers[0].Geometry != GeometryType(1) {
		t.Errorf("%+v", info)
	}
}

func TestGeometryType(t *testing.T) {
	for code, want := range map[int]string{0: "Unknown (any)", 1: "Point", 2: "Line String", 3: "Polygon", 4: "Multi Point",
		5: "Multi Line String", 6: "Multi Polygon", 7: "Geometry Collection", 8: "Unknown (any)"} {
		if got := GeometryType(code); got != want {
			t.Errorf("GeometryType(%d) = %q, want %q", code, got, want)
		}
	}
}
