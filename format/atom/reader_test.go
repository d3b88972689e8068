package atom

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"mapcommons"
	"mapcommons/internal/formattest"
)

// rfeat is a feature read back: values by attribute name and WKT.
type rfeat struct {
	vals map[string]any
	wkt  string
}

func readAll(src string) (*Reader, []rfeat, error) {
	r, err := Open(strings.NewReader(src))
	if err != nil {
		return nil, nil, err
	}
	var out []rfeat
	err = formattest.Each(r, func(f *mapcommons.Feature, wkt string) error {
		rf := rfeat{vals: map[string]any{}, wkt: wkt}
		for i, a := range r.Attributes() {
			if f.Values[i] != nil {
				rf.vals[a.Name] = f.Values[i]
			}
		}
		out = append(out, rf)
		return nil
	})
	return r, out, err
}

// check compares features with the expectations: every listed value, no
// other non-null value, and the WKT ("" for none).
func check(t *testing.T, got []rfeat, want []rfeat) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d features, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].wkt != want[i].wkt {
			t.Errorf("feature %d: geometry %q, want %q", i, got[i].wkt, want[i].wkt)
		}
		for k, v := range want[i].vals {
			if got[i].vals[k] != v {
				t.Errorf("feature %d: %s = %#v, want %#v", i, k, got[i].vals[k], v)
			}
		}
		for k, v := range got[i].vals {
			if _, ok := want[i].vals[k]; !ok {
				t.Errorf("feature %d: unexpected %s = %#v", i, k, v)
			}
		}
	}
}

