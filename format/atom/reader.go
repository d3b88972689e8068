// Package atom reads uploaded Atom and RSS feeds with GeoRSS locations as
// features, and writes datasets as Atom feeds with GeoRSS.
//
// # Reading
//
// Open reads its input twice: pass 1 (in Open) walks the whole document,
// validates every entry and its geometry and infers the attribute set; pass
// 2 (Next) streams the features. Both passes use encoding/xml's Decoder.Token;
// only one entry is held in memory at a time.
//
// One feature is read from each Atom entry (Atom 1.0 and 0.3; also a lone
// entry document) and each RSS item (RSS 0.9x and 2.0 under rss/channel, RSS
// 1.0 under rdf:RDF). Entries and items are recognised at any depth under
// the root, never inside another entry.
//
// Geometry, the first one an entry has (others are validated, then ignored):
//
//   - GeoRSS Simple: georss:point "lat lon", georss:line and georss:polygon
//     (lat lon pairs: latitude first), georss:box "south-lat west-lon
//     north-lat east-lon" (a polygon; a point when both corners are equal; no
//     geometry for "0 0 0 0", which GeoCommons wrote for "no extent"). The
//     numbers may be separated by white space or commas.
//   - GeoRSS GML in georss:where (or a GML geometry directly in the entry):
//     gml:Point, gml:LineString, gml:LinearRing, gml:Polygon (exterior and
//     interior rings, or GML 2 outerBoundaryIs/innerBoundaryIs), gml:Envelope
//     (lowerCorner, upperCorner), GML 2 gml:Box, and the collections
//     gml:MultiPoint, gml:MultiLineString, gml:MultiCurve, gml:MultiPolygon,
//     gml:MultiSurface and gml:MultiGeometry. gml:pos and gml:posList are
//     "lat lon" (the GeoRSS GML profile; srsDimension="3" drops the height)
//     unless srsName names CRS84; gml:coordinates is "lon,lat" tuples, the GML
//     2 convention (cs, ts and decimal are honoured). An srsName that is not
//     WGS 84 (EPSG:4326 in any of its spellings, or CRS84) is an error.
//   - W3C Basic Geo: geo:lat with geo:long (or geo:lon), directly in the entry
//     or in a geo:Point; geo:lat_long "lat,long". Used when the entry has no
//     GeoRSS geometry.
//
// Latitudes must lie in [-90, 90] and longitudes in [-180, 180]; a line needs
// two positions, a ring three distinct ones (an open ring is closed). An entry
// without geometry gives a feature with a nil geometry.
//
// Namespaces are matched by URI (Atom 1.0 and 0.3, RSS 1.0 and 0.90, GeoRSS
// with or without the /10 suffix, GML 3.1 and 3.2, W3C geo, Dublin Core,
// RSS content); a prefix that is never declared (georss:, gml:, geo:, dc:,
// content:, common in hand-made feeds) is matched by the prefix itself.
//
// Attributes are the well-known fields that occur in at least one entry, in
// this order, always of type string:
//
//	title        title (dc:title when there is none)
//	summary      Atom summary; named "description" in RSS feeds (RSS description, dc:description)
//	content      Atom content (its src when it has no text); RSS content:encoded
//	link         Atom: href of the first rel="alternate" link (or link without rel), else of the
//	             first link; RSS: the text of link (atom:link href when there is none)
//	published    Atom published (0.3 issued); RSS pubDate; dc:date when there is none
//	updated      Atom updated (0.3 modified)
//	author       Atom author/name; RSS author; dc:creator when there is none (several are joined with ", ")
//	id           Atom id; named "guid" in RSS feeds (guid, rdf:about, dc:identifier)
//	category     Atom category/@term, RSS category text (dc:subject when there is none), joined with ", "
//
// followed by one attribute for each other element of an entry that holds
// only text (rights, comments, source, georss:featurename, georss:elev, an
// extension element such as ex:magnitude ...), named by its local name, in
// order of first appearance, its type inferred from its values by package
// infer (integer, float or string). Repeated elements are joined with ", ".
// Names are made unique by mapcommons.NormalizeAttributes. Text is trimmed
// of surrounding white space; empty text is null. Atom text of type "html"
// is kept as the HTML it holds; type "xhtml" is serialized back to markup
// without its wrapping div; markup that appears in any other text field is
// kept as markup too.
//
// Limits and security: a DOCTYPE that declares entities is refused (encoding/xml
// never expands them; the refusal names the "billion laughs" attack rather than
// failing on the first undefined entity); HTML entities (&nbsp; ...) are
// accepted. Elements nest at most 128 deep; one token (a tag, a run of text, a
// comment) is at most 32 MiB; an attribute value at most 1 MiB; the text of a
// geometry at most 32 MiB and 1,000,000 positions; a feed at most 10,000,000
// entries; 1000 attributes. The declared encoding may be any WHATWG label
// (ISO-8859-1 and Windows-1252 read as Windows-1252, as browsers do); UTF-8
// and UTF-16 byte order marks are honoured.
//
// Errors are *mapcommons.Error with code EINVALID and name the entry
// (1-based, so entry n is the feature at Position n-1), the element and the
// line: "atom: entry 3: georss:point: latitude 91 out of range (line 40)".
// RSS items are called "item".
package atom

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"mapcommons"
	"mapcommons/format/infer"
	"mapcommons/format/xmltext"
)

