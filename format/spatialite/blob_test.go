package spatialite

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
)

// spatialitePoint is POINT(12.453387 41.903282) with SRID 4326 as
// SpatiaLite 5.0.1 itself wrote it (GDAL's ogr2ogr -dsco SPATIALITE=YES).
const spatialitePoint = "0001E610000054E57B4622E828408B074AC09EF3444054E57B4622E828408B074AC09EF344407C0100000054E57B4622E828408B074AC09EF34440FE"

func TestPointMatchesSpatiaLite(t *testing.T) {
	want, _ := hex.DecodeString(spatialitePoint)
	g, srid, err := Decode(want)
	if err != nil || srid != 4326 || g.Type != wkb.Point {
		t.Fatalf("Decode: %v %d %v", g, srid, err)
	}
	got, mbr, ok, err := AppendGeometry(nil, wkb.AppendPoint(nil, g.Coords[0], g.Coords[1]), 4326)
	if err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("AppendGeometry = %X, %v, %v\nwant %X", got, ok, err, want)
	}
	if mbr.MinX != g.Coords[0] || mbr.MaxY != g.Coords[1] {
		t.Errorf("mbr %v", mbr)
	}
}

// TestLayout checks the bytes of a collection against the format by hand.
func TestLayout(t *testing.T) {
	in, _ := wkb.ParseWKT("MULTIPOINT ((1 2), (3 4))")
	got, _, _, err := AppendGeometry(nil, in, 4326)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x00, 0x01, 0xE6, 0x10, 0, 0}
	want = wkb.AppendXY(want, 1, 2)
	want = wkb.AppendXY(want, 3, 4)
	want = append(want, 0x7C, 4, 0, 0, 0, 2, 0, 0, 0)
	want = append(want, 0x69, 1, 0, 0, 0)
	want = wkb.AppendXY(want, 1, 2)
	want = append(want, 0x69, 1, 0, 0, 0)
	want = wkb.AppendXY(want, 3, 4)
	want = append(want, 0xFE)
	if !bytes.Equal(got, want) {
		t.Errorf("got  %X\nwant %X", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"POINT (1 2)", ""},
		{"POINT (-180 -90)", ""},
		{"LINESTRING (0 0, 1 1, 2 0)", ""},
		{"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2))", ""},
		{"POLYGON ((0 0, 10 0, 10 10, 0 0), EMPTY, (2 2, 4 2, 4 4, 2 2))", "POLYGON ((0 0, 10 0, 10 10, 0 0), (2 2, 4 2, 4 4, 2 2))"},
		{"MULTIPOINT ((1 2), (3 4))", ""},
		{"MULTIPOINT (EMPTY, (3 4))", "MULTIPOINT ((3 4))"},
		{"MULTILINESTRING ((0 0, 1 1), (2 2, 3 3, 4 4))", ""},
		{"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.6 5.1, 5.9 5.1, 5.9 5.4, 5.6 5.1)))", ""},
		{"MULTIPOLYGON (EMPTY, ((0 0, 1 0, 1 1, 0 0)))", "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))"},
		{"GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10), POLYGON ((0 0, 1 0, 1 1, 0 0)))", ""},
		{"GEOMETRYCOLLECTION (MULTIPOINT ((1 1), (2 2)), GEOMETRYCOLLECTION (LINESTRING (0 0, 1 1), POINT EMPTY))",
			"GEOMETRYCOLLECTION (POINT (1 1), POINT (2 2), LINESTRING (0 0, 1 1))"},
		{"POINT EMPTY", "-"},
		{"LINESTRING EMPTY", "-"},
		{"POLYGON EMPTY", "-"},
		{"MULTIPOINT EMPTY", "-"},
		{"MULTIPOINT (EMPTY)", "-"},
		{"GEOMETRYCOLLECTION (POINT EMPTY, GEOMETRYCOLLECTION EMPTY)", "-"},
	} {
		in, err := wkb.ParseWKT(c.in)
		if err != nil {
			t.Fatal(err)
		}
		want := c.out
		if want == "" {
			want = c.in
		}
		blob, mbr, ok, err := AppendGeometry([]byte("prefix"), in, 3857)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if want == "-" {
			if ok || string(blob) != "prefix" {
				t.Errorf("%s: ok %v, %X", c.in, ok, blob)
			}
			continue
		}
		if !ok || string(blob[:6]) != "prefix" {
			t.Fatalf("%s: ok %v, %X", c.in, ok, blob)
		}
		g, srid, err := Decode(blob[6:])
		if err != nil || srid != 3857 {
			t.Fatalf("%s: Decode: %v, SRID %d", c.in, err, srid)
		}
		got, _ := wkb.ToWKT(nil, g.AppendWKB(nil))
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", c.in, got, want)
		}
		if b, _ := g.Bounds(); b != mbr || blobMBR(blob[6:]) != mbr {
			t.Errorf("%s: mbr %v, bounds %v, header %v", c.in, mbr, b, blobMBR(blob[6:]))
		}
	}
}

