package csv

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

func attrsOf(specs ...string) []mapcommons.Attribute {
	var out []mapcommons.Attribute
	for i, s := range specs {
		name, typ, _ := strings.Cut(s, ":")
		out = append(out, mapcommons.Attribute{ID: int64(i), Name: name, Type: mapcommons.AttrType(typ)})
	}
	return out
}

func writeAll(t *testing.T, attrs []mapcommons.Attribute, points bool, feats []*mapcommons.Feature) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, attrs, points)
	for _, f := range feats {
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriterValues(t *testing.T) {
	attrs := attrsOf("id:integer", "x:float", "s:string", "b:boolean", "d:date", "n:string")
	got := writeAll(t, attrs, true, []*mapcommons.Feature{
		{Values: []any{int64(-7), 1.5, "plain", true, "2020-01-02", nil}, Geometry: point(-122.419416, 37.774929)},
		{Values: []any{int64(0), 3.0, "a,b", false, "", "x"}, Geometry: nil},
		{Values: []any{nil, 1e21, `say "hi"`, nil, nil, " lead"}, Geometry: point(0.1, -0.2)},
		{Values: []any{nil, negZero, "line\nbreak", nil, nil, "trail\t"}, Geometry: wkb.AppendPoint(nil, math.NaN(), math.NaN())},
		{Values: []any{nil, 1e-7, "semi;colon", nil, nil, "cr\r"}, Geometry: point(180, 90)},
		{Values: []any{int64(math.MaxInt64), 123456789012345678.0}, Geometry: point(1, 2)},
	})
	want := "id,x,s,b,d,n,latitude,longitude,WKT\n" +
		"-7,1.5,plain,true,2020-01-02,,37.774929,-122.419416,POINT (-122.419416 37.774929)\n" +
		"0,3.0,\"a,b\",false,,x,,,\n" +
		",1e+21,\"say \"\"hi\"\"\",,,\" lead\",-0.2,0.1,POINT (0.1 -0.2)\n" +
		",-0.0,\"line\nbreak\",,,\"trail\t\",,,POINT EMPTY\n" +
		",1e-07,\"semi;colon\",,,\"cr\r\",90,180,POINT (180 90)\n" +
		"9223372036854775807,123456789012345680.0,,,,,2,1,POINT (1 2)\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriterWKT(t *testing.T) {
	got := writeAll(t, attrsOf("name:string"), false, []*mapcommons.Feature{
		{Values: []any{"a"}, Geometry: point(1, 2)},
		{Values: []any{"b"}, Geometry: wkb.AppendLineString(nil, []float64{0, 0, 1.5, -2})},
		{Values: []any{"c"}, Geometry: nil},
	})
	want := "name,WKT\na,POINT (1 2)\nb,\"LINESTRING (0 0, 1.5 -2)\"\nc,\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// no attributes: the ids come first, GDAL opening no CSV of one column
	got = writeAll(t, nil, false, []*mapcommons.Feature{{ID: 4, Geometry: nil}, {ID: 9, Geometry: point(1, 2)}})
	if want := "id,WKT\n4,\n9,POINT (1 2)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriterHeaderNames(t *testing.T) {
	tests := []struct {
		attrs  []string
		points bool
		want   string
	}{
		{[]string{"a"}, false, "a,WKT\n"},
		{[]string{}, false, "id,WKT\n"},
		{[]string{"wkt"}, false, "wkt,geometry\n"},
		{[]string{"Geometry"}, false, "Geometry,WKT\n"},
		{[]string{"geometry", "WKT"}, false, "geometry,WKT,_geometry\n"},
		{[]string{"geometry", "wkt", "_geometry"}, false, "geometry,wkt,_geometry,_geometry_2\n"},
		{[]string{"a"}, true, "a,latitude,longitude,WKT\n"},
		{[]string{"Wkt"}, true, "Wkt,latitude,longitude\n"},
		{[]string{"LATITUDE"}, true, "LATITUDE,_latitude,_longitude,WKT\n"},
		{[]string{"longitude", "_Latitude"}, true, "longitude,_Latitude,_latitude_2,_longitude_2,WKT\n"},
		{[]string{"a,b", " c", "d\"e"}, true, "\"a,b\",\" c\",\"d\"\"e\",latitude,longitude,WKT\n"},
		{[]string{}, true, "latitude,longitude,WKT\n"},
	}
	for _, tt := range tests {
		got := writeAll(t, attrsOf(tt.attrs...), tt.points, nil)
		if got != tt.want {
			t.Errorf("%q points=%v: header %q, want %q", tt.attrs, tt.points, got, tt.want)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, attrsOf("a:string"), true)
	if err := w.Write(&mapcommons.Feature{Values: []any{"x"}, Geometry: wkb.AppendLineString(nil, []float64{0, 0, 1, 1})}); err == nil {
		t.Error("a line in a points-only dataset: no error")
	}
	if err := w.Write(&mapcommons.Feature{Values: []any{"x", "y"}}); err == nil {
		t.Error("too many values: no error")
	}
	w = NewWriter(&buf, nil, false)
	if err := w.Write(&mapcommons.Feature{Geometry: []byte{1, 2, 3}}); err == nil {
		t.Error("bad WKB: no error")
	}
}

func TestWriterAllocs(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, attrsOf("id:integer", "x:float", "s:string"), true)
	f := &mapcommons.Feature{Values: []any{int64(12345), 1.25, "a, b"}, Geometry: point(1, 2)}
	g := &mapcommons.Feature{Values: []any{int64(12345), 1.25, "a, b"}, Geometry: wkb.AppendLineString(nil, []float64{0, 0, 1, 1})}
	ww := NewWriter(&buf, attrsOf("id:integer", "x:float", "s:string"), false)
	w.Write(f)
	ww.Write(g)
	if n := testing.AllocsPerRun(100, func() { buf.Reset(); w.Write(f) }); n != 0 {
		t.Errorf("points: %v allocations per feature", n)
	}
	if n := testing.AllocsPerRun(100, func() { buf.Reset(); ww.Write(g) }); n > 3 {
		t.Errorf("WKT: %v allocations per feature", n) // wkb.Decode's slices
	}
}

// TestRoundTrip writes features and reads them back.
func TestRoundTrip(t *testing.T) {
	attrs := attrsOf("id:integer", "x:float", "name:string", "when:date", "empty:string")
	values := [][]any{
		{int64(1), 1.5, "plain", "2020-01-02", nil},
		{int64(-9223372036854775808), negZero, "a,b;c\td", "2020-12-31T23:59:59Z", nil},
		{int64(math.MaxInt64), 1e300, `quote "x" and ""`, nil, nil},
		{nil, 5e-324, " spaces ", "", nil},
		{int64(0), 3.0, "multi\nline\rcr", "x", nil},
		{int64(42), nil, "007", "y", nil},
		{int64(7), 0.1, "Ünïcödé €", "z", nil},
	}
	geoms := [][]byte{
		point(-122.419416, 37.774929),
		point(180, -90),
		point(0.1+0.2, 1.0/3),
		point(-180, 90),
		point(5e-324, negZero),
		point(1, 2),
		point(-0.000001, 12.3456789012345678),
	}
	wkts := [][]byte{
		point(1, 2),
		wkb.AppendLineString(nil, []float64{0, 0, 0.1 + 0.2, 1.0 / 3}),
		wkb.AppendPolygon(nil, [][]float64{{0, 0, 10, 0, 10, 10, 0, 0}, {1, 1, 2, 1, 2, 2, 1, 1}}),
		wkb.AppendMultiPoint(nil, []float64{1, 2, 3, 4}),
		wkb.AppendMultiLineString(nil, [][]float64{{0, 0, 1, 1}, {2, 2, 3, 3}}),
		wkb.AppendMultiPolygon(nil, [][][]float64{{{0, 0, 1, 0, 1, 1, 0, 0}}, {{5, 5, 6, 5, 6, 6, 5, 5}}}),
		wkb.AppendCollection(nil, [][]byte{point(1, 2), wkb.AppendLineString(nil, []float64{1, 1, 2, 2})}),
	}
	for _, points := range []bool{true, false} {
		var feats []*mapcommons.Feature
		for i, v := range values {
			g := geoms[i]
			if !points {
				g = wkts[i]
			}
			feats = append(feats, &mapcommons.Feature{Position: int64(i), Values: v, Geometry: g})
		}
		data := writeAll(t, attrs, points, feats)
		gotAttrs, got := mustRead(t, data)
		wantAttrs := attrsOf("id:integer", "x:float", "name:string", "when:string", "empty:string")
		for i := range wantAttrs {
			wantAttrs[i].OriginalName = wantAttrs[i].Name
		}
		if !reflect.DeepEqual(gotAttrs, wantAttrs) {
			t.Errorf("points=%v: attributes %+v", points, gotAttrs)
		}
		if len(got) != len(feats) {
			t.Fatalf("points=%v: %d features", points, len(got))
		}
		for i, f := range got {
			want := append([]any(nil), values[i]...)
			if want[3] == "" {
				want[3] = nil // an empty string and null are one thing in CSV
			}
			if !sameValues(f.Vals, want) {
				t.Errorf("points=%v: feature %d values %#v, want %#v", points, i, f.Vals, want)
			}
			if !bytes.Equal(f.Geom, feats[i].Geometry) {
				t.Errorf("points=%v: feature %d geometry %x, want %x", points, i, f.Geom, feats[i].Geometry)
			}
		}
	}
}

// sameValues compares values exactly, floats by their bits.
func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		fa, ok1 := a[i].(float64)
		fb, ok2 := b[i].(float64)
		if ok1 && ok2 {
			if math.Float64bits(fa) != math.Float64bits(fb) {
				return false
			}
		} else if a[i] != b[i] {
			return false
		}
	}
	return true
}

var negZero = math.Copysign(0, -1)
