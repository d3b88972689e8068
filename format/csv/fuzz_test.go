package csv

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/internal/formattest"
)

var fuzzSeeds = []string{
	"name,latitude,longitude\nA,1,2\nB,3.5,-4\n",
	"\xEF\xBB\xBFname,lat,lon\nCafé,1,2\n",
	"name,lat,lon\nCaf\xE9,1,2\n",
	"id;lat;lon;v\n1;48,5;2,25;007\n\n2;1;2;x\n",
	"name\tlat\tlon\nx;y,z\t1\t2\n",
	"name,lat,lon,note\n\"a, b\",1,2,\"line one\nline two\"\n\"say \"\"hi\"\"\",1,2,x\n12\" pipe,1,2,x\n",
	"\n\nname,n,lat,lon,extra\na,1,1,2\n\r\n,,,\nc,,5,6,,\n",
	"v,lat,lon\n007,1,2\n1e400,1,2\n9223372036854775808,1,2\n-1.5E-3,1,2\n",
	"id,wkt\n1,POINT(-122.5 37.75)\n2,\"LINESTRING(0 0, 10 10)\"\n3,\"POLYGON((0 0, 10 0, 10 10, 0 0))\"\n",
	"wkt\nSRID=4326;POINT(2 1)\n",
	"the_geom\n0101000020E61000000000000000000040000000000000F03F\n",
	"name,lat,lon\r\na,1,2\r\n",
	"name,lat,lon\ra,1,2\rb,q,2\r",
	"name,lat,lon\na,1,2\n\"b,1,2\nc,3,4\n",
	"lat,lon\n90.0001,2\n",
	"name,latitude\na,1\n",
	"name,value\na,1\n",
	"lat,wkt\n7,POINT(2 1)\n",
	"",
}

// FuzzReader reads any bytes: no panic, no hang, and only EINVALID errors
// (the input is in memory, so there are no I/O errors); every feature fits
// the attributes.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		maxRows := int64(bytes.Count(data, []byte{'\n'}) + bytes.Count(data, []byte{'\r'}) + 1)
		formattest.CheckRead(t, data, Open, formattest.Rules{MaxFeatures: maxRows + 1, NeedGeometry: true})
	})
}

// FuzzRoundTrip writes a string through the Writer and reads it back. A
// CSV cannot tell an empty string from null, and encoding/csv reads CRLF
// inside a quoted field as LF.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", "a,b", `"q"`, " x ", "line\nbreak", "cr\r\nlf", "\r", "007", "1.5", "é€", ";\t"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, points bool) {
		defer formattest.Watchdog(s)()
		if !utf8.ValidString(s) || len(s) > maxField {
			return
		}
		var buf bytes.Buffer
		w := NewWriter(&buf, []mapcommons.Attribute{{Name: "s", Type: mapcommons.AttrString}}, points)
		for _, v := range []any{s, "not a number"} {
			if err := w.Write(&mapcommons.Feature{Values: []any{v}, Geometry: point(1.5, -2.25)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		_, feats, err := readAll(buf.String())
		if err != nil {
			t.Fatalf("%q: %v", buf.String(), err)
		}
		var want any = strings.ReplaceAll(s, "\r\n", "\n")
		if s == "" {
			want = nil
		}
		if len(feats) != 2 || feats[0].Vals[0] != want || !bytes.Equal(feats[0].Geom, point(1.5, -2.25)) {
			t.Fatalf("%q: read back %+v, want %q", buf.String(), feats, want)
		}
	})
}
