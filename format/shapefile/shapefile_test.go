package shapefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
)

// feat is a copy of a feature that outlives the reader's buffers.
type feat struct {
	pos    int64
	values []any
	wkt    string // "" for no geometry
}

// readAll reads every feature of r, stopping at the first error.
func readAll(t testing.TB, r *Reader) ([]feat, error) {
	t.Helper()
	var out []feat
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		if len(f.Values) != len(r.Attributes()) {
			t.Fatalf("feature %d has %d values for %d attributes", f.Position, len(f.Values), len(r.Attributes()))
		}
		c := feat{pos: f.Position, values: append([]any(nil), f.Values...)}
		if f.Geometry != nil {
			w, err := wkb.ToWKT(nil, f.Geometry)
			if err != nil {
				t.Fatalf("feature %d: bad WKB: %v", f.Position, err)
			}
			c.wkt = string(w)
		}
		out = append(out, c)
	}
}

// open opens the files of f with its .shx.
func open(f *tFile, opt Options) (*Reader, error) {
	shp, dbf, shx := f.files()
	return Open(shp, dbf, shx, opt)
}

// readFile opens f and reads all its features.
func readFile(t testing.TB, f *tFile, opt Options) ([]feat, error) {
	t.Helper()
	r, err := open(f, opt)
	if err != nil {
		return nil, err
	}
	return readAll(t, r)
}

// wantInvalid fails unless err is a *mapcommons.Error with code EINVALID
// whose message contains every one of subs.
func wantInvalid(t testing.TB, err error, subs ...string) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
		t.Fatalf("error = %v (%T), want a *mapcommons.Error with code EINVALID", err, err)
	}
	for _, s := range subs {
		if !strings.Contains(e.Message, s) {
			t.Errorf("error message %q does not contain %q", e.Message, s)
		}
	}
}

// okOrInvalid fails unless err is nil, io.EOF or an EINVALID *mapcommons.Error.
func okOrInvalid(t testing.TB, err error) {
	t.Helper()
	var e *mapcommons.Error
	if err != nil && err != io.EOF && (!errors.As(err, &e) || e.Code != mapcommons.EINVALID) {
		t.Fatalf("error = %v (%T), want nil or EINVALID", err, err)
	}
}

// Rings, as flat x,y: cw are outer rings by the shapefile convention, ccw holes.
var (
	sq10   = []float64{0, 0, 0, 10, 10, 10, 10, 0, 0, 0}       // cw
	hole1  = []float64{2, 2, 4, 2, 4, 4, 2, 4, 2, 2}           // ccw
	hole2  = []float64{6, 6, 8, 6, 8, 8, 6, 8, 6, 6}           // ccw
	sqB    = []float64{20, 0, 20, 10, 30, 10, 30, 0, 20, 0}    // cw
	holeB  = []float64{22, 2, 24, 2, 24, 4, 22, 4, 22, 2}      // ccw
	line3  = []float64{0, 0, 1, 1, 2, 0}                       // a polyline
	line2  = []float64{5, 5, 6, 6}                             // a polyline
	mpts   = []float64{1, 2, 3, 4}                             // points
	sq10WK = "(0 0, 0 10, 10 10, 10 0, 0 0)"                   // sq10 as WKT
	hole1W = "(2 2, 4 2, 4 4, 2 4, 2 2)"                       // hole1 as WKT
	hole2W = "(6 6, 8 6, 8 8, 6 8, 6 6)"                       // hole2 as WKT
	sqBW   = "(20 0, 20 10, 30 10, 30 0, 20 0)"                // sqB as WKT
	holeBW = "(22 2, 24 2, 24 4, 22 4, 22 2)"                  // holeB as WKT
	open10 = []float64{0, 0, 0, 10, 10, 10, 10, 0}             // sq10 left open
	degen  = []float64{0, 0, 1, 1, 0, 0}                       // 3 points closed: degenerate
	big    = []float64{0, 0, 0, 100, 100, 100, 100, 0, 0, 0}   // cw
	bigH   = []float64{10, 10, 90, 10, 90, 90, 10, 90, 10, 10} // ccw, inside big
	midS   = []float64{20, 20, 20, 80, 80, 80, 80, 20, 20, 20} // cw, inside bigH
	midH   = []float64{30, 30, 40, 30, 40, 40, 30, 40, 30, 30} // ccw, inside midS
)

