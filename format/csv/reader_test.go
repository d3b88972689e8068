package csv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

type feat struct {
	Pos  int64
	Vals []any
	Geom []byte
}

// readAll opens data and reads every feature, copying each.
func readAll(data string) ([]mapcommons.Attribute, []feat, error) {
	r, err := Open(strings.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	attrs := r.Attributes()
	var out []feat
	for {
		f, err := r.Next()
		if err == io.EOF {
			return attrs, out, nil
		} else if err != nil {
			return attrs, out, err
		}
		if len(f.Values) != len(attrs) {
			return attrs, out, fmt.Errorf("feature %d: %d values for %d attributes", f.Position, len(f.Values), len(attrs))
		}
		out = append(out, feat{f.Position, append([]any(nil), f.Values...), bytes.Clone(f.Geometry)})
	}
}

func mustRead(t *testing.T, data string) ([]mapcommons.Attribute, []feat) {
	t.Helper()
	attrs, feats, err := readAll(data)
	if err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	return attrs, feats
}

// wantInvalid checks that err is an EINVALID *mapcommons.Error whose message
// starts with want.
func wantInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
		t.Fatalf("error %v (%T), want EINVALID %q", err, err, want)
	}
	if !strings.HasPrefix(e.Message, want) {
		t.Fatalf("message\n  %q\nwant prefix\n  %q", e.Message, want)
	}
}

func names(attrs []mapcommons.Attribute) []string {
	out := []string{}
	for _, a := range attrs {
		out = append(out, a.Name)
	}
	return out
}

func point(x, y float64) []byte { return wkb.AppendPoint(nil, x, y) }

func TestCoordinateColumns(t *testing.T) {
	tests := []struct {
		data  string
		geom  []byte
		attrs []string
	}{
		{"latitude,longitude\n1,2\n", point(2, 1), []string{}},
		{"lat,lon\n1,2\n", point(2, 1), []string{}},
		{"y,x\n1,2\n", point(2, 1), []string{}},
		{"lat,lng\n1,2\n", point(2, 1), []string{}},
		{"long,lat\n2,1\n", point(2, 1), []string{}},
		{" LATITUDE ,\tLongitude \n1,2\n", point(2, 1), []string{}},
		// priorities
		{"lat,latitude,lon,longitude\n9,1,9,2\n", point(2, 1), []string{"lat", "lon"}},
		{"y,lat,x,lon\n9,1,9,2\n", point(2, 1), []string{"y", "x"}},
		{"x,long,lng,lon,y\n9,9,9,2,1\n", point(2, 1), []string{"x", "long", "lng"}},
		{"x,long,lng,y\n9,9,2,1\n", point(2, 1), []string{"x", "long"}},
		{"x,long,y\n9,2,1\n", point(2, 1), []string{"x"}},
		{"id,lon,lat,n,x\n1,2,1,3,4\n", point(2, 1), []string{"id", "n", "x"}},
		// WKT columns
		{"name,wkt\na,POINT(2 1)\n", point(2, 1), []string{"name"}},
		{"the_geom,name\nPOINT (2 1),a\n", point(2, 1), []string{"name"}},
		{"geometry,wkt\nPOINT(5 5),POINT(2 1)\n", point(2, 1), []string{"geometry_2"}},
		{"the_geom,geometry\nPOINT(5 5),POINT(2 1)\n", point(2, 1), []string{"the_geom"}},
		{" WKT \nPOINT(2 1)\n", point(2, 1), []string{}},
		{"wkt\nSRID=4326;POINT(2 1)\n", point(2, 1), []string{}},
		{"wkt\nsrid=4326;POINT Z (2 1 7)\n", point(2, 1), []string{}},
		// a lat/lon pair wins over a WKT column; a lone one does not
		{"wkt,lat,lon\nPOINT(5 5),1,2\n", point(2, 1), []string{"wkt"}},
		{"lat,wkt\n7,POINT(2 1)\n", point(2, 1), []string{"lat"}},
		{"x,geometry\n7,POINT(2 1)\n", point(2, 1), []string{"x"}},
		// the WKT copy of the points a Writer adds, last after the pair: dropped
		{"name,latitude,longitude,WKT\na,1,2,POINT (2 1)\n", point(2, 1), []string{"name"}},
		{"latitude,longitude,wkt\n1,2,\n", point(2, 1), []string{}},
		{"name,latitude,longitude,WKT,n\na,1,2,POINT (2 1),3\n", point(2, 1), []string{"name", "WKT", "n"}},
		{"latitude,WKT,longitude\n1,POINT (2 1),2\n", point(2, 1), []string{"WKT"}},
		// hex EWKB as PostGIS exports it (SRID 4326)
		{"the_geom\n0101000020E61000000000000000000040000000000000F03F\n", point(2, 1), []string{}},
		{"the_geom\n01010000000000000000000040000000000000F03F\n", point(2, 1), []string{}},
	}
	for _, tt := range tests {
		attrs, feats := mustRead(t, tt.data)
		if got := names(attrs); !reflect.DeepEqual(got, tt.attrs) {
			t.Errorf("%q: attributes %q, want %q", tt.data, got, tt.attrs)
		}
		if len(feats) != 1 || !bytes.Equal(feats[0].Geom, tt.geom) {
			t.Errorf("%q: features %v, want one with %v", tt.data, feats, tt.geom)
		}
	}
}

