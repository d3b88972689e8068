package spatialite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
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

// wantTypes is the geometry type code each dataset declares.
var wantTypes = map[string]int{
	"points": 1, "lines": 2, "polygons": 3, "multipoints": 4, "multilines": 5,
	"multipolygons": 6, "collections": 7, "mixed": 0, "Names": 1,
}

func expectedWKT(t *testing.T, name string, i int, in string) string {
	t.Helper()
	if w, ok := wants[name][i]; ok {
		return w
	}
	if in == "" {
		return ""
	}
	b, err := wkb.ParseWKT(in)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wkb.ToWKT(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

func geomWKT(t *testing.T, g wkb.Geom) string {
	t.Helper()
	s, err := wkb.ToWKT(nil, g.AppendWKB(nil))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// dbValue is what a value reads back as from SQLite.
func dbValue(v any) any {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

func writeDataset(t *testing.T, d dataset) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), d.meta.Name+".sqlite")
	if err := WriteFile(context.Background(), path, d.meta, d.scan()); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(filepath.Dir(path)); len(files) != 1 { // no journal or other leftovers
		t.Errorf("files beside the output: %v", files)
	}
	return path
}

func TestWriteReadBack(t *testing.T) {
	for name, d := range datasets(t) {
		t.Run(name, func(t *testing.T) {
			path := writeDataset(t, d)
			db := sqliteOpen(t, path)
			table := TableName(name)
			checkColumns(t, db, d, table)
			checkRows(t, db, d, table)
			checkIndex(t, db, d, table)
			checkMetadata(t, db, d, table)
		})
	}
}

func checkColumns(t *testing.T, db *sql.DB, d dataset, table string) {
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
	names := make([]string, len(d.meta.Attributes))
	for i, a := range d.meta.Attributes {
		names[i] = a.Name
	}
	for i, c := range sqlitebulk.ColumnNames(names, FIDColumn, GeometryColumn) {
		want = append(want, c+" "+columnType(d.meta.Attributes[i].Type))
	}
	want = append(want, "geometry "+GeometryTypeName(wantTypes[d.meta.Name]))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns\n got %q\nwant %q", got, want)
	}
}

