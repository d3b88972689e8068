package gpkg

import (
	"bufio"
	"database/sql"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// dataset is a test input: Meta and features, geometries as WKT ("" for none).
type dataset struct {
	meta  format.Meta
	feats []*mapcommons.Feature
	wkt   []string
}

// newDataset builds a dataset of rows (values) and geometries given as WKT.
func newDataset(t testing.TB, name string, attrs []mapcommons.Attribute, rows [][]any, geoms []string) dataset {
	t.Helper()
	d := dataset{meta: format.Meta{Name: name, Title: "Test " + name, Description: "a test", Attributes: attrs}, wkt: geoms}
	ext := wkb.EmptyRect
	for i, s := range geoms {
		f := &mapcommons.Feature{Position: int64(i)}
		if rows != nil {
			f.Values = rows[i]
		}
		if s != "" {
			b, err := wkb.ParseWKT(s)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			f.Geometry = b
			d.meta.GeometryMask |= 1 << b[1]
			if r, ok, _ := wkb.BoundsOf(b); ok {
				ext = ext.Extend(r)
			}
		}
		d.feats = append(d.feats, f)
	}
	if !ext.IsEmpty() {
		d.meta.Extent = &ext
	}
	d.meta.Count = int64(len(d.feats))
	return d
}

// scan streams the features through one reused Feature, as the store does.
func (d dataset) scan() format.Scan {
	return func(fn func(*mapcommons.Feature) error) error {
		var f mapcommons.Feature
		for _, src := range d.feats {
			f.Position = src.Position
			f.Values = append(f.Values[:0], src.Values...)
			f.Geometry = append(f.Geometry[:0], src.Geometry...)
			if src.Geometry == nil {
				f.Geometry = nil
			}
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
}

// extent returns the bounding box of the non-empty geometries.
func (d dataset) extent() (wkb.Rect, bool) {
	e := wkb.EmptyRect
	for _, f := range d.feats {
		if len(f.Geometry) == 0 {
			continue
		}
		if r, ok, _ := wkb.BoundsOf(f.Geometry); ok {
			e = e.Extend(r)
		}
	}
	return e, !e.IsEmpty()
}

var testAttrs = []mapcommons.Attribute{
	{Name: "name", Type: mapcommons.AttrString},
	{Name: "pop", Type: mapcommons.AttrInteger},
	{Name: "ratio", Type: mapcommons.AttrFloat},
	{Name: "ok", Type: mapcommons.AttrBoolean},
	{Name: "day", Type: mapcommons.AttrDate},
}

func testRows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{"name " + strconv.Itoa(i), int64(i * 1000003), float64(i) / 7, i%2 == 0, "2024-01-0" + strconv.Itoa(1+i%9)}
	}
	return rows
}

// datasets returns the small inputs every test writes.
func datasets(t testing.TB) map[string]dataset {
	t.Helper()
	ds := map[string]dataset{}
	add := func(name string, attrs []mapcommons.Attribute, rows [][]any, geoms ...string) {
		if rows == nil && attrs != nil {
			rows = testRows(len(geoms))
		}
		ds[name] = newDataset(t, name, attrs, rows, geoms)
	}
	add("points", testAttrs, nil, "POINT (1 2)", "POINT (-179.5 -89.5)", "POINT (179.5 89.5)", "POINT (0 0)",
		"POINT (10.123456789 -20.987654321)", "POINT (12.5 41.9)", "POINT (-0.1 51.5)", "POINT (139.7 35.7)")
	add("lines", testAttrs, nil, "LINESTRING (0 0, 1 1, 2 0)", "LINESTRING (10 10, 20 20)",
		"LINESTRING (-100 40, -90 45, -80 40, -70 45)")
	add("polygons", testAttrs, nil,
		"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2), (6 6, 8 6, 8 8, 6 8, 6 6))",
		"POLYGON ((20 20, 30 20, 30 30, 20 20))",
		"POLYGON ((-10 -10, -5 -10, -5 -5, -10 -10))")
	add("multipoints", testAttrs, nil, "MULTIPOINT ((1 1), (2 2))", "MULTIPOINT ((-5 5))", "MULTIPOINT ((3 4), (5 6), (7 8))")
	add("multilines", testAttrs, nil, "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))", "MULTILINESTRING ((-1 -1, -2 -3))")
	add("multipolygons", testAttrs, nil,
		"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.6 5.1, 5.9 5.1, 5.9 5.4, 5.6 5.1)))",
		"MULTIPOLYGON (((10 10, 11 10, 11 11, 10 10)))")
	add("collections", testAttrs, nil,
		"GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10))",
		"GEOMETRYCOLLECTION (POLYGON ((0 0, 1 0, 1 1, 0 0)))")
	add("mixed", testAttrs, nil,
		"POINT (1 2)",
		"LINESTRING (0 0, 1 1, 2 0)",
		"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2))",
		"MULTIPOINT ((1 1), EMPTY, (2 2))",
		"MULTILINESTRING ((0 0, 1 1), EMPTY)",
		"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), EMPTY)",
		"GEOMETRYCOLLECTION (POINT (4 6), MULTILINESTRING ((4 6, 7 10), (1 1, 2 2)), GEOMETRYCOLLECTION (POLYGON ((0 0, 1 0, 1 1, 0 0)), POINT EMPTY))",
		"",
		"POINT EMPTY",
		"LINESTRING EMPTY",
		"GEOMETRYCOLLECTION EMPTY",
		"POINT (-30 -40)",
	)
	// Awkward names, NULLs and Unicode text.
	names := []mapcommons.Attribute{
		{Name: "a b", Type: mapcommons.AttrString},
		{Name: "it's", Type: mapcommons.AttrString},
		{Name: `say "hi"`, Type: mapcommons.AttrInteger},
		{Name: "select", Type: mapcommons.AttrFloat},
		{Name: "FROM", Type: mapcommons.AttrBoolean},
		{Name: "OGC_FID", Type: mapcommons.AttrString},
		{Name: "geometry", Type: mapcommons.AttrString},
		{Name: "FID", Type: mapcommons.AttrString},
		{Name: "Geom", Type: mapcommons.AttrString},
		{Name: "名前", Type: mapcommons.AttrString},
		{Name: "", Type: mapcommons.AttrString},
		{Name: "nul\x00byte", Type: mapcommons.AttrInteger},
		{Name: "geometry_2", Type: mapcommons.AttrString},
	}
	add("Names", names, [][]any{
		{"x y", "l'eau", int64(-1), 1.5, true, "fid 1", "geom 1", "F", "G", "Zürich – 東京 🌍", "blank", int64(1 << 62), "g2"},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"", `"quoted"`, int64(0), -0.25, false, "", "", "", "", "ß", "", int64(-1 << 63), ""},
	}, "POINT (1 1)", "", "POINT (2 3)")
	return ds
}