func TestWKTGeometries(t *testing.T) {
	data := "id,wkt\n" +
		"1,POINT(-122.5 37.75)\n" +
		"2,\"LINESTRING(0 0, 10 10, 20 5)\"\n" +
		"3,\"POLYGON((0 0, 10 0, 10 10, 0 0), (1 1, 2 1, 2 2, 1 1))\"\n" +
		"4,\"MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))\"\n" +
		"5,\"GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(1 1, 2 2))\"\n" +
		"6,\"MULTIPOINT((1 2), (3 4))\"\n"
	want := [][]byte{
		point(-122.5, 37.75),
		wkb.AppendLineString(nil, []float64{0, 0, 10, 10, 20, 5}),
		wkb.AppendPolygon(nil, [][]float64{{0, 0, 10, 0, 10, 10, 0, 0}, {1, 1, 2, 1, 2, 2, 1, 1}}),
		wkb.AppendMultiPolygon(nil, [][][]float64{{{0, 0, 1, 0, 1, 1, 0, 0}}, {{5, 5, 6, 5, 6, 6, 5, 5}}}),
		wkb.AppendCollection(nil, [][]byte{point(1, 2), wkb.AppendLineString(nil, []float64{1, 1, 2, 2})}),
		wkb.AppendMultiPoint(nil, []float64{1, 2, 3, 4}),
	}
	attrs, feats := mustRead(t, data)
	if len(attrs) != 1 || attrs[0].Name != "id" || attrs[0].Type != mapcommons.AttrInteger {
		t.Fatalf("attributes %+v", attrs)
	}
	if len(feats) != len(want) {
		t.Fatalf("%d features", len(feats))
	}
	for i, f := range feats {
		if !bytes.Equal(f.Geom, want[i]) {
			t.Errorf("feature %d: geometry %x, want %x", i, f.Geom, want[i])
		}
		if f.Pos != int64(i) || f.Vals[0] != int64(i+1) {
			t.Errorf("feature %d: %+v", i, f)
		}
	}
}