const atomFeed = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss"
      xmlns:gml="http://www.opengis.net/gml" xmlns:ex="http://example.com/ns">
  <title>Test feed</title>
  <subtitle>All the forms</subtitle>
  <link rel="self" href="http://example.com/feed.atom"/>
  <link rel="alternate" href="http://example.com/"/>
  <updated>2010-03-31T20:38:14Z</updated>
  <author><name>Feeder</name></author>
  <id>urn:feed</id>
  <georss:point>1 1</georss:point>
  <entry>
    <title>Point entry</title>
    <summary>Plain &amp; simple</summary>
    <content type="html">&lt;p&gt;Hello &amp;amp; bye&lt;/p&gt;</content>
    <link rel="self" href="http://example.com/1.atom"/>
    <link rel="alternate" type="text/html" href="http://example.com/1"/>
    <published>2010-01-01T00:00:00Z</published>
    <updated>2010-01-02T00:00:00Z</updated>
    <author><name>Ann</name><uri>http://example.com/ann</uri></author>
    <author><name>Bob</name></author>
    <id>urn:1</id>
    <category term="a" scheme="http://example.com/tags"/>
    <category term="b"/>
    <ex:magnitude>4.5</ex:magnitude>
    <georss:featurename>Somewhere</georss:featurename>
    <georss:point>45.256 -71.92</georss:point>
  </entry>
  <entry>
    <title type="html">&lt;i&gt;Line&lt;/i&gt;</title>
    <link href="http://example.com/2"/>
    <ex:magnitude> 3 </ex:magnitude>
    <georss:line>45.256 -110.45 46.46 -109.48 43.84 -109.86</georss:line>
  </entry>
  <entry>
    <title>Open polygon</title>
    <link rel="edit" href="http://example.com/3/edit"/>
    <georss:polygon>
      45.256 -110.45 46.46 -109.48
      43.84 -109.86
    </georss:polygon>
  </entry>
  <entry><title>Box</title><georss:box>42.943 -71.032 43.039 -69.856</georss:box></entry>
  <entry><title>GML point</title>
    <georss:where><gml:Point><gml:pos>45.256 -71.92</gml:pos></gml:Point></georss:where></entry>
  <entry><title>GML line</title>
    <georss:where><gml:LineString><gml:posList>45.256 -110.45 46.46 -109.48 43.84 -109.86</gml:posList></gml:LineString></georss:where></entry>
  <entry><title>GML polygon</title>
    <georss:where><gml:Polygon>
      <gml:exterior><gml:LinearRing><gml:posList>0 0 0 10 10 10 10 0 0 0</gml:posList></gml:LinearRing></gml:exterior>
      <gml:interior><gml:LinearRing><gml:posList>2 2 2 4 4 4</gml:posList></gml:LinearRing></gml:interior>
    </gml:Polygon></georss:where></entry>
  <entry><title>GML envelope</title>
    <georss:where><gml:Envelope><gml:lowerCorner>42.943 -71.032</gml:lowerCorner><gml:upperCorner>43.039 -69.856</gml:upperCorner></gml:Envelope></georss:where></entry>
  <entry><title>GML coordinates</title>
    <georss:where><gml:Point><gml:coordinates>-71.92,45.256</gml:coordinates></gml:Point></georss:where></entry>
  <entry><title>W3C geo, undeclared prefix</title><geo:lat>45.256</geo:lat><geo:long>-71.92</geo:long></entry>
  <entry><title>W3C geo point</title><geo:Point><geo:lat>1.5</geo:lat><geo:lon>2.5</geo:lon><geo:alt>3</geo:alt></geo:Point></entry>
  <entry>
    <title>No geometry</title>
    <content type="xhtml">
      <div xmlns="http://www.w3.org/1999/xhtml"><p class="x">Hi <b>there</b> &amp; <br/>x</p></div>
    </content>
  </entry>
  <entry><title>Multi</title>
    <georss:where><gml:MultiSurface>
      <gml:surfaceMember><gml:Polygon><gml:exterior><gml:LinearRing><gml:posList>0 0 0 1 1 1 0 0</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></gml:surfaceMember>
      <gml:surfaceMember><gml:Polygon><gml:exterior><gml:LinearRing><gml:posList>5 5 5 6 6 6 5 5</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></gml:surfaceMember>
    </gml:MultiSurface></georss:where></entry>
  <entry><title>Collection</title>
    <georss:where><gml:MultiGeometry srsName="EPSG:4326">
      <gml:geometryMember><gml:Point><gml:pos>1 2</gml:pos></gml:Point></gml:geometryMember>
      <gml:geometryMember><gml:LineString><gml:coordinates>1,2 3,4</gml:coordinates></gml:LineString></gml:geometryMember>
      <gml:geometryMember><gml:LineString srsName="urn:ogc:def:crs:OGC:1.3:CRS84"><gml:posList>1 2 3 4</gml:posList></gml:LineString></gml:geometryMember>
    </gml:MultiGeometry></georss:where></entry>
  <entry><title>GML 2 multi</title>
    <georss:where><gml:MultiLineString>
      <gml:lineStringMember><gml:LineString><gml:pos>1 2</gml:pos><gml:pos>3 4</gml:pos></gml:LineString></gml:lineStringMember>
    </gml:MultiLineString></georss:where>
    <georss:point>9 9</georss:point></entry>
  <entry><title>GML 2 polygon</title>
    <gml:Polygon><gml:outerBoundaryIs><gml:LinearRing><gml:coordinates>0,0 1,0 1,1 0,0</gml:coordinates></gml:LinearRing></gml:outerBoundaryIs></gml:Polygon></entry>
  <entry><title>No extent</title><georss:box>0 0 0 0</georss:box></entry>
  <entry><title>3-D</title><georss:where><gml:Point srsDimension="3"><gml:pos>1 2 3</gml:pos></gml:Point></georss:where></entry>