func TestAppendGeometryErrors(t *testing.T) {
	if _, _, ok, err := AppendGeometry(nil, nil, 4326); ok || err != nil {
		t.Errorf("nil: %v %v", ok, err)
	}
	if _, _, _, err := AppendGeometry(nil, []byte{1, 9, 0, 0, 0}, 4326); !errors.Is(err, wkb.ErrInvalid) {
		t.Errorf("bad WKB: %v", err)
	}
}

func TestDecodeBigEndian(t *testing.T) {
	// LINESTRING (1 2, 3 4), SRID 4326, big endian.
	b := []byte{0x00, 0x00, 0, 0, 0x10, 0xE6}
	be := func(v float64) []byte {
		le := wkb.AppendXY(nil, v, 0)[:8]
		return []byte{le[7], le[6], le[5], le[4], le[3], le[2], le[1], le[0]}
	}
	for _, v := range []float64{1, 2, 3, 4} {
		b = append(b, be(v)...)
	}
	b = append(b, 0x7C, 0, 0, 0, 2, 0, 0, 0, 2)
	for _, v := range []float64{1, 2, 3, 4} {
		b = append(b, be(v)...)
	}
	b = append(b, 0xFE)
	g, srid, err := Decode(b)
	if err != nil || srid != 4326 {
		t.Fatal(err, srid)
	}
	if got, _ := wkb.ToWKT(nil, g.AppendWKB(nil)); string(got) != "LINESTRING (1 2, 3 4)" {
		t.Errorf("got %s", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, _, _, _ := AppendGeometry(nil, formattest.MustWKT(t, "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))"), 4326)
	mp, _, _, _ := AppendGeometry(nil, formattest.MustWKT(t, "MULTIPOINT ((1 2))"), 4326)
	cases := map[string][]byte{
		"empty":        nil,
		"short":        good[:20],
		"no start":     append([]byte{1}, good[1:]...),
		"no end":       append(append([]byte(nil), good[:len(good)-1]...), 0),
		"byte order":   append([]byte{0, 7}, good[2:]...),
		"truncated":    append(append([]byte(nil), good[:len(good)-9]...), 0xFE),
		"trailing":     append(append([]byte(nil), good[:len(good)-1]...), 0, 0xFE),
		"class":        append(append(append([]byte(nil), good[:39]...), 99, 0, 0, 0), good[43:]...),
		"3-D class":    append(append(append([]byte(nil), good[:39]...), 0xE9, 3, 0, 0), good[43:]...),
		"entity mark":  append(append(append([]byte(nil), good[:47]...), 0x00), good[48:]...),
		"member class": append(append(append([]byte(nil), mp[:48]...), 2, 0, 0, 0), mp[52:]...),
		"huge count":   append(append(append([]byte(nil), good[:43]...), 0xFF, 0xFF, 0xFF, 0x7F), good[47:]...),
	}
	for name, b := range cases {
		if _, _, err := Decode(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := Decode(good); err != nil {
		t.Errorf("good: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"POINT (1 2)", "POLYGON ((0 0, 1 0, 1 1, 0 0))", "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))", "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))"} {
		b, _ := wkb.ParseWKT(s)
		blob, _, _, _ := AppendGeometry(nil, b, 4326)
		f.Add(blob)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, srid, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same geometry.
		again, _, ok, err := AppendGeometry(nil, g.AppendWKB(nil), srid)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		g2, _, err := Decode(again)
		if err != nil {
			t.Fatal(err)
		}
		w1, _ := wkb.ToWKT(nil, g2.AppendWKB(nil))
		c, _ := clean(g)
		w2, _ := wkb.ToWKT(nil, c.AppendWKB(nil))
		if string(w1) != string(w2) {
			t.Fatalf("%s != %s", w1, w2)
		}
	})
}