// maxToken bounds the bytes of one token (a variable for the tests).
var maxToken int64 = 32 << 20

// Limits of the reader.
const (
	maxDepth    = 128
	maxText     = 1 << 20
	maxGeomText = 32 << 20
	maxPoints   = 1_000_000
	maxEntries  = 10_000_000
	maxGMLNodes = 1 << 18
	maxGMLDepth = 8 // nesting of GML collections
)

// Namespace URIs.
const (
	nsAtom      = "http://www.w3.org/2005/Atom"
	nsAtom03    = "http://purl.org/atom/ns#"
	nsRSS10     = "http://purl.org/rss/1.0/"
	nsRSS09     = "http://my.netscape.com/rdf/simple/0.9/"
	nsRDF       = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsGeoRSS    = "http://www.georss.org/georss"
	nsGeoRSS10  = "http://www.georss.org/georss/10"
	nsGML       = "http://www.opengis.net/gml"
	nsGML32     = "http://www.opengis.net/gml/3.2"
	nsGeo       = "http://www.w3.org/2003/01/geo/wgs84_pos#"
	nsDC        = "http://purl.org/dc/elements/1.1/"
	nsContent   = "http://purl.org/rss/1.0/modules/content/"
	nsXMLNSAttr = "xmlns"
)

// Namespace kinds.
const (
	kNone    = iota // no namespace (RSS 2.0)
	kAtom           // Atom 1.0 or 0.3
	kRSS            // RSS 1.0 or 0.90
	kRDF            // RDF
	kGeoRSS         // GeoRSS
	kGML            // GML
	kGeo            // W3C Basic Geo
	kDC             // Dublin Core
	kContent        // RSS content module
	kOther
)

// nsKind classifies a namespace: by URI, or by the prefix itself when the
// document never declared it (encoding/xml then leaves the prefix in Space).
func nsKind(space string) int {
	switch space {
	case "":
		return kNone
	case nsAtom, nsAtom03, "atom":
		return kAtom
	case nsRSS10, nsRSS09:
		return kRSS
	case nsRDF, "rdf":
		return kRDF
	case nsGeoRSS, nsGeoRSS10, "georss":
		return kGeoRSS
	case nsGML, nsGML32, "gml":
		return kGML
	case nsGeo, "geo":
		return kGeo
	case nsDC, "dc":
		return kDC
	case nsContent, "content":
		return kContent
	}
	return kOther
}

// prefixes name the namespace kinds in messages.
var prefixes = [...]string{kGeoRSS: "georss:", kGML: "gml:", kGeo: "geo:", kDC: "dc:", kContent: "content:", kRDF: "rdf:", kOther: ""}

func displayName(n xml.Name) string {
	k := nsKind(n.Space)
	if k < len(prefixes) {
		return prefixes[k] + n.Local
	}
	return n.Local
}

// feedNS reports whether k is a namespace the feed's own elements use.
func feedNS(k int) bool { return k == kNone || k == kAtom || k == kRSS }

// Well-known fields, in the order of the attributes.
const (
	fTitle = iota
	fSummary
	fContent
	fLink
	fPublished
	fUpdated
	fAuthor
	fID
	fCategory
	nFields
)

var (
	atomNames = [nFields]string{"title", "summary", "content", "link", "published", "updated", "author", "id", "category"}
	rssNames  = [nFields]string{"title", "description", "content", "link", "published", "updated", "author", "guid", "category"}
)