</feed>
`

func TestAtom(t *testing.T) {
	r, got, err := readAll(atomFeed)
	if err != nil {
		t.Fatal(err)
	}
	if s := formattest.Schema(r.Attributes()); s != "title:string summary:string content:string link:string published:string updated:string author:string id:string category:string magnitude:float featurename:string" {
		t.Errorf("attributes %s", s)
	}
	wantFeed := Feed{Format: FormatAtom, Title: "Test feed", Description: "All the forms", Link: "http://example.com/", Author: "Feeder", Updated: "2010-03-31T20:38:14Z"}
	if r.Feed() != wantFeed {
		t.Errorf("feed %+v", r.Feed())
	}
	v := func(title string) map[string]any { return map[string]any{"title": title} }
	first := map[string]any{
		"title": "Point entry", "summary": "Plain & simple", "content": "<p>Hello &amp; bye</p>",
		"link": "http://example.com/1", "published": "2010-01-01T00:00:00Z", "updated": "2010-01-02T00:00:00Z",
		"author": "Ann, Bob", "id": "urn:1", "category": "a, b", "magnitude": 4.5, "featurename": "Somewhere",
	}
	check(t, got, []rfeat{
		{first, "POINT (-71.92 45.256)"},
		{map[string]any{"title": "<i>Line</i>", "link": "http://example.com/2", "magnitude": 3.0}, "LINESTRING (-110.45 45.256, -109.48 46.46, -109.86 43.84)"},
		{map[string]any{"title": "Open polygon", "link": "http://example.com/3/edit"}, "POLYGON ((-110.45 45.256, -109.48 46.46, -109.86 43.84, -110.45 45.256))"},
		{v("Box"), "POLYGON ((-71.032 42.943, -69.856 42.943, -69.856 43.039, -71.032 43.039, -71.032 42.943))"},
		{v("GML point"), "POINT (-71.92 45.256)"},
		{v("GML line"), "LINESTRING (-110.45 45.256, -109.48 46.46, -109.86 43.84)"},
		{v("GML polygon"), "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 2))"},
		{v("GML envelope"), "POLYGON ((-71.032 42.943, -69.856 42.943, -69.856 43.039, -71.032 43.039, -71.032 42.943))"},
		{v("GML coordinates"), "POINT (-71.92 45.256)"},
		{v("W3C geo, undeclared prefix"), "POINT (-71.92 45.256)"},
		{v("W3C geo point"), "POINT (2.5 1.5)"},
		{map[string]any{"title": "No geometry", "content": `<p class="x">Hi <b>there</b> &amp; <br>x</p>`}, ""},
		{v("Multi"), "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))"},
		{v("Collection"), "GEOMETRYCOLLECTION (POINT (2 1), LINESTRING (1 2, 3 4), LINESTRING (1 2, 3 4))"},
		{v("GML 2 multi"), "MULTILINESTRING ((2 1, 4 3))"},
		{v("GML 2 polygon"), "POLYGON ((0 0, 1 0, 1 1, 0 0))"},
		{v("No extent"), ""},
		{v("3-D"), "POINT (2 1)"},
	})
}

const rss2Feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>Quakes</title>
  <link>http://example.com/</link>
  <description>Recent quakes</description>
  <managingEditor>ed@example.com</managingEditor>
  <lastBuildDate>Tue, 10 Jun 2003 09:41:01 GMT</lastBuildDate>
  <atom:link rel="self" href="http://example.com/rss"/>
  <image><title>logo</title><url>http://example.com/logo.png</url></image>
  <item>
    <title>M 4.5 - Somewhere</title>
    <description><![CDATA[<p>Big <b>one</b></p>]]></description>
    <content:encoded><![CDATA[<div>full</div>]]></content:encoded>
    <link>http://example.com/q/1</link>
    <atom:link rel="self" href="http://example.com/q/1.rss"/>
    <pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate>
    <author>ann@example.com (Ann)</author>
    <dc:creator>Not used</dc:creator>
    <guid isPermaLink="false">q1</guid>
    <category>quake</category>
    <category domain="x">big</category>
    <georss:point>  12.5,  -70.25 </georss:point>
    <geo:lat>0</geo:lat><geo:long>0</geo:long>
    <mag>4.5</mag>
    <code>007</code>
  </item>
  <item>
    <title>Second</title>
    <dc:creator>Bob</dc:creator>
    <dc:creator>Cy</dc:creator>
    <dc:date>2003-06-11</dc:date>
    <geo:lat>-33.5</geo:lat>
    <geo:long>151.25</geo:long>
    <mag>3</mag>
    <code>12</code>
    <enclosure url="http://example.com/a.mp3" length="1" type="audio/mpeg"/>
  </item>
  <item>
    <title>No location</title>
    <description>Unescaped <b>markup</b> &amp; text</description>
    <comments>http://example.com/c</comments>
    <atom:link href="http://example.com/q/3"/>
  </item>
</channel>
</rss>
`