func TestShapeTypes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape tShape
		want  string
	}{
		{"OK/Null", tShape{typ: shapeNull}, ""},
		{"OK/Point", pt(shapePoint, 1, 2), "POINT (1 2)"},
		{"OK/PointZ", pt(shapePointZ, 1.5, -2.25), "POINT (1.5 -2.25)"},
		{"OK/PointM", pt(shapePointM, -180, 90), "POINT (-180 90)"},
		{"OK/MultiPoint", parts(shapeMultiPoint, mpts), "MULTIPOINT ((1 2), (3 4))"},
		{"OK/MultiPointZ", parts(shapeMultiPointZ, mpts), "MULTIPOINT ((1 2), (3 4))"},
		{"OK/MultiPointM", parts(shapeMultiPointM, mpts), "MULTIPOINT ((1 2), (3 4))"},
		{"OK/MultiPointEmpty", parts(shapeMultiPoint, []float64{}), ""},
		{"OK/PolyLine", parts(shapePolyLine, line3), "LINESTRING (0 0, 1 1, 2 0)"},
		{"OK/PolyLineZ", parts(shapePolyLineZ, line3), "LINESTRING (0 0, 1 1, 2 0)"},
		{"OK/PolyLineM", parts(shapePolyLineM, line3), "LINESTRING (0 0, 1 1, 2 0)"},
		{"OK/PolyLineParts", parts(shapePolyLine, line3, line2), "MULTILINESTRING ((0 0, 1 1, 2 0), (5 5, 6 6))"},
		{"OK/PolyLineZParts", parts(shapePolyLineZ, line3, line2), "MULTILINESTRING ((0 0, 1 1, 2 0), (5 5, 6 6))"},
		{"OK/PolyLineMParts", parts(shapePolyLineM, line3, line2), "MULTILINESTRING ((0 0, 1 1, 2 0), (5 5, 6 6))"},
		{"OK/PolyLineOnePointPartDropped", parts(shapePolyLine, line3, []float64{9, 9}), "LINESTRING (0 0, 1 1, 2 0)"},
		{"OK/PolyLineEmpty", parts(shapePolyLine), ""},
		{"OK/Polygon", parts(shapePolygon, sq10), "POLYGON (" + sq10WK + ")"},
		{"OK/PolygonZ", parts(shapePolygonZ, sq10, hole1), "POLYGON (" + sq10WK + ", " + hole1W + ")"},
		{"OK/PolygonM", parts(shapePolygonM, sq10, sqB), "MULTIPOLYGON ((" + sq10WK + "), (" + sqBW + "))"},
		{"OK/PolygonEmpty", parts(shapePolygon), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&tFile{typ: tc.shape.typ, shapes: []tShape{tc.shape, tc.shape}}).withIDs()
			got, err := readFile(t, f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("got %d features, want 2", len(got))
			}
			for i, g := range got {
				if g.wkt != tc.want {
					t.Errorf("feature %d = %q, want %q", i, g.wkt, tc.want)
				}
				if g.pos != int64(i) || g.values[0] != int64(i+1) {
					t.Errorf("feature %d: position %d, values %v", i, g.pos, g.values)
				}
			}
		})
	}
}

func TestPolygons(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rings [][]float64
		want  string
	}{
		{"OK/OneShellTwoHoles", [][]float64{sq10, hole1, hole2},
			"POLYGON (" + sq10WK + ", " + hole1W + ", " + hole2W + ")"},
		{"OK/HolesBeforeTheirShell", [][]float64{hole2, sq10, hole1},
			"POLYGON (" + sq10WK + ", " + hole2W + ", " + hole1W + ")"},
		{"OK/TwoShellsEachAHole", [][]float64{sq10, sqB, holeB, hole1},
			"MULTIPOLYGON ((" + sq10WK + ", " + hole1W + "), (" + sqBW + ", " + holeBW + "))"},
		{"OK/SmallestContainingShell", [][]float64{big, bigH, midS, midH},
			"MULTIPOLYGON (((0 0, 0 100, 100 100, 100 0, 0 0), (10 10, 90 10, 90 90, 10 90, 10 10)), " +
				"((20 20, 20 80, 80 80, 80 20, 20 20), (30 30, 40 30, 40 40, 30 40, 30 30)))"},
		{"OK/OpenRingsClosed", [][]float64{open10, {2, 2, 4, 2, 4, 4, 2, 4}},
			"POLYGON (" + sq10WK + ", " + hole1W + ")"},
		{"OK/OrphanHoleReversed", [][]float64{hole1},
			"POLYGON ((2 2, 2 4, 4 4, 4 2, 2 2))"},
		{"OK/HoleOutsideShellBecomesShell", [][]float64{sq10, holeB},
			"MULTIPOLYGON ((" + sq10WK + "), ((22 2, 22 4, 24 4, 24 2, 22 2)))"},
		{"OK/HoleTouchingShell", [][]float64{sq10, {0, 5, 3, 4, 3, 6, 0, 5}},
			"POLYGON (" + sq10WK + ", (0 5, 3 4, 3 6, 0 5))"},
		{"OK/DegenerateRingDropped", [][]float64{sq10, degen, {5, 5, 6, 6}},
			"POLYGON (" + sq10WK + ")"},
		{"OK/OpenTriangleKept", [][]float64{{0, 0, 0, 1, 1, 0}},
			"POLYGON ((0 0, 0 1, 1 0, 0 0))"},
		{"OK/HoleOnShellBoundary", [][]float64{sq10, {0, 0, 10, 0, 10, 10, 0, 10, 0, 0}},
			"POLYGON (" + sq10WK + ", (0 0, 10 0, 10 10, 0 10, 0 0))"},
		{"OK/AllDegenerate", [][]float64{degen, {1, 1, 2, 2}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&tFile{typ: shapePolygon, shapes: []tShape{parts(shapePolygon, tc.rings...)}}).withIDs()
			got, err := readFile(t, f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].wkt != tc.want {
				t.Fatalf("got %+v, want %q", got, tc.want)
			}
		})
	}
}