// Feed kinds.
const (
	FormatAtom = "atom"
	FormatRSS  = "rss"
)

// Feed describes the feed as a whole, as its header says (empty strings
// for what it does not say).
type Feed struct {
	Format      string // FormatAtom or FormatRSS
	Title       string
	Description string // Atom subtitle, RSS description
	Link        string // Atom: the alternate (else self) link's href; RSS: link
	Author      string // Atom author/name; RSS managingEditor or dc:creator
	Updated     string // Atom updated; RSS lastBuildDate or pubDate; as written
}

// Reader reads the entries of a feed as features. It is a
// mapcommons.FeatureSource. A Reader is not safe for concurrent use.
type Reader struct {
	rs     io.ReadSeeker
	p      *parser
	feed   Feed
	attrs  []mapcommons.Attribute
	cols   [nFields]int // attribute index of each well-known field, -1 when absent
	ext    map[xml.Name]int
	types  []mapcommons.AttrType
	count  int64 // entries found in pass 1
	e      rawEntry
	feat   mapcommons.Feature
	pos    int64
	err    error
	closed bool
}

var _ mapcommons.FeatureSource = (*Reader)(nil)

// Open reads the whole feed once (pass 1: validation, attributes), then
// seeks back to the start for Next. The input is read from offset 0. Bad
// input gives a *mapcommons.Error with code EINVALID; errors of rs are
// returned wrapped.
func Open(rs io.ReadSeeker) (*Reader, error) {
	r := &Reader{rs: rs, ext: map[xml.Name]int{}}
	p, err := newParser(rs)
	if err != nil {
		return nil, err
	}
	p.feed = &r.feed
	type extCol struct {
		key xml.Name
		col infer.Column
	}
	var present [nFields]bool
	var exts []extCol
	extIdx := map[xml.Name]int{}
	for {
		err := p.next(&r.e)
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		r.count++
		for i := range present {
			present[i] = present[i] || r.e.f[i].prio > 0
		}
		for _, v := range r.e.ext {
			i, ok := extIdx[v.key]
			if !ok {
				i = len(exts)
				if nFields+i >= mapcommons.MaxAttributes {
					return nil, p.errorf("", "more than %d different elements in the entries (at most %d attributes)", mapcommons.MaxAttributes-nFields, mapcommons.MaxAttributes)
				}
				extIdx[v.key] = i
				exts = append(exts, extCol{key: v.key})
			}
			exts[i].col.Observe(string(v.val))
		}
	}
	r.feed.Format = p.format()
	names := &atomNames
	if r.feed.Format == FormatRSS {
		names = &rssNames
	}
	for i := range r.cols {
		r.cols[i] = -1
		if present[i] {
			r.cols[i] = len(r.attrs)
			r.attrs = append(r.attrs, mapcommons.Attribute{Name: names[i], Type: mapcommons.AttrString})
		}
	}
	for _, x := range exts {
		r.ext[x.key] = len(r.attrs)
		r.attrs = append(r.attrs, mapcommons.Attribute{Name: x.key.Local, Type: x.col.Type()})
	}
	if err := mapcommons.NormalizeAttributes(r.attrs); err != nil {
		return nil, err
	}
	r.types = make([]mapcommons.AttrType, len(r.attrs))
	for i, a := range r.attrs {
		r.types[i] = a.Type
	}
	if r.p, err = newParser(rs); err != nil {
		return nil, err
	}
	r.feat.Values = make([]any, len(r.attrs))
	return r, nil
}

// Attributes returns the attributes every feature has values for.
func (r *Reader) Attributes() []mapcommons.Attribute { return r.attrs }

// Feed returns what the feed's header says of the feed.
func (r *Reader) Feed() Feed { return r.feed }

// Next returns the next feature, io.EOF after the last. The feature is
// reused by the following call.
func (r *Reader) Next() (*mapcommons.Feature, error) {
	if r.err != nil {
		return nil, r.err
	}
	err := r.p.next(&r.e)
	if err == io.EOF && r.pos != r.count || err == nil && r.pos >= r.count {
		err = mapcommons.Errorf(mapcommons.EINVALID, "atom: the file changed while it was read")
	}
	if err != nil {
		r.err = err
		return nil, err
	}
	f := &r.feat
	clear(f.Values)
	for i, c := range r.cols {
		if c >= 0 && r.e.f[i].prio > 0 {
			f.Values[c] = string(r.e.f[i].val)
		}
	}
	for _, v := range r.e.ext {
		if c, ok := r.ext[v.key]; ok {
			f.Values[c] = infer.Value(r.types[c], string(v.val))
		}
	}
	f.Geometry = nil
	if r.e.hasGeom {
		f.Geometry = r.e.geom
	}
	f.Position = r.pos
	r.pos++
	return f, nil
}