func TestRSS2(t *testing.T) {
	r, got, err := readAll(rss2Feed)
	if err != nil {
		t.Fatal(err)
	}
	if s := formattest.Schema(r.Attributes()); s != "title:string description:string content:string link:string published:string author:string guid:string category:string mag:float code:string comments:string" {
		t.Errorf("attributes %s", s)
	}
	wantFeed := Feed{Format: FormatRSS, Title: "Quakes", Description: "Recent quakes", Link: "http://example.com/", Author: "ed@example.com", Updated: "Tue, 10 Jun 2003 09:41:01 GMT"}
	if r.Feed() != wantFeed {
		t.Errorf("feed %+v", r.Feed())
	}
	check(t, got, []rfeat{
		{map[string]any{
			"title": "M 4.5 - Somewhere", "description": "<p>Big <b>one</b></p>", "content": "<div>full</div>",
			"link": "http://example.com/q/1", "published": "Tue, 10 Jun 2003 04:00:00 GMT", "author": "ann@example.com (Ann)",
			"guid": "q1", "category": "quake, big", "mag": 4.5, "code": "007",
		}, "POINT (-70.25 12.5)"},
		{map[string]any{"title": "Second", "author": "Bob, Cy", "published": "2003-06-11", "mag": 3.0, "code": "12"}, "POINT (151.25 -33.5)"},
		{map[string]any{"title": "No location", "description": "Unescaped <b>markup</b> &amp; text", "comments": "http://example.com/c", "link": "http://example.com/q/3"}, ""},
	})
}

const rss1Feed = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
  xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:georss="http://www.georss.org/georss"
  xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#">
  <channel rdf:about="http://example.com/">
    <title>RDF feed</title>
    <link>http://example.com/</link>
    <description>d</description>
    <dc:creator>Dee</dc:creator>
    <items><rdf:Seq><rdf:li rdf:resource="http://example.com/1"/><rdf:li rdf:resource="http://example.com/2"/></rdf:Seq></items>
  </channel>
  <item rdf:about="http://example.com/1">
    <title>One</title>
    <link>http://example.com/1</link>
    <description>first</description>
    <dc:date>2004-01-01</dc:date>
    <dc:creator>Cy</dc:creator>
    <dc:subject>s1</dc:subject>
    <dc:subject>s2</dc:subject>
    <georss:box>10 20 30 40</georss:box>
  </item>
  <item rdf:about="http://example.com/2">
    <dc:title>Two</dc:title>
    <geo:Point><geo:lat>5</geo:lat><geo:long>6</geo:long></geo:Point>
    <geo:lat_long>7,8</geo:lat_long>
  </item>
</rdf:RDF>
`

func TestRSS1(t *testing.T) {
	r, got, err := readAll(rss1Feed)
	if err != nil {
		t.Fatal(err)
	}
	if s := formattest.Schema(r.Attributes()); s != "title:string description:string link:string published:string author:string guid:string category:string" {
		t.Errorf("attributes %s", s)
	}
	wantFeed := Feed{Format: FormatRSS, Title: "RDF feed", Description: "d", Link: "http://example.com/", Author: "Dee"}
	if r.Feed() != wantFeed {
		t.Errorf("feed %+v", r.Feed())
	}
	check(t, got, []rfeat{
		{map[string]any{"title": "One", "link": "http://example.com/1", "description": "first", "published": "2004-01-01",
			"author": "Cy", "category": "s1, s2", "guid": "http://example.com/1"}, "POLYGON ((20 10, 40 10, 40 30, 20 30, 20 10))"},
		{map[string]any{"title": "Two", "guid": "http://example.com/2"}, "POINT (6 5)"},
	})
}

func TestEntryDocumentAndAtom03(t *testing.T) {
	_, got, err := readAll(`<entry xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss"><title>Lone</title><georss:point>1 2</georss:point></entry>`)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []rfeat{{map[string]any{"title": "Lone"}, "POINT (2 1)"}})

	_, got, err = readAll(`<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><title>Old</title><issued>2004-01-01</issued><modified>2004-01-02</modified>
		<content type="text/html" mode="escaped">&lt;b&gt;x&lt;/b&gt;</content><georss:point>3 4</georss:point></entry></feed>`)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []rfeat{{map[string]any{"title": "Old", "published": "2004-01-01", "updated": "2004-01-02", "content": "<b>x</b>"}, "POINT (4 3)"}})
}

