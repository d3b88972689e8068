package gpkg

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// wantTypes is the geometry type name each dataset declares.
var wantTypes = map[string]string{
	"points": "POINT", "lines": "LINESTRING", "polygons": "POLYGON", "multipoints": "MULTIPOINT",
	"multilines": "MULTILINESTRING", "multipolygons": "MULTIPOLYGON", "collections": "GEOMETRYCOLLECTION",
	"mixed": "GEOMETRY", "Names": "POINT",
}

// gdalTypes is how ogrinfo names them.
var gdalTypes = map[string]string{
	"POINT": "Point", "LINESTRING": "Line String", "POLYGON": "Polygon", "MULTIPOINT": "Multi Point",
	"MULTILINESTRING": "Multi Line String", "MULTIPOLYGON": "Multi Polygon",
	"GEOMETRYCOLLECTION": "Geometry Collection", "GEOMETRY": "Unknown (any)",
}

func normWKT(t *testing.T, s string) string {
	t.Helper()
	b, err := wkb.ParseWKT(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	w, err := wkb.ToWKT(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	return string(w)
}

func geomWKT(t *testing.T, g wkb.Geom) string {
	t.Helper()
	s, err := wkb.ToWKT(nil, g.AppendWKB(nil))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

func dbValue(v any) any {
	if b, ok := v.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

func writeDataset(t *testing.T, d dataset) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), d.meta.Name+".gpkg")
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
			d.meta.Updated = time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.FixedZone("x", 3600))
			path := writeDataset(t, d)
			db := sqliteOpen(t, path)
			table := TableName(name)
			checkHeader(t, db)
			checkColumns(t, db, d, table)
			checkRows(t, db, d, table)
			checkIndex(t, db, d, table)
			checkMetadata(t, db, d, table)
		})
	}
}

func checkHeader(t *testing.T, db *sql.DB) {
	t.Helper()
	var app, ver int64
	if err := db.QueryRow(`PRAGMA application_id`).Scan(&app); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&ver); err != nil {
		t.Fatal(err)
	}
	if app != 0x47504B47 || ver != 10200 {
		t.Errorf("application_id %#x, user_version %d", app, ver)
	}
}

func checkColumns(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	rows, err := db.Query(`SELECT name, type, pk, "notnull" FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var n, typ string
		var pk, nn int
		if err := rows.Scan(&n, &typ, &pk, &nn); err != nil {
			t.Fatal(err)
		}
		if pk == 1 {
			typ += " pk"
		}
		if nn == 1 {
			typ += " notnull"
		}
		got = append(got, n+" "+typ)
	}
	want := []string{"fid INTEGER pk notnull", "geom " + wantTypes[d.meta.Name]}
	names := make([]string, len(d.meta.Attributes))
	for i, a := range d.meta.Attributes {
		names[i] = a.Name
	}
	for i, c := range sqlitebulk.ColumnNames(names, FIDColumn, GeometryColumn) {
		want = append(want, c+" "+columnType(d.meta.Attributes[i].Type))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns\n got %q\nwant %q", got, want)
	}
}

func checkRows(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM ` + quote(table) + ` ORDER BY fid`)
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
			t.Errorf("row %d: fid %v", n, vals[0])
		}
		for i, v := range f.Values {
			if got, want := vals[i+2], dbValue(v); !reflect.DeepEqual(got, want) {
				t.Errorf("row %d, %s: got %#v, want %#v", n, d.meta.Attributes[i].Name, got, want)
			}
		}
		if d.wkt[n] == "" {
			if vals[1] != nil {
				t.Errorf("row %d: geometry %x, want NULL", n, vals[1])
			}
			continue
		}
		blob, _ := vals[1].([]byte)
		h, g, err := Decode(blob)
		if err != nil {
			t.Fatalf("row %d: %v (%x)", n, err, blob)
		}
		if want := normWKT(t, d.wkt[n]); geomWKT(t, g) != want {
			t.Errorf("row %d: geometry %s, want %s", n, geomWKT(t, g), want)
		}
		if h.SRSID != SRSID {
			t.Errorf("row %d: srs_id %d", n, h.SRSID)
		}
		b, ok := g.Bounds()
		switch {
		case !ok:
			if !h.Empty || h.Envelope != nil {
				t.Errorf("row %d: empty geometry with header %+v", n, h)
			}
		case g.Type == wkb.Point:
			if h.Empty || h.Envelope != nil {
				t.Errorf("row %d: point with header %+v", n, h)
			}
		default:
			if h.Empty || h.Envelope == nil || *h.Envelope != b {
				t.Errorf("row %d: header %+v, want envelope %v", n, h, b)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(d.feats) {
		t.Errorf("%d rows, want %d", n, len(d.feats))
	}
}

func checkIndex(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	rows, err := db.Query(`SELECT id, minx, maxx, miny, maxy FROM ` + quote("rtree_"+table+"_geom") + ` ORDER BY id`)
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
		const tol = 1e-4 // 32-bit floats, rounded outwards
		if r.MinX > b.MinX || r.MinY > b.MinY || r.MaxX < b.MaxX || r.MaxY < b.MaxY ||
			b.MinX-r.MinX > tol || b.MinY-r.MinY > tol || r.MaxX-b.MaxX > tol || r.MaxY-b.MaxY > tol {
			t.Errorf("index %d: %v, want about %v", id, r, b)
		}
	}
	var want []int64
	for i, f := range d.feats {
		if len(f.Geometry) == 0 {
			continue
		}
		if _, ok, _ := wkb.BoundsOf(f.Geometry); ok {
			want = append(want, int64(i+1))
		}
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("indexed %v, want %v", ids, want)
	}
}

