package shapefile

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"mapcommons/format/wkb"
)

// TestGDALSynthetic compares the polygons we assemble from synthetic files
// with GDAL's, where we mean to agree: GDAL leaves open rings open, keeps
// degenerate rings, and gives every hole to the only shell there is, which
// the cases in TestPolygons cover instead.
func TestGDALSynthetic(t *testing.T) {
	if _, err := exec.LookPath("ogr2ogr"); err != nil {
		t.Skip("ogr2ogr is not installed")
	}
	var shapes []tShape
	for _, rings := range [][][]float64{
		{sq10, hole1, hole2},
		{hole2, sq10, hole1},
		{sq10, sqB, holeB, hole1},
		{big, bigH, midS, midH},
		{sq10, {0, 5, 3, 4, 3, 6, 0, 5}},
		{sq10, sqB, {22, 2, 24, 2, 24, 4, 22, 4, 22, 2}, hole2},
	} {
		shapes = append(shapes, parts(shapePolygonZ, rings...))
	}
	shapes = append(shapes, parts(shapePolyLineM, line3, line2), parts(shapeMultiPointZ, mpts), pt(shapePointM, 3, 4))
	for i := range shapes {
		shapes = append(shapes, tShape{typ: shapeNull}, shapes[i])
	}
	f := (&tFile{typ: shapePolygonZ, shapes: shapes}).withIDs()
	dir := t.TempDir()
	shp, shx := f.shpAndShx()
	for ext, b := range map[string][]byte{".shp": shp, ".shx": shx, ".dbf": f.dbf()} {
		if err := os.WriteFile(filepath.Join(dir, "x"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("ogr2ogr", "-f", "CSV", "/vsistdout/", filepath.Join(dir, "x.shp"),
		"-lco", "GEOMETRY=AS_WKT", "-dim", "XY").Output()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got, err := readFile(t, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows)-1 != len(got) {
		t.Fatalf("GDAL reads %d features, we %d", len(rows)-1, len(got))
	}
	for i, row := range rows[1:] {
		gdal := ""
		if row[0] != "" {
			g, err := wkb.ParseWKT(row[0])
			if err != nil {
				t.Fatal(err)
			}
			w, _ := wkb.ToWKT(nil, g)
			gdal = string(w)
		}
		if gdal != got[i].wkt {
			t.Errorf("feature %d:\nours %s\nGDAL %s", i, got[i].wkt, gdal)
		}
	}
}
