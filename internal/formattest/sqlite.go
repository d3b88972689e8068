package formattest

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver of OpenSQLite

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// WriteFunc writes a dataset as a new file at path, as gpkg.WriteFile and
// spatialite.WriteFile do.
type WriteFunc func(ctx context.Context, path string, m format.Meta, scan format.Scan) error

// WriteDataset writes d with write as <name><ext> in a new temporary
// directory and returns its path; a file left beside it (a journal, say)
// fails the test.
func WriteDataset(t testing.TB, write WriteFunc, d Dataset, ext string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), d.Meta.Name+ext)
	if err := write(context.Background(), path, d.Meta, d.Scan()); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(filepath.Dir(path)); len(files) != 1 { // no journal or other leftovers
		t.Errorf("files beside the output: %v", files)
	}
	return path
}

// OpenSQLite opens path read-only with modernc.
func OpenSQLite(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// FileExists reports whether there is a file at path.
func FileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// MustWKT returns the WKB of the WKT s.
func MustWKT(t testing.TB, s string) []byte {
	t.Helper()
	b, err := wkb.ParseWKT(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// NormWKT returns the WKT s as wkb.ToWKT writes it.
func NormWKT(t testing.TB, s string) string {
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

// GeomWKT returns g as wkb.ToWKT writes it.
func GeomWKT(t testing.TB, g wkb.Geom) string {
	t.Helper()
	s, err := wkb.ToWKT(nil, g.AppendWKB(nil))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// DBValue is what an attribute value reads back as from SQLite.
func DBValue(v any) any {
	if b, ok := v.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

// CheckRows runs query on db, which must select the rows of d's features in
// order, 2 more columns than attributes: first the feature number (from
// 1), the attribute values from column first on. It checks those and the
// number of rows, and calls geom with each row's index (from 0) and values
// to check the geometry.
func CheckRows(t testing.TB, db *sql.DB, query string, d Dataset, first int, geom func(n int, vals []any)) {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for ; rows.Next(); n++ {
		vals := make([]any, len(d.Meta.Attributes)+2)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if n >= len(d.Feats) {
			t.Fatalf("more rows than features")
		}
		f := d.Feats[n]
		if vals[0] != int64(n+1) {
			t.Errorf("row %d: fid %v", n, vals[0])
		}
		for i, v := range f.Values {
			if got, want := vals[first+i], DBValue(v); !reflect.DeepEqual(got, want) {
				t.Errorf("row %d, %s: got %#v, want %#v", n, d.Meta.Attributes[i].Name, got, want)
			}
		}
		geom(n, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(d.Feats) {
		t.Errorf("%d rows, want %d", n, len(d.Feats))
	}
}

// IndexedIDs returns the numbers (from 1) of d's features whose geometry is
// not empty.
func IndexedIDs(d Dataset) []int64 {
	var ids []int64
	for i, f := range d.Feats {
		if len(f.Geometry) == 0 {
			continue
		}
		if _, ok, _ := wkb.BoundsOf(f.Geometry); ok {
			ids = append(ids, int64(i+1))
		}
	}
	return ids
}

// CheckIndex runs query on db, which must select the rows of an R*Tree of
// d's geometries (id, min x, max x, min y, max y) by id: every box must
// cover the feature's geometry, as 32-bit floats rounded outwards, and
// the ids must be want.
func CheckIndex(t testing.TB, db *sql.DB, query string, d Dataset, want []int64) {
	t.Helper()
	rows, err := db.Query(query)
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
		g, _ := wkb.Decode(d.Feats[id-1].Geometry)
		b, _ := g.Bounds()
		const tol = 1e-4 // 32-bit floats, rounded outwards
		if r.MinX > b.MinX || r.MinY > b.MinY || r.MaxX < b.MaxX || r.MaxY < b.MaxY ||
			b.MinX-r.MinX > tol || b.MinY-r.MinY > tol || r.MaxX-b.MaxX > tol || r.MaxY-b.MaxY > tol {
			t.Errorf("index %d: %v, want about %v", id, r, b)
		}
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("indexed %v, want %v", ids, want)
	}
}

// CheckSchemaGolden compares the SQL of every schema object of db with the
// golden file testdata/schema.golden, which update (go test -update)
// rewrites first.
func CheckSchemaGolden(t testing.TB, db *sql.DB, update bool) {
	t.Helper()
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
	if update {
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

// CheckErrorsRemoveFile checks that write fails, leaving no file, when the
// scan fails, a geometry is not WKB, the context ends during the scan
// (within checkEvery features) or before, and the directory does not
// exist.
func CheckErrorsRemoveFile(t *testing.T, write WriteFunc, ext string, checkEvery int) {
	d := Datasets(t)["points"]
	dir := t.TempDir()
	boom := errors.New("boom")

	// The scan fails.
	path := filepath.Join(dir, "scan"+ext)
	err := write(context.Background(), path, d.Meta, func(fn func(*mapcommons.Feature) error) error {
		if err := fn(d.Feats[0]); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || FileExists(path) {
		t.Errorf("scan error: %v, file left: %v", err, FileExists(path))
	}

	// A geometry is not WKB.
	path = filepath.Join(dir, "wkb"+ext)
	bad := *d.Feats[0]
	bad.Geometry = []byte{1, 2, 3}
	err = write(context.Background(), path, d.Meta, func(fn func(*mapcommons.Feature) error) error { return fn(&bad) })
	if !errors.Is(err, wkb.ErrInvalid) || FileExists(path) {
		t.Errorf("bad WKB: %v, file left: %v", err, FileExists(path))
	}

	// The context ends during the scan.
	path = filepath.Join(dir, "cancel"+ext)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = write(ctx, path, d.Meta, func(fn func(*mapcommons.Feature) error) error {
		for {
			f := d.Feats[n%len(d.Feats)]
			if n++; n == 1000 {
				cancel()
			}
			if err := fn(f); err != nil {
				return err
			}
		}
	})
	if !errors.Is(err, context.Canceled) || FileExists(path) || n > 1000+checkEvery+1 {
		t.Errorf("cancel: %v after %d features, file left: %v", err, n, FileExists(path))
	}

	// The context ended before.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	path = filepath.Join(dir, "before"+ext)
	if err := write(ctx, path, d.Meta, d.Scan()); !errors.Is(err, context.Canceled) || FileExists(path) {
		t.Errorf("cancelled before: %v, file left: %v", err, FileExists(path))
	}

	// The directory does not exist.
	if err := write(context.Background(), filepath.Join(dir, "no", "such"+ext), d.Meta, d.Scan()); err == nil {
		t.Error("no error for a missing directory")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		t.Errorf("files left: %v", names)
	}
}

// CheckOverwrites checks that write replaces a file that is there: the
// "points" dataset, written over junk, reads back from table.
func CheckOverwrites(t *testing.T, write WriteFunc, ext, table string) {
	d := Datasets(t)["points"]
	path := filepath.Join(t.TempDir(), "x"+ext)
	if err := os.WriteFile(path, []byte(strings.Repeat("junk", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(context.Background(), path, d.Meta, d.Scan()); err != nil {
		t.Fatal(err)
	}
	db := OpenSQLite(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + sqlitebulk.Quote(table)).Scan(&n); err != nil || n != len(d.Feats) {
		t.Fatalf("count %d, %v", n, err)
	}
}

// CheckLayer checks what ogrinfo says of the one layer of a file holding
// d: its name, feature count, geometry type (a type code), extent and SRS
// (EPSG:4326).
func CheckLayer(t testing.TB, info gdaltest.Info, d Dataset, name string, code int) {
	t.Helper()
	if len(info.Layers) != 1 {
		t.Fatalf("%d layers\n%s", len(info.Layers), info.Output)
	}
	l := info.Layers[0]
	if l.Name != name || l.Count != int64(len(d.Feats)) || l.Geometry != gdaltest.GeometryType(code) {
		t.Errorf("layer %q, %d features, %q; want %q, %d, %q", l.Name, l.Count, l.Geometry, name, len(d.Feats), gdaltest.GeometryType(code))
	}
	if e, ok := d.Extent(); ok && (!l.HasExt || !gdaltest.Near(l.Extent, [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, 1e-6)) {
		t.Errorf("extent %v, want %v", l.Extent, e)
	}
	if !strings.Contains(l.SRS, `ID["EPSG",4326]`) {
		t.Errorf("SRS %s", l.SRS)
	}
}

// CheckFields checks that ogrinfo lists each of want ("name: Type") among
// the fields of a layer.
func CheckFields(t testing.TB, info gdaltest.Info, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(info.Output, "\n"+w+" ") {
			t.Errorf("no field %q in\n%s", w, info.Output)
		}
	}
}

// CheckGDALSpatialFilter writes datasets with write and counts the
// features ogrinfo finds through spatial filters (-spat, after extra), in
// the layer that layer names of each dataset.
func CheckGDALSpatialFilter(t *testing.T, write WriteFunc, ext string, layer func(name string) string, extra ...string) {
	gdaltest.Need(t)
	ds := Datasets(t)
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
		path := WriteDataset(t, write, ds[c.name], ext)
		args := append(append([]string(nil), extra...), "-spat")
		for _, v := range c.rect {
			args = append(args, Ftoa(v))
		}
		n, out := gdaltest.Count(t, path, layer(c.name), args...)
		if n != c.want {
			t.Errorf("%s %v: %d features, want %d\n%s", c.name, c.rect, n, c.want, out)
		}
	}
}

// CheckGDALIndexUsed checks that GDAL answers a spatial filter from the
// R*Tree of the "points" dataset written to path (as layer "points"):
// once del has deleted the index entry of the first point, POINT (1 2),
// a filter only that entry covers finds nothing.
func CheckGDALIndexUsed(t *testing.T, path, del string) {
	gdaltest.Need(t)
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(del); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	if n, out := gdaltest.Count(t, path, "points", "-spat", "0.5", "1.5", "1.5", "2.5"); n != 0 {
		t.Errorf("found %d features through a filter only the removed index entry covers\n%s", n, out)
	}
}

// CheckGDALReal writes real shapefiles with write and checks the summary
// ogrinfo gives (driver, count, extent, geometry type) and that a spatial
// filter on the extent finds every feature; then it calls more with the
// dataset and the file.
func CheckGDALReal(t *testing.T, write WriteFunc, ext, driver string, layer func(name string) string, more func(t *testing.T, d Dataset, path string)) {
	gdaltest.Need(t)
	for _, base := range []string{"nc", "naturalearth_lowres", "naturalearth_cities"} {
		t.Run(base, func(t *testing.T) {
			d := ReadShapefile(t, base)
			path := WriteDataset(t, write, d, ext)
			info := gdaltest.Ogrinfo(t, path)
			if info.Driver != driver || len(info.Layers) != 1 {
				t.Fatalf("%s", info.Output)
			}
			l := info.Layers[0]
			e, _ := d.Extent()
			if l.Count != int64(len(d.Feats)) || !gdaltest.Near(l.Extent, [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, 1e-6) {
				t.Errorf("%d features, extent %v; want %d, %v", l.Count, l.Extent, len(d.Feats), e)
			}
			if want := gdaltest.GeometryType(sqlitebulk.GeometryCode(d.Meta.GeometryMask)); l.Geometry != want {
				t.Errorf("geometry %q, want %q", l.Geometry, want)
			}
			if n, _ := gdaltest.Count(t, path, layer(base), "-spat", Ftoa(e.MinX), Ftoa(e.MinY), Ftoa(e.MaxX), Ftoa(e.MaxY)); n != int64(len(d.Feats)) {
				t.Errorf("spatial filter on the extent: %d features", n)
			}
			more(t, d, path)
		})
	}
}

// CheckGDALEmpty checks what ogrinfo says of a file written of a dataset
// without features: driver, one layer, no feature, any geometry.
func CheckGDALEmpty(t testing.TB, path, driver string) {
	t.Helper()
	info := gdaltest.Ogrinfo(t, path)
	if info.Driver != driver || len(info.Layers) != 1 || info.Layers[0].Count != 0 || info.Layers[0].Geometry != "Unknown (any)" {
		t.Errorf("unexpected summary:\n%s", info.Output)
	}
}

// PointScan streams n synthetic points with the attributes Attrs,
// deterministically from a seed, through one reused Feature. The values
// come from pools boxed beforehand, so that the scan itself does not
// allocate and the allocations measured are the writer's.
func PointScan(n int) (format.Meta, format.Scan) {
	m := format.Meta{Name: "bench", Title: "bench", Attributes: Attrs, GeometryMask: 1 << wkb.Point, Count: int64(n)}
	const pool = 4093
	rng := rand.New(rand.NewPCG(3, 4))
	var names, ints, floats []any
	for i := 0; i < pool; i++ {
		names = append(names, "place "+strconv.Itoa(i))
		ints = append(ints, int64(rng.IntN(1<<30)))
		floats = append(floats, rng.Float64())
	}
	days := []any{"2024-01-01", "2024-02-29", "2023-12-31"}
	return m, func(fn func(*mapcommons.Feature) error) error {
		rng := rand.New(rand.NewPCG(1, 2))
		f := mapcommons.Feature{Values: make([]any, 5)}
		for i := 0; i < n; i++ {
			f.Position = int64(i)
			f.Geometry = wkb.AppendPoint(f.Geometry[:0], rng.Float64()*360-180, rng.Float64()*180-90)
			f.Values[0] = names[i%pool]
			f.Values[1] = ints[(i*7)%pool]
			f.Values[2] = floats[(i*13)%pool]
			f.Values[3] = i%3 == 0
			f.Values[4] = days[i%len(days)]
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkWrite writes the n points of PointScan with write as bench<ext>
// per op, reporting features/s and allocs/feature.
func BenchmarkWrite(b *testing.B, write WriteFunc, ext string, n int) {
	m, scan := PointScan(n)
	dir := b.TempDir()
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := write(context.Background(), filepath.Join(dir, "bench"+ext), m, scan); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "features/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(n*b.N), "allocs/feature")
}