func TestEncodings(t *testing.T) {
	latin := `<?xml version="1.0" encoding="ISO-8859-1"?><rss version="2.0"><channel><item><title>Caf` + "\xe9 \x80" + `</title></item></channel></rss>`
	_, got, err := readAll(latin)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []rfeat{{map[string]any{"title": "Café €"}, ""}})

	win, _ := charmap.Windows1252.NewEncoder().String(`<?xml version="1.0" encoding="windows-1252"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><title>“Zürich”</title></entry></feed>`)
	if _, got, err = readAll(win); err != nil {
		t.Fatal(err)
	}
	check(t, got, []rfeat{{map[string]any{"title": "“Zürich”"}, ""}})

	u16, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(`<?xml version="1.0" encoding="UTF-16"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><title>Ωmega</title><georss:point>1 2</georss:point></entry></feed>`)
	if _, got, err = readAll(u16); err != nil {
		t.Fatal(err)
	}
	check(t, got, []rfeat{{map[string]any{"title": "Ωmega"}, "POINT (2 1)"}})

	bom := "\xEF\xBB\xBF" + `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><title>&eacute;&nbsp;x</title></entry></feed>`
	if _, got, err = readAll(bom); err != nil {
		t.Fatal(err)
	}
	check(t, got, []rfeat{{map[string]any{"title": "é\u00a0x"}, ""}})
}

func TestEmptyFeed(t *testing.T) {
	r, got, err := readAll(`<rss version="2.0"><channel><title>Nothing</title></channel></rss>`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 || len(r.Attributes()) != 0 || r.Feed().Title != "Nothing" {
		t.Errorf("%v %v %+v", got, r.Attributes(), r.Feed())
	}
}

func feedWith(entry string) string {
	return `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss" xmlns:gml="http://www.opengis.net/gml" xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#">
<entry><title>ok</title><georss:point>1 2</georss:point></entry>
<entry><title>two</title>` + entry + `</entry>
</feed>`
}

func TestErrors(t *testing.T) {
	deep := "<feed xmlns='http://www.w3.org/2005/Atom'><entry>" + strings.Repeat("<x>", 200) + strings.Repeat("</x>", 200) + "</entry></feed>"
	laughs := `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>&lol3;</title></entry></feed>`
	truncated := feedWith("<georss:point>1 2</georss:point>")
	truncated = truncated[:strings.Index(truncated, "<title>two")+20]
	for _, tc := range []struct{ name, in, want string }{
		{"truncated", atomFeed[:len(atomFeed)/2], "unexpected end of file"},
		{"truncated in entry", truncated, "entry 2: unexpected end of file (is the file truncated?) (line 3)"},
		{"lat 91", feedWith("<georss:point>91 2</georss:point>"), "atom: entry 2: georss:point: latitude 91 out of range (line 3)"},
		{"lon 181", feedWith("<georss:line>1 2 3 181</georss:line>"), "entry 2: georss:line: longitude 181 out of range"},
		{"odd line", feedWith("<georss:line>1 2 3 4 5</georss:line>"), "entry 2: georss:line: an odd number of coordinates (5)"},
		{"short line", feedWith("<georss:line>1 2</georss:line>"), "a line needs at least 2 positions"},
		{"short polygon", feedWith("<georss:polygon>1 2 3 4 1 2</georss:polygon>"), "georss:polygon: a polygon ring needs at least 3 different positions"},
		{"point 3 numbers", feedWith("<georss:point>1 2 3</georss:point>"), "georss:point: 3 numbers"},
		{"NaN", feedWith("<georss:point>NaN 2</georss:point>"), `georss:point: "NaN" is not a number`},
		{"box order", feedWith("<georss:box>10 0 5 1</georss:box>"), "georss:box: the south-west corner"},
		{"box antimeridian", feedWith("<georss:box>0 170 5 -170</georss:box>"), "antimeridian"},
		{"markup in point", feedWith("<georss:point><b>1 2</b></georss:point>"), "georss:point: holds elements"},
		{"geo lat alone", feedWith("<geo:lat>1</geo:lat>"), "entry 2: geo:lat: no geo:long"},
		{"geo lat range", feedWith("<geo:lat>-90.5</geo:lat><geo:long>1</geo:long>"), "geo:lat: latitude -90.5 out of range"},
		{"gml srs", feedWith(`<georss:where><gml:Point srsName="EPSG:3857"><gml:pos>1 2</gml:pos></gml:Point></georss:where>`), `gml:Point: srsName "EPSG:3857" is not WGS 84`},
		{"gml ring", feedWith(`<georss:where><gml:Polygon><gml:exterior><gml:LinearRing><gml:posList>1 2 3 4</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></georss:where>`), "gml:LinearRing: a polygon ring needs"},
		{"gml odd", feedWith(`<georss:where><gml:LineString><gml:posList>1 2 3</gml:posList></gml:LineString></georss:where>`), "gml:posList: an odd number of coordinates (3)"},
		{"gml no coords", feedWith(`<georss:where><gml:Point/></georss:where>`), "gml:Point: no coordinates"},
		{"gml unsupported", feedWith(`<georss:where><gml:Curve/></georss:where>`), "gml:Curve: not a supported GML geometry"},
		{"gml wrong member", feedWith(`<georss:where><gml:MultiPoint><gml:pointMember><gml:LineString><gml:posList>1 2 3 4</gml:posList></gml:LineString></gml:pointMember></gml:MultiPoint></georss:where>`), "a LineString in a gml:MultiPoint"},
		{"gml empty multi", feedWith(`<georss:where><gml:MultiPoint/></georss:where>`), "gml:MultiPoint: no members"},
		{"where empty", feedWith(`<georss:where/>`), "georss:where: no GML geometry"},
		{"gml not gml", feedWith(`<georss:where><Point/></georss:where>`), "Point: not a GML geometry"},
		{"billion laughs", laughs, "DOCTYPE declares entities"},
		{"undefined entity", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>&bogus;</title></entry></feed>`, "invalid character entity &bogus;"},
		{"not a feed", `<kml xmlns="http://www.opengis.net/kml/2.2"><Document/></kml>`, "not an Atom or RSS feed: the root element is <kml>"},
		{"empty", "", "no XML element"},
		{"json", `{"type":"FeatureCollection"}`, "no XML element"},
		{"deep", deep, "nested more than 128 deep"},
		{"bad utf8", "<feed xmlns='http://www.w3.org/2005/Atom'><entry><title>\xff</title></entry></feed>", "invalid UTF-8"},
		{"bad charset", `<?xml version="1.0" encoding="x-bogus"?><feed/>`, `unsupported encoding "x-bogus"`},
		{"mismatched", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>x</entry></feed>`, "entry 1: element <title> closed by </entry>"},
		{"long text", "<rss><channel><item><title>" + strings.Repeat("x", maxText+5000) + "</title></item></channel></rss>", "item 1: title: longer than 1 MiB"},
		{"long ext", "<rss><channel><item><x>" + strings.Repeat("x", maxText+5000) + "</x></item></channel></rss>", "item 1: x: longer than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readAll(tc.in)
			formattest.WantInvalid(t, err, tc.want)
		})
	}
}

