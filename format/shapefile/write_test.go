package shapefile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// wtScan streams feats, through one reused Feature as the store does.
func wtScan(feats []mapcommons.Feature) format.Scan {
	return func(fn func(*mapcommons.Feature) error) error {
		var f mapcommons.Feature
		for i := range feats {
			f = feats[i]
			f.Position = int64(i)
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
}

// wtMeta describes feats as the store would: mask and extent from the
// geometries.
func wtMeta(name string, attrs []mapcommons.Attribute, feats []mapcommons.Feature) format.Meta {
	m := format.Meta{Name: name, Attributes: attrs, Count: int64(len(feats)),
		Updated: time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)}
	for i := range attrs {
		attrs[i].ID = int64(i)
	}
	ext := wkb.EmptyRect
	for _, f := range feats {
		if len(f.Geometry) == 0 {
			continue
		}
		g, err := wkb.Decode(f.Geometry)
		if err != nil {
			panic(err)
		}
		m.GeometryMask |= 1 << g.Type
		if r, ok := g.Bounds(); ok {
			ext = ext.Extend(r)
		}
	}
	if !ext.IsEmpty() {
		m.Extent = &ext
	}
	return m
}

// wtZip runs WriteZip into memory and checks that it leaves no temporary
// file behind.
func wtZip(t testing.TB, m format.Meta, feats []mapcommons.Feature) []byte {
	t.Helper()
	tmp := t.TempDir()
	var buf bytes.Buffer
	if err := WriteZip(&buf, m, wtScan(feats), tmp); err != nil {
		t.Fatalf("WriteZip: %v", err)
	}
	wtNoTemp(t, tmp)
	return buf.Bytes()
}

func wtNoTemp(t testing.TB, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("WriteZip left %d temporary files in %s (%s …)", len(left), dir, left[0].Name())
	}
}

// wtUnzip returns the entries of a zip by name, in order.
func wtUnzip(t testing.TB, b []byte) (map[string][]byte, []string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name] = data
		names = append(names, f.Name)
	}
	return files, names
}

// wtRead opens the shapefile base of files with our reader and returns
// its attributes and features (values copied, geometry decoded).
func wtRead(t testing.TB, files map[string][]byte, base string) ([]mapcommons.Attribute, []wtFeat) {
	t.Helper()
	for _, ext := range []string{".shp", ".shx", ".dbf", ".prj", ".cpg"} {
		if _, ok := files[base+ext]; !ok {
			t.Fatalf("no %s%s in the zip", base, ext)
		}
	}
	if got := string(files[base+".cpg"]); got != "UTF-8" {
		t.Errorf("%s.cpg = %q", base, got)
	}
	r, err := Open(bytes.NewReader(files[base+".shp"]), bytes.NewReader(files[base+".dbf"]),
		bytes.NewReader(files[base+".shx"]), Options{CPG: string(files[base+".cpg"]), PRJ: string(files[base+".prj"])})
	if err != nil {
		t.Fatalf("Open %s: %v", base, err)
	}
	if r.CRS() != "GCS_WGS_1984" {
		t.Errorf("%s: CRS %q", base, r.CRS())
	}
	var out []wtFeat
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		wf := wtFeat{values: append([]any(nil), f.Values...)}
		if f.Geometry != nil {
			if wf.geom, err = wkb.Decode(f.Geometry); err != nil {
				t.Fatal(err)
			}
			wf.has = true
		}
		out = append(out, wf)
	}
	return r.Attributes(), out
}

type wtFeat struct {
	values []any
	geom   wkb.Geom
	has    bool
}

// wtNorm puts a geometry in a canonical form for comparison: rings closed,
// shells counter-clockwise and holes clockwise, one-member multi
// geometries (other than MultiPoint) as their member, empty points dropped.
func wtNorm(g wkb.Geom) wkb.Geom {
	ring := func(r []float64, shell bool) []float64 {
		r = append([]float64(nil), r...)
		if n := len(r); n >= 2 && (r[0] != r[n-2] || r[1] != r[n-1]) {
			r = append(r, r[0], r[1])
		}
		if a := signedArea(r); (shell && a < 0) || (!shell && a > 0) {
			reverseRing(r)
		}
		return r
	}
	switch g.Type {
	case wkb.Polygon:
		out := wkb.Geom{Type: wkb.Polygon}
		for i, r := range g.Rings {
			out.Rings = append(out.Rings, ring(r, i == 0))
		}
		return out
	case wkb.MultiPoint:
		out := wkb.Geom{Type: wkb.MultiPoint}
		for _, p := range g.Parts {
			if len(p.Coords) == 2 {
				out.Parts = append(out.Parts, p)
			}
		}
		return out
	case wkb.MultiLineString, wkb.MultiPolygon, wkb.GeometryCollection:
		out := wkb.Geom{Type: g.Type}
		for _, p := range g.Parts {
			out.Parts = append(out.Parts, wtNorm(p))
		}
		if len(out.Parts) == 1 && g.Type != wkb.GeometryCollection {
			return out.Parts[0]
		}
		return out
	}
	return g
}