// field is the value of one well-known field of an entry and the priority
// of the element it came from (0: none yet).
type field struct {
	val  []byte
	prio int8
}

// extVal is the text of an element that is not a well-known field.
type extVal struct {
	key xml.Name
	val []byte
}

// rawEntry is what one entry holds.
type rawEntry struct {
	f       [nFields]field
	ext     []extVal
	geom    []byte
	hasGeom bool

	lat, lon       float64 // W3C geo
	hasLat, hasLon bool
}

func (e *rawEntry) reset() {
	for i := range e.f {
		e.f[i].val, e.f[i].prio = e.f[i].val[:0], 0
	}
	e.ext = e.ext[:0]
	e.geom, e.hasGeom = e.geom[:0], false
	e.hasLat, e.hasLon = false, false
}

// errTooLong is what the guard returns when one token exceeds maxToken.
var errTooLong = errors.New("token too long")

// guard sits under the xml.Decoder: it bounds the bytes one Token call may
// read (and so what the decoder buffers for one token) and keeps the first
// I/O error of the input.
type guard struct {
	r        *bufio.Reader
	n, start int64
	ioErr    error
}

func (g *guard) ReadByte() (byte, error) {
	if g.n-g.start >= maxToken {
		return 0, errTooLong
	}
	b, err := g.r.ReadByte()
	if err == nil {
		g.n++
	} else if err != io.EOF && g.ioErr == nil {
		g.ioErr = err
	}
	return b, err
}

func (g *guard) Read(p []byte) (int, error) {
	rem := maxToken - (g.n - g.start)
	if rem <= 0 {
		return 0, errTooLong
	}
	if int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	if err != nil && err != io.EOF && g.ioErr == nil {
		g.ioErr = err
	}
	return n, err
}

// parser walks a feed one entry at a time.
type parser struct {
	d      *xml.Decoder
	g      *guard
	utf16  bool
	depth  int
	root   int // kind of document: 0 before the root element
	done   bool
	feedAt int // depth of the feed (Atom) or channel (RSS) element; 0 when unknown

	entries int64 // entries started so far
	inEntry bool
	points  int   // positions of the geometry being read
	feed    *Feed // pass 1 only: the feed header to fill in
	feedAlt bool  // feed.Link is an alternate link
	scratch []byte
}

// Document kinds.
const (
	docAtom = iota + 1
	docRSS
	docEntry // an Atom entry document
)

func (p *parser) format() string {
	if p.root == docRSS {
		return FormatRSS
	}
	return FormatAtom
}

func (p *parser) entryWord() string {
	if p.root == docRSS {
		return "item"
	}
	return "entry"
}

func newParser(rs io.ReadSeeker) (*parser, error) {
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("atom: %w", err)
	}
	br := bufio.NewReaderSize(rs, 64<<10)
	p := &parser{g: &guard{r: br}}
	head, err := br.Peek(3)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("atom: %w", err)
	}
	var src io.Reader = p.g
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		br.Discard(3)
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		src = transform.NewReader(p.g, unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder())
		p.utf16 = true
	}
	p.d = xml.NewDecoder(src)
	p.d.Strict = true
	p.d.Entity = xml.HTMLEntity
	p.d.CharsetReader = p.charsetReader
	return p, nil
}

// charsetReader decodes the encoding the XML declaration names.
func (p *parser) charsetReader(label string, in io.Reader) (io.Reader, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	if strings.HasPrefix(l, "utf-16") || l == "utf16" || l == "unicode" {
		// Decoded already when there was a byte order mark; else the
		// declaration was read as ASCII, so the file is not UTF-16 at all:
		// read it as UTF-8.
		return in, nil
	}
	enc, err := htmlindex.Get(l)
	if err != nil {
		return nil, fmt.Errorf("unsupported encoding %q", label)
	}
	if enc == encoding.Nop || enc == unicode.UTF8 {
		return in, nil
	}
	return enc.NewDecoder().Reader(in), nil
}