func checkMetadata(t *testing.T, db *sql.DB, d dataset, table string) {
	t.Helper()
	var typ, ident, desc, change string
	var srs, srs2, z, m int
	var minX, minY, maxX, maxY sql.NullFloat64
	err := db.QueryRow(`SELECT c.data_type, c.identifier, c.description, c.last_change || '', c.min_x, c.min_y, c.max_x, c.max_y, c.srs_id, g.srs_id, g.z, g.m
		FROM gpkg_contents c JOIN gpkg_geometry_columns g USING (table_name) WHERE table_name = ? AND g.column_name = 'geom'`, table).
		Scan(&typ, &ident, &desc, &change, &minX, &minY, &maxX, &maxY, &srs, &srs2, &z, &m)
	if err != nil {
		t.Fatal(err)
	}
	if typ != "features" || ident != d.meta.Title || desc != d.meta.Description || change != "2024-05-06T06:08:09.123Z" ||
		srs != 4326 || srs2 != 4326 || z != 0 || m != 0 {
		t.Errorf("gpkg_contents: %q %q %q %q %d %d %d %d", typ, ident, desc, change, srs, srs2, z, m)
	}
	if e, ok := d.extent(); ok {
		if got := (wkb.Rect{MinX: minX.Float64, MinY: minY.Float64, MaxX: maxX.Float64, MaxY: maxY.Float64}); got != e {
			t.Errorf("extent %v, want %v", got, e)
		}
	} else if minX.Valid {
		t.Errorf("extent %v for no geometry", minX)
	}
	var gt string
	if err := db.QueryRow(`SELECT geometry_type_name FROM gpkg_geometry_columns`).Scan(&gt); err != nil || gt != wantTypes[d.meta.Name] {
		t.Errorf("geometry_type_name %q, %v", gt, err)
	}
	var ext string
	if err := db.QueryRow(`SELECT table_name || ' ' || column_name || ' ' || extension_name || ' ' || definition || ' ' || scope FROM gpkg_extensions`).Scan(&ext); err != nil ||
		ext != table+" geom gpkg_rtree_index http://www.geopackage.org/spec120/#extension_rtree write-only" {
		t.Errorf("gpkg_extensions %q, %v", ext, err)
	}
	var count int64
	if err := db.QueryRow(`SELECT feature_count FROM gpkg_ogr_contents WHERE table_name = ?`, table).Scan(&count); err != nil || count != int64(len(d.feats)) {
		t.Errorf("gpkg_ogr_contents %d, %v", count, err)
	}
	var srsRows []string
	rows, err := db.Query(`SELECT srs_id || ' ' || organization || ' ' || organization_coordsys_id || ' ' || srs_name FROM gpkg_spatial_ref_sys ORDER BY srs_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		srsRows = append(srsRows, s)
	}
	if want := []string{"-1 NONE -1 Undefined cartesian SRS", "0 NONE 0 Undefined geographic SRS", "4326 EPSG 4326 WGS 84 geodetic"}; !reflect.DeepEqual(srsRows, want) {
		t.Errorf("gpkg_spatial_ref_sys %q", srsRows)
	}
}

// gdalReads is what GDAL makes of some geometries: it drops the empty
// members of multi-geometries when it reads WKB (the file keeps them).
var gdalReads = map[string]map[int]string{
	"mixed": {
		3: "MULTIPOINT ((1 1), (2 2))",
		4: "MULTILINESTRING ((0 0, 1 1))",
		5: "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))",
	},
}

// TestGDAL opens every file with GDAL's GeoPackage driver: the summary,
// the spatial index, every geometry and value as GDAL decodes it.
func TestGDAL(t *testing.T) {
	gdaltest.Need(t)
	for name, d := range datasets(t) {
		t.Run(name, func(t *testing.T) {
			path := writeDataset(t, d)
			table := TableName(name)
			info := gdaltest.Ogrinfo(t, path, "--debug", "on")
			if info.Driver != "GPKG" {
				t.Errorf("driver %q", info.Driver)
			}
			for _, line := range strings.Split(info.Output, "\n") {
				if strings.HasPrefix(line, "Warning") || strings.HasPrefix(line, "ERROR") {
					t.Errorf("GDAL says %s", line)
				}
			}
			if len(info.Layers) != 1 {
				t.Fatalf("%d layers", len(info.Layers))
			}
			l := info.Layers[0]
			if l.Name != table || l.Count != int64(len(d.feats)) || l.Geometry != gdalTypes[wantTypes[name]] {
				t.Errorf("layer %q, %d features, %q", l.Name, l.Count, l.Geometry)
			}
			e, _ := d.extent()
			if !l.HasExt || !gdaltest.Near(l.Extent, [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, 1e-6) {
				t.Errorf("extent %v, want %v", l.Extent, e)
			}
			if !strings.Contains(l.SRS, `ID["EPSG",4326]`) {
				t.Errorf("SRS %s", l.SRS)
			}
			fs := ogrFeatures(t, path, "-sql", `SELECT HasSpatialIndex(`+literal(table)+`, 'geom')`)
			if len(fs) != 1 || fs[0].fields["HasSpatialIndex"] != "1" {
				t.Errorf("HasSpatialIndex: %v", fs)
			}
			// Every geometry as GDAL decodes it.
			fs = ogrFeatures(t, path, "-sql", `SELECT fid, geom FROM `+quote(table)+` ORDER BY fid`)
			if len(fs) != len(d.feats) {
				t.Fatalf("%d features from GDAL", len(fs))
			}
			for i, f := range fs {
				want := ""
				if w, ok := gdalReads[name][i]; ok {
					want = w
				} else if d.wkt[i] != "" {
					want = normWKT(t, d.wkt[i])
				}
				got := ""
				if f.wkt != "" {
					got = normWKT(t, f.wkt)
				}
				if got != want {
					t.Errorf("row %d: GDAL reads %q, want %q", i, got, want)
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
		path := writeDataset(t, ds[c.name])
		args := []string{"-spat"}
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
	path := writeDataset(t, datasets(t)["points"])
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(`DELETE FROM rtree_points_geom WHERE id = 1`); err != nil { // POINT (1 2)
		t.Fatal(err)
	}
	rw.Close()
	if n, out := ogrCount(t, path, "points", "-spat", "0.5", "1.5", "1.5", "2.5"); n != 0 {
		t.Errorf("found %d features through a filter only the removed index entry covers\n%s", n, out)
	}
}

// TestGDALTriggers edits a written file through GDAL (which provides the
// ST_ functions the R*Tree triggers call): the triggers keep the index and
// the feature count right.
func TestGDALTriggers(t *testing.T) {
	bin := gdaltest.Need(t)
	path := writeDataset(t, datasets(t)["points"])
	for _, q := range []string{
		`UPDATE points SET geom = (SELECT geom FROM points WHERE fid = 2) WHERE fid = 1`,
		`DELETE FROM points WHERE fid = 3`,
	} {
		if out, err := exec.Command(bin, path, "-sql", q).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, out)
		}
	}
	db := sqliteOpen(t, path)
	var n, idx int
	var minx float64
	if err := db.QueryRow(`SELECT (SELECT feature_count FROM gpkg_ogr_contents), (SELECT count(*) FROM rtree_points_geom), (SELECT minx FROM rtree_points_geom WHERE id = 1)`).Scan(&n, &idx, &minx); err != nil {
		t.Fatal(err)
	}
	if n != 7 || idx != 7 || minx > -179.5 || minx < -179.6 {
		t.Errorf("after edits: count %d, index rows %d, minx of 1 %v", n, idx, minx)
	}
}

// TestValidator runs GDAL's GeoPackage validator (validate_gpkg.py, from
// python3-gdal) on every file when it is installed.
func TestValidator(t *testing.T) {
	script := ""
	for _, p := range []string{
		"/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_gpkg.py",
		"/usr/share/doc/python3-gdal/examples/validate_gpkg.py",
	} {
		if fileExists(p) {
			script = p
			break
		}
	}
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import osgeo.ogr").Run() == nil {
			python = p
			break
		}
	}
	if script == "" || python == "" {
		t.Skip("GDAL's validate_gpkg.py or its Python bindings are not installed")
	}
	for name, d := range datasets(t) {
		if name == "mixed" {
			// GDAL 3.6's validator reads the empty flag from bit 3 instead
			// of bit 4 and so rejects any empty geometry, GDAL's own too
			// (TestEmptyMatchesGDAL shows ours are byte for byte GDAL's):
			// validate the rest.
			var wkts []string
			for _, s := range d.wkt {
				if strings.HasSuffix(s, " EMPTY") {
					s = ""
				}
				wkts = append(wkts, s)
			}
			d = newDataset(t, name, testAttrs, testRows(len(wkts)), wkts)
		}
		path := writeDataset(t, d)
		if out, err := exec.Command(python, script, path).CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%s: validate_gpkg.py: %v\n%s", name, err, out)
		}
	}
}

func TestGDALFields(t *testing.T) {
	d := datasets(t)["Names"]
	path := writeDataset(t, d)
	info := gdaltest.Ogrinfo(t, path)
	for _, want := range []string{
		"a b: String", "it's: String", `say "hi": Integer64`, "select: Real", "FROM: Integer(Boolean)",
		"OGC_FID: String", "geometry: String", "FID_2: String", "Geom_2: String", "名前: String",
		"column_11: String", "nul_byte: Integer64", "geometry_2: String",
	} {
		if !strings.Contains(info.Output, "\n"+want+" ") {
			t.Errorf("no field %q in\n%s", want, info.Output)
		}
	}
	fs := ogrFeatures(t, path, "-sql", `SELECT "名前" AS u, "it's" AS q, "nul_byte" AS big, "FROM" AS b FROM "Names" ORDER BY fid`)
	if len(fs) != 3 || fs[0].fields["u"] != "Zürich – 東京 🌍" || fs[1].fields["u"] != "(null)" ||
		fs[2].fields["q"] != `"quoted"` || fs[2].fields["big"] != "-9223372036854775808" || fs[0].fields["b"] != "1" {
		t.Errorf("values %v", fs)
	}
}

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
	d.meta.Title = ""
	path := writeDataset(t, d)
	db := sqliteOpen(t, path)
	var n int
	var ident string
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM empty), (SELECT identifier FROM gpkg_contents)`).Scan(&n, &ident); err != nil || n != 0 || ident != "empty" {
		t.Fatalf("count %d, identifier %q, %v", n, ident, err)
	}
	info := gdaltest.Ogrinfo(t, path)
	if info.Driver != "GPKG" || len(info.Layers) != 1 || info.Layers[0].Count != 0 || info.Layers[0].Geometry != "Unknown (any)" {
		t.Errorf("unexpected summary:\n%s", info.Output)
	}
}