// TestPolygonBudget checks that a record with very many holes is assembled
// in bounded time: past the budget, holes go to the nearest shell before
// them, which is right for the usual order of rings (each shell followed by
// its holes).
func TestPolygonBudget(t *testing.T) {
	const n = 12000 // n*n bounding-box checks exceed the budget
	var rings [][]float64
	for i := range n {
		x := float64(i * 10)
		rings = append(rings, []float64{x, 0, x, 9, x + 9, 9, x + 9, 0, x, 0},
			[]float64{x + 1, 1, x + 2, 1, x + 2, 2, x + 1, 2, x + 1, 1})
	}
	f := (&tFile{typ: shapePolygon, shapes: []tShape{parts(shapePolygon, rings...)}}).withIDs()
	r, err := open(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	feat, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rings assembled in %v", 2*n, time.Since(start))
	g, err := wkb.Decode(feat.Geometry)
	if err != nil {
		t.Fatal(err)
	}
	if g.Type != wkb.MultiPolygon || len(g.Parts) != n {
		t.Fatalf("got type %d with %d parts, want %d polygons", g.Type, len(g.Parts), n)
	}
	for i, p := range g.Parts {
		if len(p.Rings) != 2 || p.Rings[1][0] != p.Rings[0][0]+1 {
			t.Fatalf("polygon %d = %v, want its shell and its own hole", i, p.Rings)
		}
	}
}

func TestFields(t *testing.T) {
	fields := []tField{
		{"name", 'C', 10, 0},
		{"count", 'N', 6, 0},
		{"ratio", 'N', 10, 3},
		{"wide", 'N', 20, 0},
		{"f", 'F', 8, 2},
		{"ok", 'L', 1, 0},
		{"day", 'D', 10, 0},
		{"memo", 'M', 10, 0},
		{"long", 'C', 300, 0},
	}
	for _, tc := range []struct {
		name string
		row  []string
		want []any
	}{
		{"OK/Values", []string{"Ashe", "42", "3.125", "12345678901234567890", "-1.5", "T", "20240229", "17", "x"},
			[]any{"Ashe", int64(42), 3.125, 12345678901234567890.0, -1.5, true, "2024-02-29", "17", "x"}},
		{"OK/Blanks", []string{"", "", "", "", "", " ", "", "", ""},
			[]any{"", nil, nil, nil, nil, nil, nil, "", ""}},
		{"OK/Stars", []string{"  lead  ", "******", "**********", "*", "********", "?", "00000000", " m ", strings.Repeat("y", 300)},
			[]any{"  lead", nil, nil, nil, nil, nil, nil, "m", strings.Repeat("y", 300)}},
		{"OK/Junk", []string{"a\x00junk", "1.5", "abc", "1e3", "1,5", "x", "20230229", "", "z"},
			[]any{"a", nil, nil, 1000.0, nil, nil, "20230229", "", "z"}},
		{"OK/IntegralFloatInIntegerColumn", []string{"", "12.0", "-0", "-7", "+3", "t", "2024-01-05", "", ""},
			[]any{"", int64(12), -0.0, -7.0, 3.0, true, "2024-01-05", "", ""}},
		{"OK/Booleans", []string{"", "-12", "1", "0", "0", "y", "abc", "", ""},
			[]any{"", int64(-12), 1.0, 0.0, 0.0, true, "abc", "", ""}},
		{"OK/BooleanFalse", []string{"", "1e2", "1", "0", "0", "n", "19991231", "", ""},
			[]any{"", int64(100), 1.0, 0.0, 0.0, false, "1999-12-31", "", ""}},
		{"OK/BooleanF", []string{"", "nan", "inf", "0", "0", "F", "20000230", "", ""},
			[]any{"", nil, nil, 0.0, 0.0, false, "20000230", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 1, 1)}, fields: fields, rows: [][]string{tc.row}}
			r, err := open(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[0].values, tc.want) {
				t.Errorf("values = %#v\nwant     %#v", got[0].values, tc.want)
			}
		})
	}
	t.Run("OK/Attributes", func(t *testing.T) {
		f := &tFile{typ: shapePoint, fields: append(fields, tField{"NAME", 'C', 2, 0}, tField{"geometry", 'C', 2, 0}, tField{"", 'C', 2, 0})}
		r, err := open(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range r.Attributes() {
			got = append(got, a.Name+":"+string(a.Type))
		}
		want := []string{"name:string", "count:integer", "ratio:float", "wide:float", "f:float", "ok:boolean",
			"day:date", "memo:string", "long:string", "NAME_2:string", "geometry_2:string", "column_12:string"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("attributes = %v\nwant %v", got, want)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("Next on an empty file = %v, want io.EOF", err)
		}
	})
}