func TestTooManyAttributes(t *testing.T) {
	var b strings.Builder
	b.WriteString("<rss><channel><item>")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "<e%d>1</e%d>", i, i)
	}
	b.WriteString("</item></channel></rss>")
	_, _, err := readAll(b.String())
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "at most 1000 attributes") {
		t.Fatalf("error %v", err)
	}
}

func TestLongToken(t *testing.T) {
	defer func(n int64) { maxToken = n }(maxToken)
	maxToken = 2 << 20
	for _, in := range []string{
		"<rss><channel><!--" + strings.Repeat("x", int(maxToken)+10) + "--></channel></rss>",
		"<rss><channel><item><georss:line>" + strings.Repeat("1 ", int(maxToken)) + "</georss:line></item></channel></rss>",
		"<rss><channel><item a='" + strings.Repeat("x", int(maxToken)) + "'></item></channel></rss>",
	} {
		_, _, err := readAll(in)
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "longer than 2 MiB") {
			t.Fatalf("error %v", err)
		}
	}
}

func TestTooManyPoints(t *testing.T) {
	in := feedWith("<georss:line>" + strings.Repeat("1 2 ", maxPoints+1) + "</georss:line>")
	_, _, err := readAll(in)
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "entry 2: georss:line: more than 1000000 positions") {
		t.Fatalf("error %v", err)
	}
}

func TestIOError(t *testing.T) {
	_, err := Open(formattest.ErrReader{Reader: strings.NewReader(`<rss><channel><item><title>x</title>`)})
	if !errors.Is(err, formattest.ErrDisk) || mapcommons.ErrorCode(err) != mapcommons.EINTERNAL {
		t.Fatalf("error %v", err)
	}
}