func wtGeomEqual(a, b wkb.Geom) bool {
	wa, _ := wkb.ToWKT(nil, wtNorm(a).AppendWKB(nil))
	wb, _ := wkb.ToWKT(nil, wtNorm(b).AppendWKB(nil))
	return string(wa) == string(wb)
}

func wtWKT(g wkb.Geom) string {
	w, _ := wkb.ToWKT(nil, g.AppendWKB(nil))
	return string(w)
}

// wtExpect is what a value reads back as: nil strings are blank, and blank
// C fields read as "".
func wtExpect(a mapcommons.Attribute, v any) any {
	switch a.Type {
	case mapcommons.AttrString:
		if v == nil {
			return ""
		}
		if s, ok := v.(string); ok {
			return wTruncateUTF8(strings.TrimRight(s, " "), wDBFMaxText)
		}
	case mapcommons.AttrFloat:
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil
		}
	}
	return v
}

// wtCheck compares what was read back with the features written.
func wtCheck(t *testing.T, attrs []mapcommons.Attribute, gotAttrs []mapcommons.Attribute, want []mapcommons.Feature, got []wtFeat) {
	t.Helper()
	names, _ := ShortNames(attrs)
	if len(gotAttrs) != len(attrs) {
		t.Fatalf("read back %d attributes (%s), want %d", len(gotAttrs), attrList(gotAttrs), len(attrs))
	}
	for i, a := range gotAttrs {
		if !strings.EqualFold(a.Name, names[i]) || a.Type != attrs[i].Type {
			t.Errorf("attribute %d = %s:%s, want %s:%s", i, a.Name, a.Type, names[i], attrs[i].Type)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("read back %d features, want %d", len(got), len(want))
	}
	for i := range want {
		for j, a := range attrs {
			w := wtExpect(a, want[i].Values[j])
			if g := got[i].values[j]; !reflect.DeepEqual(g, w) {
				t.Errorf("feature %d %s = %#v, want %#v", i, a.Name, g, w)
			}
		}
		var wg wkb.Geom
		if len(want[i].Geometry) > 0 {
			var err error
			if wg, err = wkb.Decode(want[i].Geometry); err != nil {
				t.Fatal(err)
			}
		}
		if wg.IsEmpty() { // no geometry, or an empty one: a Null shape
			if got[i].has {
				t.Errorf("feature %d has geometry %s, want none", i, wtWKT(got[i].geom))
			}
			continue
		}
		if !got[i].has || !wtGeomEqual(wg, got[i].geom) {
			t.Errorf("feature %d geometry = %s, want %s", i, wtWKT(got[i].geom), wtWKT(wg))
		}
	}
}

func wtAttrs(spec ...string) []mapcommons.Attribute {
	var out []mapcommons.Attribute
	for _, s := range spec {
		name, typ, _ := strings.Cut(s, ":")
		out = append(out, mapcommons.Attribute{Name: name, Type: mapcommons.AttrType(typ)})
	}
	return out
}

func wtF(geom []byte, vals ...any) mapcommons.Feature {
	return mapcommons.Feature{Geometry: geom, Values: vals}
}

// Geometries of the tests, OGC style (shells counter-clockwise).
var (
	wtShell   = []float64{0, 0, 10, 0, 10, 10, 0, 10, 0, 0}
	wtHole    = []float64{2, 2, 2, 4, 4, 4, 4, 2, 2, 2}
	wtHole2   = []float64{6, 6, 6, 8, 8, 8, 8, 6} // not closed
	wtShellB  = []float64{20, 0, 30, 0, 30, 10, 20, 10, 20, 0}
	wtIsland  = []float64{2.5, 2.5, 3.5, 2.5, 3.5, 3.5, 2.5, 3.5, 2.5, 2.5} // inside wtHole
	wtShellCW = []float64{40, 0, 40, 10, 50, 10, 50, 0, 40, 0}              // already clockwise
)

var wtAllAttrs = wtAttrs("id:integer", "value:float", "name:string", "flag:boolean", "day:date")

func wtRow(i int) []any {
	names := []any{"Zürich", "São Tomé", "", nil, "東京", strings.Repeat("é", 200), " lead", "trail   "}
	floats := []any{1.5, -0.1, 1e-300, 123456789.123456789, nil, 1825.0, 3.0e25, math.Pi, 0.0, -7e-7}
	ints := []any{int64(1), int64(-42), nil, int64(999999999999999999), int64(-99999999999999999), int64(0)}
	bools := []any{true, false, nil}
	days := []any{"2024-02-29", nil, "1999-12-31", "0001-01-01"}
	return []any{ints[i%len(ints)], floats[i%len(floats)], names[i%len(names)], bools[i%len(bools)], days[i%len(days)]}
}

func wtFeats(geoms ...[]byte) []mapcommons.Feature {
	var out []mapcommons.Feature
	for i, g := range geoms {
		out = append(out, wtF(g, wtRow(i)...))
	}
	return out
}

func TestWriteRoundTrip(t *testing.T) {
	poly := wkb.AppendPolygon(nil, [][]float64{wtShell, wtHole, wtHole2})
	for _, tc := range []struct {
		name  string
		feats []mapcommons.Feature
		typ   int32
	}{
		{"point", wtFeats(wkb.AppendPoint(nil, 1, 2), wkb.AppendPoint(nil, -180, -90), wkb.AppendPoint(nil, 179.99999999999997, 89.5),
			wkb.AppendPoint(nil, 0.1, 0.2), wkb.AppendPoint(nil, 3, 4), wkb.AppendPoint(nil, 5, 6), wkb.AppendPoint(nil, 7, 8),
			wkb.AppendPoint(nil, 9, 10), wkb.AppendPoint(nil, 11, 12), wkb.AppendPoint(nil, 13, 14), nil, wkb.AppendPoint(nil, math.NaN(), math.NaN())), shapePoint},
		{"multipoint", wtFeats(wkb.AppendMultiPoint(nil, []float64{1, 2, 3, 4}), wkb.AppendMultiPoint(nil, []float64{5, 6}),
			wkb.AppendMultiPoint(nil, nil), nil), shapeMultiPoint},
		{"line", wtFeats(wkb.AppendLineString(nil, []float64{0, 0, 1, 1, 2, 0}), wkb.AppendLineString(nil, []float64{5, 5, 6, 6}), nil), shapePolyLine},
		{"multiline", wtFeats(wkb.AppendMultiLineString(nil, [][]float64{{0, 0, 1, 1}, {2, 2, 3, 3, 4, 2}}),
			wkb.AppendLineString(nil, []float64{-1, -1, -2, -2}), wkb.AppendMultiLineString(nil, [][]float64{{7, 7, 8, 8}})), shapePolyLine},
		{"polygon", wtFeats(poly, wkb.AppendPolygon(nil, [][]float64{wtShellCW}), nil,
			wkb.AppendPolygon(nil, [][]float64{wtShellB})), shapePolygon},
		{"multipolygon", wtFeats(wkb.AppendMultiPolygon(nil, [][][]float64{{wtShell, wtHole}, {wtShellB}, {wtIsland}}),
			wkb.AppendMultiPolygon(nil, [][][]float64{{wtShellCW}}), poly), shapePolygon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := append([]mapcommons.Attribute(nil), wtAllAttrs...)
			m := wtMeta("test_"+tc.name, attrs, tc.feats)
			files, names := wtUnzip(t, wtZip(t, m, tc.feats))
			base := "test_" + tc.name
			want := []string{base + ".shp", base + ".shx", base + ".dbf", base + ".prj", base + ".cpg"}
			if !reflect.DeepEqual(names, want) {
				t.Errorf("entries = %v, want %v", names, want)
			}
			if got := int32(le32At(files[base+".shp"], 32)); got != tc.typ {
				t.Errorf("shape type %d, want %d", got, tc.typ)
			}
			gotAttrs, got := wtRead(t, files, base)
			wtCheck(t, attrs, gotAttrs, tc.feats, got)
		})
	}
}