func invalid(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, format, args...)
}

// errorf reports bad input at the current position: the entry (when in
// one), the element elem (when not empty) and the line.
func (p *parser) errorf(elem string, format string, args ...any) error {
	var b strings.Builder
	b.WriteString("atom: ")
	if p.inEntry {
		fmt.Fprintf(&b, "%s %d: ", p.entryWord(), p.entries)
	}
	if elem != "" {
		b.WriteString(elem)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, format, args...)
	line, _ := p.d.InputPos()
	fmt.Fprintf(&b, " (line %d)", line)
	return invalid("%s", b.String())
}

// token returns the next token, keeping the depth and enforcing the limits.
// io.EOF comes back as is.
func (p *parser) token() (xml.Token, error) {
	p.g.start = p.g.n
	tok, err := p.d.Token()
	if err != nil {
		return nil, p.tokenError(err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		p.depth++
		if p.depth > maxDepth {
			return nil, p.errorf("", "elements nested more than %d deep", maxDepth)
		}
	case xml.EndElement:
		p.depth--
	case xml.Directive:
		if d := bytes.TrimSpace(t); len(d) >= 7 && strings.EqualFold(string(d[:7]), "DOCTYPE") &&
			bytes.Contains(bytes.ToUpper(d), []byte("<!ENTITY")) {
			return nil, p.errorf("", "the DOCTYPE declares entities, which are not allowed (they can expand without bound: the \"billion laughs\" attack)")
		}
	}
	return tok, nil
}

func (p *parser) tokenError(err error) error {
	if p.g.ioErr != nil {
		return fmt.Errorf("atom: reading: %w", p.g.ioErr)
	}
	if err == io.EOF {
		if p.depth > 0 {
			return p.errorf("", "unexpected end of file")
		}
		return io.EOF
	}
	if errors.Is(err, errTooLong) {
		return p.errorf("", "a tag, comment or run of text longer than %d MiB", maxToken>>20)
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		msg := se.Msg
		switch {
		case msg == "unexpected EOF":
			msg = "unexpected end of file (is the file truncated?)"
		case msg == "invalid UTF-8":
			msg = "invalid UTF-8 (a file in another encoding must say so in its XML declaration, such as <?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>)"
		}
		var b strings.Builder
		b.WriteString("atom: ")
		if p.inEntry {
			fmt.Fprintf(&b, "%s %d: ", p.entryWord(), p.entries)
		}
		fmt.Fprintf(&b, "%s (line %d)", msg, se.Line)
		return invalid("%s", b.String())
	}
	return p.errorf("", "%s", strings.TrimPrefix(err.Error(), "xml: "))
}

// next reads up to the end of the next entry into e; io.EOF when there is
// none.
func (p *parser) next(e *rawEntry) error {
	if p.done {
		return io.EOF
	}
	for {
		tok, err := p.token()
		if err == io.EOF {
			if p.root == 0 {
				return invalid("atom: not a feed: no XML element found")
			}
			p.done = true
			return io.EOF
		} else if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			k := nsKind(t.Name.Space)
			if p.root == 0 {
				switch {
				case t.Name.Local == "feed" && (k == kAtom || k == kNone):
					p.root, p.feedAt = docAtom, 1
				case t.Name.Local == "rss" && k == kNone:
					p.root = docRSS
				case t.Name.Local == "RDF" && (k == kRDF || k == kNone):
					p.root = docRSS
				case t.Name.Local == "entry" && (k == kAtom || k == kNone):
					p.root = docEntry
					return p.entry(t, e)
				default:
					return p.errorf("", "not an Atom or RSS feed: the root element is <%s>", displayName(t.Name))
				}
				continue
			}
			if p.isEntry(t.Name, k) {
				return p.entry(t, e)
			}
			if p.root == docRSS && p.feedAt == 0 && t.Name.Local == "channel" && feedNS(k) {
				p.feedAt = p.depth
				continue
			}
			if p.feed != nil && p.feedAt > 0 && p.depth == p.feedAt+1 {
				if err := p.feedChild(t, k); err != nil {
					return err
				}
			}
		case xml.EndElement:
			if p.depth == 0 {
				p.done = true
				return io.EOF
			}
		}
	}
}

