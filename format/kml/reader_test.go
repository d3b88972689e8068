package kml

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/archive"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
)

// feat is a feature read back: its values and geometry as WKT ("" for none).
type feat struct {
	Vals []any
	WKT  string
}

// readAll reads a whole document.
func readAll(t testing.TB, doc string, opt Options) ([]mapcommons.Attribute, []feat, error) {
	t.Helper()
	r, err := Open(strings.NewReader(doc), opt)
	if err != nil {
		return nil, nil, err
	}
	return drain(t, r)
}

func drain(t testing.TB, r *Reader) ([]mapcommons.Attribute, []feat, error) {
	t.Helper()
	var out []feat
	for {
		f, err := r.Next()
		if err == io.EOF {
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("Next after EOF: %v", err)
			}
			if int64(len(out)) != r.Count() {
				t.Fatalf("%d features, Count %d", len(out), r.Count())
			}
			return r.Attributes(), out, nil
		} else if err != nil {
			return nil, nil, err
		}
		if f.Position != int64(len(out)) {
			t.Fatalf("feature %d has position %d", len(out), f.Position)
		}
		fe := feat{Vals: append([]any(nil), f.Values...)}
		if f.Geometry != nil {
			b, err := wkb.ToWKT(nil, f.Geometry)
			if err != nil {
				t.Fatalf("feature %d: %v", f.Position, err)
			}
			fe.WKT = string(b)
		}
		out = append(out, fe)
	}
}