func TestEncodings(t *testing.T) {
	tests := []struct {
		name, data string
		attr       string
		val        any
	}{
		{"utf8", "name,lat,lon\nCafé,1,2\n", "name", "Café"},
		{"bom", "\xEF\xBB\xBFname,lat,lon\nCafé,1,2\n", "name", "Café"},
		{"bom-1252", "\xEF\xBB\xBFname,lat,lon\nCaf\xE9,1,2\n", "name", "Café"},
		{"cp1252", "name,lat,lon\nCaf\xE9,1,2\n", "name", "Café"},
		{"cp1252-high", "name,lat,lon\n\x80 \x93q\x94 \x9F \x81,1,2\n", "name", "€ “q” Ÿ \u0081"},
		{"cp1252-header", "nom\xE9,lat,lon\nx,1,2\n", "nomé", "x"},
		{"cp1252-late", "name,lat,lon\n" + strings.Repeat("abc,1,2\n", 20000) + "Caf\xE9,1,2\n", "name", "abc"},
		{"crlf", "name,lat,lon\r\nx,1,2\r\n", "name", "x"},
		{"cr", "name,lat,lon\rx,1,2\r", "name", "x"},
		{"no-final-newline", "name,lat,lon\nx,1,2", "name", "x"},
		{"semicolon", "name;lat;lon\nx,y;1;2\n", "name", "x,y"},
		{"tab", "name\tlat\tlon\nx;y,z\t1\t2\n", "name", "x;y,z"},
		{"semicolon-decimal-comma", "name;lat;lon\nx;48,85;2,35\n", "name", "x"},
		{"quoted-comma-header", "\"a,b,c\";lat;lon\nx;1;2\n", "a,b,c", "x"},
		{"tie-is-comma", "a;b,lat,lon\nx,1,2\n", "a;b", "x"},
	}
	for _, tt := range tests {
		attrs, feats, err := readAll(tt.data)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(attrs) != 1 || attrs[0].Name != tt.attr || len(feats) == 0 || feats[0].Vals[0] != tt.val {
			t.Errorf("%s: attributes %q, first feature %+v; want %q = %q", tt.name, names(attrs), feats[0], tt.attr, tt.val)
		}
	}
	_, feats := mustRead(t, "name;lat;lon\nx;48,85;-2,35\n")
	if !bytes.Equal(feats[0].Geom, point(-2.35, 48.85)) {
		t.Errorf("decimal comma: %v", feats[0].Geom)
	}
	_, feats = mustRead(t, "name,lat,lon\nCaf\xE9,1,2\nB\xFCro,3,4\n")
	if feats[1].Vals[0] != "Büro" {
		t.Errorf("cp1252: %q", feats[1].Vals[0])
	}
}

func TestQuoting(t *testing.T) {
	data := "name,lat,lon,note\n" +
		"\"a, b\",1,2,\"line one\nline two\"\n" +
		"\"say \"\"hi\"\"\",1,2,\"crlf\r\ninside\"\n" +
		"12\" pipe,1,2,x\n" + // a bare quote in an unquoted field
		"\"He said \"hi\" there\",1,2,y\n" + // undoubled quotes in a quoted field
		"\"\",1,2,\"\"\n"
	attrs, feats := mustRead(t, data)
	if got := names(attrs); !reflect.DeepEqual(got, []string{"name", "note"}) {
		t.Fatalf("attributes %q", got)
	}
	want := [][]any{
		{"a, b", "line one\nline two"},
		{`say "hi"`, "crlf\ninside"},
		{`12" pipe`, "x"},
		{`He said "hi" there`, "y"},
		{nil, nil},
	}
	for i, f := range feats {
		if !reflect.DeepEqual(f.Vals, want[i]) {
			t.Errorf("row %d: %q, want %q", i+1, f.Vals, want[i])
		}
	}
}

func TestRows(t *testing.T) {
	// short rows, blank lines, blank rows, trailing delimiters
	data := "\n\nname,n,lat,lon,extra\n" +
		"a,1,1,2\n" +
		"\n" +
		"b,2,3,4,e\n" +
		"\r\n" +
		",,,\n" +
		"  ,\t, ,\n" +
		"c,,5,6,,\n" +
		"d, 7 ,7,8,,  ,\n"
	attrs, feats := mustRead(t, data)
	if got := names(attrs); !reflect.DeepEqual(got, []string{"name", "n", "extra"}) {
		t.Fatalf("attributes %q", got)
	}
	if attrs[1].Type != mapcommons.AttrInteger {
		t.Errorf("n is %s", attrs[1].Type)
	}
	want := []feat{
		{0, []any{"a", int64(1), nil}, point(2, 1)},
		{1, []any{"b", int64(2), "e"}, point(4, 3)},
		{2, []any{"c", nil, nil}, point(6, 5)},
		{3, []any{"d", int64(7), nil}, point(8, 7)},
	}
	if !reflect.DeepEqual(feats, want) {
		t.Errorf("features\n%v\nwant\n%v", feats, want)
	}

	_, feats = mustRead(t, "name,lat,lon\n")
	if len(feats) != 0 {
		t.Errorf("header only: %v", feats)
	}
}