func (p *parser) isEntry(n xml.Name, k int) bool {
	if p.root == docRSS {
		return n.Local == "item" && (k == kNone || k == kRSS)
	}
	return n.Local == "entry" && (k == kNone || k == kAtom)
}

// feedChild reads an element of the feed's header (pass 1).
func (p *parser) feedChild(t xml.StartElement, k int) error {
	f := p.feed
	var dst *string
	switch {
	case !feedNS(k) && k != kDC:
	case t.Name.Local == "title" && k != kDC:
		dst = &f.Title
	case t.Name.Local == "subtitle" || t.Name.Local == "tagline" || t.Name.Local == "description":
		dst = &f.Description
	case t.Name.Local == "updated" || t.Name.Local == "modified" || t.Name.Local == "lastBuildDate" ||
		t.Name.Local == "pubDate" && f.Updated == "" || k == kDC && t.Name.Local == "date" && f.Updated == "":
		dst = &f.Updated
	case t.Name.Local == "managingEditor" || k == kDC && t.Name.Local == "creator" && f.Author == "":
		dst = &f.Author
	case t.Name.Local == "author":
		name, err := p.person()
		if err == nil && f.Author == "" {
			f.Author = name
		}
		return err
	case t.Name.Local == "link":
		href, ok := attr(t, "href")
		if !ok {
			dst = &f.Link
			break
		}
		switch rel, _ := attr(t, "rel"); {
		case (rel == "" || rel == "alternate") && !p.feedAlt:
			f.Link, p.feedAlt = href, true
		case rel == "self" && f.Link == "":
			f.Link = href
		}
		return p.skip()
	}
	if dst == nil {
		return nil // its tokens pass by in next
	}
	b, _, err := p.text(p.scratch[:0], false, maxText, "")
	p.scratch = b
	if err == nil {
		*dst = string(bytes.TrimSpace(b))
	}
	return err
}