func mustRead(t testing.TB, doc string) ([]mapcommons.Attribute, []feat) {
	t.Helper()
	attrs, feats, err := readAll(t, doc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return attrs, feats
}

// attrSig renders attributes as "name:type" strings.
func attrSig(attrs []mapcommons.Attribute) []string {
	var s []string
	for _, a := range attrs {
		s = append(s, a.Name+":"+string(a.Type))
	}
	return s
}

// canon returns WKT as wkb.ToWKT writes it.
func canon(t testing.TB, s string) string {
	t.Helper()
	if s == "" {
		return ""
	}
	return formattest.NormWKT(t, s)
}

func checkFeats(t *testing.T, got, want []feat) {
	t.Helper()
	for i := range want {
		want[i].WKT = canon(t, want[i].WKT)
	}
	if len(got) != len(want) {
		t.Fatalf("%d features, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("feature %d:\n got %#v\nwant %#v", i, got[i], want[i])
		}
	}
}

const fullDoc = `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2">
<Document>
  <name>Parks &amp; places</name>
  <description>All of them</description>
  <Schema name="parks" id="parks">
    <SimpleField name="zip" type="string"/>
    <SimpleField name="area" type="double"/>
  </Schema>
  <Style id="s"><LineStyle><width>2</width></LineStyle></Style>
  <Folder>
    <name>Outer</name>
    <Folder>
      <name>Inner</name>
      <Placemark id="p1">
        <name>First</name>
        <description><![CDATA[<b>bold</b> &amp; more]]></description>
        <styleUrl>#s</styleUrl>
        <TimeStamp><when>2011-03-05T14:07:21Z</when></TimeStamp>
        <ExtendedData>
          <Data name="pop"><displayName>Population</displayName><value>1200</value></Data>
          <Data name="ratio"><value> 0.5 </value></Data>
          <SchemaData schemaUrl="#parks">
            <SimpleData name="zip">02134</SimpleData>
            <SimpleData name="area">12</SimpleData>
          </SchemaData>
        </ExtendedData>
        <Point><extrude>1</extrude><altitudeMode>absolute</altitudeMode><coordinates>-122.5,37.75,10</coordinates></Point>
      </Placemark>
    </Folder>
    <Placemark>
      <name>Second</name>
      <TimeSpan><begin>2010</begin><end>2012</end></TimeSpan>
      <ExtendedData>
        <Data name="pop"><value>-7</value></Data>
        <Data name="ratio"><value>3</value></Data>
        <Data name="note"><value>text &lt;here&gt;</value></Data>
        <SchemaData><SimpleData name="zip">12345</SimpleData><SimpleData name="area">1.5e3</SimpleData></SchemaData>
      </ExtendedData>
      <Polygon>
        <outerBoundaryIs><LinearRing><coordinates>
          0,0 10,0 10,10
          0,10 0,0
        </coordinates></LinearRing></outerBoundaryIs>
        <innerBoundaryIs><LinearRing><coordinates>1,1 2,1 2,2 1,1</coordinates></LinearRing></innerBoundaryIs>
        <innerBoundaryIs><LinearRing><coordinates>5,5 6,5 6,6</coordinates></LinearRing>
                         <LinearRing><coordinates>7,7 8,7 8,8 7,7</coordinates></LinearRing></innerBoundaryIs>
      </Polygon>
    </Placemark>
  </Folder>
  <Placemark>
    <MultiGeometry>
      <Point><coordinates>1,2</coordinates></Point>
      <MultiGeometry><Point><coordinates>3,4</coordinates></Point></MultiGeometry>
    </MultiGeometry>
  </Placemark>
  <Placemark>
    <ExtendedData><Data name="note"/></ExtendedData>
    <MultiGeometry>
      <LineString><tessellate>1</tessellate><coordinates>1,2 3,4</coordinates></LineString>
      <LineString><coordinates>5,6, 7 7,8 , 9</coordinates></LineString>
    </MultiGeometry>
  </Placemark>
  <Placemark>
    <MultiGeometry>
      <Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></outerBoundaryIs></Polygon>
      <Polygon><outerBoundaryIs><LinearRing><coordinates>2,2 3,2 3,3 2,2</coordinates></LinearRing></outerBoundaryIs></Polygon>
    </MultiGeometry>
  </Placemark>
  <Placemark>
    <MultiGeometry>
      <Point><coordinates>1,2</coordinates></Point>
      <LineString><coordinates>1,2 3,4</coordinates></LineString>
      <MultiGeometry><Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></outerBoundaryIs></Polygon></MultiGeometry>
      <Point/>
    </MultiGeometry>
  </Placemark>
  <Placemark><name>nothing</name></Placemark>
  <Placemark>
    <LinearRing><coordinates>0,0 1,0 1,1</coordinates></LinearRing>
  </Placemark>
  <Placemark>
    <gx:Track><when>2010-05-28T02:02:09Z</when><when>2010-05-28T02:02:35Z</when>
      <gx:coord>-122.207881 37.371915 156.0</gx:coord><gx:coord>-122.205712 37.373288 152.0</gx:coord>
      <ExtendedData><SchemaData><gx:SimpleArrayData name="speed"><gx:value>1</gx:value></gx:SimpleArrayData></SchemaData></ExtendedData>
    </gx:Track>
  </Placemark>
  <Placemark>
    <gx:MultiTrack><gx:Track><gx:coord>1 2 3</gx:coord></gx:Track><gx:Track><gx:coord>1 2</gx:coord><gx:coord>3 4</gx:coord></gx:Track></gx:MultiTrack>
  </Placemark>
  <Placemark>
    <Point><coordinates>1,1</coordinates></Point>
    <LineString><coordinates>1,1 2,2</coordinates></LineString>
  </Placemark>
</Document>
</kml>
`

func TestReadFull(t *testing.T) {
	r, err := Open(strings.NewReader(fullDoc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "Parks & places" || r.Description() != "All of them" {
		t.Errorf("document %q, %q", r.Name(), r.Description())
	}
	attrs, feats, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	wantAttrs := []string{"name:string", "description:string", "timestamp:string", "pop:integer",
		"ratio:float", "zip:string", "area:float", "begin:string", "end:string", "note:string"}
	if got := attrSig(attrs); !reflect.DeepEqual(got, wantAttrs) {
		t.Fatalf("attributes %v\nwant %v", got, wantAttrs)
	}
	if attrs[3].Description != "Population" || attrs[3].ID != 3 {
		t.Errorf("pop attribute %+v", attrs[3])
	}
	nils := func(n int) []any { return make([]any, n) }
	row := func(kv map[int]any) []any {
		v := nils(10)
		for i, x := range kv {
			v[i] = x
		}
		return v
	}
	want := []feat{
		{row(map[int]any{0: "First", 1: "<b>bold</b> &amp; more", 2: "2011-03-05T14:07:21Z", 3: int64(1200), 4: 0.5, 5: "02134", 6: 12.0}),
			"POINT(-122.5 37.75)"},
		{row(map[int]any{0: "Second", 3: int64(-7), 4: 3.0, 5: "12345", 6: 1500.0, 7: "2010", 8: "2012", 9: "text <here>"}),
			"POLYGON((0 0,10 0,10 10,0 10,0 0),(1 1,2 1,2 2,1 1),(5 5,6 5,6 6,5 5),(7 7,8 7,8 8,7 7))"},
		{nils(10), "MULTIPOINT((1 2),(3 4))"},
		{nils(10), "MULTILINESTRING((1 2,3 4),(5 6,7 8))"}, // "5,6, 7" is one tuple
		{nils(10), "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((2 2,3 2,3 3,2 2)))"},
		{nils(10), "GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(1 2,3 4),POLYGON((0 0,1 0,1 1,0 0)))"},
		{row(map[int]any{0: "nothing"}), ""},
		{nils(10), "LINESTRING(0 0,1 0,1 1,0 0)"},
		{nils(10), "LINESTRING(-122.207881 37.371915,-122.205712 37.373288)"},
		{nils(10), "GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(1 2,3 4))"},
		{nils(10), "GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(1 1,2 2))"},
	}
	checkFeats(t, feats, want)
}

func TestReadNamespaces(t *testing.T) {
	want := []feat{{[]any{"A"}, "POINT(1 2)"}, {[]any{"B"}, "LINESTRING(1 2,3 4)"}}
	body := `<Placemark><name>A</name><Point><coordinates>1,2</coordinates></Point></Placemark>
	<Placemark><name>B</name><LineString><coordinates>1,2 3,4</coordinates></LineString></Placemark>`
	prefixed := strings.NewReplacer("</", "</k:", "<", "<k:").Replace(body)
	for name, doc := range map[string]string{
		"none":       `<kml>` + body + `</kml>`,
		"2.0":        `<?xml version="1.0"?><kml xmlns="http://earth.google.com/kml/2.0"><Document>` + body + `</Document></kml>`,
		"2.1":        `<kml xmlns="http://earth.google.com/kml/2.1"><Folder>` + body + `</Folder></kml>`,
		"prefix":     `<k:kml xmlns:k="http://www.opengis.net/kml/2.2"><k:Document>` + prefixed + `</k:Document></k:kml>`,
		"undeclared": `<k:kml><k:Document>` + prefixed + `</k:Document></k:kml>`,
		"top-level":  `<kml xmlns="http://www.opengis.net/kml/2.2">` + body + `</kml>`,
		"document":   `<Document>` + body + `</Document>`,
	} {
		t.Run(name, func(t *testing.T) {
			attrs, feats := mustRead(t, doc)
			if got := attrSig(attrs); !reflect.DeepEqual(got, []string{"name:string"}) {
				t.Errorf("attributes %v", got)
			}
			checkFeats(t, feats, want)
		})
	}
	// A Placemark as the root element.
	_, feats := mustRead(t, `<Placemark xmlns="http://www.opengis.net/kml/2.2"><name>x</name><Point><coordinates>1,2</coordinates></Point></Placemark>`)
	checkFeats(t, feats, []feat{{[]any{"x"}, "POINT(1 2)"}})
}

func TestReadValues(t *testing.T) {
	doc := `<kml><Document>
	<Placemark><name> 12 </name><description>  </description>
	  <ExtendedData>
	    <Data name="name"><value>dup</value></Data>
	    <Data name="i"><value>1</value></Data><Data name="i"><value>2</value></Data>
	    <Data name="big"><value>9223372036854775808</value></Data>
	    <Data name="lead"><value>007</value></Data>
	    <Data name="empty"><value></value></Data>
	    <Data name="Timestamp"><value>x</value></Data>
	    <Data name=""><value>anon</value></Data>
	    <Data name="geometry"><value>g</value></Data>
	    <Data name="html"><value>a&nbsp;b&eacute;</value></Data>
	  </ExtendedData>
	  <TimeStamp><when>2001</when></TimeStamp>
	</Placemark>
	<Placemark><ExtendedData><Data name="i"><value/></Data><Data name="big"><value>-3</value></Data>
	  <Data name="lead"><value>5</value></Data></ExtendedData></Placemark>
	</Document></kml>`
	attrs, feats := mustRead(t, doc)
	want := []string{"name:string", "description:string", "name_2:string", "i:integer", "big:float", "lead:string",
		"empty:string", "Timestamp:string", "column_9:string", "geometry_2:string", "html:string", "timestamp_2:string"}
	if got := attrSig(attrs); !reflect.DeepEqual(got, want) {
		t.Fatalf("attributes %v\nwant %v", got, want)
	}
	if attrs[2].OriginalName != "name" || attrs[11].OriginalName != "timestamp" {
		t.Errorf("original names %q %q", attrs[2].OriginalName, attrs[11].OriginalName)
	}
	checkFeats(t, feats, []feat{
		{[]any{"12", nil, "dup", int64(2), 9223372036854775808.0, "007", nil, "x", "anon", "g", "a\u00a0bé", "2001"}, ""},
		{[]any{nil, nil, nil, nil, -3.0, "5", nil, nil, nil, nil, nil, nil}, ""},
	})
}

func TestReadCoordinates(t *testing.T) {
	for _, tc := range []struct{ coords, wkt string }{
		{"1,2", "POINT(1 2)"},
		{" \n\t1,2,3\n", "POINT(1 2)"},
		{"1, 2", "POINT(1 2)"},
		{"1 ,2 , 3", "POINT(1 2)"},
		{"-180,-90", "POINT(-180 -90)"},
		{"180,90,-5e3", "POINT(180 90)"},
		{"+1.5e1,.5", "POINT(15 0.5)"},
	} {
		doc := `<kml><Placemark><Point><coordinates>` + tc.coords + `</coordinates></Point></Placemark></kml>`
		_, feats, err := readAll(t, doc, Options{})
		if err != nil {
			t.Errorf("%q: %v", tc.coords, err)
			continue
		}
		if feats[0].WKT != canon(t, tc.wkt) {
			t.Errorf("%q: %s, want %s", tc.coords, feats[0].WKT, tc.wkt)
		}
	}
	for _, tc := range []struct{ coords, wkt string }{
		{"1,2 3,4", "LINESTRING(1 2,3 4)"},
		{"1,2,0\r\n3,4,0\r\n5,6,0", "LINESTRING(1 2,3 4,5 6)"},
		{"1,2,0 3,4 5, 6", "LINESTRING(1 2,3 4,5 6)"},
		{"1,2 <!-- c -->3,4", "LINESTRING(1 2,3 4)"},
		{"1,2<!-- c -->3 4,5", "LINESTRING(1 23,4 5)"}, // a comment is not white space
		{"<![CDATA[1,2 3,4]]>", "LINESTRING(1 2,3 4)"},
	} {
		doc := `<kml><Placemark><LineString><coordinates>` + tc.coords + `</coordinates></LineString></Placemark></kml>`
		_, feats, err := readAll(t, doc, Options{})
		if err != nil {
			t.Errorf("%q: %v", tc.coords, err)
			continue
		}
		if feats[0].WKT != canon(t, tc.wkt) {
			t.Errorf("%q: %s, want %s", tc.coords, feats[0].WKT, tc.wkt)
		}
	}
	// Empty geometries are no geometry.
	for _, g := range []string{`<Point/>`, `<Point><coordinates> </coordinates></Point>`, `<LineString/>`,
		`<Polygon/>`, `<Polygon><outerBoundaryIs><LinearRing><coordinates/></LinearRing></outerBoundaryIs></Polygon>`,
		`<MultiGeometry/>`, `<MultiGeometry><Point/></MultiGeometry>`, `<gx:Track xmlns:gx="x"/>`, `<Model><Location><longitude>1</longitude></Location></Model>`} {
		_, feats, err := readAll(t, `<kml><Placemark>`+g+`</Placemark></kml>`, Options{})
		if err != nil {
			t.Errorf("%s: %v", g, err)
		} else if feats[0].WKT != "" {
			t.Errorf("%s: %s", g, feats[0].WKT)
		}
	}
}

// kmlErr reads doc and checks that it fails with EINVALID and a message
// containing want.
func kmlErr(t *testing.T, doc string, opt Options, want string) {
	t.Helper()
	_, _, err := readAll(t, doc, opt)
	if err == nil {
		t.Errorf("%.80q: no error, want %q", doc, want)
		return
	}
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Errorf("%.80q: error %v is not EINVALID", doc, err)
	}
	if msg := mapcommons.ErrorMessage(err); !strings.Contains(msg, want) {
		t.Errorf("%.80q: error %q, want %q", doc, msg, want)
	}
}

func pm(geom string) string {
	return `<kml><Document><Placemark>` + geom + `</Placemark></Document></kml>`
}

func TestReadErrors(t *testing.T) {
	lat91 := `<?xml version="1.0"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
<Document>
<Placemark><Point><coordinates>1,2</coordinates></Point></Placemark>
<Placemark><Point><coordinates>1,2</coordinates></Point></Placemark>
<Placemark>
  <name>third</name>
  <LineString>
    <coordinates>
      1,2
      3,4
      5,91
      6,7
    </coordinates>
  </LineString>
</Placemark>
</Document>
</kml>`
	kmlErr(t, lat91, Options{}, "kml: line 12: Placemark 3: coordinates: latitude 91 out of range")

	for _, tc := range []struct{ doc, want string }{
		{pm(`<Point><coordinates>181,0</coordinates></Point>`), "Placemark 1: coordinates: longitude 181 out of range"},
		{pm(`<Point><coordinates>-180.0001,0</coordinates></Point>`), "longitude -180.0001 out of range"},
		{pm(`<Point><coordinates>1,x</coordinates></Point>`), `coordinates: "x" is not a number`},
		{pm(`<Point><coordinates>NaN,1</coordinates></Point>`), `"NaN" is not a number`},
		{pm(`<Point><coordinates>1e999,1</coordinates></Point>`), `"1e999" is not a number`},
		{pm(`<Point><coordinates>0x10,1</coordinates></Point>`), `"0x10" is not a number`},
		{pm(`<Point><coordinates>1</coordinates></Point>`), "a tuple with one value"},
		{pm(`<Point><coordinates>1,2,3,4</coordinates></Point>`), "more than 3 values"},
		{pm(`<Point><coordinates>1,,2</coordinates></Point>`), "empty value"},
		{pm(`<Point><coordinates>,1,2</coordinates></Point>`), "empty value"},
		{pm(`<Point><coordinates>1,2,</coordinates></Point>`), "a comma at the end"},
		{pm(`<Point><coordinates>1,2 3,4</coordinates></Point>`), "Point: 2 coordinate tuples, not 1"},
		{pm(`<Point><coordinates>1,2</coordinates><coordinates>1,2</coordinates></Point>`), "more than one <coordinates>"},
		{pm(`<LineString><coordinates>1,2</coordinates></LineString>`), "LineString: 1 point, at least 2 needed"},
		{pm(`<LinearRing><coordinates>1,2 3,4 1,2</coordinates></LinearRing>`), "LinearRing: 3 points once closed"},
		{pm(`<Polygon><outerBoundaryIs><LinearRing><coordinates>1,2 3,4</coordinates></LinearRing></outerBoundaryIs></Polygon>`), "LinearRing: 3 points once closed"},
		{pm(`<Polygon><innerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></innerBoundaryIs></Polygon>`), "holes but no outer boundary"},
		{pm(`<Polygon><outerBoundaryIs/><outerBoundaryIs/></Polygon>`), "more than one outer boundary"},
		{pm(`<gx:Track xmlns:gx="x"><gx:coord>1,2</gx:coord></gx:Track>`), "coord: \"1,2\" is not a number"},
		{pm(`<gx:Track xmlns:gx="x"><gx:coord>1 95</gx:coord></gx:Track>`), "latitude 95 out of range"},
		{pm(`<MultiGeometry><Point><coordinates>1,200</coordinates></Point></MultiGeometry>`), "latitude 200 out of range"},
		// Broken XML.
		{"", "holds no XML element"},
		{"   \n", "holds no XML element"},
		{"not xml at all", "holds no XML element"},
		{`<kml><Placemark><name>x</name>`, "kml: line 1: Placemark 1: the file ends before <Placemark> (line 1) is closed"},
		{"<kml>\n<Document>\n<Placemark><name>x</na", "the file ends before"},
		{`<kml><Placemark><name>x</Placemark></kml>`, "XML syntax error: element <name> closed by </Placemark>"},
		{`<kml><Placemark><name a="1>x</name></Placemark></kml>`, "XML syntax error: unescaped < inside quoted string"},
		{`<kml><Placemark><name>&bogus;</name></Placemark></kml>`, "XML syntax error: invalid character entity &bogus;"},
		{`<kml></kml><kml></kml>`, "a second root element"},
		{`<feed xmlns="http://www.w3.org/2005/Atom"></feed>`, "the root element is <feed>, not <kml>"},
		{`<?xml version="1.1"?><kml/>`, "version"},
		{"<kml><Placemark><name>\xff</name></Placemark></kml>", "not valid UTF-8"},
		{"\xff\xfe<\x00k\x00", "UTF-16"},
		{`<?xml version="1.0" encoding="EBCDIC"?><kml/>`, `the encoding "EBCDIC" is not supported`},
		{`<?xml version="1.0" encoding="Shift_JIS"?><kml/>`, `the encoding "Shift_JIS" is not supported`},
		{`<kml><?xml version="1.0" encoding="latin1"?></kml>`, "line 1: an XML declaration that is not at the start"},
		{`<?xml version="1.0" encoding="latin1"?><?xml version="1.0" encoding="latin1"?><kml/>`, "an XML declaration that is not at the start"},
		{`<!-- c --><?xml version="1.0"?><kml/>`, "an XML declaration that is not at the start"},
		// Entity expansion.
		{`<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<kml><Placemark><name>&lol3;</name></Placemark></kml>`, "line 6: a DOCTYPE that declares entities is not allowed"},
		{`<!DOCTYPE kml SYSTEM "file:///etc/passwd" [<!entity x SYSTEM "file:///etc/passwd">]><kml>&x;</kml>`, "DOCTYPE that declares entities"},
	} {
		kmlErr(t, tc.doc, Options{}, tc.want)
	}
	// A DOCTYPE without entities is fine.
	if _, _, err := readAll(t, `<!DOCTYPE kml><kml/>`, Options{}); err != nil {
		t.Error(err)
	}
}

func TestReadLimits(t *testing.T) {
	deep := strings.Repeat("<Folder>", 100) + strings.Repeat("</Folder>", 100)
	kmlErr(t, `<kml>`+deep+`</kml>`, Options{}, "elements nested more than 100 deep")
	if _, _, err := readAll(t, `<kml>`+deep[:99*8]+deep[100*8:99*9+100*8]+`</kml>`, Options{}); err != nil {
		t.Errorf("99 nested folders: %v", err)
	}
	kmlErr(t, pm(strings.Repeat("<MultiGeometry>", 200)), Options{}, "nested more than 100 deep")
	kmlErr(t, `<kml>`+deep+`</kml>`, Options{MaxDepth: 10}, "nested more than 10 deep")

	var b strings.Builder
	b.WriteString(`<kml><Document>`)
	for i := 0; i < 1001; i++ {
		fmt.Fprintf(&b, `<Placemark><ExtendedData><Data name="a%d"><value>1</value></Data></ExtendedData></Placemark>`, i)
	}
	b.WriteString(`</Document></kml>`)
	kmlErr(t, b.String(), Options{}, "Placemark 1001: more than 1000 attributes")
	kmlErr(t, b.String(), Options{MaxAttributes: 10}, "Placemark 11: more than 10 attributes")

	b.Reset()
	b.WriteString(`<kml><Placemark><ExtendedData>`)
	for i := 0; i < 1006; i++ {
		b.WriteString(`<Data name="a"><value>1</value></Data>`)
	}
	b.WriteString(`</ExtendedData></Placemark></kml>`)
	kmlErr(t, b.String(), Options{}, "Placemark 1: more than 1005 values")

	long := strings.Repeat("x", 1<<20)
	if _, _, err := readAll(t, pm(`<name>`+long+`</name>`), Options{}); err != nil {
		t.Errorf("a 1 MiB name: %v", err)
	}
	kmlErr(t, pm(`<name>`+long+`y</name>`), Options{}, "Placemark 1: <name>: text longer than 1048576 bytes")
	kmlErr(t, pm(`<description>`+long+long+`</description>`), Options{}, "<description>: text longer than 1048576 bytes")
	kmlErr(t, pm(`<description><![CDATA[`+long+`]]>y</description>`), Options{}, "<description>: text longer than")
	kmlErr(t, pm(`<name>abcdef</name>`), Options{MaxValueBytes: 5}, "<name>: text longer than 5 bytes")
	kmlErr(t, pm(`<ExtendedData><Data name="`+long[:70000]+`"/></ExtendedData>`), Options{}, "a tag longer than 65536 bytes")
	kmlErr(t, pm(`<ExtendedData><Data name="abcdef"/></ExtendedData>`), Options{MaxValueBytes: 5}, "a name longer than 5 bytes")
	kmlErr(t, `<kml `+strings.Repeat(`a="" `, 20000)+`/>`, Options{}, "a tag longer than")
	kmlErr(t, `<kml><!--`+long+long+`--></kml>`, Options{}, "<kml>: text longer than")
	kmlErr(t, `<!--`+long+long+`--><kml/>`, Options{}, "text longer than")

	coords := strings.Repeat("1,2 ", 11)
	kmlErr(t, pm(`<LineString><coordinates>`+coords+`</coordinates></LineString>`), Options{MaxCoords: 10}, "Placemark 1: more than 10 coordinates")
	kmlErr(t, pm(`<MultiGeometry><LineString><coordinates>`+coords[:24]+`</coordinates></LineString><LineString><coordinates>`+coords[:24]+`</coordinates></LineString></MultiGeometry>`),
		Options{MaxCoords: 10}, "more than 10 coordinates")
	kmlErr(t, pm(`<Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1</coordinates></LinearRing></outerBoundaryIs></Polygon>`),
		Options{MaxCoords: 3}, "more than 3 coordinates")
	kmlErr(t, pm(`<LineString><coordinates>`+coords+`</coordinates></LineString>`), Options{MaxCoordBytes: 20}, "coordinates: longer than 20 bytes")
	// Coordinates may be longer than values by default.
	big := strings.Repeat("1.000000,2.000000 ", 100000)
	if _, feats, err := readAll(t, pm(`<LineString><coordinates>`+big+`</coordinates></LineString>`), Options{}); err != nil {
		t.Errorf("1.8 MB of coordinates: %v", err)
	} else if len(feats) != 1 {
		t.Errorf("%d features", len(feats))
	}
	kmlErr(t, pm(`<LineString><coordinates>`+big+`</coordinates></LineString>`), Options{MaxCoordBytes: 1 << 20}, "coordinates: longer than 1048576 bytes")
	// A tag inside coordinates is still bounded as a tag.
	kmlErr(t, pm(`<LineString><coordinates><x `+strings.Repeat(`a="" `, 20000)+`/></coordinates></LineString>`), Options{}, "a tag longer than")
}

func TestReadLineNumbers(t *testing.T) {
	doc := "<kml>\n<Document>\n\n<Placemark>\n<Point>\n<coordinates>\n\n  1,2,3\n  1,95</coordinates></Point></Placemark></Document></kml>"
	kmlErr(t, "<kml>\n<Document>\n\n<Placemark>\n<Point>\n<coordinates>\n\n  1,95,3\n</coordinates></Point></Placemark></Document></kml>", Options{}, "kml: line 8: Placemark 1: coordinates: latitude 95 out of range")
	kmlErr(t, doc, Options{}, "line 9: Placemark 1: coordinates: latitude 95")
	kmlErr(t, "<kml>\r\n<Placemark>\r\n<name>a</name>\r\n<Point><coordinates>\r\n1,x</coordinates></Point></Placemark></kml>", Options{}, "line 5: Placemark 1: coordinates: \"x\" is not a number")
}

func TestReadEncodings(t *testing.T) {
	for _, tc := range []struct {
		enc, raw, want string
	}{
		{"ISO-8859-1", "caf\xe9 \x80", "café €"},
		{"iso-8859-1", "\xa4", "¤"},
		{"windows-1252", "\x93q\x94 \x81", "“q” \u0081"},
		{"Windows-1252", "na\xefve", "naïve"},
		{"US-ASCII", "plain", "plain"},
		{"ISO-8859-15", "\xa4\xbd", "€œ"},
		{"UTF-8", "café", "café"},
		{"utf8", "café", "café"},
		{"UTF-16", "café", "café"}, // mislabelled: the bytes are 8-bit
	} {
		doc := `<?xml version="1.0" encoding="` + tc.enc + `"?>
<kml><Placemark><name>` + tc.raw + `</name><ExtendedData><Data name="` + tc.raw + `"><value>1</value></Data></ExtendedData></Placemark></kml>`
		attrs, feats, err := readAll(t, doc, Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.enc, err)
			continue
		}
		if feats[0].Vals[0] != tc.want || attrs[1].Name != tc.want {
			t.Errorf("%s: %q (attribute %q), want %q", tc.enc, feats[0].Vals[0], attrs[1].Name, tc.want)
		}
	}
	// A UTF-8 byte order mark.
	_, feats := mustRead(t, "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?><kml><Placemark><name>é</name></Placemark></kml>")
	checkFeats(t, feats, []feat{{[]any{"é"}, ""}})
	// Limits hold in decoded bytes after a switch of charset.
	long := strings.Repeat("\xe9", 600<<10) // 1.2 MB once UTF-8
	kmlErr(t, `<?xml version="1.0" encoding="latin1"?><kml><Placemark><name>`+long+`</name></Placemark></kml>`, Options{}, "<name>: text longer than")
	kmlErr(t, `<?xml version="1.0" encoding="latin1"?>`+"\n<kml>\n"+strings.Repeat("<a>", 101), Options{}, "line 3: elements nested more than 100 deep")
}

// errReader fails after n bytes.
type errReader struct {
	r io.ReadSeeker
	n int
}

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	if len(p) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= n
	return n, err
}