// sqliteOpen opens path read-only with modernc.
func sqliteOpen(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ogrCount runs ogrinfo -ro -so with extra arguments on one layer and
// returns its feature count and the whole output.
func ogrCount(t testing.TB, path, layer string, extra ...string) (int64, string) {
	t.Helper()
	bin := gdaltest.Need(t)
	args := append([]string{"-ro", "-so"}, extra...)
	args = append(args, path, layer)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %v: %v\n%s", args, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(line, "Feature Count: "); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n, string(out)
		}
	}
	t.Fatalf("ogrinfo %v: no feature count\n%s", args, out)
	return 0, ""
}

// ogrFeature is one feature as ogrinfo prints it: its FID, fields and
// geometry WKT ("" when none).
type ogrFeature struct {
	fid    string
	fields map[string]string
	wkt    string
}

// ogrFeatures runs ogrinfo -ro -q path with extra arguments (such as -sql)
// and returns the features it prints.
func ogrFeatures(t testing.TB, path string, extra ...string) []ogrFeature {
	t.Helper()
	bin := gdaltest.Need(t)
	args := append([]string{"-ro", "-q", path}, extra...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %v: %v\n%s", args, err, out)
	}
	var fs []ogrFeature
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "OGRFeature(") {
			i := strings.Index(line, "):")
			fs = append(fs, ogrFeature{fid: line[i+2:], fields: map[string]string{}})
			continue
		}
		if len(fs) == 0 || !strings.HasPrefix(line, "  ") {
			continue
		}
		f := &fs[len(fs)-1]
		if i, j := strings.Index(line, " ("), strings.Index(line, ") = "); i > 0 && j > i {
			f.fields[strings.TrimSpace(line[:i])] = line[j+4:]
		} else if s := strings.TrimSpace(line); s != "" {
			f.wkt = s
		}
	}
	return fs
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