func le32At(b []byte, off int) uint32 {
	return uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24
}

// TestWriteOrientation checks the rings in the .shp itself: shells
// clockwise, holes counter-clockwise, closed.
func TestWriteOrientation(t *testing.T) {
	feats := []mapcommons.Feature{wtF(wkb.AppendPolygon(nil, [][]float64{wtShell, wtHole, wtHole2}))}
	files, _ := wtUnzip(t, wtZip(t, wtMeta("o", nil, feats), feats))
	shp := files["o.shp"]
	rec := shp[headerSize+recHeaderSize:]
	np, n := int(le32At(rec, 36)), int(le32At(rec, 40))
	if np != 3 || n != 15 {
		t.Fatalf("%d parts, %d points", np, n)
	}
	pts := make([]float64, 2*n)
	for i := range pts {
		pts[i] = math.Float64frombits(uint64(le32At(rec, 44+4*np+8*i)) | uint64(le32At(rec, 48+4*np+8*i))<<32)
	}
	for k, want := range []int{-1, 1, 1} {
		r := pts[10*k : 10*k+10]
		if a := signedArea(r); (a > 0) != (want > 0) {
			t.Errorf("ring %d has area %v", k, a)
		}
		if r[0] != r[8] || r[1] != r[9] {
			t.Errorf("ring %d is not closed: %v", k, r)
		}
	}
}