// attr returns the value of the attribute local (in no namespace).
func attr(t xml.StartElement, local string) (string, bool) {
	for _, a := range t.Attr {
		if a.Name.Local == local && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

// entry reads one entry or item whose start tag was just read.
func (p *parser) entry(t xml.StartElement, e *rawEntry) error {
	p.entries++
	if p.entries > maxEntries {
		return p.errorf("", "more than %d %ss", maxEntries, p.entryWord())
	}
	p.inEntry = true
	e.reset()
	for _, a := range t.Attr {
		if a.Name.Local == "about" && nsKind(a.Name.Space) == kRDF {
			if err := p.set(e, fID, 1, []byte(a.Value), false, "rdf:about"); err != nil {
				return err
			}
		}
	}
	if err := p.children(func(t xml.StartElement) error { return p.entryChild(t, e) }); err != nil {
		return err
	}
	if err := p.finishEntry(e); err != nil {
		return err
	}
	p.inEntry = false
	return nil
}

// finishEntry turns W3C geo coordinates into the geometry when the entry
// had no other.
func (p *parser) finishEntry(e *rawEntry) error {
	if e.hasLat != e.hasLon {
		if e.hasLat {
			return p.errorf("geo:lat", "no geo:long goes with it")
		}
		return p.errorf("geo:long", "no geo:lat goes with it")
	}
	if e.hasLat && !e.hasGeom {
		e.geom = appendPoint(e.geom[:0], e.lon, e.lat)
		e.hasGeom = true
	}
	return nil
}

// set stores text (trimmed) as field i of e with priority prio: a higher
// priority replaces what is there, an equal one is joined with ", " when
// join is set and ignored otherwise.
func (p *parser) set(e *rawEntry, i int, prio int8, text []byte, join bool, elem string) error {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil
	}
	f := &e.f[i]
	switch {
	case prio > f.prio:
		f.val, f.prio = append(f.val[:0], text...), prio
	case prio == f.prio && join:
		f.val = append(append(f.val, ", "...), text...)
	}
	if len(f.val) > maxText {
		return p.errorf(elem, "longer than %d MiB", maxText>>20)
	}
	return nil
}

// entryChild reads a child element of an entry (any depth for geometry).
func (p *parser) entryChild(t xml.StartElement, e *rawEntry) error {
	k := nsKind(t.Name.Space)
	local := t.Name.Local
	switch k {
	case kGeoRSS:
		switch local {
		case "point", "line", "polygon", "box":
			return p.simple(t, e)
		case "where":
			return p.where(t, e)
		case "circle":
			return p.skip()
		}
		return p.ext(t, e, true)
	case kGML:
		return p.gmlElement(t, e)
	case kGeo:
		return p.geo(t, e)
	case kDC:
		var i int
		var join bool
		switch local {
		case "title":
			i = fTitle
		case "description":
			i = fSummary
		case "creator":
			i, join = fAuthor, true
		case "date":
			i = fPublished
		case "subject":
			i, join = fCategory, true
		case "identifier":
			i = fID
		default:
			return p.ext(t, e, true)
		}
		return p.field(e, i, 1, join, false, "dc:"+local)
	case kContent:
		if local == "encoded" {
			return p.field(e, fContent, 2, false, false, "content:encoded")
		}
		return p.ext(t, e, true)
	case kNone, kAtom, kRSS:
	default:
		return p.ext(t, e, true)
	}
	typ, _ := attr(t, "type")
	xhtml := typ == "xhtml"
	switch local {
	case "title":
		return p.field(e, fTitle, 2, false, xhtml, local)
	case "summary", "description":
		return p.field(e, fSummary, 2, false, xhtml, local)
	case "content":
		src, _ := attr(t, "src")
		if err := p.field(e, fContent, 2, false, xhtml, local); err != nil {
			return err
		}
		if src != "" {
			return p.set(e, fContent, 1, []byte(src), false, local)
		}
		return nil
	case "link":
		href, ok := attr(t, "href")
		if !ok {
			return p.field(e, fLink, 3, false, false, local)
		}
		rel, _ := attr(t, "rel")
		prio := int8(1)
		if rel == "" || rel == "alternate" {
			prio = 2
		}
		if err := p.set(e, fLink, prio, []byte(href), false, local); err != nil {
			return err
		}
		return p.skip()
	case "published", "pubDate", "issued":
		return p.field(e, fPublished, 2, false, false, local)
	case "updated", "modified":
		return p.field(e, fUpdated, 2, false, false, local)
	case "author":
		name, err := p.person()
		if err != nil {
			return err
		}
		return p.set(e, fAuthor, 2, []byte(name), true, local)
	case "contributor":
		return p.skip()
	case "id", "guid":
		return p.field(e, fID, 2, false, false, local)
	case "category":
		if term, ok := attr(t, "term"); ok {
			if err := p.set(e, fCategory, 2, []byte(term), true, local); err != nil {
				return err
			}
			return p.skip()
		}
		return p.field(e, fCategory, 2, true, false, local)
	}
	return p.ext(t, e, true)
}

// field reads the text of the element just started into field i.
func (p *parser) field(e *rawEntry, i int, prio int8, join, xhtml bool, elem string) error {
	b, _, err := p.text(p.scratch[:0], xhtml, maxText, elem)
	p.scratch = b
	if err != nil {
		return err
	}
	return p.set(e, i, prio, b, join, elem)
}

// person reads an Atom person construct (its name) or, in RSS, the text.
func (p *parser) person() (string, error) {
	d0 := p.depth
	var text, name []byte
	hasName := false
	for {
		tok, err := p.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if p.depth == d0 && len(text) < maxText {
				text = append(text, t...)
			}
		case xml.StartElement:
			if t.Name.Local == "name" && !hasName && p.depth == d0+1 {
				b, _, err := p.text(nil, false, maxText, "author/name")
				if err != nil {
					return "", err
				}
				name, hasName = b, true
			} else if err := p.skip(); err != nil {
				return "", err
			}
		case xml.EndElement:
			if p.depth < d0 {
				if hasName {
					return string(bytes.TrimSpace(name)), nil
				}
				return string(bytes.TrimSpace(text)), nil
			}
		}
	}
}

