package spatialite

import (
	"encoding/hex"
	"testing"

	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

// TestReal writes real shapefiles: SpatiaLite reads every geometry back
// exactly.
func TestReal(t *testing.T) {
	formattest.CheckGDALReal(t, WriteFile, ".sqlite", "SQLite", TableName, func(t *testing.T, d formattest.Dataset, path string) {
		res := gdaltest.SQL(t, path, `SELECT hex(AsBinary(geometry)) AS h FROM `+quote(TableName(d.Meta.Name))+` ORDER BY ogc_fid`)
		if len(res) != len(d.Feats) {
			t.Fatalf("%d rows", len(res))
		}
		for i, r := range res {
			b, err := hex.DecodeString(r["h"])
			if err != nil {
				t.Fatal(err)
			}
			g, err := wkb.Decode(b)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			want, _ := wkb.ToWKT(nil, d.Feats[i].Geometry)
			if got, _ := wkb.ToWKT(nil, g.AppendWKB(nil)); string(got) != string(want) {
				t.Errorf("row %d: SpatiaLite reads\n%.200s\nwant\n%.200s", i, got, want)
			}
		}
	})
}