func TestEncodings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cpg   string
		ldid  byte
		field string // raw field name
		value string // raw field text
		want  []string
	}{
		{"OK/UTF8", "UTF-8", 0, "n\xc3\xa4me", "Z\xc3\xbcrich", []string{"näme", "Zürich"}},
		{"OK/UTF8Invalid", "utf8\n", 0x57, "name", "a\xffb", []string{"name", "a\uFFFDb"}},
		{"OK/UTF8CodePage", "65001", 0, "name", "\xe2\x82\xac", []string{"name", "€"}},
		{"OK/Latin1", "ISO-8859-1", 0, "\xe9t\xe9", "C\xf4te d'Ivoire \x80", []string{"été", "Côte d'Ivoire \u0080"}},
		{"OK/Latin1Short", "88591", 0, "x", "\xfc", []string{"x", "ü"}},
		{"OK/Latin1Dash", "8859-1", 0, "x", "\xfc", []string{"x", "ü"}},
		{"OK/Latin1Name", " latin1 ", 0, "x", "\xfc", []string{"x", "ü"}},
		{"OK/Latin1NoDash", "ISO88591", 0, "x", "\xfc", []string{"x", "ü"}},
		{"OK/Windows1252", "1252", 0, "x", "\x80\xe9", []string{"x", "€é"}},
		{"OK/CP1252", "CP1252", 0, "x", "\x80", []string{"x", "€"}},
		{"OK/WINDOWS1252", "windows-1252", 0, "x", "\x80", []string{"x", "€"}},
		{"OK/ANSI1252", "ANSI 1252", 0, "x", "\x80", []string{"x", "€"}},
		{"OK/CPGOverridesLDID", "UTF-8", 0x57, "x", "\xc3\xa9", []string{"x", "é"}},
		{"OK/LDID57", "", 0x57, "x", "\xc3\xa9", []string{"x", "Ã©"}},
		{"OK/LDID03", "", 0x03, "x", "\x80", []string{"x", "€"}},
		{"OK/NoCPGValidUTF8", "", 0, "\xc3\xa9", "\xc3\xa9t\xc3\xa9", []string{"é", "été"}},
		{"OK/NoCPGFallback", "", 0, "\xe9", "\xe9t\xe9 \x80", []string{"é", "été €"}},
		{"OK/UnknownLDIDFallback", "", 0x26, "x", "\xe9", []string{"x", "é"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 1, 1)}, ldid: tc.ldid,
				fields: []tField{{tc.field, 'C', 20, 0}, {"d", 'X', 20, 0}}, rows: [][]string{{tc.value, tc.value}}}
			r, err := open(f, Options{CPG: tc.cpg})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if name := r.Attributes()[0].Name; name != tc.want[0] {
				t.Errorf("field name = %q, want %q", name, tc.want[0])
			}
			if got[0].values[0] != tc.want[1] || got[0].values[1] != tc.want[1] {
				t.Errorf("values = %q, want %q", got[0].values, tc.want[1])
			}
		})
	}
	for _, cpg := range []string{"KOI8-R", "big5", "UTF-16"} {
		t.Run("ErrUnknownCPG/"+cpg, func(t *testing.T) {
			f := (&tFile{typ: shapePoint}).withIDs()
			_, err := open(f, Options{CPG: cpg})
			wantInvalid(t, err, ".cpg", cpg)
		})
	}
}