func TestWriteMixed(t *testing.T) {
	attrs := wtAttrs("id:integer", "kind:string")
	f := func(g []byte, id int64, kind string) mapcommons.Feature { return wtF(g, id, kind) }
	feats := []mapcommons.Feature{
		f(nil, 0, "none first"),
		f(wkb.AppendPoint(nil, 1, 1), 1, "point"),
		f(wkb.AppendLineString(nil, []float64{0, 0, 1, 1}), 2, "line"),
		f(wkb.AppendPolygon(nil, [][]float64{wtShell, wtHole}), 3, "polygon"),
		f(wkb.AppendMultiPoint(nil, []float64{1, 2, 3, 4}), 4, "multipoint"),
		f(wkb.AppendMultiLineString(nil, [][]float64{{0, 0, 1, 1}, {2, 2, 3, 3}}), 5, "multiline"),
		f(wkb.AppendMultiPolygon(nil, [][][]float64{{wtShell}, {wtShellB}}), 6, "multipolygon"),
		f(wkb.AppendCollection(nil, [][]byte{
			wkb.AppendPoint(nil, 5, 5),
			wkb.AppendLineString(nil, []float64{1, 1, 2, 2}),
			wkb.AppendCollection(nil, [][]byte{wkb.AppendLineString(nil, []float64{3, 3, 4, 4})}),
			wkb.AppendPolygon(nil, [][]float64{wtShellB}),
		}), 7, "collection"),
		f(wkb.AppendCollection(nil, [][]byte{wkb.AppendPoint(nil, 6, 6), wkb.AppendPoint(nil, 7, 7)}), 8, "two points"),
		f(wkb.AppendCollection(nil, nil), 9, "empty collection"),
		f(wkb.AppendLineString(nil, nil), 10, "empty line"),
		f(wkb.AppendPoint(nil, 2, 2), 11, "point"),
		f(wkb.AppendCollection(nil, [][]byte{wkb.AppendPoint(nil, math.NaN(), math.NaN()), wkb.AppendLineString(nil, []float64{8, 8, 9, 9}),
			wkb.AppendPolygon(nil, nil)}), 12, "empty members"),
		f(wkb.AppendCollection(nil, [][]byte{wkb.AppendPoint(nil, math.NaN(), math.NaN())}), 13, "only empty members"),
	}
	m := wtMeta("mixed", attrs, feats)
	files, names := wtUnzip(t, wtZip(t, m, feats))
	var want []string
	for _, fam := range []string{"point", "multipoint", "line", "polygon"} {
		for _, ext := range []string{".shp", ".shx", ".dbf", ".prj", ".cpg"} {
			want = append(want, "mixed_"+fam+ext)
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("entries = %v\nwant %v", names, want)
	}
	for _, tc := range []struct {
		fam  string
		typ  int32
		rows []int64
		wkt  []string
	}{
		{"point", shapePoint, []int64{0, 1, 7, 9, 11, 13}, []string{"", "POINT (1 1)", "POINT (5 5)", "", "POINT (2 2)", ""}},
		{"multipoint", shapeMultiPoint, []int64{4, 8}, []string{"MULTIPOINT ((1 2), (3 4))", "MULTIPOINT ((6 6), (7 7))"}},
		{"line", shapePolyLine, []int64{2, 5, 7, 10, 12}, []string{"LINESTRING (0 0, 1 1)", "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))",
			"MULTILINESTRING ((1 1, 2 2), (3 3, 4 4))", "", "LINESTRING (8 8, 9 9)"}},
		{"polygon", shapePolygon, []int64{3, 6, 7}, []string{
			"POLYGON ((0 0, 0 10, 10 10, 10 0, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2))",
			"MULTIPOLYGON (((0 0, 0 10, 10 10, 10 0, 0 0)), ((20 0, 20 10, 30 10, 30 0, 20 0)))",
			"POLYGON ((20 0, 20 10, 30 10, 30 0, 20 0))"}},
	} {
		base := "mixed_" + tc.fam
		if got := int32(le32At(files[base+".shp"], 32)); got != tc.typ {
			t.Errorf("%s: shape type %d, want %d", base, got, tc.typ)
		}
		gotAttrs, got := wtRead(t, files, base)
		if attrList(gotAttrs) != "id:integer kind:string" {
			t.Errorf("%s: attributes %s", base, attrList(gotAttrs))
		}
		var ids []int64
		var wkts []string
		for _, f := range got {
			ids = append(ids, f.values[0].(int64))
			s := ""
			if f.has {
				s = wtWKT(f.geom)
			}
			wkts = append(wkts, s)
			if want := feats[f.values[0].(int64)].Values[1]; f.values[1] != want {
				t.Errorf("%s: row %v, want kind %v", base, f.values, want)
			}
		}
		if !reflect.DeepEqual(ids, tc.rows) || !reflect.DeepEqual(wkts, tc.wkt) {
			t.Errorf("%s: rows %v %q\nwant %v %q", base, ids, wkts, tc.rows, tc.wkt)
		}
	}
}

// TestWriteMaskFamilies: the files follow the mask as well as the data.
func TestWriteMaskFamilies(t *testing.T) {
	attrs := wtAttrs("n:integer")
	for _, tc := range []struct {
		name  string
		mask  uint32
		feats []mapcommons.Feature
		want  string // entries without .prj and .cpg
		typ   map[string]int32
		count map[string]int
	}{
		{"empty dataset, no mask", 0, nil, "d.shp d.shx d.dbf", map[string]int32{"d": shapeNull}, map[string]int{"d": 0}},
		{"empty dataset, polygons", 1 << wkb.MultiPolygon, nil, "d.shp d.shx d.dbf", map[string]int32{"d": shapePolygon}, map[string]int{"d": 0}},
		{"no geometry", 0, []mapcommons.Feature{wtF(nil, int64(1)), wtF(nil, int64(2))}, "d.shp d.shx d.dbf",
			map[string]int32{"d": shapeNull}, map[string]int{"d": 2}},
		{"mask says mixed", 1<<wkb.Point | 1<<wkb.LineString, []mapcommons.Feature{wtF(nil, int64(1)), wtF(wkb.AppendPoint(nil, 1, 2), int64(2))},
			"d_point.shp d_point.shx d_point.dbf d_line.shp d_line.shx d_line.dbf",
			map[string]int32{"d_point": shapePoint, "d_line": shapePolyLine}, map[string]int{"d_point": 2, "d_line": 0}},
		{"mask of collections only", 1 << wkb.GeometryCollection, []mapcommons.Feature{wtF(nil, int64(1)),
			wtF(wkb.AppendCollection(nil, [][]byte{wkb.AppendPoint(nil, 1, 2)}), int64(2))},
			"d_point.shp d_point.shx d_point.dbf d_null.shp d_null.shx d_null.dbf",
			map[string]int32{"d_point": shapePoint, "d_null": shapeNull}, map[string]int{"d_point": 1, "d_null": 1}},
		{"stale mask", 1 << wkb.Point, []mapcommons.Feature{wtF(wkb.AppendPolygon(nil, [][]float64{wtShell}), int64(1))},
			"d_point.shp d_point.shx d_point.dbf d_polygon.shp d_polygon.shx d_polygon.dbf",
			map[string]int32{"d_point": shapePoint, "d_polygon": shapePolygon}, map[string]int{"d_point": 0, "d_polygon": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := format.Meta{Name: "d", Attributes: attrs, GeometryMask: tc.mask}
			files, names := wtUnzip(t, wtZip(t, m, tc.feats))
			var short []string
			for _, n := range names {
				if !strings.HasSuffix(n, ".prj") && !strings.HasSuffix(n, ".cpg") {
					short = append(short, n)
				}
			}
			if got := strings.Join(short, " "); got != tc.want {
				t.Errorf("entries %s, want %s", got, tc.want)
			}
			for base, typ := range tc.typ {
				if got := int32(le32At(files[base+".shp"], 32)); got != typ {
					t.Errorf("%s: type %d, want %d", base, got, typ)
				}
				_, feats := wtRead(t, files, base)
				if len(feats) != tc.count[base] {
					t.Errorf("%s: %d features, want %d", base, len(feats), tc.count[base])
				}
			}
		})
	}
}

func TestWriteNoAttributes(t *testing.T) {
	feats := []mapcommons.Feature{wtF(wkb.AppendPoint(nil, 1, 2)), wtF(wkb.AppendPoint(nil, 3, 4))}
	files, _ := wtUnzip(t, wtZip(t, wtMeta("p", nil, feats), feats))
	attrs, got := wtRead(t, files, "p")
	if attrList(attrs) != "FID:integer" || len(got) != 2 || got[0].values[0] != int64(0) || got[1].values[0] != int64(1) {
		t.Errorf("attributes %s, features %v", attrList(attrs), got)
	}
}

func TestWriteDBFTypes(t *testing.T) {
	attrs := wtAttrs("d:date", "iso:date", "i:integer", "f:float", "allint:float", "s:string", "empty:string", "big:integer", "b:boolean")
	feats := []mapcommons.Feature{
		wtF(wkb.AppendPoint(nil, 0, 0), "2024-01-02", "2024-01-02", int64(7), 0.5, 3.0, "x", nil, int64(math.MaxInt64), true),
		wtF(wkb.AppendPoint(nil, 0, 0), "soon", nil, nil, math.NaN(), nil, "yz", "", int64(math.MinInt64), nil),
		wtF(wkb.AppendPoint(nil, 0, 0), nil, "20240103", int64(-12345), math.Inf(1), -2.0, nil, nil, nil, false),
	}
	files, _ := wtUnzip(t, wtZip(t, wtMeta("t", attrs, feats), feats))
	dbf := files["t.dbf"]
	type desc struct {
		name       string
		typ        byte
		width, dec int
	}
	var got []desc
	for p := 32; dbf[p] != descEnd; p += 32 {
		got = append(got, desc{strings.TrimRight(string(dbf[p:p+11]), "\x00"), dbf[p+11], int(dbf[p+16]), int(dbf[p+17])})
	}
	want := []desc{{"d", 'C', 10, 0}, {"iso", 'D', 8, 0}, {"i", 'N', 6, 0}, {"f", 'N', 3, 1}, {"allint", 'N', 3, 1},
		{"s", 'C', 2, 0}, {"empty", 'C', 1, 0}, {"big", 'N', 20, 0}, {"b", 'L', 1, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields\n%v\nwant\n%v", got, want)
	}
	if dbf[0] != 0x03 || dbf[29] != 0 || dbf[len(dbf)-1] != 0x1A || dbf[1] != 124 || dbf[2] != 5 || dbf[3] != 6 {
		t.Errorf("header % x, last byte %x", dbf[:32], dbf[len(dbf)-1])
	}
	rattrs, rf := wtRead(t, files, "t")
	if got := attrList(rattrs); got != "d:string iso:date i:integer f:float allint:float s:string empty:string big:float b:boolean" {
		t.Errorf("read back as %s", got)
	}
	wantVals := [][]any{
		{"2024-01-02", "2024-01-02", int64(7), 0.5, 3.0, "x", "", float64(math.MaxInt64), true},
		{"soon", nil, nil, nil, nil, "yz", "", float64(math.MinInt64), nil},
		{"", "2024-01-03", int64(-12345), nil, -2.0, "", "", nil, false},
	}
	for i, f := range rf {
		if !reflect.DeepEqual(f.values, wantVals[i]) {
			t.Errorf("feature %d = %#v\nwant %#v", i, f.values, wantVals[i])
		}
	}
	// The records as written: blanks for nulls (also for a boolean: GDAL
	// reads '?', the dBase null, as the text "?").
	recLen := int(dbf[10]) | int(dbf[11])<<8
	hdrLen := int(dbf[8]) | int(dbf[9])<<8
	rec := string(dbf[hdrLen+recLen : hdrLen+2*recLen])
	if want := " soon" + strings.Repeat(" ", 26) + "yz -9223372036854775808 "; rec != want {
		t.Errorf("record 2 = %q\nwant %q", rec, want)
	}
}

func TestShortNames(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    []string
		changed bool
	}{
		{[]string{"id", "name", "NAME_2", "x1"}, []string{"id", "name", "NAME_2", "x1"}, false},
		{[]string{"geometry", "geometry_2"}, []string{"geometry", "geometry_2"}, false},
		{[]string{"population_total", "population"}, []string{"populati_1", "population"}, true},
		{[]string{"population_total", "population_density", "population_2010"}, []string{"population", "populati_1", "populati_2"}, true},
		{[]string{"Straße", "café", "São Paulo", "Ürümqi"}, []string{"Stra_e", "cafe", "Sao_Paulo", "Urumqi"}, true},
		{[]string{"人口", "", "   ", "__"}, []string{"FIELD_1", "FIELD_2", "FIELD_3", "FIELD_4"}, true},
		{[]string{"2010", "_id", "a b", "a-b", "A_B"}, []string{"F2010", "id", "a_b_1", "a_b_2", "A_B"}, true},
		{[]string{"a_b", "a b"}, []string{"a_b", "a_b_1"}, true},
		{[]string{"Name", "name"}, []string{"Name", "name_1"}, true},
		{[]string{"abcdefghij", "ABCDEFGHIJK", "abcdefghijkl"}, []string{"abcdefghij", "ABCDEFGH_1", "abcdefgh_2"}, true},
		{[]string{"x_1", "x 1", "x.1"}, []string{"x_1", "x_1_1", "x_1_2"}, true},
	} {
		var attrs []mapcommons.Attribute
		for _, n := range tc.in {
			attrs = append(attrs, mapcommons.Attribute{Name: n})
		}
		got, changed := ShortNames(attrs)
		if !reflect.DeepEqual(got, tc.want) || changed != tc.changed {
			t.Errorf("ShortNames(%q) = %q %v, want %q %v", tc.in, got, changed, tc.want, tc.changed)
		}
		seen := map[string]bool{}
		for _, n := range got {
			if !wValidFieldName(n) || seen[strings.ToLower(n)] {
				t.Errorf("ShortNames(%q): %q is not a valid unique name", tc.in, n)
			}
			seen[strings.ToLower(n)] = true
		}
	}
	// Many collisions: still unique, still at most 10 bytes.
	var attrs []mapcommons.Attribute
	for i := range 1000 {
		attrs = append(attrs, mapcommons.Attribute{Name: fmt.Sprintf("a_very_long_attribute_name_%d", i)})
	}
	got, _ := ShortNames(attrs)
	seen := map[string]bool{}
	for _, n := range got {
		if !wValidFieldName(n) || seen[strings.ToLower(n)] {
			t.Fatalf("%q is not a valid unique name", n)
		}
		seen[strings.ToLower(n)] = true
	}
}

func TestWriteFieldsFile(t *testing.T) {
	attrs := wtAttrs("population_total:integer", "population:integer", "café:string", "tab\there:string")
	feats := []mapcommons.Feature{wtF(wkb.AppendPoint(nil, 1, 1), int64(1), int64(2), "x", "y")}
	files, names := wtUnzip(t, wtZip(t, wtMeta("n", attrs, feats), feats))
	if names[len(names)-1] != "n_fields.txt" {
		t.Fatalf("entries %v", names)
	}
	want := "populati_1\tpopulation_total\npopulation\tpopulation\ncafe\tcafé\ntab_here\ttab here\n"
	if got := string(files["n_fields.txt"]); got != want {
		t.Errorf("fields.txt = %q, want %q", got, want)
	}
	gotAttrs, got := wtRead(t, files, "n")
	wtCheck(t, attrs, gotAttrs, feats, got)
	// No file when no name changes.
	_, names = wtUnzip(t, wtZip(t, wtMeta("n", wtAttrs("a:string"), nil), nil))
	for _, n := range names {
		if strings.HasSuffix(n, ".txt") {
			t.Errorf("unexpected %s", n)
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	attrs := append([]mapcommons.Attribute(nil), wtAllAttrs...)
	feats := wtFeats(wkb.AppendPoint(nil, 1, 2), wkb.AppendLineString(nil, []float64{0, 0, 1, 1}))
	m := wtMeta("det", attrs, feats)
	a, b := wtZip(t, m, feats), wtZip(t, m, feats)
	if !bytes.Equal(a, b) {
		t.Error("two runs give different zips")
	}
	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if !f.Modified.Equal(m.Updated) {
			t.Errorf("%s modified %v, want %v", f.Name, f.Modified, m.Updated)
		}
	}
	m.Updated = time.Time{}
	zr, err = zip.NewReader(bytes.NewReader(wtZip(t, m, feats)), int64(len(a)))
	if err == nil && zr.File[0].Modified.Year() != 1980 {
		t.Errorf("zero Updated gives %v", zr.File[0].Modified)
	}
}

func TestWriteLongText(t *testing.T) {
	attrs := wtAttrs("s:string")
	long := strings.Repeat("a", 253) + "é" + "tail" // é straddles byte 254
	feats := []mapcommons.Feature{wtF(wkb.AppendPoint(nil, 0, 0), long), wtF(wkb.AppendPoint(nil, 0, 0), strings.Repeat("b", 254))}
	files, _ := wtUnzip(t, wtZip(t, wtMeta("l", attrs, feats), feats))
	_, got := wtRead(t, files, "l")
	if got[0].values[0] != strings.Repeat("a", 253) || got[1].values[0] != strings.Repeat("b", 254) {
		t.Errorf("read back %v", got)
	}
}

func wtWantCode(t *testing.T, err error, code string, sub string) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != code || !strings.Contains(e.Message, sub) {
		t.Fatalf("error = %v, want %s containing %q", err, code, sub)
	}
}

func TestWriteErrors(t *testing.T) {
	attrs := wtAttrs("s:string")
	pts := make([]mapcommons.Feature, 100)
	for i := range pts {
		pts[i] = wtF(wkb.AppendPoint(nil, float64(i), 0), strings.Repeat("x", i))
	}
	run := func(t *testing.T, m format.Meta, scan format.Scan) error {
		tmp := t.TempDir()
		var buf bytes.Buffer
		err := WriteZip(&buf, m, scan, tmp)
		if err != nil && buf.Len() > 0 {
			t.Errorf("%d bytes written before the error", buf.Len())
		}
		wtNoTemp(t, tmp)
		return err
	}
	t.Run("shp limit", func(t *testing.T) {
		defer func(n int64) { wMaxFileSize = n }(wMaxFileSize)
		wMaxFileSize = headerSize + 50*28
		var bare []mapcommons.Feature
		for _, f := range pts {
			bare = append(bare, wtF(f.Geometry))
		}
		err := run(t, wtMeta("e", nil, nil), wtScan(bare))
		wtWantCode(t, err, mapcommons.ETOOLARGE, "the .shp of the point features")
	})
	t.Run("dbf limit", func(t *testing.T) {
		defer func(n int64) { wMaxFileSize = n }(wMaxFileSize)
		wMaxFileSize = 4000
		err := run(t, wtMeta("e", attrs, nil), wtScan(pts))
		wtWantCode(t, err, mapcommons.ETOOLARGE, "the .dbf of the point features")
	})
	t.Run("record length", func(t *testing.T) {
		var many []mapcommons.Attribute
		var vals []any
		for i := range 300 {
			many = append(many, mapcommons.Attribute{Name: fmt.Sprintf("s%d", i), Type: mapcommons.AttrString})
			vals = append(vals, strings.Repeat("y", 254))
		}
		err := run(t, wtMeta("e", many, nil), wtScan([]mapcommons.Feature{wtF(nil, vals...)}))
		wtWantCode(t, err, mapcommons.ETOOLARGE, "records of 76201 bytes")
	})
	t.Run("scan error", func(t *testing.T) {
		boom := errors.New("boom")
		err := run(t, wtMeta("e", attrs, nil), func(fn func(*mapcommons.Feature) error) error {
			if err := wtScan(pts)(fn); err != nil {
				return err
			}
			return boom
		})
		if err != boom {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("bad wkb", func(t *testing.T) {
		err := run(t, wtMeta("e", attrs, nil), wtScan([]mapcommons.Feature{wtF([]byte{1, 2, 3}, "x")}))
		if err == nil || !strings.Contains(err.Error(), "feature 0") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("non-finite", func(t *testing.T) {
		err := run(t, wtMeta("e", attrs, nil), wtScan([]mapcommons.Feature{wtF(wkb.AppendLineString(nil, []float64{0, 0, math.Inf(1), 1}), "x")}))
		if err == nil || !strings.Contains(err.Error(), "finite") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("bad tmpDir", func(t *testing.T) {
		err := WriteZip(io.Discard, wtMeta("e", attrs, nil), wtScan(pts), "/nonexistent/dir")
		if err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("writer error", func(t *testing.T) {
		tmp := t.TempDir()
		err := WriteZip(wtFailWriter{}, wtMeta("e", attrs, nil), wtScan(pts), tmp)
		if !errors.Is(err, errBoom) {
			t.Fatalf("error = %v", err)
		}
		wtNoTemp(t, tmp)
	})
}

type wtFailWriter struct{}

func (wtFailWriter) Write(p []byte) (int, error) { return 0, errBoom }

// TestWriteMemory: the heap does not grow with the number of features
// (they go to temporary files).
func TestWriteMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	attrs := wtAttrs("id:integer", "x:float", "s:string")
	const n = 20000
	var early, late uint64
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	scan := func(fn func(*mapcommons.Feature) error) error {
		f := mapcommons.Feature{Values: make([]any, 3)}
		line := make([]float64, 200)
		for i := range n {
			for k := range line {
				line[k] = float64(i + k)
			}
			f.Position = int64(i)
			f.Geometry = wkb.AppendLineString(f.Geometry[:0], line)
			f.Values[0], f.Values[1], f.Values[2] = int64(i), float64(i)/3, strings.Repeat("t", i%200)
			if err := fn(&f); err != nil {
				return err
			}
			switch i {
			case n / 10:
				early = heap()
			case n - 1:
				late = heap()
			}
		}
		return nil
	}
	cw := &wtCountWriter{}
	if err := WriteZip(cw, format.Meta{Name: "m", Attributes: attrs}, scan, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap after %d features %d KB, after %d %d KB; zip %d MB", n/10, early>>10, n, late>>10, cw.n>>20)
	if late > early+4<<20 {
		t.Errorf("the heap grew from %d KB to %d KB while writing", early>>10, late>>10)
	}
}

type wtCountWriter struct{ n int64 }

func (w *wtCountWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// TestWriteCoercion: values of another type than their column's are
// converted where that is exact, blank otherwise.
func TestWriteCoercion(t *testing.T) {
	attrs := wtAttrs("i:integer", "f:float", "s:string", "b:boolean", "d:date")
	p := wkb.AppendPoint(nil, 0, 0)
	feats := []mapcommons.Feature{
		wtF(p, 3.0, int64(5), int64(42), "true", time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)),
		wtF(p, " 12 ", "2.5", 1.5, int64(0), nil),
		wtF(p, 2.5, "x", true, "maybe", "2021-13-01"),
		wtF(p, "x", math.Inf(-1), []byte("raw"), 1.0),
	}
	files, _ := wtUnzip(t, wtZip(t, wtMeta("c", attrs, feats), feats))
	_, got := wtRead(t, files, "c")
	want := [][]any{
		{int64(3), 5.0, "42", true, "2020-01-02"},
		{int64(12), 2.5, "1.5", false, ""},
		{nil, nil, "true", nil, "2021-13-01"},
		{nil, nil, "raw", nil, ""},
	}
	for i, f := range got {
		if !reflect.DeepEqual(f.values, want[i]) {
			t.Errorf("feature %d = %#v, want %#v", i, f.values, want[i])
		}
	}
}

// TestWriteDegenerate: lines of fewer than 2 points and rings of fewer than
// 3 corners are left out; a shape left with nothing is a Null record.
func TestWriteDegenerate(t *testing.T) {
	feats := []mapcommons.Feature{
		wtF(wkb.AppendPolygon(nil, [][]float64{{0, 0, 1, 1, 0, 0}})),
		wtF(wkb.AppendMultiPolygon(nil, [][][]float64{{{0, 0, 1, 1}, wtHole}, {wtShellB, {1, 1, 1, 1}}})),
		wtF(wkb.AppendMultiLineString(nil, [][]float64{{5, 5}, {0, 0, 1, 1}})),
		wtF(wkb.AppendLineString(nil, []float64{5, 5})),
		wtF(wkb.AppendCollection(nil, [][]byte{wkb.AppendPoint(nil, math.NaN(), math.NaN()), wkb.AppendPoint(nil, 1, 2)})),
	}
	files, _ := wtUnzip(t, wtZip(t, format.Meta{Name: "d", GeometryMask: 1<<wkb.Polygon | 1<<wkb.LineString | 1<<wkb.Point}, feats))
	for base, want := range map[string][]string{
		"d_polygon": {"", "POLYGON ((20 0, 20 10, 30 10, 30 0, 20 0))"},
		"d_line":    {"LINESTRING (0 0, 1 1)", ""},
		"d_point":   {"POINT (1 2)"},
	} {
		_, got := wtRead(t, files, base)
		var wkts []string
		for _, f := range got {
			s := ""
			if f.has {
				s = wtWKT(f.geom)
			}
			wkts = append(wkts, s)
		}
		if !reflect.DeepEqual(wkts, want) {
			t.Errorf("%s: %q, want %q", base, wkts, want)
		}
	}
}
