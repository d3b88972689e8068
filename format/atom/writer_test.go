package atom

import (
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

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var testMeta = format.Meta{
	Name:        "test_set",
	Title:       "Test <set> & more",
	Description: "All geometry types",
	Author:      "ann",
	Link:        "http://example.com/datasets/7.json",
	Updated:     time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600)),
	Attributes: []mapcommons.Attribute{
		{Name: "Name", Type: mapcommons.AttrString},
		{Name: "pop", Type: mapcommons.AttrInteger},
		{Name: "area", Type: mapcommons.AttrFloat},
		{Name: "ok", Type: mapcommons.AttrBoolean},
		{Name: "note <x>", Type: mapcommons.AttrString},
	},
}

var (
	ptWKB      = wkb.AppendPoint(nil, -122.419416, 37.774929)
	lineWKB    = wkb.AppendLineString(nil, []float64{0, 0, 1.5, 2.25, 3, 1e-7})
	polyWKB    = wkb.AppendPolygon(nil, [][]float64{{0, 0, 10, 0, 10, 10, 0, 0}})
	holeWKB    = wkb.AppendPolygon(nil, [][]float64{{0, 0, 10, 0, 10, 10, 0, 10, 0, 0}, {1, 1, 2, 1, 2, 2, 1, 1}})
	mpointWKB  = wkb.AppendMultiPoint(nil, []float64{1, 2, 3, 4})
	mlineWKB   = wkb.AppendMultiLineString(nil, [][]float64{{0, 0, 1, 1}, {2, 2, 3, 3}})
	mpolyWKB   = wkb.AppendMultiPolygon(nil, [][][]float64{{{0, 0, 1, 0, 1, 1, 0, 0}}, {{5, 5, 6, 5, 6, 6, 5, 5}, {5.1, 5.1, 5.2, 5.1, 5.2, 5.2, 5.1, 5.1}}})
	collWKB    = wkb.AppendCollection(nil, [][]byte{ptWKB, lineWKB})
	emptyPtWKB = wkb.AppendPoint(nil, math.NaN(), math.NaN())
)

func testFeatures() []mapcommons.Feature {
	return []mapcommons.Feature{
		{Position: 0, Values: []any{"San Francisco", int64(808988), 121.4, true, "a <b>bold</b> & \"quoted\" 'note'"}, Geometry: ptWKB},
		{Position: 1, Values: []any{"", nil, nil, false, "ctl\x01\x1f chars\r\nand bad \xff utf-8 \uFFFE"}, Geometry: lineWKB},
		{Position: 2, Values: []any{nil, int64(-1), 0.5, nil, nil}, Geometry: polyWKB},
		{Position: 3, Values: []any{"hole", nil, nil, nil, nil}, Geometry: holeWKB},
		{Position: 4, Values: []any{"multipoint", nil, nil, nil, nil}, Geometry: mpointWKB},
		{Position: 5, Values: []any{"multiline", nil, nil, nil, nil}, Geometry: mlineWKB},
		{Position: 6, Values: []any{"multipolygon", nil, nil, nil, nil}, Geometry: mpolyWKB},
		{Position: 7, Values: []any{"collection", nil, nil, nil, nil}, Geometry: collWKB},
		{Position: 8, Values: []any{"no geometry", nil, nil, nil, nil}},
		{Position: 9, Values: []any{"empty point", nil, nil, nil, nil}, Geometry: emptyPtWKB},
	}
}

func TestWriteGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, testMeta, formattest.ScanOf(testFeatures())); err != nil {
		t.Fatal(err)
	}
	golden(t, "write.atom", buf.Bytes())

	// A dataset without link, title, author or update time.
	buf.Reset()
	m := format.Meta{Name: "bare", Attributes: []mapcommons.Attribute{{Name: "v", Type: mapcommons.AttrFloat}}}
	if err := Write(&buf, m, formattest.ScanOf([]mapcommons.Feature{{Values: []any{1.0}, Geometry: ptWKB}})); err != nil {
		t.Fatal(err)
	}
	golden(t, "bare.atom", buf.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", name, got)
	}
	// Well-formed XML, whatever the text.
	d := xml.NewDecoder(bytes.NewReader(got))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s is not well-formed: %v", name, err)
		}
	}
}

func TestWriteRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	feats := testFeatures()
	if err := Write(&buf, testMeta, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	r, got, err := readAll(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	if s := formattest.Schema(r.Attributes()); s != "title:string content:string updated:string id:string" {
		t.Errorf("attributes %s", s)
	}
	wantFeed := Feed{Format: FormatAtom, Title: testMeta.Title, Description: testMeta.Description, Link: "http://example.com/datasets/7.json",
		Author: "ann", Updated: "2024-05-06T06:08:09Z"}
	if r.Feed() != wantFeed {
		t.Errorf("feed %+v", r.Feed())
	}
	titles := []string{"San Francisco", "Feature 1", "Feature 2", "hole", "multipoint", "multiline", "multipolygon", "collection", "no geometry", "empty point"}
	for i, f := range feats {
		g := got[i]
		if g.vals["title"] != titles[i] || g.vals["id"] != "http://example.com/datasets/7.json#feature-"+itoa(i) || g.vals["updated"] != "2024-05-06T06:08:09Z" {
			t.Errorf("feature %d: %v", i, g.vals)
		}
		want := ""
		if f.Geometry != nil && i != 9 {
			w, _ := wkb.ToWKT(nil, f.Geometry)
			want = string(w)
		}
		if g.wkt != want {
			t.Errorf("feature %d: geometry %s, want %s", i, g.wkt, want)
		}
	}
	content := got[0].vals["content"].(string)
	for _, s := range []string{"<th>Name</th><td>San Francisco</td>", "<th>pop</th><td>808988</td>", "<th>area</th><td>121.4</td>",
		"<th>ok</th><td>true</td>", "<th>note &lt;x&gt;</th><td>a &lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34; &#39;note&#39;</td>"} {
		if !strings.Contains(content, s) {
			t.Errorf("content %s lacks %s", content, s)
		}
	}
	if c := got[1].vals["content"].(string); !strings.Contains(c, "<td>ctl chars\r\nand bad \uFFFD utf-8 </td>") {
		t.Errorf("content %q", c)
	}
}

func itoa(i int) string { return string(appendValue(nil, int64(i))) }

type failWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.n > 100<<10 {
		return 0, errFull
	}
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	many := make([]mapcommons.Feature, 5000)
	for i := range many {
		many[i] = mapcommons.Feature{Position: int64(i), Values: []any{"x", nil, nil, nil, nil}, Geometry: ptWKB}
	}
	if err := Write(&failWriter{}, testMeta, formattest.ScanOf(many)); !errors.Is(err, errFull) {
		t.Errorf("error %v", err)
	}
	errScan := errors.New("scan failed")
	if err := Write(io.Discard, testMeta, func(func(*mapcommons.Feature) error) error { return errScan }); err != errScan {
		t.Errorf("error %v", err)
	}
	bad := []mapcommons.Feature{{Values: []any{nil, nil, nil, nil, nil}, Geometry: []byte{1, 2, 3}}}
	if err := Write(io.Discard, testMeta, formattest.ScanOf(bad)); err == nil || !strings.Contains(err.Error(), "feature 0") {
		t.Errorf("error %v", err)
	}
}
