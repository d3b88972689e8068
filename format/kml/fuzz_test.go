package kml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

var fuzzSeeds = []string{
	fullDoc,
	`<kml><Placemark><name>A</name><Point><coordinates>1,2</coordinates></Point></Placemark></kml>`,
	`<k:kml xmlns:k="http://www.opengis.net/kml/2.2"><k:Placemark><k:Polygon><k:outerBoundaryIs><k:LinearRing><k:coordinates>0,0 1,0 1,1</k:coordinates></k:LinearRing></k:outerBoundaryIs></k:Polygon></k:Placemark></k:kml>`,
	`<?xml version="1.0" encoding="ISO-8859-1"?><kml><Placemark><name>caf` + "\xe9" + `</name></Placemark></kml>`,
	`<?xml version="1.0" encoding="windows-1252"?><kml><Placemark><ExtendedData><Data name="` + "\x93" + `"><value>1</value></Data></ExtendedData></Placemark></kml>`,
	`<!DOCTYPE x [<!ENTITY a "b">]><kml/>`,
	`<kml><Placemark><MultiGeometry><MultiGeometry><Point><coordinates>1,2</coordinates></Point><LineString><coordinates>1,2 3,4</coordinates></LineString></MultiGeometry></MultiGeometry></Placemark></kml>`,
	`<kml><Placemark><gx:Track xmlns:gx="http://www.google.com/kml/ext/2.2"><gx:coord>1 2 3</gx:coord></gx:Track></Placemark></kml>`,
	`<kml><Placemark><TimeSpan><begin>1</begin></TimeSpan><ExtendedData><SchemaData><SimpleData name="x">1.5</SimpleData></SchemaData></ExtendedData></Placemark></kml>`,
	`<kml><Document><Schema><SimpleField name="z" type="string"/></Schema><Placemark><ExtendedData><Data name="z"><value>1</value></Data></ExtendedData></Placemark></Document></kml>`,
	`<kml><Placemark><Point><coordinates>1,91</coordinates></Point></Placemark></kml>`,
	`<kml><Placemark><name>&nbsp;<![CDATA[x]]></name>`,
	"\xef\xbb\xbf<kml/>",
	`<kml><Schema><Placemark><name>no</name></Placemark></Schema><Placemark/></kml>`,
	"",
}

// FuzzRead reads any bytes: no panic, no hang, only EINVALID errors (the
// input is in memory), pass 2 succeeds when pass 1 did, and every feature
// fits the attributes.
func FuzzRead(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(string(data))()
		opt := Options{MaxCoords: 100000}
		r, err := Open(bytes.NewReader(data), opt)
		if err != nil {
			checkErr(t, err)
			return
		}
		attrs := r.Attributes()
		if len(attrs) > mapcommons.MaxAttributes {
			t.Fatalf("%d attributes", len(attrs))
		}
		for n := int64(0); ; n++ {
			feat, err := r.Next()
			if err == io.EOF {
				if n != r.Count() {
					t.Fatalf("%d features, Count %d", n, r.Count())
				}
				break
			} else if err != nil {
				checkErr(t, err)
				t.Fatalf("pass 2 failed after pass 1 passed: %v", err)
			}
			if feat.Position != n || len(feat.Values) != len(attrs) {
				t.Fatalf("feature %d: position %d, %d values for %d attributes", n, feat.Position, len(feat.Values), len(attrs))
			}
			for i, v := range feat.Values {
				ok := v == nil
				switch attrs[i].Type {
				case mapcommons.AttrInteger:
					_, ok2 := v.(int64)
					ok = ok || ok2
				case mapcommons.AttrFloat:
					_, ok2 := v.(float64)
					ok = ok || ok2
				case mapcommons.AttrString:
					s, ok2 := v.(string)
					ok = ok || ok2 && s != "" && utf8.ValidString(s)
				}
				if !ok {
					t.Fatalf("value %#v in a %s column", v, attrs[i].Type)
				}
			}
			if feat.Geometry == nil {
				continue
			}
			g, err := wkb.Decode(feat.Geometry)
			if err != nil {
				t.Fatalf("geometry %x: %v", feat.Geometry, err)
			}
			b, ok := g.Bounds()
			if !ok || b.MinX < -180 || b.MaxX > 180 || b.MinY < -90 || b.MaxY > 90 {
				t.Fatalf("geometry %x: bounds %v %v", feat.Geometry, b, ok)
			}
			checkGeom(t, g, 0)
		}
	})
}

// checkGeom checks the shape rules: flat collections, no empty parts,
// enough points.
func checkGeom(t *testing.T, g wkb.Geom, depth int) {
	switch g.Type {
	case wkb.Point:
		if len(g.Coords) != 2 {
			t.Fatalf("point %v", g.Coords)
		}
	case wkb.LineString:
		if len(g.Coords) < 4 {
			t.Fatalf("line %v", g.Coords)
		}
	case wkb.Polygon:
		for _, r := range g.Rings {
			n := len(r)
			if n < 8 || r[0] != r[n-2] || r[1] != r[n-1] {
				t.Fatalf("ring %v", r)
			}
		}
	default:
		if depth > 0 || len(g.Parts) == 0 {
			t.Fatalf("nested or empty collection %+v", g)
		}
		for _, p := range g.Parts {
			if g.Type != wkb.GeometryCollection && p.Type != g.Type-3 {
				t.Fatalf("%d in %d", p.Type, g.Type)
			}
			checkGeom(t, p, depth+1)
		}
	}
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
		t.Fatalf("error %v (%T) is not EINVALID", err, err)
	}
}

// FuzzRoundTrip writes strings as a Placemark's name, an attribute's name
// and value, and reads them back.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "]]>", "\r\n", " x ", "\x00\x01", "\xff", "é€", "\ufffe", "&amp;", "\"'"} {
		f.Add(s, "v")
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		defer watchdog(name + value)()
		m := format.Meta{Name: "t", Attributes: []mapcommons.Attribute{
			{Name: "name", Type: mapcommons.AttrString}, {Name: "x" + name, Type: mapcommons.AttrString}}}
		value = "v" + value // a string, not a number
		feats := []mapcommons.Feature{{Values: []any{name, value}, Geometry: wkb.AppendPoint(nil, 1, 2)}}
		var buf bytes.Buffer
		if err := Write(&buf, m, scanOf(feats)); err != nil {
			t.Fatal(err)
		}
		checkXML(t, buf.Bytes())
		attrs, got, err := readAll(t, buf.String(), Options{})
		if err != nil {
			t.Fatalf("%q: %v", buf.String(), err)
		}
		if len(got) != 1 || got[0].WKT != "POINT (1 2)" {
			t.Fatalf("read back %v", got)
		}
		var vals, want []any
		for i := range attrs {
			if got[0].Vals[i] != nil {
				vals = append(vals, got[0].Vals[i])
			}
		}
		for _, s := range []string{name, value} {
			if v := sanitize(s); v != nil {
				want = append(want, v)
			}
		}
		if !reflect.DeepEqual(vals, want) {
			t.Fatalf("read back %q, want %q\n%s", vals, want, buf.Bytes())
		}
	})
}

// watchdog crashes the fuzzing worker, reporting the input, when a call
// takes 10 seconds. Use it as defer watchdog(input)().
func watchdog(input string) (stop func()) {
	if len(input) > 200 {
		input = input[:200] + "..."
	}
	t := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q", input)) })
	return func() { t.Stop() }
}
