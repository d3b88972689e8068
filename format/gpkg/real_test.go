package gpkg

import (
	"math"
	"testing"

	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

// coordsNear reports whether two geometries have the same structure and
// coordinates within a relative 1e-13 (GDAL prints WKT with 15 digits).
func coordsNear(a, b wkb.Geom) bool {
	if a.Type != b.Type || len(a.Coords) != len(b.Coords) || len(a.Rings) != len(b.Rings) || len(a.Parts) != len(b.Parts) {
		return false
	}
	near := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-13*math.Max(1, math.Abs(x[i])) {
				return false
			}
		}
		return true
	}
	if !near(a.Coords, b.Coords) {
		return false
	}
	for i := range a.Rings {
		if !near(a.Rings[i], b.Rings[i]) {
			return false
		}
	}
	for i := range a.Parts {
		if !coordsNear(a.Parts[i], b.Parts[i]) {
			return false
		}
	}
	return true
}

// TestReal writes real shapefiles: GDAL reads back every geometry.
func TestReal(t *testing.T) {
	formattest.CheckGDALReal(t, WriteFile, ".gpkg", "GPKG", TableName, func(t *testing.T, d formattest.Dataset, path string) {
		fs := gdaltest.Features(t, path, "-sql", `SELECT fid, geom FROM `+quote(TableName(d.Meta.Name))+` ORDER BY fid`)
		if len(fs) != len(d.Feats) {
			t.Fatalf("%d features from GDAL", len(fs))
		}
		for i, f := range fs {
			b, err := wkb.ParseWKT(f.WKT)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			got, _ := wkb.Decode(b)
			want, _ := wkb.Decode(d.Feats[i].Geometry)
			if !coordsNear(got, want) {
				t.Errorf("row %d: GDAL reads %.200s", i, f.WKT)
			}
		}
	})
}
