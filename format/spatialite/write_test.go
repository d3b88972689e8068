package spatialite

import (
	"database/sql"
	"encoding/hex"
	"flag"
	"math"
	"reflect"
	"strings"
	"testing"

	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// stored returns what the SpatiaLite file should hold for a WKT input, as
// WKT ("" for NULL): the input itself except where wants says otherwise.
var wants = map[string]map[int]string{
	"mixed": {
		3:  "MULTIPOINT ((1 1), (2 2))",
		4:  "MULTILINESTRING ((0 0, 1 1))",
		5:  "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))",
		6:  "GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10), LINESTRING (1 1, 2 2), POLYGON ((0 0, 1 0, 1 1, 0 0)))",
		8:  "",
		9:  "",
		10: "",
	},
}

func expectedWKT(t *testing.T, name string, i int, in string) string {
	t.Helper()
	if w, ok := wants[name][i]; ok {
		return w
	}
	if in == "" {
		return ""
	}
	return formattest.NormWKT(t, in)
}

// writeDataset writes d as a SpatiaLite database in a new temporary
// directory.
func writeDataset(t testing.TB, d formattest.Dataset) string {
	t.Helper()
	return formattest.WriteDataset(t, WriteFile, d, ".sqlite")
}

func TestWriteReadBack(t *testing.T) {
	for name, d := range formattest.Datasets(t) {
		t.Run(name, func(t *testing.T) {
			path := writeDataset(t, d)
			db := formattest.OpenSQLite(t, path)
			table := TableName(name)
			checkColumns(t, db, d, table)
			checkRows(t, db, d, table)
			checkIndex(t, db, d, table)
			checkMetadata(t, db, d, table)
		})
	}
}

func checkColumns(t *testing.T, db *sql.DB, d formattest.Dataset, table string) {
	t.Helper()
	rows, err := db.Query(`SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var n, typ string
		var pk int
		if err := rows.Scan(&n, &typ, &pk); err != nil {
			t.Fatal(err)
		}
		got = append(got, n+" "+typ)
	}
	want := []string{"ogc_fid INTEGER"}
	for i, c := range sqlitebulk.AttributeColumns(d.Meta.Attributes, FIDColumn, GeometryColumn) {
		want = append(want, c+" "+columnType(d.Meta.Attributes[i].Type))
	}
	want = append(want, "geometry "+GeometryTypeName(formattest.DeclaredTypes[d.Meta.Name]))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns\n got %q\nwant %q", got, want)
	}
}

func checkRows(t *testing.T, db *sql.DB, d formattest.Dataset, table string) {
	t.Helper()
	formattest.CheckRows(t, db, `SELECT * FROM `+quote(table)+` ORDER BY ogc_fid`, d, 1, func(n int, vals []any) {
		want := expectedWKT(t, d.Meta.Name, n, d.WKT[n])
		blob, _ := vals[len(vals)-1].([]byte)
		if want == "" {
			if vals[len(vals)-1] != nil {
				t.Errorf("row %d: geometry %x, want NULL", n, blob)
			}
			return
		}
		g, srid, err := Decode(blob)
		if err != nil {
			t.Fatalf("row %d: %v (%x)", n, err, blob)
		}
		if srid != SRID {
			t.Errorf("row %d: SRID %d", n, srid)
		}
		if got := formattest.GeomWKT(t, g); got != want {
			t.Errorf("row %d: geometry %s, want %s", n, got, want)
		}
		b, _ := g.Bounds()
		if mbr := blobMBR(blob); mbr != b {
			t.Errorf("row %d: MBR %v, want %v", n, mbr, b)
		}
	})
}

func blobMBR(b []byte) wkb.Rect {
	f := func(i int) float64 {
		var u uint64
		for k := 7; k >= 0; k-- {
			u = u<<8 | uint64(b[6+8*i+k])
		}
		return math.Float64frombits(u)
	}
	return wkb.Rect{MinX: f(0), MinY: f(1), MaxX: f(2), MaxY: f(3)}
}

func checkIndex(t *testing.T, db *sql.DB, d formattest.Dataset, table string) {
	t.Helper()
	var want []int64
	for i := range d.Feats {
		if expectedWKT(t, d.Meta.Name, i, d.WKT[i]) != "" {
			want = append(want, int64(i+1))
		}
	}
	formattest.CheckIndex(t, db, `SELECT pkid, xmin, xmax, ymin, ymax FROM `+quote("idx_"+table+"_geometry")+` ORDER BY pkid`, d, want)
}

func checkMetadata(t *testing.T, db *sql.DB, d formattest.Dataset, table string) {
	t.Helper()
	var gt, dim, srid, idx int
	err := db.QueryRow(`SELECT geometry_type, coord_dimension, srid, spatial_index_enabled FROM geometry_columns WHERE f_table_name = ? AND f_geometry_column = 'geometry'`, table).Scan(&gt, &dim, &srid, &idx)
	if err != nil {
		t.Fatal(err)
	}
	if gt != formattest.DeclaredTypes[d.Meta.Name] || dim != 2 || srid != 4326 || idx != 1 {
		t.Errorf("geometry_columns: %d %d %d %d", gt, dim, srid, idx)
	}
	var count int64
	var minX, minY, maxX, maxY sql.NullFloat64
	var verified, inserted string
	err = db.QueryRow(`SELECT s.row_count, s.extent_min_x, s.extent_min_y, s.extent_max_x, s.extent_max_y, s.last_verified || '', t.last_insert || ''
		FROM geometry_columns_statistics s JOIN geometry_columns_time t USING (f_table_name, f_geometry_column) WHERE f_table_name = ?`, table).
		Scan(&count, &minX, &minY, &maxX, &maxY, &verified, &inserted)
	if err != nil {
		t.Fatal(err)
	}
	if count != int64(len(d.Feats)) {
		t.Errorf("row_count %d", count)
	}
	if e, ok := d.Extent(); ok {
		if got := (wkb.Rect{MinX: minX.Float64, MinY: minY.Float64, MaxX: maxX.Float64, MaxY: maxY.Float64}); got != e {
			t.Errorf("statistics extent %v, want %v", got, e)
		}
	}
	if verified <= inserted {
		t.Errorf("last_verified %s not after last_insert %s", verified, inserted)
	}
	var srs []string
	rows, err := db.Query(`SELECT srid || ' ' || auth_name || ' ' || ref_sys_name FROM spatial_ref_sys ORDER BY srid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		srs = append(srs, s)
	}
	if want := []string{"-1 NONE Undefined - Cartesian", "0 NONE Undefined - Geographic Long/Lat", "4326 epsg WGS 84"}; !reflect.DeepEqual(srs, want) {
		t.Errorf("spatial_ref_sys %q", srs)
	}
}

// TestGDAL opens every file with GDAL (with SpatiaLite loaded, as Debian
// builds it): driver, SpatiaLite 4 detection, statistics, layer summary,
// SpatiaLite's own reading of every geometry, and spatial filters.
func TestGDAL(t *testing.T) {
	gdaltest.Need(t)
	for name, d := range formattest.Datasets(t) {
		t.Run(name, func(t *testing.T) {
			path := writeDataset(t, d)
			table := TableName(name)
			info := gdaltest.Ogrinfo(t, path, "--debug", "on")
			if info.Driver != "SQLite" {
				t.Errorf("driver %q", info.Driver)
			}
			if !strings.Contains(info.Output, "SpatiaLite v4 DB found") {
				t.Errorf("not taken for SpatiaLite 4:\n%s", info.Output)
			}
			if !strings.Contains(info.Output, "Loading statistics for "+table) {
				t.Errorf("statistics not used:\n%s", info.Output)
			}
			formattest.CheckLayer(t, info, d, table, formattest.DeclaredTypes[name])

			res := gdaltest.SQL(t, path, `SELECT CheckSpatialMetaData() AS layout`)
			if len(res) != 1 || res[0]["layout"] != "3" {
				t.Errorf("CheckSpatialMetaData() = %v, want 3", res)
			}
			// SpatiaLite reads back each BLOB as we meant it.
			res = gdaltest.SQL(t, path, `SELECT ogc_fid AS id, CASE WHEN geometry IS NULL THEN 'NULL' ELSE hex(AsBinary(geometry)) END AS h, Srid(geometry) AS srid FROM `+quote(table)+` ORDER BY ogc_fid`)
			if len(res) != len(d.Feats) {
				t.Fatalf("%d rows from SpatiaLite", len(res))
			}
			for i, r := range res {
				want := expectedWKT(t, name, i, d.WKT[i])
				if want == "" {
					if r["h"] != "NULL" {
						t.Errorf("row %d: SpatiaLite reads %s, want NULL", i, r["h"])
					}
					continue
				}
				b, err := hex.DecodeString(r["h"])
				if err != nil {
					t.Fatalf("row %d: %q", i, r["h"])
				}
				g, err := wkb.Decode(b)
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				if got := formattest.GeomWKT(t, g); got != want || r["srid"] != "4326" {
					t.Errorf("row %d: SpatiaLite reads %s SRID %s, want %s", i, got, r["srid"], want)
				}
			}
		})
	}
}

func TestGDALSpatialFilter(t *testing.T) {
	formattest.CheckGDALSpatialFilter(t, WriteFile, ".sqlite", TableName, "--debug", "on")
}

// TestGDALSpatialIndexUsed checks that GDAL answers a spatial filter from
// the R*Tree: a row missing from the index is then not found.
func TestGDALSpatialIndexUsed(t *testing.T) {
	path := writeDataset(t, formattest.Datasets(t)["points"])
	formattest.CheckGDALIndexUsed(t, path, `DELETE FROM idx_points_geometry WHERE pkid = 1`)
}

func TestGDALFields(t *testing.T) {
	d := formattest.Datasets(t)["Names"]
	path := writeDataset(t, d)
	formattest.CheckFields(t, gdaltest.Ogrinfo(t, path),
		"a b: String", "it's: String", `say "hi": Integer64`, "select: Real", "FROM: Integer(Boolean)",
		"OGC_FID_2: String", "geometry_2: String", "FID: String", "Geom: String", "名前: String",
		"column_11: String", "nul_byte: Integer64", "geometry_2_2: String",
	)
	// Values as GDAL reads them.
	res := gdaltest.SQL(t, path, `SELECT "名前" AS u, "it's" AS q, "nul_byte" AS big FROM names ORDER BY ogc_fid`)
	if len(res) != 3 || res[0]["u"] != "Zürich – 東京 🌍" || res[1]["u"] != "(null)" || res[2]["q"] != `"quoted"` || res[2]["big"] != "-9223372036854775808" {
		t.Errorf("values %v", res)
	}
}

// TestSchemaGolden compares the SQL of every schema object with the golden
// file (go test -update rewrites it).
func TestSchemaGolden(t *testing.T) {
	path := writeDataset(t, formattest.Datasets(t)["Names"])
	formattest.CheckSchemaGolden(t, formattest.OpenSQLite(t, path), *update)
}

func TestEmptyDataset(t *testing.T) {
	d := formattest.NewDataset(t, "empty", formattest.Attrs, nil, nil)
	path := writeDataset(t, d)
	db := formattest.OpenSQLite(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM empty`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("count %d, %v", n, err)
	}
	formattest.CheckGDALEmpty(t, path, "SQLite")
}

func TestTableName(t *testing.T) {
	for in, want := range map[string]string{
		"Cities": "cities", "": "layer", "geometry_columns": "layer_geometry_columns",
		"sqlite_x": "layer_sqlite_x", "idx_a_geometry": "layer_idx_a_geometry", "spatial_ref_sys": "layer_spatial_ref_sys",
		"knn": "layer_knn", "a_b": "a_b",
	} {
		if got := TableName(in); got != want {
			t.Errorf("TableName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestColumnNames(t *testing.T) {
	got := sqlitebulk.ColumnNames([]string{"a", "A", "ogc_fid", "Geometry", "", "a_2", " ", "x\x00"}, FIDColumn, GeometryColumn)
	want := []string{"a", "A_2", "ogc_fid_2", "Geometry_2", "column_5", "a_2_2", "column_7", "x_"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOverwritesExistingFile(t *testing.T) {
	formattest.CheckOverwrites(t, WriteFile, ".sqlite", "points")
}

func TestErrorsRemoveFile(t *testing.T) {
	formattest.CheckErrorsRemoveFile(t, WriteFile, ".sqlite", sqlitebulk.CheckRows)
}

// TestFeatureIDs: ogc_fid holds the features' stable ids, and GDAL reads
// them as FIDs.
func TestFeatureIDs(t *testing.T) {
	formattest.CheckFeatureIDs(t, WriteFile, ".sqlite", TableName, FIDColumn, "idx_points_geometry")
}
