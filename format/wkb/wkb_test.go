package wkb

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestWKTRoundTrip(t *testing.T) {
	cases := []struct{ in, out string }{
		{"POINT (1 2)", "POINT (1 2)"},
		{"point(-71.064544 42.28787)", "POINT (-71.064544 42.28787)"},
		{"POINT Z (1 2 3)", "POINT (1 2)"},
		{"POINT (1 2 3)", "POINT (1 2)"},
		{"SRID=4326;POINT(1 2)", "POINT (1 2)"},
		{"POINT EMPTY", "POINT EMPTY"},
		{"LINESTRING (30 10, 10 30, 40 40)", "LINESTRING (30 10, 10 30, 40 40)"},
		{"POLYGON ((35 10, 45 45, 15 40, 10 20, 35 10), (20 30, 35 35, 30 20, 20 30))", "POLYGON ((35 10, 45 45, 15 40, 10 20, 35 10), (20 30, 35 35, 30 20, 20 30))"},
		{"MULTIPOINT ((10 40), (40 30))", "MULTIPOINT ((10 40), (40 30))"},
		{"MULTIPOINT (10 40, 40 30)", "MULTIPOINT ((10 40), (40 30))"},
		{"MULTILINESTRING ((10 10, 20 20), (40 40, 30 30))", "MULTILINESTRING ((10 10, 20 20), (40 40, 30 30))"},
		{"MULTIPOLYGON (((30 20, 45 40, 10 40, 30 20)), ((15 5, 40 10, 10 20, 5 10, 15 5)))", "MULTIPOLYGON (((30 20, 45 40, 10 40, 30 20)), ((15 5, 40 10, 10 20, 5 10, 15 5)))"},
		{"GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10))", "GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10))"},
		{"POINT (1e-7 1.5e10)", "POINT (1e-07 15000000000)"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			b, err := ParseWKT(c.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ToWKT(nil, b)
			if err != nil || string(got) != c.out {
				t.Fatalf("ToWKT = %q, %v; want %q", got, err, c.out)
			}
			again, err := ParseWKT(string(got))
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("second round differs: %v", err)
			}
		})
	}
}

func TestWKTErrors(t *testing.T) {
	for _, in := range []string{"", "POINT", "POINT (1)", "POINT (1 2, 3 4)", "CIRCLE (1 2)", "POINT (1 2) x",
		"LINESTRING (1 2,", "POLYGON ((1 2, 3 4)", "POINT (nan 1)", "SRID=4326 POINT (1 2)",
		strings.Repeat("GEOMETRYCOLLECTION (", 40) + "POINT (1 2)" + strings.Repeat(")", 40)} {
		if _, err := ParseWKT(in); !errors.Is(err, ErrWKT) {
			t.Errorf("ParseWKT(%.40q) = %v, want ErrWKT", in, err)
		}
	}
}

func TestStoredForm(t *testing.T) {
	// POINT(-80.2 35.1) in the form the Python client parses: little endian, type 1, no SRID.
	b := AppendPoint(nil, -80.2, 35.1)
	if got := strings.ToUpper(hex.EncodeToString(b)); got != "0101000000CDCCCCCCCC0C54C0CDCCCCCCCC8C4140" {
		t.Fatalf("point = %s", got)
	}
	// A big-endian EWKB point with an SRID and Z decodes and normalizes to it.
	ewkb, _ := hex.DecodeString("00A0000001000010E6C0540CCCCCCCCCCD40418CCCCCCCCCCD4059000000000000")
	n, err := Normalize(ewkb)
	if err != nil || !bytes.Equal(n, b) {
		t.Fatalf("Normalize(EWKB) = %x, %v", n, err)
	}
	x, y, ok := PointXY(b)
	if !ok || x != -80.2 || y != 35.1 {
		t.Fatalf("PointXY = %v %v %v", x, y, ok)
	}
}

