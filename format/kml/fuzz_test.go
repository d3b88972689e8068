package kml

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
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
	open := func(rs io.ReadSeeker) (*Reader, error) { return Open(rs, Options{MaxCoords: 100000}) }
	f.Fuzz(func(t *testing.T, data []byte) {
		r, n := formattest.CheckRead(t, data, open, formattest.Rules{Geometry: func(t testing.TB, g wkb.Geom) { checkGeom(t, g, 0) }})
		if r != nil && n != r.Count() {
			t.Fatalf("%d features, Count %d", n, r.Count())
		}
	})
}

// checkGeom checks the shape rules: flat collections, no empty parts,
// enough points.
func checkGeom(t testing.TB, g wkb.Geom, depth int) {
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

// FuzzRoundTrip writes strings as a Placemark's name, an attribute's name
// and value, and reads them back.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "]]>", "\r\n", " x ", "\x00\x01", "\xff", "é€", "\ufffe", "&amp;", "\"'"} {
		f.Add(s, "v")
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		defer formattest.Watchdog(name + value)()
		m := format.Meta{Name: "t", Attributes: []mapcommons.Attribute{
			{Name: "name", Type: mapcommons.AttrString}, {Name: "x" + name, Type: mapcommons.AttrString}}}
		value = "v" + value // a string, not a number
		feats := []mapcommons.Feature{{Values: []any{name, value}, Geometry: wkb.AppendPoint(nil, 1, 2)}}
		var buf bytes.Buffer
		if err := Write(&buf, m, formattest.ScanOf(feats)); err != nil {
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
