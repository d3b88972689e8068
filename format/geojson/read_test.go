package geojson

import (
	"errors"
	"testing"

	"mapcommons/format/wkb"
)

func TestParseGeometry(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"Point","coordinates":[1,2,3]}`:                                            "POINT (1 2)",
		`{"type":"LineString","coordinates":[[1,2],[3,4]]}`:                                 "LINESTRING (1 2, 3 4)",
		`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}`:                      "POLYGON ((0 0, 1 0, 1 1, 0 0))",
		`{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}`:                                 "MULTIPOINT ((1 2), (3 4))",
		`{"type":"MultiLineString","coordinates":[[[1,2],[3,4]]]}`:                          "MULTILINESTRING ((1 2, 3 4))",
		`{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]}`:               "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))",
		`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`: "GEOMETRYCOLLECTION (POINT (1 2))",
		`{"type":"Point","coordinates":[]}`:                                                 "POINT EMPTY",
	} {
		b, err := ParseGeometry([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, _ := wkb.ToWKT(nil, b)
		if string(got) != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if b, err := ParseGeometry([]byte("null")); b != nil || err != nil {
		t.Fatal("null geometry")
	}
	for _, in := range []string{`{"type":"Circle"}`, `{"type":"Point","coordinates":[200,0]}`, `{"type":"Point","coordinates":[1]}`,
		`{"type":"LineString","coordinates":[[1,2]]}`, `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}`,
		`{"type":"Point","coordinates":"x"}`, `[1,2]`, `{`} {
		if _, err := ParseGeometry([]byte(in)); !errors.Is(err, ErrGeometry) {
			t.Errorf("%s: %v, want ErrGeometry", in, err)
		}
	}
}

func FuzzParseGeometry(f *testing.F) {
	f.Add([]byte(`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGeometry(b)
		if err == nil && g != nil {
			if _, err := wkb.Decode(g); err != nil {
				t.Fatalf("%q gave undecodable WKB: %v", b, err)
			}
		}
	})
}

// TestParseGeometryNullPosition: a null in a position is refused, not
// read as 0 (Go's JSON reads a null into a number as nothing), and so is
// a null member of a collection (it was left out).
func TestParseGeometryNullPosition(t *testing.T) {
	for _, in := range []string{
		`{"type":"Point","coordinates":[null,2]}`,
		`{"type":"LineString","coordinates":[[1,2],[3, null ]]}`,
		`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,null],[0,0]]]}`,
		`{"type":"MultiPoint","coordinates":[null]}`,
		`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,null]}]}`,
		`{"type":"GeometryCollection","geometries":[null,{"type":"Point","coordinates":[1,2]}]}`,
	} {
		if b, err := ParseGeometry([]byte(in)); err == nil {
			g, _ := wkb.ToWKT(nil, b)
			t.Errorf("%s: read as %s, want an error", in, g)
		}
	}
}
