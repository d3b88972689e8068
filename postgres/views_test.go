package postgres_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"os/exec"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
	"mapcommons/internal/pgtest"
	"mapcommons/storetest"
)

// TestDatasetViewWithGDAL: GDAL's PostgreSQL driver reads a dataset as the
// view dataset_<id>: its features with their stable ids, points in
// EPSG:4326, every attribute under its name (also names that PostgreSQL
// would cut or that repeat fid), strings that are not UTF-8 escaped rather
// than failing the read; and after a replace, the new features.
func TestDatasetViewWithGDAL(t *testing.T) {
	gdaltest.Need(t)
	ctx := context.Background()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	long := strings.Repeat("é", 40) // 80 bytes: PostgreSQL keeps 63
	attrs := []mapcommons.Attribute{
		{Name: "name", Type: mapcommons.AttrString},
		{Name: "n", Type: mapcommons.AttrInteger},
		{Name: "x", Type: mapcommons.AttrFloat},
		{Name: "ok", Type: mapcommons.AttrBoolean},
		{Name: "fid", Type: mapcommons.AttrInteger},
		{Name: long, Type: mapcommons.AttrString},
		{Name: long + "x", Type: mapcommons.AttrString},
	}
	if err := mapcommons.NormalizeAttributes(attrs); err != nil {
		t.Fatal(err)
	}
	src := &storetest.SliceSource{Attrs: attrs}
	for i := range 3 {
		src.Features = append(src.Features, mapcommons.Feature{
			Values:   []any{fmt.Sprintf("Zoë %d", i), int64(i * 10), float64(i) + 0.5, i%2 == 0, int64(100 + i), "a", "b"},
			Geometry: wkb.AppendPoint(nil, 2.35+float64(i), 48.86),
		})
	}
	src.Features[2].Values[0] = "bad \xff byte"
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	conn := gdalConn(t, url)
	layer := fmt.Sprintf("dataset_%d", ds.ID)
	n, out := gdaltest.Count(t, conn, layer)
	if n != 3 || !strings.Contains(out, `ID["EPSG",4326]`) {
		t.Fatalf("ogrinfo: %d features\n%s", n, out)
	}
	feats := gdaltest.Features(t, conn, layer, "-sql", "SELECT * FROM "+layer+" ORDER BY fid")
	if len(feats) != 3 {
		t.Fatalf("%d features", len(feats))
	}
	f := feats[0]
	cut := strings.Repeat("é", 31) // 62 bytes: the last é would not fit
	if f.Fields["name"] != "Zoë 0" || f.Fields["n"] != "0" || f.Fields["x"] != "0.5" || f.Fields["ok"] != "1" ||
		f.Fields["fid_2"] != "100" || f.Fields[cut] != "a" || f.Fields[strings.Repeat("é", 30)+"_2"] != "b" || f.WKT != "POINT (2.35 48.86)" {
		t.Fatalf("the first feature: %+v", f)
	}
	if got := feats[2].Fields["name"]; got != `bad \377 byte` {
		t.Errorf("a string that is not UTF-8 reads %q", got)
	}
	// A replace makes a new table: the view follows it.
	rep := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "only", Type: mapcommons.AttrString}}}
	rep.Features = []mapcommons.Feature{{Values: []any{"new"}, Geometry: wkb.AppendPoint(nil, 1, 2)}}
	if _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, rep); err != nil {
		t.Fatal(err)
	}
	feats = gdaltest.Features(t, conn, layer)
	if len(feats) != 1 || feats[0].Fields["only"] != "new" || feats[0].WKT != "POINT (1 2)" {
		t.Fatalf("after a replace: %+v", feats)
	}
	// Deleted with the dataset.
	if err := s.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ogrinfo", "-ro", "-so", conn, layer).CombinedOutput(); err == nil {
		t.Fatalf("the view outlived its dataset:\n%s", out)
	}
}

// gdalConn is GDAL's name of the database at url (a postgres:// URL with
// the socket directory as host): libpq's key=value form, which GDAL adds
// its own options to.
func gdalConn(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	return fmt.Sprintf("PG:host=%s dbname=%s user=%s", q.Get("host"), strings.TrimPrefix(u.Path, "/"), q.Get("user"))
}

// TestDatasetViewInParallel reads a dataset's view in a parallel plan, as
// PostgreSQL makes for a big table: the escaping of strings that are not
// UTF-8 catches an error in a subtransaction, which a parallel operation
// refuses, so the function must keep the view's reads out of parallel
// plans rather than fail them.
func TestDatasetViewInParallel(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}}}
	for i := range 50 {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{fmt.Sprintf("name %d \xff", i)}, Geometry: wkb.AppendPoint(nil, 1, 2)})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	conn := rawConn(t, url)
	if _, err := conn.Exec(ctx, `SET force_parallel_mode = on`); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM dataset_%d WHERE name LIKE 'name%%'`, ds.ID)).Scan(&n); err != nil || n != 50 {
		t.Fatalf("a parallel read of the view: %d rows, %v", n, err)
	}
}
