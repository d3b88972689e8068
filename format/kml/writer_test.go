package kml

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/archive"
	"mapcommons/format/wkb"
	"mapcommons/format/xmltext"
	"mapcommons/internal/formattest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func geom(t testing.TB, s string) []byte {
	t.Helper()
	b, err := wkb.ParseWKT(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return b
}

// testDataset is a dataset with every kind of value and geometry.
func testDataset(t testing.TB) (format.Meta, []mapcommons.Feature) {
	attrs := []mapcommons.Attribute{
		{Name: "name", Type: mapcommons.AttrString},
		{Name: "pop", Type: mapcommons.AttrInteger},
		{Name: "ratio", Type: mapcommons.AttrFloat},
		{Name: "note", Type: mapcommons.AttrString},
		{Name: "Description", Type: mapcommons.AttrString},
		{Name: "flag", Type: mapcommons.AttrBoolean},
		{Name: "a \"quoted\" <name>", Type: mapcommons.AttrString},
	}
	m := format.Meta{
		Name: "test_data", Title: "Test & <data>", Description: "A dataset\nof tests",
		Updated: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Attributes: attrs,
	}
	feats := []mapcommons.Feature{
		{Values: []any{"Café <Central> & \"co\"", int64(12), 0.1, "line1\nline2\ttab\r\nx", "<p>HTML</p> with ]]> inside", true, "q"},
			Geometry: geom(t, "POINT(-122.4194155 37.7749295)")},
		{Values: []any{nil, nil, 1e21, "ctrl\x00\x01\x1f\x7f chars \ufffe\uffff end", "plain text", false, nil},
			Geometry: geom(t, "LINESTRING(0 0,1.5 2.25,-3 -4)")},
		{Values: []any{"poly", int64(-5), 2.5e-7, "  spaced  ", nil, nil, "bad \xff utf-8"},
			Geometry: geom(t, "POLYGON((0 0,10 0,10 10,0 10,0 0),(1 1,2 1,2 2,1 1))")},
		{Values: []any{"mpt", int64(1), 1.0, nil, nil, nil, nil}, Geometry: geom(t, "MULTIPOINT((1 2),(3 4))")},
		{Values: []any{"mls", int64(2), 1.5, nil, nil, nil, nil}, Geometry: geom(t, "MULTILINESTRING((1 2,3 4),(5 6,7 8))")},
		{Values: []any{"mpoly", int64(3), 100.25, nil, nil, nil, nil},
			Geometry: geom(t, "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((2 2,3 2,3 3,2 2),(2.1 2.05,2.9 2.05,2.9 2.8,2.1 2.05)))")},
		{Values: []any{"gc", int64(4), -0.0001, nil, nil, nil, nil},
			Geometry: geom(t, "GEOMETRYCOLLECTION(POINT(179.9999999 -89.9999999),LINESTRING(1 2,3 4),POLYGON((0 0,1 0,1 1,0 0)))")},
		{Values: []any{"none", nil, nil, nil, nil, nil, nil}},
		{Values: []any{"", int64(9223372036854775807), math.MaxFloat64, "", "", nil, nil}, Geometry: geom(t, "POINT(180 90)")},
	}
	for i := range feats {
		feats[i].Position = int64(i)
	}
	return m, feats
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s differs from its golden file at byte %d; run with -update if the change is meant\ngot:  %.200q\nwant: %.200q",
			name, i, got[i:], want[min(i, len(want)):])
	}
}

// checkXML parses b with encoding/xml in strict mode, token by token.
func checkXML(t testing.TB, b []byte) {
	t.Helper()
	if !utf8.Valid(b) {
		t.Fatal("output is not UTF-8")
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("output is not well-formed XML: %v", err)
		}
	}
}