// ext reads an element that is not a well-known field: its text when it
// has no child elements becomes an extension attribute; geometry inside
// it is still read.
func (p *parser) ext(t xml.StartElement, e *rawEntry, record bool) error {
	d0 := p.depth
	var text []byte
	leaf := true
	for {
		tok, err := p.token()
		if err != nil {
			return err
		}
		switch c := tok.(type) {
		case xml.CharData:
			if leaf {
				text = append(text, c...)
				if len(text) > maxText+4096 {
					return p.errorf(displayName(t.Name), "longer than %d MiB", maxText>>20)
				}
			}
		case xml.StartElement:
			leaf, text = false, nil
			switch nsKind(c.Name.Space) {
			case kGeoRSS, kGML, kGeo:
				err = p.entryChild(c, e)
			default:
				err = p.ext(c, e, false) // only geometry counts in there
			}
			if err != nil {
				return err
			}
		case xml.EndElement:
			if p.depth >= d0 {
				continue
			}
			text = bytes.TrimSpace(text)
			if !leaf || !record || len(text) == 0 {
				return nil
			}
			if len(text) > maxText {
				return p.errorf(displayName(t.Name), "longer than %d MiB", maxText>>20)
			}
			for i := range e.ext {
				if v := &e.ext[i]; v.key == t.Name {
					v.val = append(append(v.val, ", "...), text...)
					if len(v.val) > maxText {
						return p.errorf(displayName(t.Name), "longer than %d MiB", maxText>>20)
					}
					return nil
				}
			}
			e.ext = append(e.ext, extVal{key: t.Name, val: text})
			return nil
		}
	}
}

// children calls fn for each child element of the element just started,
// until that element ends; fn consumes the child (reads or skips it).
func (p *parser) children(fn func(t xml.StartElement) error) error {
	d0 := p.depth
	for {
		tok, err := p.token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t); err != nil {
				return err
			}
		case xml.EndElement:
			if p.depth < d0 {
				return nil
			}
		}
	}
}

// skip reads up to the end of the element just started.
func (p *parser) skip() error {
	d0 := p.depth
	for {
		tok, err := p.token()
		if err != nil {
			return err
		}
		if _, ok := tok.(xml.EndElement); ok && p.depth < d0 {
			return nil
		}
	}
}

// HTML elements that have no end tag.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

// text reads the content of the element just started, up to its end tag,
// appending it to dst. Character data is kept as text until a child element
// appears: from then on (from the start with xhtml) the content is markup,
// the text escaped and the elements serialized as HTML tags; with xhtml, a
// div that wraps the content is dropped. markup reports which it was. More
// than limit bytes is an error naming elem.
func (p *parser) text(dst []byte, xhtml bool, limit int, elem string) (out []byte, markup bool, err error) {
	d0 := p.depth
	start := len(dst)
	markup = xhtml
	seen, inDiv, divDone := false, false, false
	for {
		tok, err := p.token()
		if err != nil {
			return dst, markup, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if markup {
				dst = appendHTMLEscaped(dst, t, false)
			} else {
				dst = append(dst, t...)
			}
			if len(bytes.TrimSpace(t)) > 0 {
				seen = true
			}
		case xml.StartElement:
			if !markup {
				plain := string(dst[start:])
				dst = appendHTMLEscaped(dst[:start], []byte(plain), false)
				markup = true
			}
			if xhtml && !seen && !divDone && p.depth == d0+1 && t.Name.Local == "div" {
				inDiv, divDone = true, true
				dst = dst[:start]
				seen = true
				continue
			}
			seen = true
			dst = appendTag(dst, t)
		case xml.EndElement:
			if p.depth < d0 {
				return dst, markup, nil
			}
			if inDiv && p.depth == d0 {
				inDiv = false
				continue
			}
			if !voidElements[strings.ToLower(t.Name.Local)] {
				dst = append(append(append(dst, "</"...), t.Name.Local...), '>')
			}
		}
		if len(dst)-start > limit+4096 {
			if elem == "" {
				elem = "text"
			}
			return dst, markup, p.errorf(elem, "longer than %d MiB", limit>>20)
		}
	}
}

// appendTag appends a start tag, without namespace prefixes or declarations.
func appendTag(dst []byte, t xml.StartElement) []byte {
	dst = append(append(dst, '<'), t.Name.Local...)
	for _, a := range t.Attr {
		if a.Name.Space == nsXMLNSAttr || a.Name.Space == "" && a.Name.Local == "xmlns" {
			continue
		}
		dst = append(append(append(dst, ' '), a.Name.Local...), '=', '"')
		dst = appendHTMLEscaped(dst, []byte(a.Value), true)
		dst = append(dst, '"')
	}
	return append(dst, '>')
}

// appendHTMLEscaped appends s with &, < and > escaped (and " when quote).
func appendHTMLEscaped(dst, s []byte, quote bool) []byte {
	for _, c := range s {
		if e := xmltext.Entity(c, quote); e != "" {
			dst = append(dst, e...)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}