func TestTableName(t *testing.T) {
	for in, want := range map[string]string{
		"Cities": "Cities", "": "layer", "gpkg_contents": "layer_gpkg_contents", "GPKG_x": "layer_GPKG_x",
		"sqlite_x": "layer_sqlite_x", "rtree_a_geom": "layer_rtree_a_geom", "a_b": "a_b",
	} {
		if got := TableName(in); got != want {
			t.Errorf("TableName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGeometryTypeName(t *testing.T) {
	for mask, want := range map[uint32]string{0: "GEOMETRY", 1 << 1: "POINT", 1 << 6: "MULTIPOLYGON", 1<<1 | 1<<4: "GEOMETRY", 1 << 7: "GEOMETRYCOLLECTION"} {
		if got := GeometryTypeName(mask); got != want {
			t.Errorf("GeometryTypeName(%b) = %q, want %q", mask, got, want)
		}
	}
}

// TestTypeWidens: a feature of another type than Meta.GeometryMask says
// registers GEOMETRY.
func TestTypeWidens(t *testing.T) {
	d := datasets(t)["mixed"]
	d.meta.GeometryMask = 1 << 1
	path := writeDataset(t, d)
	db := sqliteOpen(t, path)
	var gt string
	if err := db.QueryRow(`SELECT geometry_type_name FROM gpkg_geometry_columns`).Scan(&gt); err != nil || gt != "GEOMETRY" {
		t.Errorf("geometry_type_name %q, %v", gt, err)
	}
}

func TestErrorsRemoveFile(t *testing.T) {
	d := datasets(t)["points"]
	dir := t.TempDir()
	boom := errors.New("boom")

	path := filepath.Join(dir, "scan.gpkg")
	err := WriteFile(context.Background(), path, d.meta, func(fn func(*mapcommons.Feature) error) error {
		if err := fn(d.feats[0]); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || fileExists(path) {
		t.Errorf("scan error: %v, file left: %v", err, fileExists(path))
	}

	path = filepath.Join(dir, "wkb.gpkg")
	bad := *d.feats[0]
	bad.Geometry = []byte{1, 2, 3}
	err = WriteFile(context.Background(), path, d.meta, func(fn func(*mapcommons.Feature) error) error { return fn(&bad) })
	if !errors.Is(err, wkb.ErrInvalid) || fileExists(path) {
		t.Errorf("bad WKB: %v, file left: %v", err, fileExists(path))
	}

	path = filepath.Join(dir, "cancel.gpkg")
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

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	path = filepath.Join(dir, "before.gpkg")
	if err := WriteFile(ctx, path, d.meta, d.scan()); !errors.Is(err, context.Canceled) || fileExists(path) {
		t.Errorf("cancelled before: %v, file left: %v", err, fileExists(path))
	}

	if err := WriteFile(context.Background(), filepath.Join(dir, "no", "such.gpkg"), d.meta, d.scan()); err == nil {
		t.Error("no error for a missing directory")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

func TestOverwritesExistingFile(t *testing.T) {
	d := datasets(t)["points"]
	path := filepath.Join(t.TempDir(), "x.gpkg")
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

func TestColumnNames(t *testing.T) {
	got := sqlitebulk.ColumnNames([]string{"a", "A", "fid", "GEOM", "", "a_2", "x\x00"}, FIDColumn, GeometryColumn)
	want := []string{"a", "A_2", "fid_2", "GEOM_2", "column_5", "a_2_2", "x_"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
