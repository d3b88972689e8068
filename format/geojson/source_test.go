package geojson

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/internal/formattest"
)

// sfeat is a feature read back: its values and WKT.
type sfeat struct {
	vals []any
	wkt  string
}

func readSource(src string) (*Reader, []sfeat, error) {
	r, err := Open(strings.NewReader(src))
	if err != nil {
		return nil, nil, err
	}
	var out []sfeat
	err = formattest.Each(r, func(f *mapcommons.Feature, wkt string) error {
		out = append(out, sfeat{vals: append(make([]any, 0, len(f.Values)), f.Values...), wkt: wkt})
		return nil
	})
	return r, out, err
}

func checkFeats(t *testing.T, got, want []sfeat) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d features, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].vals, want[i].vals) {
			t.Errorf("feature %d: values %#v, want %#v", i, got[i].vals, want[i].vals)
		}
		if got[i].wkt != want[i].wkt {
			t.Errorf("feature %d: geometry %q, want %q", i, got[i].wkt, want[i].wkt)
		}
	}
}

const mixed = `{"type": "FeatureCollection",
 "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}},
 "features": [
  {"type": "Feature", "properties": {"name": "A", "i": 1, "f": 1, "mix": 1, "b": true, "n": null,
     "obj": { "x" : [1, 2] }, "arr": [1, "a"], "s": "", "big": 9223372036854775808, "esc": "tab\there \u00e9"},
   "geometry": {"type": "Point", "coordinates": [1, 2]}},
  {"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, "type": "Feature",
   "properties": {"name": "B", "i": -2, "f": 2.5, "mix": "x", "b": false, "new": 1e400, "geometry": "g"}},
  {"type": "Feature", "geometry": null, "properties": null},
  {"type": "Feature", "properties": {"i": null, "f": 3, "mix": 1.50}, "id": 7, "bbox": [0, 0, 1, 1]}
 ],
 "bbox": [0, 0, 1, 1]}`

