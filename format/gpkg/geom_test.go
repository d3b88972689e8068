package gpkg

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
)

// gdalPoint is POINT (12.453387 41.903282) in EPSG:4326 as GDAL 3.6 wrote it
// (ogr2ogr -f GPKG): no envelope, little endian.
const gdalPoint = "47500001E6100000010100000054E57B4622E828408B074AC09EF34440"

func TestPointMatchesGDAL(t *testing.T) {
	want, _ := hex.DecodeString(gdalPoint)
	h, g, err := Decode(want)
	if err != nil || h.SRSID != 4326 || h.Envelope != nil || h.Empty || g.Type != wkb.Point {
		t.Fatalf("Decode: %+v %v %v", h, g, err)
	}
	got, env, empty, err := AppendGeometry(nil, wkb.AppendPoint(nil, g.Coords[0], g.Coords[1]), 4326)
	if err != nil || empty || !bytes.Equal(got, want) {
		t.Fatalf("AppendGeometry = %X, %v, %v\nwant %X", got, empty, err, want)
	}
	if env.MinX != g.Coords[0] || env.MaxY != g.Coords[1] {
		t.Errorf("env %v", env)
	}
}

// gdalEmpty is how GDAL 3.6 writes POINT EMPTY, LINESTRING EMPTY and
// MULTIPOINT EMPTY in EPSG:4326: the empty flag, no envelope.
var gdalEmpty = map[string]string{
	"POINT EMPTY":      "47500011E61000000101000000000000000000F87F000000000000F87F",
	"LINESTRING EMPTY": "47500011E6100000010200000000000000",
	"MULTIPOINT EMPTY": "47500011E6100000010400000000000000",
}

func TestEmptyMatchesGDAL(t *testing.T) {
	for s, want := range gdalEmpty {
		got, _, empty, err := AppendGeometry(nil, formattest.MustWKT(t, s), 4326)
		if err != nil || !empty || hex.EncodeToString(got) != strings.ToLower(want) {
			t.Errorf("%s: %X, %v, %v; want %s", s, got, empty, err, want)
		}
	}
}

func TestLayout(t *testing.T) {
	in, _ := wkb.ParseWKT("LINESTRING (1 2, 3 -4)")
	got, env, empty, err := AppendGeometry(nil, in, 4326)
	if err != nil || empty {
		t.Fatal(err, empty)
	}
	want := []byte{'G', 'P', 0, 0x03, 0xE6, 0x10, 0, 0}
	for _, v := range []float64{1, 3, -4, 2} { // min x, max x, min y, max y
		want = binary.LittleEndian.AppendUint64(want, math.Float64bits(v))
	}
	want = append(want, in...)
	if !bytes.Equal(got, want) {
		t.Errorf("got  %X\nwant %X", got, want)
	}
	if env != (wkb.Rect{MinX: 1, MinY: -4, MaxX: 3, MaxY: 2}) {
		t.Errorf("env %v", env)
	}
	if wkbType(got) != wkb.LineString {
		t.Errorf("wkbType %d", wkbType(got))
	}
}

func TestEmpty(t *testing.T) {
	for _, s := range []string{"POINT EMPTY", "LINESTRING EMPTY", "POLYGON EMPTY", "MULTIPOINT EMPTY", "MULTIPOINT (EMPTY)", "GEOMETRYCOLLECTION EMPTY"} {
		in, _ := wkb.ParseWKT(s)
		got, _, empty, err := AppendGeometry(nil, in, 4326)
		if err != nil || !empty {
			t.Fatalf("%s: %v %v", s, empty, err)
		}
		w1, _ := wkb.ToWKT(nil, got[8:])
		if w2, _ := wkb.ToWKT(nil, in); got[3] != 0x11 || string(w1) != string(w2) {
			t.Errorf("%s: %X", s, got)
		}
		h, g, err := Decode(got)
		if err != nil || !h.Empty || h.Envelope != nil || !g.IsEmpty() {
			t.Errorf("%s: %+v %v", s, h, err)
		}
		if wkbType(got) != uint32(in[1]) {
			t.Errorf("%s: wkbType %d", s, wkbType(got))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{
		"POINT (1 2)",
		"LINESTRING (0 0, 1 1, 2 0)",
		"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2))",
		"MULTIPOINT ((1 2), EMPTY, (3 4))",
		"MULTILINESTRING ((0 0, 1 1), (2 2, 3 3, 4 4))",
		"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))",
		"GEOMETRYCOLLECTION (POINT (4 6), GEOMETRYCOLLECTION (LINESTRING (4 6, 7 10)))",
	} {
		in, _ := wkb.ParseWKT(s)
		got, env, empty, err := AppendGeometry([]byte("x"), in, 3857)
		if err != nil || empty || got[0] != 'x' {
			t.Fatalf("%s: %v %v", s, empty, err)
		}
		h, g, err := Decode(got[1:])
		if err != nil || h.SRSID != 3857 {
			t.Fatalf("%s: %v %+v", s, err, h)
		}
		if w, _ := wkb.ToWKT(nil, g.AppendWKB(nil)); string(w) != s {
			t.Errorf("got %s, want %s", w, s)
		}
		b, _ := g.Bounds()
		if env != b || (g.Type != wkb.Point && (h.Envelope == nil || *h.Envelope != b)) {
			t.Errorf("%s: env %v, header %+v, bounds %v", s, env, h, b)
		}
	}
}

func TestDecodeForms(t *testing.T) {
	// Big-endian header with an xyz envelope around big-endian WKB.
	b := []byte{'G', 'P', 0, 2 << 1, 0, 0, 0x10, 0xE6}
	for _, v := range []float64{1, 1, 2, 2, 0, 0} {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = append(b, 0, 0, 0, 0, 1)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(1))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(2))
	h, g, err := Decode(b)
	if err != nil || h.SRSID != 4326 || h.Envelope == nil || *h.Envelope != (wkb.Rect{MinX: 1, MinY: 2, MaxX: 1, MaxY: 2}) || g.Coords[1] != 2 {
		t.Errorf("%+v %v %v", h, g, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, _, _, _ := AppendGeometry(nil, formattest.MustWKT(t, "LINESTRING (1 2, 3 4)"), 4326)
	for name, b := range map[string][]byte{
		"empty":    nil,
		"magic":    append([]byte("XP"), good[2:]...),
		"version":  append([]byte{'G', 'P', 1}, good[3:]...),
		"extended": append([]byte{'G', 'P', 0, good[3] | 0x20}, good[4:]...),
		"envelope": append([]byte{'G', 'P', 0, 0x01 | 5<<1}, good[4:]...),
		"short":    good[:20],
		"wkb":      good[:len(good)-3],
	} {
		if _, _, err := Decode(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, _, err := AppendGeometry(nil, []byte{1, 2}, 4326); !errors.Is(err, wkb.ErrInvalid) {
		t.Errorf("bad WKB: %v", err)
	}
}