func checkRows(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM ` + quote(table) + ` ORDER BY ogc_fid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for ; rows.Next(); n++ {
		vals := make([]any, len(d.meta.Attributes)+2)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if n >= len(d.feats) {
			t.Fatalf("more rows than features")
		}
		f := d.feats[n]
		if vals[0] != int64(n+1) {
			t.Errorf("row %d: ogc_fid %v", n, vals[0])
		}
		for i, v := range f.Values {
			got := vals[i+1]
			if want := dbValue(v); !reflect.DeepEqual(got, want) {
				t.Errorf("row %d, %s: got %#v, want %#v", n, d.meta.Attributes[i].Name, got, want)
			}
		}
		want := expectedWKT(t, d.meta.Name, n, d.wkt[n])
		blob, _ := vals[len(vals)-1].([]byte)
		if want == "" {
			if vals[len(vals)-1] != nil {
				t.Errorf("row %d: geometry %x, want NULL", n, blob)
			}
			continue
		}
		g, srid, err := Decode(blob)
		if err != nil {
			t.Fatalf("row %d: %v (%x)", n, err, blob)
		}
		if srid != SRID {
			t.Errorf("row %d: SRID %d", n, srid)
		}
		if got := geomWKT(t, g); got != want {
			t.Errorf("row %d: geometry %s, want %s", n, got, want)
		}
		b, _ := g.Bounds()
		if mbr := blobMBR(blob); mbr != b {
			t.Errorf("row %d: MBR %v, want %v", n, mbr, b)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(d.feats) {
		t.Errorf("%d rows, want %d", n, len(d.feats))
	}
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

func checkIndex(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	rows, err := db.Query(`SELECT pkid, xmin, xmax, ymin, ymax FROM ` + quote("idx_"+table+"_geometry") + ` ORDER BY pkid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		var r wkb.Rect
		if err := rows.Scan(&id, &r.MinX, &r.MaxX, &r.MinY, &r.MaxY); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		g, _ := wkb.Decode(d.feats[id-1].Geometry)
		b, _ := g.Bounds()
		// The R*Tree keeps 32-bit floats, rounded outwards.
		const tol = 1e-4
		if r.MinX > b.MinX || r.MinY > b.MinY || r.MaxX < b.MaxX || r.MaxY < b.MaxY ||
			b.MinX-r.MinX > tol || b.MinY-r.MinY > tol || r.MaxX-b.MaxX > tol || r.MaxY-b.MaxY > tol {
			t.Errorf("index %d: %v, want about %v", id, r, b)
		}
	}
	var want []int64
	for i := range d.feats {
		if expectedWKT(t, d.meta.Name, i, d.wkt[i]) != "" {
			want = append(want, int64(i+1))
		}
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("indexed %v, want %v", ids, want)
	}
}

func checkMetadata(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	var gt, dim, srid, idx int
	err := db.QueryRow(`SELECT geometry_type, coord_dimension, srid, spatial_index_enabled FROM geometry_columns WHERE f_table_name = ? AND f_geometry_column = 'geometry'`, table).Scan(&gt, &dim, &srid, &idx)
	if err != nil {
		t.Fatal(err)
	}
	if gt != wantTypes[d.meta.Name] || dim != 2 || srid != 4326 || idx != 1 {
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
	if count != int64(len(d.feats)) {
		t.Errorf("row_count %d", count)
	}
	if e, ok := d.extent(); ok {
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
	for name, d := range datasets(t) {
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
			if len(info.Layers) != 1 {
				t.Fatalf("%d layers", len(info.Layers))
			}
			l := info.Layers[0]
			if l.Name != table || l.Count != int64(len(d.feats)) || l.Geometry != gdalTypeName[wantTypes[name]] {
				t.Errorf("layer %q, %d features, %q", l.Name, l.Count, l.Geometry)
			}
			e, _ := d.extent()
			if !l.HasExt || !gdaltest.Near(l.Extent, [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, 1e-6) {
				t.Errorf("extent %v, want %v", l.Extent, e)
			}
			if !strings.Contains(l.SRS, `ID["EPSG",4326]`) {
				t.Errorf("SRS %s", l.SRS)
			}

			res := ogrSQL(t, path, `SELECT CheckSpatialMetaData() AS layout`)
			if len(res) != 1 || res[0]["layout"] != "3" {
				t.Errorf("CheckSpatialMetaData() = %v, want 3", res)
			}
			// SpatiaLite reads back each BLOB as we meant it.
			res = ogrSQL(t, path, `SELECT ogc_fid AS id, CASE WHEN geometry IS NULL THEN 'NULL' ELSE hex(AsBinary(geometry)) END AS h, Srid(geometry) AS srid FROM `+quote(table)+` ORDER BY ogc_fid`)
			if len(res) != len(d.feats) {
				t.Fatalf("%d rows from SpatiaLite", len(res))
			}
			for i, r := range res {
				want := expectedWKT(t, name, i, d.wkt[i])
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
				if got := geomWKT(t, g); got != want || r["srid"] != "4326" {
					t.Errorf("row %d: SpatiaLite reads %s SRID %s, want %s", i, got, r["srid"], want)
				}
			}
		})
	}
}

func TestGDALSpatialFilter(t *testing.T) {
	gdaltest.Need(t)
	ds := datasets(t)
	for _, c := range []struct {
		name string
		rect [4]float64
		want int64
	}{
		{"points", [4]float64{-1, -1, 15, 45}, 3},
		{"points", [4]float64{100, 0, 180, 90}, 2},
		{"points", [4]float64{50, -50, 60, -40}, 0},
		{"polygons", [4]float64{-11, -11, -4, -4}, 1},
		{"mixed", [4]float64{-35, -45, -25, -35}, 1},
		{"Names", [4]float64{1.5, 2.5, 2.5, 3.5}, 1},
	} {
		d := ds[c.name]
		path := writeDataset(t, d)
		args := []string{"--debug", "on", "-spat"}
		for _, v := range c.rect {
			args = append(args, ftoa(v))
		}
		n, out := ogrCount(t, path, TableName(c.name), args...)
		if n != c.want {
			t.Errorf("%s %v: %d features, want %d\n%s", c.name, c.rect, n, c.want, out)
		}
	}
}

// TestGDALSpatialIndexUsed checks that GDAL answers a spatial filter from
// the R*Tree: a row missing from the index is then not found.
func TestGDALSpatialIndexUsed(t *testing.T) {
	gdaltest.Need(t)
	d := datasets(t)["points"]
	path := writeDataset(t, d)
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(`DELETE FROM idx_points_geometry WHERE pkid = 1`); err != nil { // POINT (1 2)
		t.Fatal(err)
	}
	rw.Close()
	if n, out := ogrCount(t, path, "points", "-spat", "0.5", "1.5", "1.5", "2.5"); n != 0 {
		t.Errorf("found %d features through a filter only the removed index entry covers\n%s", n, out)
	}
}

func TestGDALFields(t *testing.T) {
	d := datasets(t)["Names"]
	path := writeDataset(t, d)
	info := gdaltest.Ogrinfo(t, path)
	for _, want := range []string{
		"a b: String", "it's: String", `say "hi": Integer64`, "select: Real", "FROM: Integer(Boolean)",
		"OGC_FID_2: String", "geometry_2: String", "FID: String", "Geom: String", "名前: String",
		"column_11: String", "nul_byte: Integer64", "geometry_2_2: String",
	} {
		if !strings.Contains(info.Output, "\n"+want+" ") {
			t.Errorf("no field %q in\n%s", want, info.Output)
		}
	}
	// Values as GDAL reads them.
	res := ogrSQL(t, path, `SELECT "名前" AS u, "it's" AS q, "nul_byte" AS big FROM names ORDER BY ogc_fid`)
	if len(res) != 3 || res[0]["u"] != "Zürich – 東京 🌍" || res[1]["u"] != "(null)" || res[2]["q"] != `"quoted"` || res[2]["big"] != "-9223372036854775808" {
		t.Errorf("values %v", res)
	}
}

func ftoa(v float64) string { return string(wkb.AppendFloat(nil, v)) }

// TestSchemaGolden compares the SQL of every schema object with the golden
// file (go test -update rewrites it).
func TestSchemaGolden(t *testing.T) {
	d := datasets(t)["Names"]
	path := writeDataset(t, d)
	db := sqliteOpen(t, path)
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, tbl, s string
		if err := rows.Scan(&typ, &name, &tbl, &s); err != nil {
			t.Fatal(err)
		}
		b.WriteString("-- " + typ + " " + name + " on " + tbl + "\n" + s + "\n\n")
	}
	golden := filepath.Join("testdata", "schema.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("schema differs from %s (go test -update to accept):\n%s", golden, b.String())
	}
}

func TestEmptyDataset(t *testing.T) {
	d := newDataset(t, "empty", testAttrs, nil, nil)
	path := writeDataset(t, d)
	db := sqliteOpen(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM empty`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("count %d, %v", n, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	info := gdaltest.Ogrinfo(t, path)
	if info.Driver != "SQLite" || len(info.Layers) != 1 || info.Layers[0].Count != 0 || info.Layers[0].Geometry != "Unknown (any)" {
		t.Errorf("unexpected summary:\n%s", info.Output)
	}
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
	d := datasets(t)["points"]
	path := filepath.Join(t.TempDir(), "x.sqlite")
	if err := os.WriteFile(path, []byte(strings.Repeat("junk", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(context.Background(), path, d.meta, d.scan()); err != nil {
		t.Fatal(err)
	}
	db := sqliteOpen(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM points`).Scan(&n); err != nil || n != len(d.feats) {
		t.Fatalf("count %d, %v", n, err)
	}
}

func TestErrorsRemoveFile(t *testing.T) {
	d := datasets(t)["points"]
	dir := t.TempDir()
	boom := errors.New("boom")

	// The scan fails.
	path := filepath.Join(dir, "scan.sqlite")
	err := WriteFile(context.Background(), path, d.meta, func(fn func(*mapcommons.Feature) error) error {
		if err := fn(d.feats[0]); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || fileExists(path) {
		t.Errorf("scan error: %v, file left: %v", err, fileExists(path))
	}

	// A geometry is not WKB.
	path = filepath.Join(dir, "wkb.sqlite")
	bad := *d.feats[0]
	bad.Geometry = []byte{1, 2, 3}
	err = WriteFile(context.Background(), path, d.meta, func(fn func(*mapcommons.Feature) error) error { return fn(&bad) })
	if !errors.Is(err, wkb.ErrInvalid) || fileExists(path) {
		t.Errorf("bad WKB: %v, file left: %v", err, fileExists(path))
	}

	// The context ends during the scan.
	path = filepath.Join(dir, "cancel.sqlite")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = WriteFile(ctx, path, d.meta, func(fn func(*mapcommons.Feature) error) error {
		for {
			f := d.feats[n%len(d.feats)]
			if n++; n == 1000 {
				cancel()
			}
			if err := fn(f); err != nil {
				return err
			}
		}
	})
	if !errors.Is(err, context.Canceled) || fileExists(path) || n > 1000+checkEvery+1 {
		t.Errorf("cancel: %v after %d features, file left: %v", err, n, fileExists(path))
	}

	// The directory does not exist.
	err = WriteFile(context.Background(), filepath.Join(dir, "no", "such.sqlite"), d.meta, d.scan())
	if err == nil {
		t.Error("no error for a missing directory")
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		t.Errorf("files left: %v", names)
	}
}