func TestWriteGolden(t *testing.T) {
	m, feats := testDataset(t)
	var buf bytes.Buffer
	if err := Write(&buf, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	checkXML(t, buf.Bytes())
	golden(t, "dataset.kml", buf.Bytes())
}

func TestEncoderGolden(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	yes, no := true, false
	red := &Color{R: 255, G: 0, B: 0, A: 255}
	steps := []func() error{
		func() error { return e.StartDocument("Map & more", "") },
		func() error {
			return e.Style(Style{ID: "all", LineColor: red, PolyColor: &Color{R: 0x12, G: 0x34, B: 0x56, A: 0x78},
				IconColor: &Color{A: 0x80}, LineWidth: 1.5, IconScale: 0.75, IconHref: "http://example.com/i.png?a=1&b=2",
				Fill: &yes, Outline: &no, Balloon: "<h3>$[name]</h3>$[description]"})
		},
		func() error { return e.Style(Style{ID: "line", LineColor: red}) },
		func() error { return e.Style(Style{}) },
		func() error { return e.StartFolder("Layer 1", "first <layer>") },
		func() error {
			return e.Placemark(Placemark{ID: "f1", Name: "a", Description: "x < y", StyleURL: "#all",
				Names: []string{"i", "f", "s", "b", "n", "u"}, Values: []any{7, float32(0.5), "s", true, nil, struct{ X int }{3}},
				Geometry: geom(t, "POINT(1 2)")})
		},
		func() error { return e.StartFolder("", "") },
		func() error { return e.Placemark(Placemark{Geometry: geom(t, "POINT EMPTY")}) },
		func() error { return e.Placemark(Placemark{Geometry: geom(t, "MULTIPOINT(EMPTY,(1 2))")}) },
		func() error { return e.EndFolder() },
		func() error { return e.EndFolder() },
		func() error { return e.NetworkLink("more", "http://example.com/maps/1.kml?x=1&y=2") },
		func() error { return e.StartFolder("left open", "") },
		func() error { return e.EndDocument() },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	checkXML(t, buf.Bytes())
	golden(t, "encoder.kml", buf.Bytes())
}

func TestEncoderErrors(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	if err := e.Placemark(Placemark{}); err == nil {
		t.Error("Placemark before StartDocument")
	}
	e = NewEncoder(&buf)
	e.StartDocument("", "")
	if err := e.Placemark(Placemark{Name: "bad", Geometry: []byte{1, 2, 3}}); !errors.Is(err, wkb.ErrInvalid) {
		t.Errorf("bad WKB: %v", err)
	}
	if err := e.Placemark(Placemark{Name: "ok"}); err != nil {
		t.Errorf("after a bad geometry: %v", err)
	}
	if err := e.EndFolder(); err == nil {
		t.Error("EndFolder without a Folder")
	}
	if err := e.EndDocument(); err == nil {
		t.Error("the error is not sticky")
	}
	// Write errors stick.
	e = NewEncoder(failWriter{})
	e.StartDocument("x", "")
	for i := 0; i < 2000; i++ {
		e.Placemark(Placemark{Name: strings.Repeat("x", 100)})
	}
	if err := e.EndDocument(); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("EndDocument: %v", err)
	}
	// Write passes on the scan's error.
	m, _ := testDataset(t)
	stop := errors.New("stop")
	if err := Write(io.Discard, m, func(fn func(*mapcommons.Feature) error) error { return stop }); err != stop {
		t.Errorf("Write: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"<a & 'b' \"c\">":    "&lt;a &amp; 'b' \"c\"&gt;",
		"a\tb\nc\rd":         "a\tb\nc&#xD;d",
		"\x00\x08\x0b\x1f":   "",
		"\xff\xfe ok":        "\ufffd\ufffd ok",
		"\ufffe\uffff\ufffd": "\ufffd",
		"\U0001F600 é":       "\U0001F600 é",
		"\x7f\u0085":         "\x7f\u0085",
	} {
		if got := string(xmltext.AppendEscaped(nil, in, false)); got != want {
			t.Errorf("text %q: %q, want %q", in, got, want)
		}
	}
	if got := string(xmltext.AppendEscaped(nil, "a\"b\tc\nd", true)); got != "a&quot;b&#x9;c&#xA;d" {
		t.Errorf("attribute: %q", got)
	}
	if got := string(appendCDATA(nil, "a]]>b\x01]]]>")); got != "<![CDATA[a]]]]><![CDATA[>b]]]]]><![CDATA[>]]>" {
		t.Errorf("CDATA: %q", got)
	}
	if got := (Color{R: 1, G: 2, B: 3, A: 4}).String(); got != "04030201" {
		t.Errorf("color %s", got)
	}
}

// sanitize is what a string becomes after writing and reading back.
func sanitize(s string) any {
	s = string(xmltext.AppendEscaped(nil, s, false))
	s = strings.ReplaceAll(s, "&#xD;", "\r")
	s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return s
}

// checkRoundTrip compares features read back with those written.
func checkRoundTrip(t *testing.T, m format.Meta, feats []mapcommons.Feature, attrs []mapcommons.Attribute, got []feat) {
	t.Helper()
	if len(got) != len(feats) {
		t.Fatalf("%d features read back, %d written", len(got), len(feats))
	}
	col := map[string]int{}
	for i, a := range attrs {
		col[strings.ToLower(a.Name)] = i
	}
	for i, a := range m.Attributes {
		j, ok := col[strings.ToLower(a.Name)]
		if !ok {
			t.Fatalf("attribute %q not read back (%v)", a.Name, attrSig(attrs))
		}
		for k, f := range feats {
			var want any
			switch v := f.Values[i].(type) {
			case string:
				want = sanitize(v)
			case bool:
				want = "false"
				if v {
					want = "true"
				}
			case float64:
				want = v
				if v == math.Trunc(v) && attrs[j].Type == mapcommons.AttrInteger {
					want = int64(v)
				}
			default:
				want = v
			}
			if g := got[k].Vals[j]; g != want {
				t.Errorf("feature %d %s: %#v read back, %#v written", k, a.Name, g, want)
			}
		}
	}
	for k, f := range feats {
		want := ""
		if f.Geometry != nil {
			want = canon(t, mustWKT(t, f.Geometry))
		}
		if got[k].WKT != want {
			t.Errorf("feature %d: geometry %s read back, %s written", k, got[k].WKT, want)
		}
	}
}

func mustWKT(t testing.TB, b []byte) string {
	w, err := wkb.ToWKT(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	return string(w)
}

func TestRoundTrip(t *testing.T) {
	m, feats := testDataset(t)
	var buf bytes.Buffer
	if err := Write(&buf, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	r, err := Open(bytes.NewReader(buf.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != m.Title || r.Description() != m.Description {
		t.Errorf("document %q %q", r.Name(), r.Description())
	}
	attrs, got, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"name:string", "description:string", "pop:integer", "ratio:float", "note:string", "flag:string", "a \"quoted\" <name>:string"}
	if g := attrSig(attrs); strings.Join(g, "|") != strings.Join(want, "|") {
		t.Errorf("attributes %v\nwant %v", g, want)
	}
	checkRoundTrip(t, m, feats, attrs, got)
}

func TestRoundTripTitle(t *testing.T) {
	// Without a name attribute the Placemark's name is the title or the position.
	m := format.Meta{Name: "t", Attributes: []mapcommons.Attribute{{Name: "Title", Type: mapcommons.AttrString}, {Name: "v", Type: mapcommons.AttrFloat}}}
	feats := []mapcommons.Feature{
		{Position: 0, Values: []any{"first", 1.5}, Geometry: geom(t, "POINT(1 2)")},
		{Position: 1, Values: []any{nil, 2.5}, Geometry: geom(t, "POINT(3 4)")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("<Document>\n  <name>t</name>")) {
		t.Errorf("the document is not named after the dataset:\n%s", buf.Bytes())
	}
	attrs, got := mustRead(t, buf.String())
	if g := strings.Join(attrSig(attrs), " "); g != "name:string Title:string v:float" {
		t.Errorf("attributes %s", g)
	}
	checkFeats(t, got, []feat{{[]any{"first", "first", 1.5}, "POINT(1 2)"}, {[]any{"1", nil, 2.5}, "POINT(3 4)"}})
}

func TestWriteKMZ(t *testing.T) {
	m, feats := testDataset(t)
	var kml, kmz bytes.Buffer
	if err := Write(&kml, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	if err := WriteKMZ(&kmz, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(kmz.Bytes()), int64(kmz.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "doc.kml" || !zr.File[0].Modified.Equal(m.Updated) {
		t.Fatalf("entries %v", zr.File)
	}
	rc, _ := zr.File[0].Open()
	doc, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(doc, kml.Bytes()) {
		t.Fatalf("doc.kml differs from Write's output (%v)", err)
	}
	r, cleanup, err := OpenKMZ(bytes.NewReader(kmz.Bytes()), int64(kmz.Len()), archive.Limits{}, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	attrs, got, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, m, feats, attrs, got)
}