func TestChangedFile(t *testing.T) {
	one := `<rss><channel><item><title>a</title></item></channel></rss>`
	two := `<rss><channel><item><title>a</title></item><item><title>b</title></item></channel></rss>`
	for _, tc := range [][2]string{{one, two}, {two, one}} {
		r, err := Open(&formattest.ChangingReader{ReadSeeker: strings.NewReader(tc[0]), Second: []byte(tc[1])})
		if err != nil {
			t.Fatal(err)
		}
		for {
			_, err = r.Next()
			if err != nil {
				break
			}
		}
		if err == io.EOF || !strings.Contains(err.Error(), "changed") {
			t.Errorf("error %v", err)
		}
		if _, err2 := r.Next(); err2 != err {
			t.Errorf("second error %v", err2)
		}
	}
}

func TestGeometryForms(t *testing.T) {
	w := func(s string) string { return "<georss:where>" + s + "</georss:where>" }
	nest := w(strings.Repeat("<gml:MultiGeometry><gml:geometryMember>", 10) + "<gml:Point><gml:pos>1 2</gml:pos></gml:Point>" + strings.Repeat("</gml:geometryMember></gml:MultiGeometry>", 10))
	for _, tc := range []struct{ name, in, want string }{
		{"degenerate box", "<georss:box>1 2 1 2</georss:box>", "POINT (2 1)"},
		{"gml box", w("<gml:Box><gml:coordinates>2,1 4,3</gml:coordinates></gml:Box>"), "POLYGON ((2 1, 4 1, 4 3, 2 3, 2 1))"},
		{"point properties", w("<gml:LineString><gml:pointProperty><gml:Point><gml:pos>1 2</gml:pos></gml:Point></gml:pointProperty><gml:pointRep><gml:Point><gml:pos>3 4</gml:pos></gml:Point></gml:pointRep></gml:LineString>"), "LINESTRING (2 1, 4 3)"},
		{"linear ring", w("<gml:LinearRing><gml:posList>0 0 0 1 1 1</gml:posList></gml:LinearRing>"), "POLYGON ((0 0, 1 0, 1 1, 0 0))"},
		{"envelope of pos", w("<gml:Envelope><gml:pos>1 2</gml:pos><gml:pos>3 4</gml:pos></gml:Envelope>"), "POLYGON ((2 1, 4 1, 4 3, 2 3, 2 1))"},
		{"cs ts decimal", w(`<gml:LineString><gml:coordinates cs=";" ts="|" decimal=",">0,5;0|1;0|1;1</gml:coordinates></gml:LineString>`), "LINESTRING (0.5 0, 1 0, 1 1)"},
		{"gml2 srs", w(`<gml:MultiPoint srsName="http://www.opengis.net/gml/srs/epsg.xml#4326"><gml:pointMembers><gml:Point><gml:pos>1 2</gml:pos></gml:Point><gml:Point><gml:pos>3 4</gml:pos></gml:Point></gml:pointMembers></gml:MultiPoint>`), "MULTIPOINT ((1 2), (3 4))"},
		{"gml 3.2", w(`<g:Point xmlns:g="http://www.opengis.net/gml/3.2"><g:pos>1 2</g:pos></g:Point>`), "POINT (2 1)"},
		{"srsDimension 3", w(`<gml:LineString><gml:posList srsDimension="3">1 2 9 3 4 9</gml:posList></gml:LineString>`), "LINESTRING (2 1, 4 3)"},
		{"MultiCurve", w(`<gml:MultiCurve><gml:curveMember><gml:LineString><gml:posList>1 2 3 4</gml:posList></gml:LineString></gml:curveMember></gml:MultiCurve>`), "MULTILINESTRING ((2 1, 4 3))"},
		{"MultiPolygon", w(`<gml:MultiPolygon><gml:polygonMember><gml:Polygon><gml:exterior><gml:LinearRing><gml:posList>0 0 0 1 1 1</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></gml:polygonMember></gml:MultiPolygon>`), "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))"},
		{"first of two", w(`<gml:Point><gml:pos>1 2</gml:pos></gml:Point><gml:Point><gml:pos>3 4</gml:pos></gml:Point>`), "POINT (2 1)"},
		{"lat_long", "<geo:lat_long>7,8</geo:lat_long>", "POINT (8 7)"},
		{"circle", "<georss:circle>1 2 500</georss:circle>", ""},
		{"geometry in extension", "<ex:place xmlns:ex='http://x/'><ex:name>x</ex:name><georss:point>5 6</georss:point></ex:place>", "POINT (6 5)"},
		{"srsDimension 4", w(`<gml:Point srsDimension="4"><gml:pos>1 2 3 4</gml:pos></gml:Point>`), "error: srsDimension \"4\": only 2 and 3"},
		{"dim 3 count", w(`<gml:LineString><gml:posList srsDimension="3">1 2 3 4</gml:posList></gml:LineString>`), "error: 4 numbers is not a multiple of srsDimension 3"},
		{"tuple", w(`<gml:Point><gml:coordinates>1</gml:coordinates></gml:Point>`), "error: gml:coordinates: tuple \"1\""},
		{"tuple number", w(`<gml:Point><gml:coordinates>1,x</gml:coordinates></gml:Point>`), "error: gml:coordinates: \"x\" is not a number"},
		{"cs ts", w(`<gml:Point><gml:coordinates cs=" ">1 2</gml:coordinates></gml:Point>`), "error: cs, ts and decimal must differ"},
		{"two exteriors", w(`<gml:Polygon><gml:exterior><gml:LinearRing><gml:posList>0 0 0 1 1 1</gml:posList></gml:LinearRing></gml:exterior><gml:exterior/></gml:Polygon>`), "error: gml:Polygon: more than one exterior ring"},
		{"interior first", w(`<gml:Polygon><gml:interior/></gml:Polygon>`), "error: gml:Polygon: an interior ring before the exterior ring"},
		{"exterior empty", w(`<gml:Polygon><gml:exterior/></gml:Polygon>`), "error: gml:exterior: no gml:LinearRing in it"},
		{"no exterior", w(`<gml:Polygon/>`), "error: gml:Polygon: no exterior ring"},
		{"point of two", w(`<gml:Point><gml:posList>1 2 3 4</gml:posList></gml:Point>`), "error: gml:Point: 2 positions, want 1"},
		{"gml line short", w(`<gml:LineString><gml:pos>1 2</gml:pos></gml:LineString>`), "error: gml:LineString: a line needs at least 2 positions, has 1"},
		{"envelope one corner", w(`<gml:Envelope><gml:lowerCorner>1 2</gml:lowerCorner></gml:Envelope>`), "error: gml:Envelope: 1 positions, want 2 corners"},
		{"envelope order", w(`<gml:Envelope><gml:lowerCorner>5 2</gml:lowerCorner><gml:upperCorner>1 4</gml:upperCorner></gml:Envelope>`), "error: gml:Envelope: the south-west corner"},
		{"member srs", w(`<gml:MultiPoint><gml:pointMember srsName="EPSG:27700"><gml:Point><gml:pos>1 2</gml:pos></gml:Point></gml:pointMember></gml:MultiPoint>`), "error: gml:pointMember: srsName \"EPSG:27700\""},
		{"ring srs", w(`<gml:Polygon><gml:exterior><gml:LinearRing srsName="x"><gml:posList>0 0 0 1 1 1</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon>`), "error: gml:LinearRing: srsName \"x\""},
		{"nested", nest, "error: collections nested more than 8 deep"},
		{"geo lat two", "<geo:lat>1 2</geo:lat><geo:long>1</geo:long>", "error: geo:lat: 2 numbers, want 1"},
		{"geo long range", "<geo:lat>1</geo:lat><geo:long>-181</geo:long>", "error: geo:long: longitude -181 out of range"},
		{"geo long alone", "<geo:Point><geo:long>1</geo:long></geo:Point>", "error: geo:long: no geo:lat goes with it"},
		{"lat_long range", "<geo:lat_long>91,8</geo:lat_long>", "error: geo:lat_long: latitude 91 out of range"},
		{"box range", "<georss:box>-95 0 1 1</georss:box>", "error: georss:box: latitude -95 out of range"},
		{"box corner range", "<georss:box>0 0 1 200</georss:box>", "error: georss:box: longitude 200 out of range"},
		{"box count", "<georss:box>0 0 1</georss:box>", "error: georss:box: 3 numbers, want 4"},
		{"overflow", "<georss:point>1 2e999</georss:point>", "error: georss:point: \"2e999\" is not a number"},
		{"long number", "<georss:point>1 " + strings.Repeat("9", 50) + "x</georss:point>", "error: is not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := readAll(feedWith(tc.in))
			if msg, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "entry 2: ") {
					t.Fatalf("error %v, want %q", err, msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got[1].wkt != tc.want {
				t.Errorf("geometry %q, want %q", got[1].wkt, tc.want)
			}
		})
	}
}