func TestGeoJSON(t *testing.T) {
	cases := map[string]string{
		"POINT (1 2)":                              `{"type":"Point","coordinates":[1,2]}`,
		"POINT EMPTY":                              `{"type":"Point","coordinates":[]}`,
		"LINESTRING (1 2, 3 4.5)":                  `{"type":"LineString","coordinates":[[1,2],[3,4.5]]}`,
		"POLYGON ((0 0, 1 0, 1 1, 0 0))":           `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}`,
		"MULTIPOINT (1 2, 3 4)":                    `{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}`,
		"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))":    `{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]}`,
		"GEOMETRYCOLLECTION (POINT (1 2))":         `{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`,
		"MULTILINESTRING ((1 2, 3 4), (5 6, 7 8))": `{"type":"MultiLineString","coordinates":[[[1,2],[3,4]],[[5,6],[7,8]]]}`,
	}
	for in, want := range cases {
		b, err := ParseWKT(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ToGeoJSON(nil, b)
		if err != nil || string(got) != want {
			t.Errorf("%s: %s, %v; want %s", in, got, err, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: invalid JSON %s", in, got)
		}
	}
	if got, _ := ToGeoJSON(nil, nil); string(got) != "null" {
		t.Fatalf("nil geometry: %s", got)
	}
}

func TestBounds(t *testing.T) {
	b, _ := ParseWKT("GEOMETRYCOLLECTION (POINT (4 -6), LINESTRING (-4 6, 7 10))")
	r, ok, err := BoundsOf(b)
	if err != nil || !ok || r != (Rect{-4, -6, 7, 10}) {
		t.Fatalf("bounds %v %v %v", r, ok, err)
	}
	e, _ := ParseWKT("POINT EMPTY")
	if _, ok, _ := BoundsOf(e); ok {
		t.Fatal("empty point has bounds")
	}
}

func TestDecodeErrors(t *testing.T) {
	good := AppendPolygon(nil, [][]float64{{0, 0, 1, 0, 1, 1, 0, 0}})
	for i := 0; i < len(good); i++ {
		if _, err := Decode(good[:i]); !errors.Is(err, ErrInvalid) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	if _, err := Decode(append(good, 0)); !errors.Is(err, ErrInvalid) {
		t.Fatal("trailing byte accepted")
	}
	huge := []byte{1, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}
	if _, err := Decode(huge); !errors.Is(err, ErrInvalid) {
		t.Fatal("huge count accepted")
	}
	bad := AppendMultiPoint(nil, []float64{1, 2})
	bad[10] = 2 // member type LineString inside a MultiPoint
	if _, err := Decode(bad); !errors.Is(err, ErrInvalid) {
		t.Fatal("wrong member type accepted")
	}
	if _, err := Normalize(AppendPoint(nil, math.Inf(1), 0)); !errors.Is(err, ErrInvalid) {
		t.Fatal("infinite coordinate accepted")
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"POINT (1 2)", "POLYGON ((0 0, 1 0, 1 1, 0 0))", "GEOMETRYCOLLECTION (POINT (1 2), MULTIPOINT (1 2))"} {
		b, _ := ParseWKT(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Decode(b)
		if err != nil {
			return
		}
		js := g.AppendGeoJSON(nil)
		if g.finite() && !json.Valid(js) {
			t.Fatalf("invalid GeoJSON %s", js)
		}
		w := g.AppendWKT(nil)
		if g.finite() {
			back, err := ParseWKT(string(w))
			if err != nil {
				t.Fatalf("own WKT %q does not parse: %v", w, err)
			}
			if w2, _ := ToWKT(nil, back); !bytes.Equal(w2, w) {
				t.Fatalf("WKT round trip: %q became %q", w, w2)
			}
		}
	})
}

func FuzzParseWKT(f *testing.F) {
	for _, s := range []string{"POINT (1 2)", "MULTIPOINT (1 2, 3 4)", "SRID=4326;LINESTRING Z (1 2 3, 4 5 6)", "GEOMETRYCOLLECTION EMPTY"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseWKT(s)
		if err != nil {
			return
		}
		if _, err := Decode(b); err != nil {
			t.Fatalf("ParseWKT(%q) gave undecodable WKB: %v", s, err)
		}
	})
}

// TestClampLonLat: overshoots up to LonLatTolerance land on the edge,
// larger ones (and NaN) are refused, values in range are kept.
func TestClampLonLat(t *testing.T) {
	for _, c := range []struct {
		in, want float64
		ok       bool
	}{
		{180, 180, true}, {-180, -180, true}, {12.5, 12.5, true},
		{180.00000000000006, 180, true}, {-180 - 1e-10, -180, true},
		{180 + 2e-9, 0, false}, {-180.001, 0, false}, {math.NaN(), 0, false},
	} {
		got, ok := ClampLon(c.in)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("ClampLon(%v) = %v, %v", c.in, got, ok)
		}
	}
	if v, ok := ClampLat(90 + 1e-12); !ok || v != 90 {
		t.Errorf("ClampLat(90+1e-12) = %v, %v", v, ok)
	}
	line := AppendLineString(nil, []float64{170, 10, 180.00000000000006, 10.5})
	b, _, _ := BoundsOf(line)
	out, ok, err := ClampLonLatWKB(nil, line, b)
	if g, _ := Decode(out); err != nil || !ok || g.Coords[2] != 180 || g.Coords[3] != 10.5 {
		t.Errorf("ClampLonLatWKB: %v %v %v", g.Coords, ok, err)
	}
	far := AppendLineString(nil, []float64{170, 10, 180.5, 10.5})
	b, _, _ = BoundsOf(far)
	if _, ok, _ := ClampLonLatWKB(nil, far, b); ok {
		t.Error("ClampLonLatWKB took 180.5")
	}
}
