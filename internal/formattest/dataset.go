// Package formattest holds what the tests of the format packages share:
// datasets to write (format.Meta and a format.Scan made of slices), real
// data to read, the checks of a written SQLite file that the GeoPackage and
// SpatiaLite writers have in common, and the invariants of any
// mapcommons.FeatureSource (CheckSource) that the readers' fuzz tests
// check.
//
// It imports format/shapefile (to read real data), so format/shapefile's
// own tests cannot use it.
package formattest

import (
	"io"
	"os"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
)

// RealDir holds real shapefiles nobody on this project made (see
// testdata/README.md), relative to the directory of a format package
// (format/<name>), where its tests run.
const RealDir = "../../testdata/real/"

// Dataset is a test input: Meta and features, geometries as WKT ("" for
// none).
type Dataset struct {
	Meta  format.Meta
	Feats []*mapcommons.Feature
	WKT   []string
}

// NewDataset builds a dataset of rows (values) and geometries given as WKT:
// the Meta's geometry mask, extent and count are those of the features.
func NewDataset(t testing.TB, name string, attrs []mapcommons.Attribute, rows [][]any, geoms []string) Dataset {
	t.Helper()
	d := Dataset{Meta: format.Meta{Name: name, Title: "Test " + name, Description: "a test", Attributes: attrs}, WKT: geoms}
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
			d.Meta.GeometryMask |= 1 << b[1]
			if r, ok, _ := wkb.BoundsOf(b); ok {
				ext = ext.Extend(r)
			}
		}
		d.Feats = append(d.Feats, f)
	}
	if !ext.IsEmpty() {
		d.Meta.Extent = &ext
	}
	d.Meta.Count = int64(len(d.Feats))
	return d
}

// Scan streams the features through one reused Feature, as the store does.
func (d Dataset) Scan() format.Scan {
	return func(fn func(*mapcommons.Feature) error) error {
		var f mapcommons.Feature
		for _, src := range d.Feats {
			f.Position, f.ID = src.Position, src.ID
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

// Extent returns the bounding box of the non-empty geometries.
func (d Dataset) Extent() (wkb.Rect, bool) {
	e := wkb.EmptyRect
	for _, f := range d.Feats {
		if len(f.Geometry) == 0 {
			continue
		}
		if r, ok, _ := wkb.BoundsOf(f.Geometry); ok {
			e = e.Extend(r)
		}
	}
	return e, !e.IsEmpty()
}

// Attrs are the attributes of most datasets: one of each type.
var Attrs = []mapcommons.Attribute{
	{Name: "name", Type: mapcommons.AttrString},
	{Name: "pop", Type: mapcommons.AttrInteger},
	{Name: "ratio", Type: mapcommons.AttrFloat},
	{Name: "ok", Type: mapcommons.AttrBoolean},
	{Name: "day", Type: mapcommons.AttrDate},
}

// Rows returns n rows of values of Attrs.
func Rows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{"name " + strconv.Itoa(i), int64(i * 1000003), float64(i) / 7, i%2 == 0, "2024-01-0" + strconv.Itoa(1+i%9)}
	}
	return rows
}

// DeclaredTypes is the geometry type code (0 any, 1 Point … 7
// GeometryCollection) that the Meta of each of Datasets declares.
var DeclaredTypes = map[string]int{
	"points": 1, "lines": 2, "polygons": 3, "multipoints": 4, "multilines": 5,
	"multipolygons": 6, "collections": 7, "mixed": 0, "Names": 1,
}

// Datasets returns the small inputs every writer test writes, by name: one
// of each geometry type, "mixed" with every type and empty geometries, and
// "Names" with awkward attribute names, NULLs and Unicode text.
func Datasets(t testing.TB) map[string]Dataset {
	t.Helper()
	ds := map[string]Dataset{}
	add := func(name string, attrs []mapcommons.Attribute, rows [][]any, geoms ...string) {
		if rows == nil && attrs != nil {
			rows = Rows(len(geoms))
		}
		ds[name] = NewDataset(t, name, attrs, rows, geoms)
	}
	add("points", Attrs, nil, "POINT (1 2)", "POINT (-179.5 -89.5)", "POINT (179.5 89.5)", "POINT (0 0)",
		"POINT (10.123456789 -20.987654321)", "POINT (12.5 41.9)", "POINT (-0.1 51.5)", "POINT (139.7 35.7)")
	add("lines", Attrs, nil, "LINESTRING (0 0, 1 1, 2 0)", "LINESTRING (10 10, 20 20)",
		"LINESTRING (-100 40, -90 45, -80 40, -70 45)")
	add("polygons", Attrs, nil,
		"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2), (6 6, 8 6, 8 8, 6 8, 6 6))",
		"POLYGON ((20 20, 30 20, 30 30, 20 20))",
		"POLYGON ((-10 -10, -5 -10, -5 -5, -10 -10))")
	add("multipoints", Attrs, nil, "MULTIPOINT ((1 1), (2 2))", "MULTIPOINT ((-5 5))", "MULTIPOINT ((3 4), (5 6), (7 8))")
	add("multilines", Attrs, nil, "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))", "MULTILINESTRING ((-1 -1, -2 -3))")
	add("multipolygons", Attrs, nil,
		"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.6 5.1, 5.9 5.1, 5.9 5.4, 5.6 5.1)))",
		"MULTIPOLYGON (((10 10, 11 10, 11 11, 10 10)))")
	add("collections", Attrs, nil,
		"GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10))",
		"GEOMETRYCOLLECTION (POLYGON ((0 0, 1 0, 1 1, 0 0)))")
	add("mixed", Attrs, nil,
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

// ReadShapefile reads the real shapefile base (in RealDir) into a dataset,
// skipping the test when the real data is not there.
func ReadShapefile(t testing.TB, base string) Dataset {
	t.Helper()
	open := func(ext string) *os.File {
		f, err := os.Open(RealDir + base + ext)
		if err != nil {
			t.Skipf("real data: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	shp, dbf, shx := open(".shp"), open(".dbf"), open(".shx")
	cpg, _ := os.ReadFile(RealDir + base + ".cpg")
	r, err := shapefile.Open(shp, dbf, shx, shapefile.Options{CPG: string(cpg)})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDataset(t, base, r.Attributes(), nil, nil)
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		c := *f
		c.Values = append([]any(nil), f.Values...)
		c.Geometry = append([]byte(nil), f.Geometry...)
		if len(f.Geometry) > 0 {
			d.Meta.GeometryMask |= 1 << f.Geometry[1]
		}
		d.Feats = append(d.Feats, &c)
		d.WKT = append(d.WKT, "")
	}
	d.Meta.Count = int64(len(d.Feats))
	return d
}

// Ftoa formats v for a command line (as ogrinfo -spat takes it).
func Ftoa(v float64) string { return string(wkb.AppendFloat(nil, v)) }