func (e *errReader) Seek(off int64, whence int) (int64, error) { return e.r.Seek(off, whence) }

func TestReadIOError(t *testing.T) {
	_, err := Open(&errReader{r: strings.NewReader(fullDoc), n: 100}, Options{})
	if err == nil || mapcommons.ErrorCode(err) != mapcommons.EINTERNAL || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("error %v", err)
	}
}

// changingFile returns one content in pass 1 and another in pass 2.
type changingFile struct {
	docs  []string
	cur   *strings.Reader
	seeks int
}

func (c *changingFile) Read(p []byte) (int, error) { return c.cur.Read(p) }
func (c *changingFile) Seek(off int64, whence int) (int64, error) {
	// Open seeks twice per pass (sniffing the start).
	c.cur = strings.NewReader(c.docs[min(c.seeks/2, len(c.docs)-1)])
	c.seeks++
	return c.cur.Seek(off, whence)
}

func TestReadChanged(t *testing.T) {
	a := `<kml><Placemark><ExtendedData><Data name="n"><value>1</value></Data></ExtendedData></Placemark></kml>`
	for _, b := range []string{
		`<kml></kml>`,
		`<kml><Placemark/><Placemark/></kml>`,
		`<kml><Placemark><ExtendedData><Data name="m"><value>1</value></Data></ExtendedData></Placemark></kml>`,
		`<kml><Placemark><ExtendedData><Data name="n"><value>x</value></Data></ExtendedData></Placemark></kml>`,
	} {
		r, err := Open(&changingFile{docs: []string{a, b}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = drain(t, r)
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "changed") {
			t.Errorf("%s: %v", b, err)
		}
		if _, err2 := r.Next(); err2 != err {
			t.Errorf("sticky error %v, then %v", err, err2)
		}
	}
}

func TestReadSchemaOddities(t *testing.T) {
	// A Placemark inside a Schema is no feature, in either pass.
	attrs, feats := mustRead(t, `<kml><Document><Schema id="s"><SimpleField name="a" type="string"/><Placemark><name>no</name></Placemark></Schema>
	<Placemark><name>yes</name><ExtendedData><SchemaData schemaUrl="#s"><SimpleData name="a">1</SimpleData></SchemaData></ExtendedData></Placemark></Document></kml>`)
	if g := strings.Join(attrSig(attrs), " "); g != "name:string a:string" {
		t.Errorf("attributes %s", g)
	}
	checkFeats(t, feats, []feat{{[]any{"yes", "1"}, ""}})
}

func TestReadEmpty(t *testing.T) {
	attrs, feats := mustRead(t, `<kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>d</name><NetworkLink><Link><href>x</href></Link></NetworkLink></Document></kml>`)
	if len(attrs) != 0 || len(feats) != 0 {
		t.Errorf("%v %v", attrs, feats)
	}
}

// makeZip builds a zip of name/content pairs.
func makeZip(t testing.TB, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenKMZ(t *testing.T) {
	one := `<kml><Placemark><name>one</name><Point><coordinates>1,2</coordinates></Point></Placemark></kml>`
	two := `<kml><Placemark><name>two</name></Placemark></kml>`
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"files/a.png", "png", "a.kml", two, "doc.kml", one}, "one"},
		{[]string{"files/x.kml", two, "__MACOSX/._a.kml", "junk", "main.KML", one}, "one"},
		{[]string{"dir/x.kml", one}, "one"},
	} {
		dir := t.TempDir()
		z := makeZip(t, tc.files...)
		r, cleanup, err := OpenKMZ(bytes.NewReader(z), int64(len(z)), archive.Limits{}, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, feats, err := drain(t, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(feats) != 1 || feats[0].Vals[0] != tc.want {
			t.Errorf("%v: %v", tc.files, feats)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%d files in the temporary directory", len(ents))
		}
		if err := cleanup(); err != nil {
			t.Error(err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%d files left after cleanup", len(ents))
		}
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		zip  []byte
		code string
		want string
	}{
		{makeZip(t, "a.txt", "x"), mapcommons.EINVALID, "no .kml file"},
		{[]byte("not a zip"), mapcommons.EINVALID, "not a readable zip"},
		{makeZip(t, "doc.kml", `<kml><Placemark><Point><coordinates>1,91</coordinates></Point></Placemark></kml>`), mapcommons.EINVALID, "kmz: doc.kml: kml: line 1: Placemark 1: coordinates: latitude 91 out of range"},
		{makeZip(t, "doc.kml", strings.Repeat(" ", 2000)+"<kml/>"), mapcommons.ETOOLARGE, "expands to more"},
	} {
		_, _, err := OpenKMZ(bytes.NewReader(tc.zip), int64(len(tc.zip)), archive.Limits{MaxBytes: 1000}, dir, Options{})
		if mapcommons.ErrorCode(err) != tc.code || !strings.Contains(mapcommons.ErrorMessage(err), tc.want) {
			t.Errorf("error %v, want %s %q", err, tc.code, tc.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%d files left after an error", len(ents))
		}
	}
	_ = filepath.Join
}

// TestOpenKMZLinks: a KMZ whose doc.kml only links to the documents of its
// layers (as GDAL's LIBKML driver and QGIS write it) reads the features of
// every linked document inside the archive, typed across all of them; links
// outside the archive, climbing out of it, or in circles are not followed.
func TestOpenKMZLinks(t *testing.T) {
	link := func(href string) string {
		return `<NetworkLink><name>` + href + `</name><Link><href>` + href + `</href></Link></NetworkLink>`
	}
	doc := `<?xml version="1.0" encoding="UTF-8"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document id="root_doc"><name>Two layers</name>` +
		link("layers/places.kml") + link("layers/roads.kml") + link("http://example.com/evil.kml") + link("../outside.kml") +
		link("/etc/passwd.kml") + link("layers/missing.kml") + `</Document></kml>`
	places := `<kml xmlns="http://www.opengis.net/kml/2.2"><Document><Schema name="places" id="places"><SimpleField name="pop" type="int"/></Schema>
	<Placemark><name>a</name><ExtendedData><SchemaData schemaUrl="#places"><SimpleData name="pop">10</SimpleData></SchemaData></ExtendedData><Point><coordinates>1,2</coordinates></Point></Placemark>
	<Placemark><name>b</name><ExtendedData><SchemaData schemaUrl="#places"><SimpleData name="pop">20</SimpleData></SchemaData></ExtendedData><Point><coordinates>3,4</coordinates></Point></Placemark>
	` + link("../doc.kml") + link("roads.kml") + `</Document></kml>`
	roads := `<kml xmlns="http://www.opengis.net/kml/2.2"><Document>
	<Placemark><name>c</name><ExtendedData><Data name="pop"><value>2.5</value></Data></ExtendedData><LineString><coordinates>0,0 1,1</coordinates></LineString></Placemark></Document></kml>`
	z := makeZip(t, "doc.kml", doc, "layers/places.kml", places, "layers/roads.kml", roads, "outside.kml", `<kml><Placemark><name>never</name></Placemark></kml>`)
	dir := t.TempDir()
	r, cleanup, err := OpenKMZ(bytes.NewReader(z), int64(len(z)), archive.Limits{}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	attrs, feats, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(attrSig(attrs), " "); g != "name:string pop:float" {
		t.Errorf("attributes %s", g)
	}
	checkFeats(t, feats, []feat{{[]any{"a", 10.0}, "POINT (1 2)"}, {[]any{"b", 20.0}, "POINT (3 4)"}, {[]any{"c", 2.5}, "LINESTRING (0 0, 1 1)"}})
	if r.Count() != 3 || r.Name() != "Two layers" || r.Empty() != nil {
		t.Errorf("count %d, name %q, empty %v", r.Count(), r.Name(), r.Empty())
	}
	if err := cleanup(); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left after cleanup", len(ents))
	}

	// Only links outside the archive: no features, and Empty says why.
	z = makeZip(t, "doc.kml", `<kml><Document>`+link("http://example.com/a.kml")+`</Document></kml>`)
	r, cleanup, err = OpenKMZ(bytes.NewReader(z), int64(len(z)), archive.Limits{}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := r.Empty(); mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "http://example.com/a.kml") {
		t.Errorf("Empty: %v", err)
	}
	for doc, want := range map[string]string{
		`<kml><Document><name>x</name></Document></kml>`:        "holds no features",
		`<kml><Document>` + link("b.kml") + `</Document></kml>`: "only links to other documents (b.kml)",
	} {
		r, err := Open(strings.NewReader(doc), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Empty(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Empty %v", doc, err)
		}
	}
}

func TestLinkTarget(t *testing.T) {
	for _, c := range []struct {
		from, href, want string
		ok               bool
	}{
		{"doc.kml", "layers/a.kml", "layers/a.kml", true},
		{"layers/a.kml", "b.kml", "layers/b.kml", true},
		{"layers/a.kml", "../doc.kml", "doc.kml", true},
		{"layers/a.kml", "./x/../b.kml#frag", "layers/b.kml", true},
		{"doc.kml", "layers/a%20b.kml", "layers/a b.kml", true},
		{"doc.kml", "../a.kml", "", false},
		{"doc.kml", "/a.kml", "", false},
		{"doc.kml", "http://example.com/a.kml", "", false},
		{"doc.kml", "//example.com/a.kml", "", false},
		{"doc.kml", "file:///etc/passwd", "", false},
		{"doc.kml", "", "", false},
	} {
		got, ok := linkTarget(c.from, c.href)
		if got != c.want || ok != c.ok {
			t.Errorf("linkTarget(%q, %q) = %q, %v", c.from, c.href, got, ok)
		}
	}
}