func TestTypes(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		typ    mapcommons.AttrType
		want   []any
	}{
		{"int", []string{"1", "-2", "0", "+3", "", "-0", "9223372036854775807", "-9223372036854775808"}, mapcommons.AttrInteger,
			[]any{int64(1), int64(-2), int64(0), int64(3), nil, int64(0), int64(math.MaxInt64), int64(math.MinInt64)}},
		{"int-spaces", []string{" 12", "13 ", "  "}, mapcommons.AttrInteger, []any{int64(12), int64(13), nil}},
		{"leading-zero", []string{"007", "1"}, mapcommons.AttrString, []any{"007", "1"}},
		{"zip", []string{"02134", "10001"}, mapcommons.AttrString, []any{"02134", "10001"}},
		{"leading-zero-float", []string{"00.5", "1.5"}, mapcommons.AttrString, []any{"00.5", "1.5"}},
		{"float", []string{"1.5", "-2", "3e2", "-1.5E-3", ".5", "5.", "+0.25", "0.0"}, mapcommons.AttrFloat,
			[]any{1.5, -2.0, 300.0, -0.0015, 0.5, 5.0, 0.25, 0.0}},
		{"big-int", []string{"9223372036854775808", "1"}, mapcommons.AttrFloat, []any{9223372036854775808.0, 1.0}},
		{"huge-int", []string{"123456789012345678901234567890"}, mapcommons.AttrFloat, []any{1.2345678901234568e29}},
		{"precise", []string{"0.1", "123456.7890123456789", "1e-400"}, mapcommons.AttrFloat, []any{0.1, 123456.7890123456789, 0.0}},
		{"overflow", []string{"1e400"}, mapcommons.AttrString, []any{"1e400"}},
		{"nan", []string{"NaN", "1"}, mapcommons.AttrString, []any{"NaN", "1"}},
		{"inf", []string{"Inf"}, mapcommons.AttrString, []any{"Inf"}},
		{"hex", []string{"0x1p3"}, mapcommons.AttrString, []any{"0x1p3"}},
		{"underscore", []string{"1_000"}, mapcommons.AttrString, []any{"1_000"}},
		{"dot", []string{"."}, mapcommons.AttrString, []any{"."}},
		{"exp-only", []string{"1e"}, mapcommons.AttrString, []any{"1e"}},
		{"date", []string{"2020-01-02", "2020-12-31T10:00:00Z"}, mapcommons.AttrString, []any{"2020-01-02", "2020-12-31T10:00:00Z"}},
		{"empty", []string{"", ""}, mapcommons.AttrString, []any{nil, nil}},
		{"string-spaces", []string{" a ", "  ", "b"}, mapcommons.AttrString, []any{" a ", "  ", "b"}},
		{"mixed", []string{"1", "x"}, mapcommons.AttrString, []any{"1", "x"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		b.WriteString("v,lat,lon\n")
		for _, v := range tt.values {
			fmt.Fprintf(&b, "\"%s\",1,2\n", v)
		}
		attrs, feats, err := readAll(b.String())
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if attrs[0].Type != tt.typ {
			t.Errorf("%s: type %s, want %s", tt.name, attrs[0].Type, tt.typ)
		}
		if len(feats) != len(tt.want) {
			t.Errorf("%s: %d features", tt.name, len(feats))
			continue
		}
		for i, f := range feats {
			if !reflect.DeepEqual(f.Vals[0], tt.want[i]) {
				t.Errorf("%s: value %d = %#v, want %#v", tt.name, i, f.Vals[0], tt.want[i])
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	big := strings.Repeat("x", maxField+1)
	field := strings.Repeat("y", maxField-10)
	tests := []struct{ name, data, want string }{
		{"empty", "", "the file is empty"},
		{"blank", "\n\r\n\n", "the file is empty"},
		{"utf16", "\xFF\xFEn\x00a\x00m\x00e\x00", "the file is UTF-16 text"},
		{"no-coords", "name,value\na,1\n", "no coordinate columns: looked for latitude/lat/y and longitude/lon/lng/long/x, or a WKT column wkt/geometry/the_geom"},
		{"lat-only", "name,latitude\na,1\n", "header (line 1): a latitude column but no longitude column"},
		{"lon-only", "name,lng\na,1\n", "header (line 1): a longitude column but no latitude column"},
		{"not-number", "name,lat,lon\na,1,2\nb,3,4\nc,5,6\nd,7,8\ne,abc,2\n", `row 5 (line 6): latitude "abc" is not a number`},
		{"lon-not-number", "name,lat,lon\na,1,2\nb,1,2x\n", `row 2 (line 3): longitude "2x" is not a number`},
		{"nan", "lat,lon\nNaN,1\n", `row 1 (line 2): latitude "NaN" is not a number`},
		{"lat-range", "lat,lon\n1,2\n90.0001,2\n", `row 2 (line 3): latitude "90.0001" is out of range [-90, 90]`},
		{"lon-range", "lat,lon\n1,-180.5\n", `row 1 (line 2): longitude "-180.5" is out of range [-180, 180]`},
		{"lat-empty", "name,lat,lon\na,,2\n", "row 1 (line 2): latitude is empty"},
		{"short-row", "name,lat,lon\na,1\n", "row 1 (line 2): longitude is empty"},
		{"after-multiline", "name,lat,lon\n\"one\ntwo\nthree\",1,2\n\nb,x,2\n", `row 2 (line 6): latitude "x" is not a number`},
		{"in-multiline-row", "name,lat,lon\na,1,2\n\"one\ntwo\",y,2\n", `row 2 (line 4): latitude "y" is not a number`},
		{"after-blank-rows", "name,lat,lon\n,,\na,1,2\n \n,\nb,1,\n", "row 2 (line 6): longitude is empty"},
		{"crlf-lines", "name,lat,lon\r\na,1,2\r\n\r\nb,q,2\r\n", `row 2 (line 4): latitude "q" is not a number`},
		{"cr-lines", "name,lat,lon\ra,1,2\rb,q,2\r", `row 2 (line 3): latitude "q" is not a number`},
		{"long-row", "name,lat,lon\na,1,2\nb,1,2,3\n", "row 2 (line 3): 4 cells, but the header has 3 columns"},
		{"long-row-after-blank", "name,lat,lon\na,1,2\nb,1,2,,x\n", "row 2 (line 3): 5 cells, but the header has 3 columns"},
		{"wkt-bad", "wkt\nPOINT(1\n", `row 1 (line 2): geometry "POINT(1" is not valid WKT`},
		{"wkt-empty", "name,wkt\na,\n", "row 1 (line 2): geometry is empty"},
		{"wkt-empty-point", "wkt\nPOINT EMPTY\n", `row 1 (line 2): geometry "POINT EMPTY" is empty`},
		{"wkt-range", "wkt\n\"LINESTRING(0 0, 0 91)\"\n", `row 1 (line 2): geometry "LINESTRING(0 0, 0 91)" has a latitude out of range`},
		{"wkt-lon-range", "wkt\nPOINT(181 0)\n", `row 1 (line 2): geometry "POINT(181 0)" has a longitude out of range`},
		{"wkt-srid", "wkt\nSRID=3857;POINT(1 2)\n", `row 1 (line 2): geometry has SRID "3857"`},
		{"wkt-inf", "wkt\nPOINT(1e400 0)\n", `row 1 (line 2): geometry "POINT(1e400 0)" is not valid WKT`},
		{"ewkb-srid", "the_geom\n0101000020110F00000000000000000040000000000000F03F\n", "row 1 (line 2): geometry has SRID 3857"},
		{"wkb-bad", "the_geom\n0101000000000000\n", "row 1 (line 2): geometry \"0101000000000000\" is not valid WKB"},
		{"field-too-long", "name,lat,lon\na,1,2\n" + big + ",1,2\n", `row 2 (line 3): cell 1 ("name") is longer than 1 MiB`},
		{"quoted-field-too-long", "name,lat,lon,note\na,1,2,x\n\nb,1,2,\"" + big + "\"\n", `row 2 (line 4): cell 4 ("note") is longer than 1 MiB`},
		{"record-too-long", "name,lat,lon\na,1,2\n" + strings.Repeat(field+",", 17) + "\n", "row 2 (line 3): longer than 16 MiB"},
		{"multiline-record-too-long", "name,lat,lon\na,1,2\n" + strings.Repeat("\""+strings.Repeat("z\n", maxField/2-10)+"\",", 17) + "\n", "row 2 (line 3): longer than 16 MiB"},
		{"header-too-long", strings.Repeat(field+",", 17) + "\n", "header (line 1): longer than 16 MiB"},
		{"too-many-columns", strings.Repeat("a,", 1003) + "lat,lon\n", "header (line 1): more than 1003 columns"},
		{"too-many-attributes", strings.Repeat("a,", 1001) + "wkt\n", "too many attribute columns (1001, at most 1000)"},
		{"too-many-cells", "name,lat,lon\na,1,2\n" + strings.Repeat(",", 1003) + "\n", "row 2 (line 3): more than 1003 cells"},
		{"unclosed-quote", "name,lat,lon\na,1,2\n\"b,1,2\nc,3,4\n", "row 2 (line 3): the quoted field opened on line 3 is never closed"},
		{"unclosed-quote-late-field", "name,lat,lon\na,1,2\nb,1,\"2\nc,3,4\n", "row 2 (line 3): the quoted field opened on line 3 is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(tt.data)
			wantInvalid(t, err, tt.want)
		})
	}
}

// TestWireContract is the RB csv_upload case of the wire contract (section
// 1.1): header name,latitude,longitude and 20 rows give 20 features.
func TestWireContract(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,latitude,longitude\n")
	for i := range 20 {
		fmt.Fprintf(&b, "\"Sculpture %d, park\",%.6f,%.6f\n", i+1, 38.88+float64(i)/100, -77.02-float64(i)/100)
	}
	attrs, feats := mustRead(t, b.String())
	if len(attrs) != 1 || attrs[0].Name != "name" || attrs[0].Type != mapcommons.AttrString || attrs[0].ID != 0 {
		t.Fatalf("attributes %+v", attrs)
	}
	if len(feats) != 20 {
		t.Fatalf("%d features", len(feats))
	}
	x, y, ok := wkb.PointXY(feats[19].Geom)
	if !ok || x != -77.21 || y != 39.07 || feats[19].Vals[0] != "Sculpture 20, park" || feats[19].Pos != 19 {
		t.Errorf("last feature %+v (%v %v)", feats[19], x, y)
	}
}

func TestAttributes(t *testing.T) {
	attrs, _ := mustRead(t, " name ,,Name,geometry,lat,lon,n\na,b,c,d,1,2,3\n")
	want := []mapcommons.Attribute{
		{ID: 0, Name: "name", OriginalName: "name", Type: mapcommons.AttrString},
		{ID: 1, Name: "column_2", Type: mapcommons.AttrString},
		{ID: 2, Name: "Name_2", OriginalName: "Name", Type: mapcommons.AttrString},
		{ID: 3, Name: "geometry_2", OriginalName: "geometry", Type: mapcommons.AttrString},
		{ID: 4, Name: "n", OriginalName: "n", Type: mapcommons.AttrInteger},
	}
	if !reflect.DeepEqual(attrs, want) {
		t.Errorf("attributes\n%+v\nwant\n%+v", attrs, want)
	}
}

func TestFeatureSource(t *testing.T) {
	var src mapcommons.FeatureSource
	r, err := Open(strings.NewReader("lat,lon\n1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	src = r
	if _, err := src.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := src.Next(); err != io.EOF {
			t.Fatalf("got %v, want EOF", err)
		}
	}
}

// errSeeker fails its reads after n bytes.
type errSeeker struct {
	r *strings.Reader
	n int64
}

var errDisk = errors.New("disk on fire")

func (e *errSeeker) Read(p []byte) (int, error) {
	pos, _ := e.r.Seek(0, io.SeekCurrent)
	if pos >= e.n {
		return 0, errDisk
	}
	if int64(len(p)) > e.n-pos {
		p = p[:e.n-pos]
	}
	return e.r.Read(p)
}

func (e *errSeeker) Seek(off int64, whence int) (int64, error) { return e.r.Seek(off, whence) }

func TestIOError(t *testing.T) {
	data := "name,lat,lon\n" + strings.Repeat("a,1,2\n", 100000)
	for _, n := range []int64{0, 5, 100, 300000} {
		_, err := Open(&errSeeker{strings.NewReader(data), n})
		if !errors.Is(err, errDisk) || mapcommons.ErrorCode(err) != mapcommons.EINTERNAL {
			t.Errorf("after %d bytes: %v", n, err)
		}
	}
}

// TestChangedInput checks that pass 2 notices a file that changed after
// pass 1 instead of yielding unchecked data.
func TestChangedInput(t *testing.T) {
	buf := []byte("lat,lon\n" + strings.Repeat("1,2\n", 100000))
	r, err := Open(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	copy(buf[len(buf)-4:], "x,2\n") // beyond what Open has buffered
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
	}
	wantInvalid(t, err, `row 100000 (line 100001): latitude "x" is not a number`)
}