func TestDeletedRecords(t *testing.T) {
	f := (&tFile{typ: shapePoint, shapes: []tShape{
		pt(shapePoint, 1, 1), pt(shapePoint, 2, 2), {typ: shapeNull}, pt(shapePoint, 4, 4), pt(shapePoint, 5, 5),
	}, deleted: map[int]bool{0: true, 1: true, 3: true}}).withIDs()
	got, err := readFile(t, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []feat{{0, []any{int64(3)}, ""}, {1, []any{int64(5)}, "POINT (5 5)"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestFiles(t *testing.T) {
	three := []tShape{pt(shapePoint, 1, 1), {typ: shapeNull}, pt(shapePoint, 3, 3)}
	t.Run("OK/TrailingCRLF", func(t *testing.T) {
		f := (&tFile{typ: shapePolyLine, shapes: []tShape{parts(shapePolyLine, line3, line2)}, trailer: []byte("\r\n")}).withIDs()
		got, err := readFile(t, f, Options{})
		if err != nil || len(got) != 1 || !strings.HasPrefix(got[0].wkt, "MULTILINESTRING") {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("OK/TrailingJunk7", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three, trailer: []byte("1234567")}).withIDs()
		if got, err := readFile(t, f, Options{}); err != nil || len(got) != 3 {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("OK/NoSHX", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, _ := f.files()
		r, err := Open(shp, dbf, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, r)
		if err != nil || len(got) != 3 || got[1].wkt != "" || got[2].wkt != "POINT (3 3)" {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("OK/HeaderFileLengthWrong", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, _ := f.files()
		b, _ := io.ReadAll(shp)
		binary.BigEndian.PutUint32(b[24:], 50)
		r, err := Open(bytes.NewReader(b), dbf, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := readAll(t, r); err != nil || len(got) != 3 {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("OK/DBFWithoutTerminator", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, _ := f.shpAndShx()
		dbf := f.dbf()
		end := 32 + 32*len(f.fields)
		dbf = append(dbf[:end:end], dbf[end+1:]...) // drop the 0x0D
		binary.LittleEndian.PutUint16(dbf[8:], uint16(end))
		r, err := Open(bytes.NewReader(shp), bytes.NewReader(dbf), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, r)
		if err != nil || len(got) != 3 || got[2].values[0] != int64(3) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("OK/MixedRecordTypes", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 1, 1), parts(shapePolyLine, line2)}}).withIDs()
		got, err := readFile(t, f, Options{})
		if err != nil || len(got) != 2 || got[1].wkt != "LINESTRING (5 5, 6 6)" {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("OK/ReadersNotAtStart", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, shx := f.files()
		shp.Seek(10, io.SeekStart)
		dbf.Seek(0, io.SeekEnd)
		shx.Seek(3, io.SeekStart)
		r, err := Open(shp, dbf, shx, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := readAll(t, r); err != nil || len(got) != 3 {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("ErrMoreSHPRecords", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		f.rows = f.rows[:2]
		shp, dbf, _ := f.files()
		r, err := Open(shp, dbf, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, r)
		wantInvalid(t, err, "the .shp has 3 records, the .dbf 2")
		if len(got) != 2 {
			t.Errorf("got %d features before the error, want 2", len(got))
		}
		if _, err2 := r.Next(); err2 != err {
			t.Errorf("Next after an error = %v, want the same error", err2)
		}
	})
	t.Run("ErrMoreDBFRecords", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		f.rows = append(f.rows, []string{"4"})
		shp, dbf, _ := f.files()
		r, err := Open(shp, dbf, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(t, r)
		wantInvalid(t, err, "the .shp has 3 records, the .dbf 4")
	})
	t.Run("ErrSHXCount", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, shx := f.files()
		b, _ := io.ReadAll(shx)
		_, err := Open(shp, dbf, bytes.NewReader(b[:len(b)-8]), Options{})
		wantInvalid(t, err, "the .shx has 2 records, the .dbf 3")
	})
	t.Run("ErrSHXNotIndex", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, _ := f.files()
		_, err := Open(shp, dbf, bytes.NewReader(make([]byte, 124)), Options{})
		wantInvalid(t, err, ".shx", "file code")
	})
	t.Run("ErrSHXShort", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, _ := f.files()
		_, err := Open(shp, dbf, bytes.NewReader(make([]byte, 10)), Options{})
		wantInvalid(t, err, ".shx", "too short")
	})
	t.Run("ErrSHXType", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: three}).withIDs()
		shp, dbf, _ := f.files()
		_, _, shx := (&tFile{typ: shapePolygon, shapes: three}).withIDs().files()
		_, err := Open(shp, dbf, shx, Options{})
		wantInvalid(t, err, "the .shx has shape type 5 (Polygon), the .shp 1 (Point)")
	})
	t.Run("ErrNilFile", func(t *testing.T) {
		_, err := Open(nil, bytes.NewReader(nil), nil, Options{})
		wantInvalid(t, err, ".shp", ".dbf")
	})
}

// rawPoly returns the content of a Polygon record with the given counts,
// part starts and points, whatever their consistency.
func rawPoly(typ int32, np, n uint32, starts []uint32, xy []float64) []byte {
	var w tBuf
	w.i32(typ)
	w.box(xy)
	w.i32(int32(np))
	w.i32(int32(n))
	for _, s := range starts {
		w.i32(int32(s))
	}
	for _, v := range xy {
		w.f64(v)
	}
	return w.b
}

func TestOpenErrors(t *testing.T) {
	good := (&tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 1, 1)}}).withIDs()
	goodSHP, _ := good.shpAndShx()
	goodDBF := good.dbf()
	mod := func(b []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for _, tc := range []struct {
		name     string
		shp, dbf []byte
		opt      Options
		want     []string
	}{
		{"ErrSHPEmpty", nil, goodDBF, Options{}, []string{".shp", "too short"}},
		{"ErrSHPShort", goodSHP[:60], goodDBF, Options{}, []string{".shp", "too short"}},
		{"ErrSHPFileCode", mod(goodSHP, func(b []byte) []byte { b[3] = 1; return b }), goodDBF, Options{}, []string{".shp", "file code"}},
		{"ErrSHPMultiPatch", mod(goodSHP, func(b []byte) []byte { le32(b[32:], 31); return b }), goodDBF, Options{}, []string{".shp", "31 (MultiPatch)", "not supported"}},
		{"ErrSHPUnknownType", mod(goodSHP, func(b []byte) []byte { le32(b[32:], 7); return b }), goodDBF, Options{}, []string{".shp", "shape type 7"}},
		{"ErrDBFEmpty", goodSHP, nil, Options{}, []string{".dbf", "too short"}},
		{"ErrDBFHeaderLenShort", goodSHP, mod(goodDBF, func(b []byte) []byte { b[8], b[9] = 20, 0; return b }), Options{}, []string{".dbf header length 20"}},
		{"ErrDBFHeaderLenBeyondEnd", goodSHP, mod(goodDBF, func(b []byte) []byte { b[8], b[9] = 0xff, 0xff; return b }), Options{}, []string{".dbf header length 65535", "beyond"}},
		{"ErrDBFHeaderLenCutsFields", goodSHP, mod(goodDBF, func(b []byte) []byte { b[8] = 40; return b }), Options{}, []string{".dbf header length 40", "0x0D"}},
		{"ErrDBFRecordLenShort", goodSHP, mod(goodDBF, func(b []byte) []byte { b[10], b[11] = 3, 0; return b }), Options{}, []string{".dbf record length 3"}},
		{"ErrDBFRecordLenZero", goodSHP, mod(goodDBF, func(b []byte) []byte { b[10], b[11] = 0, 0; return b }), Options{}, []string{".dbf record length 0"}},
		{"ErrDBFTruncated", goodSHP, goodDBF[:len(goodDBF)-3], Options{}, []string{".dbf is truncated", "declares 1 records"}},
		{"ErrDBFHugeCount", goodSHP, mod(goodDBF, func(b []byte) []byte { le32(b[4:], -1); return b }), Options{}, []string{".dbf is truncated", "4294967295"}},
		{"ErrPRJProjected", goodSHP, goodDBF, Options{PRJ: prjUTM}, []string{`projected coordinate system "WGS_1984_UTM_Zone_33N" is not supported yet (reprojection comes later); upload data in geographic lon/lat`}},
		{"ErrPRJGarbage", goodSHP, goodDBF, Options{PRJ: "+proj=longlat +datum=WGS84"}, []string{".prj", "WKT"}},
		{"ErrCPG", goodSHP, goodDBF, Options{CPG: "EBCDIC"}, []string{`"EBCDIC"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(tc.shp), bytes.NewReader(tc.dbf), nil, tc.opt)
			wantInvalid(t, err, tc.want...)
		})
	}
	t.Run("ErrTooManyFields", func(t *testing.T) {
		f := &tFile{typ: shapePoint}
		for i := range mapcommons.MaxAttributes + 1 {
			f.fields = append(f.fields, tField{"f" + string(rune('a'+i%26)), 'C', 1, 0})
		}
		_, err := open(f, Options{})
		wantInvalid(t, err, ".dbf", "more than 1000 fields")
	})
	t.Run("OK/MaxFields", func(t *testing.T) {
		f := &tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 0, 0)}, rows: [][]string{{"x"}}}
		for range mapcommons.MaxAttributes {
			f.fields = append(f.fields, tField{"f", 'C', 1, 0})
		}
		got, err := readFile(t, f, Options{})
		if err != nil || len(got) != 1 || got[0].values[0] != "x" {
			t.Fatalf("got %v, %v", got, err)
		}
	})
}

func TestRecordErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name  string
		shape tShape
		want  []string
	}{
		{"ErrMultiPatch", tShape{raw: rawPoly(shapeMultiPatch, 1, 4, []uint32{0}, sq10[:8])}, []string{"record 2", "31 (MultiPatch)"}},
		{"ErrUnknownType", tShape{raw: []byte{99, 0, 0, 0}}, []string{"record 2", "shape type 99"}},
		{"ErrNaNPoint", pt(shapePoint, nan, 1), []string{"record 2", "finite"}},
		{"ErrInfPolygon", parts(shapePolygon, []float64{0, 0, 0, inf, 1, 1, 0, 0}), []string{"record 2", "finite"}},
		{"ErrNaNMultiPoint", parts(shapeMultiPoint, []float64{0, 0, 1, nan}), []string{"record 2", "finite"}},
		{"ErrHugePointCount", tShape{raw: rawPoly(shapePolygon, 1, 0x7fffffff, []uint32{0}, sq10)}, []string{"record 2", "corrupt"}},
		{"ErrHugePartCount", tShape{raw: rawPoly(shapePolygon, 0xffffffff, 5, []uint32{0}, sq10)}, []string{"record 2", "corrupt"}},
		{"ErrHugeMultiPointCount", tShape{raw: func() []byte { b := rawPoly(shapeMultiPoint, 0xfffffff0, 0, nil, nil); return b[:40] }()}, []string{"record 2", "corrupt"}},
		{"ErrFirstPartNotZero", tShape{raw: rawPoly(shapePolygon, 1, 5, []uint32{1}, sq10)}, []string{"record 2", "first part"}},
		{"ErrPartsNotIncreasing", tShape{raw: rawPoly(shapePolyLine, 3, 5, []uint32{0, 3, 3}, sq10)}, []string{"record 2", "part 3"}},
		{"ErrPartBeyondPoints", tShape{raw: rawPoly(shapePolyLine, 2, 5, []uint32{0, 5}, sq10)}, []string{"record 2", "part 2 starts at point 5 of 5"}},
		{"ErrPointsNoParts", tShape{raw: rawPoly(shapePolyLine, 0, 5, nil, sq10)}, []string{"record 2", "no parts"}},
		{"ErrPointTooShort", tShape{raw: []byte{1, 0, 0, 0, 0, 0, 0, 0}}, []string{"record 2", "corrupt", "needs 20 bytes"}},
		{"ErrPolygonTooShort", tShape{raw: rawPoly(shapePolygon, 1, 5, []uint32{0}, nil)[:30]}, []string{"record 2", "corrupt"}},
		{"ErrNoShapeType", tShape{raw: []byte{}}, []string{"record 2", "too short"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&tFile{typ: shapePolygon, shapes: []tShape{{typ: shapeNull}, tc.shape, {typ: shapeNull}}}).withIDs()
			r, err := open(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, r)
			wantInvalid(t, err, tc.want...)
			if len(got) != 1 {
				t.Errorf("got %d features before the error, want 1", len(got))
			}
		})
	}
	t.Run("ErrRecordBeyondEnd", func(t *testing.T) {
		f := (&tFile{typ: shapePoint, shapes: []tShape{pt(shapePoint, 1, 1), pt(shapePoint, 2, 2)}}).withIDs()
		shp, dbf, _ := f.files()
		b, _ := io.ReadAll(shp)
		be32(b[headerSize+28+4:], 0x7fffffff) // the second record's content length
		r, err := Open(bytes.NewReader(b), dbf, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(t, r)
		wantInvalid(t, err, "record 2", "truncated")
	})
}

// TestHostileCounts checks that huge declared counts and lengths fail
// without allocating for them.
func TestHostileCounts(t *testing.T) {
	cases := map[string]func() (shp, dbf []byte){
		"ErrPoints": func() ([]byte, []byte) {
			f := (&tFile{typ: shapePolygon, shapes: []tShape{{raw: rawPoly(shapePolygon, 1, 0xffffffff, []uint32{0}, sq10)}}}).withIDs()
			s, _ := f.shpAndShx()
			return s, f.dbf()
		},
		"ErrContentLength": func() ([]byte, []byte) {
			f := (&tFile{typ: shapePolygon, shapes: []tShape{parts(shapePolygon, sq10)}}).withIDs()
			s, _ := f.shpAndShx()
			be32(s[headerSize+4:], 0x7fffffff)
			return s, f.dbf()
		},
		"ErrRecordCount": func() ([]byte, []byte) {
			f := (&tFile{typ: shapePolygon, shapes: []tShape{parts(shapePolygon, sq10)}}).withIDs()
			s, _ := f.shpAndShx()
			d := f.dbf()
			le32(d[4:], 0x7fffffff)
			return s, d
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			shp, dbf := mk()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r, err := Open(bytes.NewReader(shp), bytes.NewReader(dbf), nil, Options{})
			if err == nil {
				_, err = readAll(t, r)
			}
			runtime.ReadMemStats(&after)
			wantInvalid(t, err)
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("allocated %d bytes for a hostile file of %d", n, len(shp)+len(dbf))
			}
		})
	}
}

// smallFile is a small valid shapefile with several shape types, fields and
// a deleted record, for the truncation tests and as a fuzz seed.
func smallFile() *tFile {
	return &tFile{
		typ: shapePolygon,
		shapes: []tShape{
			parts(shapePolygon, sq10, hole1, hole2),
			{typ: shapeNull},
			parts(shapePolygonZ, sq10, sqB, holeB),
			parts(shapePolygonM, open10),
			pt(shapePointZ, 1, 2),
			parts(shapeMultiPointM, mpts),
			parts(shapePolyLineZ, line3, line2),
		},
		fields: []tField{{"name", 'C', 8, 0}, {"n", 'N', 4, 0}, {"x", 'F', 6, 2}, {"ok", 'L', 1, 0}, {"day", 'D', 8, 0}},
		rows: [][]string{
			{"one", "1", "1.5", "T", "20200101"}, {"two", "2", "", "F", ""}, {"three", "3", "**", "?", "2020"},
			{"four", "4", "4.25", "Y", "20201231"}, {"f\xe9ve", "5", "-5", "n", "20200230"}, {"six", "", "6", "", ""},
			{"seven", "7", "7.125", "t", "19700101"},
		},
		deleted: map[int]bool{5: true},
		ldid:    0x57,
		trailer: []byte("\r\n"),
	}
}

func TestTruncated(t *testing.T) {
	f := smallFile()
	shp, shx := f.shpAndShx()
	dbf := f.dbf()
	full, err := readFile(t, f, Options{})
	if err != nil || len(full) != 6 {
		t.Fatalf("the full file: %d features, %v", len(full), err)
	}
	try := func(t *testing.T, shp, dbf, shx []byte) {
		var x io.ReadSeeker
		if shx != nil {
			x = bytes.NewReader(shx)
		}
		r, err := Open(bytes.NewReader(shp), bytes.NewReader(dbf), x, Options{})
		if err == nil {
			_, err = readAll(t, r)
		}
		okOrInvalid(t, err)
	}
	t.Run("ErrTruncatedSHP", func(t *testing.T) {
		for cut := range len(shp) {
			try(t, shp[:cut], dbf, nil)
		}
	})
	t.Run("ErrTruncatedDBF", func(t *testing.T) {
		for cut := range len(dbf) {
			try(t, shp, dbf[:cut], nil)
		}
	})
	t.Run("ErrTruncatedSHX", func(t *testing.T) {
		for cut := range len(shx) {
			try(t, shp, dbf, shx[:cut])
		}
	})
}

// TestAllocs checks that Next allocates nothing per record beyond the
// values it returns.
func TestAllocs(t *testing.T) {
	f := &tFile{typ: shapePolygon, fields: []tField{{"n", 'N', 8, 0}, {"x", 'N', 12, 4}, {"ok", 'L', 1, 0}}}
	for i := range 500 {
		f.shapes = append(f.shapes, parts(shapePolygon, sq10, hole1, hole2), parts(shapePolygon, sq10, sqB, holeB))
		f.rows = append(f.rows, []string{"12", "3.25", "T"}, []string{"13", "4.5", ""})
		_ = i
	}
	r, err := open(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(400, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	// Small integers and booleans are boxed without allocating: at most one
	// allocation, the float64.
	t.Logf("%.2f allocations per record", allocs)
	if allocs > 1 {
		t.Errorf("Next allocates %.1f times per record, want at most 1", allocs)
	}
}

func BenchmarkNext(b *testing.B) {
	f := &tFile{typ: shapePolygon, fields: []tField{{"name", 'C', 12, 0}, {"n", 'N', 8, 0}, {"x", 'N', 12, 4}}}
	for i := range 1000 {
		f.shapes = append(f.shapes, parts(shapePolygon, sq10, hole1, hole2))
		f.rows = append(f.rows, []string{"county", strconv.Itoa(i), "3.25"})
	}
	shp, shx := f.shpAndShx()
	dbf := f.dbf()
	b.SetBytes(int64(len(shp) + len(dbf)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Open(bytes.NewReader(shp), bytes.NewReader(dbf), bytes.NewReader(shx), Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

var errBoom = errors.New("boom")

// failingReader fails every read at or past offset fail, and every seek
// when seekErr is set.
type failingReader struct {
	*bytes.Reader
	fail    int64
	seekErr bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	pos, _ := r.Reader.Seek(0, io.SeekCurrent)
	if pos >= r.fail {
		return 0, errBoom
	}
	if room := r.fail - pos; int64(len(p)) > room {
		p = p[:room]
	}
	return r.Reader.Read(p)
}

func (r *failingReader) Seek(off int64, whence int) (int64, error) {
	if r.seekErr {
		return 0, errBoom
	}
	return r.Reader.Seek(off, whence)
}

// TestIOErrors checks that errors of the readers come back as they are.
func TestIOErrors(t *testing.T) {
	f := smallFile()
	shp, shx := f.shpAndShx()
	dbf := f.dbf()
	try := func(shpR, dbfR, shxR io.ReadSeeker) error {
		r, err := Open(shpR, dbfR, shxR, Options{})
		if err == nil {
			_, err = readAll(t, r)
		}
		return err
	}
	// The bytes of each file that are read: all of the .shp, the .dbf but its
	// end-of-file mark, the header of the .shx.
	read := []int64{int64(len(shp)), int64(len(dbf) - 1), headerSize}
	for i, file := range [][]byte{shp, dbf, shx} {
		name := []string{"shp", "dbf", "shx"}[i]
		t.Run("ErrRead/"+name, func(t *testing.T) {
			for cut := range read[i] {
				rs := []io.ReadSeeker{bytes.NewReader(shp), bytes.NewReader(dbf), bytes.NewReader(shx)}
				rs[i] = &failingReader{Reader: bytes.NewReader(file), fail: cut}
				if err := try(rs[0], rs[1], rs[2]); !errors.Is(err, errBoom) {
					t.Fatalf("cut at %d: error %v, want %v", cut, err, errBoom)
				}
			}
		})
		t.Run("ErrSeek/"+name, func(t *testing.T) {
			rs := []io.ReadSeeker{bytes.NewReader(shp), bytes.NewReader(dbf), bytes.NewReader(shx)}
			rs[i] = &failingReader{Reader: bytes.NewReader(file), fail: 1 << 30, seekErr: true}
			if err := try(rs[0], rs[1], rs[2]); !errors.Is(err, errBoom) {
				t.Fatalf("error %v, want %v", err, errBoom)
			}
		})
	}
}