func TestSourceMixed(t *testing.T) {
	r, got, err := readSource(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if s := formattest.Schema(r.Attributes()); s != "name:string i:integer f:float mix:string b:boolean n:string obj:string arr:string s:string big:float esc:string new:string geometry_2:string" {
		t.Errorf("schema %s", s)
	}
	if a := r.Attributes()[12]; a.OriginalName != "geometry" || a.ID != 12 {
		t.Errorf("attribute %+v", a)
	}
	checkFeats(t, got, []sfeat{
		{[]any{"A", int64(1), 1.0, "1", true, nil, `{"x":[1,2]}`, `[1,"a"]`, "", 9223372036854775808.0, "tab\there é", nil, nil}, "POINT (1 2)"},
		{[]any{"B", int64(-2), 2.5, "x", false, nil, nil, nil, nil, nil, nil, "1e400", "g"}, "LINESTRING (0 0, 1 1)"},
		{make([]any, 13), ""},
		{[]any{nil, nil, 3.0, "1.50", nil, nil, nil, nil, nil, nil, nil, nil, nil}, ""},
	})
}

func TestSourceForms(t *testing.T) {
	for _, tc := range []struct {
		name, in, schema string
		want             []sfeat
	}{
		{"type last", `{"features":[{"properties":{"a":1},"geometry":{"type":"Point","coordinates":[3,4]}}],"type":"FeatureCollection"}`,
			"a:integer", []sfeat{{[]any{int64(1)}, "POINT (3 4)"}}},
		{"no type", `{"features":[]}`, "", nil},
		{"empty collection", `{"type":"FeatureCollection","features":[]}`, "", nil},
		{"single feature", `{"properties":{"a":1,"b":"x"},"geometry":{"type":"Point","coordinates":[3,4]},"type":"Feature","id":"f1"}`,
			"a:integer b:string", []sfeat{{[]any{int64(1), "x"}, "POINT (3 4)"}}},
		{"single feature without geometry", `{"type":"Feature","properties":{"ok":true}}`, "ok:boolean", []sfeat{{[]any{true}, ""}}},
		{"single feature null geometry", `{"type":"Feature","geometry":null,"properties":null}`, "", []sfeat{{[]any{}, ""}}},
		{"bare geometry", `{"coordinates":[[0,0],[1,1]],"type":"LineString"}`, "", []sfeat{{[]any{}, "LINESTRING (0 0, 1 1)"}}},
		{"bare collection", `{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`, "",
			[]sfeat{{[]any{}, "GEOMETRYCOLLECTION (POINT (1 2))"}}},
		{"bare polygon", `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]],"crs":{"type":"EPSG","properties":{"code":4326}}}`, "",
			[]sfeat{{[]any{}, "POLYGON ((0 0, 1 0, 1 1, 0 0))"}}},
		{"array of features", `[{"type":"Feature","properties":{"a":1.5},"geometry":null},{"type":"Feature","properties":{"a":2}}]`,
			"a:float", []sfeat{{[]any{1.5}, ""}, {[]any{2.0}, ""}}},
		{"bom", "\xEF\xBB\xBF" + `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"x":"y"},"geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}}]}`,
			"x:string", []sfeat{{[]any{"y"}, "MULTIPOINT ((1 2), (3 4))"}}},
		{"duplicate key", `{"type":"Feature","properties":{"a":1,"a":2}}`, "a:integer", []sfeat{{[]any{int64(2)}, ""}}},
		{"epsg crs", `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"EPSG:4326"}},"features":[]}`, "", nil},
		{"null crs", `{"type":"FeatureCollection","crs":null,"features":[]}`, "", nil},
		{"int and float", `[{"type":"Feature","properties":{"v":1}},{"type":"Feature","properties":{"v":-0.5e1}}]`, "v:float",
			[]sfeat{{[]any{1.0}, ""}, {[]any{-5.0}, ""}}},
		{"bool and number", `[{"type":"Feature","properties":{"v":true}},{"type":"Feature","properties":{"v":2}}]`, "v:string",
			[]sfeat{{[]any{"true"}, ""}, {[]any{"2"}, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, got, err := readSource(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if s := formattest.Schema(r.Attributes()); s != tc.schema {
				t.Errorf("schema %q, want %q", s, tc.schema)
			}
			checkFeats(t, got, tc.want)
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("after the end: %v", err)
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	var many, wide strings.Builder
	many.WriteString(`{"type":"Feature","properties":{`)
	for i := 0; i <= 1000; i++ {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"p%d":%d`, i, i)
	}
	many.WriteString(`}}`)
	wide.WriteString(`[`)
	for f := 0; f < 3; f++ {
		if f > 0 {
			wide.WriteString(",")
		}
		wide.WriteString(`{"type":"Feature","properties":{`)
		for i := 0; i < 400; i++ {
			if i > 0 {
				wide.WriteString(",")
			}
			fmt.Fprintf(&wide, `"f%dp%d":1`, f, i)
		}
		wide.WriteString(`}}`)
	}
	wide.WriteString(`]`)
	deep := `{"type":"Feature","properties":{"d":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	deepGeom := `{"type":"Feature","geometry":{"type":"Point","coordinates":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	long := `{"type":"Feature","properties":{"d":"` + strings.Repeat("x", maxValueLen+10) + `"}}`
	fc := func(features ...string) string {
		return `{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`
	}
	ok := `{"type":"Feature","properties":{"a":1},"geometry":{"type":"Point","coordinates":[1,2]}}`
	for _, tc := range []struct{ name, in, want string }{
		{"crs", `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::4267"}},"features":[]}`,
			`geojson: crs "urn:ogc:def:crs:EPSG::4267" is not supported`},
		{"old crs", `{"type":"FeatureCollection","crs":{"type":"EPSG","properties":{"code":3857}},"features":[]}`, `crs "EPSG:3857" is not supported`},
		{"linked crs", `{"type":"Point","coordinates":[1,2],"crs":{"type":"link","properties":{"href":"http://x/crs","type":"proj4"}}}`, `crs "http://x/crs"`},
		{"feature crs", fc(ok, `{"type":"Feature","crs":{"type":"name","properties":{"name":"EPSG:2263"}}}`), `feature 2: crs "EPSG:2263"`},
		{"bad crs", `{"type":"FeatureCollection","crs":[1],"features":[]}`, "crs: not a named CRS"},
		{"position", fc(ok, `{"type":"Feature","geometry":{"type":"Point","coordinates":[200,1]}}`), "geojson: feature 2: geometry: position [200, 1] is not a longitude, latitude"},
		{"ring", fc(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}`), "feature 1: geometry: a polygon ring must end where it starts"},
		{"geometry type", fc(`{"type":"Feature","geometry":{"type":"Circle"}}`), `feature 1: geometry: unknown type "Circle"`},
		{"two geometries", fc(`{"type":"Feature","geometry":null,"geometry":null}`), "feature 1: more than one geometry"},
		{"not a feature", fc(ok, ok, `{"type":"Point","coordinates":[1,2]}`), `feature 3: type is "Point", want "Feature"`},
		{"feature not object", fc(`[1]`), "feature 1: is an array, not a Feature object"},
		{"type not string", fc(`{"type":1}`), "feature 1: type is a number, want a string"},
		{"properties array", fc(`{"type":"Feature","properties":[1]}`), "feature 1: properties is an array, not an object"},
		{"truncated", mixed[:len(mixed)/2], "unexpected end of file"},
		{"truncated after features", fc(ok)[:len(fc(ok))-1], "unexpected end of file"},
		{"empty", "", "unexpected end of file"},
		{"syntax", fc(ok, `{"type":"Feature",}`), "feature 2: invalid JSON at byte"},
		{"syntax top", `{"type" "x"}`, "invalid JSON at byte"},
		{"string", `"hello"`, "not GeoJSON: the file holds a string, not an object"},
		{"no type", `{"a":1}`, "not GeoJSON: the object has no type"},
		{"unknown type", `{"type":"Topology"}`, `type "Topology" is not a GeoJSON type`},
		{"collection without features", `{"type":"FeatureCollection"}`, "a FeatureCollection without features"},
		{"feature with features", `{"type":"Feature","features":[]}`, `type is "Feature" but the object has features`},
		{"features object", `{"type":"FeatureCollection","features":{}}`, "features is an object, want an array"},
		{"two features", `{"type":"FeatureCollection","features":[],"features":[]}`, "more than one features member"},
		{"data after", `{"type":"Point","coordinates":[1,2]} {}`, "data after the GeoJSON value"},
		{"bare geometry bad", `{"type":"Point","coordinates":[1]}`, "feature 1: geometry: a position needs two numbers"},
		{"deep property", deep, `feature 1: property "d": nested more than 64 deep`},
		{"deep geometry", fc(deepGeom), "feature 1: geometry: nested more than 64 deep"},
		{"long property", long, `feature 1: property "d": longer than 1 MiB`},
		{"long name", `[{"type":"Feature","properties":{"` + strings.Repeat("n", maxValueLen+1) + `":1}}]`, "feature 1: a property name longer than 1 MiB"},
		{"many properties", many.String(), "feature 1: more than 1000 properties"},
		{"wide file", wide.String(), "feature 3: more than 1000 different properties in the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readSource(tc.in)
			formattest.WantInvalid(t, err, tc.want)
		})
	}
}

func TestSourceIOError(t *testing.T) {
	_, err := Open(formattest.ErrReader{Reader: strings.NewReader(`{"type":"FeatureCollection","features":[`)})
	if !errors.Is(err, formattest.ErrDisk) || mapcommons.ErrorCode(err) != mapcommons.EINTERNAL {
		t.Fatalf("error %v", err)
	}
}

func TestSourceChanged(t *testing.T) {
	one := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1}}]}`
	two := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1}},{"type":"Feature","properties":{"a":2}}]}`
	other := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"b":1}}]}`
	str := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":"x"}}]}`
	for _, tc := range [][2]string{{one, two}, {two, one}, {one, other}, {one, str}, {one, `[]`}} {
		r, err := Open(&formattest.ChangingReader{ReadSeeker: strings.NewReader(tc[0]), Second: []byte(tc[1])})
		if err == nil {
			for {
				if _, err = r.Next(); err != nil {
					break
				}
			}
		}
		if err == nil || err == io.EOF || !strings.Contains(err.Error(), "changed") {
			t.Errorf("%s then %s: error %v", tc[0], tc[1], err)
		}
	}
}
