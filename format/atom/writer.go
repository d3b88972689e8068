package atom

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
	"mapcommons/format/xmltext"
)

// Write streams a dataset as an Atom 1.0 feed (RFC 4287) with GeoRSS
// locations, one entry per feature, in order.
//
// The feed: title (m.Title, else m.Name), subtitle (m.Description, when
// there is one), link rel="self" (m.Link with its ".json" suffix replaced
// by ".atom", as the dataset's Atom document lives there; m.Link itself
// when it does not end in ".json") and link rel="alternate" to m.Link, id
// (m.Link, else the tag URI "tag:mapcommons,2010:<m.Name>"), updated
// (m.Updated in RFC 3339, UTC), author/name (m.Author, else "mapcommons").
// The root declares the georss namespace; the gml namespace is declared on
// each GML geometry, where it is used (see below).
//
// Each entry: title (the value of the first attribute named "title", else
// "name", ignoring case, when it is not null or empty; else "Feature <n>"
// with n the feature's Position), id (the feed's id + "#feature-<n>"),
// updated (the feed's), content of type "html" holding an HTML table of the
// attribute names and values (escaped; null values are empty cells), and
// the geometry:
//
//   - Point: georss:point; LineString: georss:line; Polygon without holes:
//     georss:polygon of its outer ring (GeoRSS Simple, "lat lon" pairs).
//   - Polygon with holes, MultiPoint, MultiLineString, MultiPolygon and
//     GeometryCollection: GML in georss:where: gml:Polygon (exterior and
//     interior gml:LinearRing with gml:posList), gml:MultiPoint,
//     gml:MultiLineString, gml:MultiPolygon (the GML 2 collection names that
//     GDAL's GeoRSS driver, like most GeoRSS readers, recognises; the
//     members use GML 3 pos/posList) and gml:MultiGeometry, every position
//     "lat lon" as the GeoRSS GML profile has it (no srsName). Empty members
//     are left out; GeoRSS readers that know only GeoRSS Simple see no
//     geometry for these entries.
//   - No geometry, or an empty one: no location element.
//
// GDAL note: GDAL's GML driver claims any XML document that mentions the GML
// namespace in its first 4 KiB, before the GeoRSS driver is asked, unless
// that text also holds "<rss" and "xmlns:georss", the mark of a GeoRSS feed
// to it; it would read a feed of multipolygons as a GML document of one
// feature per polygon. So the feed's first child is a comment (gdalHint)
// that says it is GeoRSS in those words, and every feed opens in GDAL as
// GeoRSS without options. The gml namespace is declared on each GML
// geometry, where it is used.
//
// Numbers are written in the shortest form that reads back exactly
// (wkb.AppendFloat). Characters XML 1.0 does not allow (C0 controls other
// than tab, line feed and carriage return; U+FFFE, U+FFFF) are dropped and
// invalid UTF-8 becomes U+FFFD, so any text gives a well-formed document;
// carriage returns are written as &#xD; so that they survive.
//
// The output is buffered; errors of w and of scan are returned as they
// come.
func Write(w io.Writer, m format.Meta, scan format.Scan) error {
	fw := &feedWriter{w: bufio.NewWriterSize(w, 64<<10), titleCol: -1}
	fw.id = m.Link
	if fw.id == "" {
		fw.id = "tag:mapcommons,2010:" + m.Name
	}
	fw.updated = "1970-01-01T00:00:00Z"
	if !m.Updated.IsZero() {
		fw.updated = m.Updated.UTC().Format(time.RFC3339)
	}
	for _, want := range []string{"title", "name"} {
		for i, a := range m.Attributes {
			if fw.titleCol < 0 && strings.EqualFold(a.Name, want) {
				fw.titleCol = i
			}
		}
	}
	fw.attrs = m.Attributes
	if err := fw.header(m); err != nil {
		return err
	}
	if err := scan(fw.entry); err != nil {
		return err
	}
	if _, err := fw.w.WriteString("</feed>\n"); err != nil {
		return err
	}
	return fw.w.Flush()
}

type feedWriter struct {
	w        *bufio.Writer
	attrs    []mapcommons.Attribute
	titleCol int
	id       string
	updated  string
	buf      []byte // one entry
	html     []byte // its content
	val      []byte
}

func (fw *feedWriter) header(m format.Meta) error {
	b := fw.buf[:0]
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss">`+"\n"+
		gdalHint+"\n"...)
	title := m.Title
	if strings.TrimSpace(title) == "" {
		title = m.Name
	}
	b = element(b, "title", title)
	if m.Description != "" {
		b = element(b, "subtitle", m.Description)
	}
	if m.Link != "" {
		self := m.Link
		if s, ok := strings.CutSuffix(self, ".json"); ok {
			self = s + ".atom"
		}
		b = append(b, `<link rel="self" type="application/atom+xml" href="`...)
		b = xmltext.AppendEscaped(b, self, true)
		b = append(b, "\"/>\n"...)
		if self != m.Link {
			b = append(b, `<link rel="alternate" type="application/json" href="`...)
			b = xmltext.AppendEscaped(b, m.Link, true)
			b = append(b, "\"/>\n"...)
		}
	}
	b = element(b, "id", fw.id)
	b = element(b, "updated", fw.updated)
	author := m.Author
	if strings.TrimSpace(author) == "" {
		author = "mapcommons"
	}
	b = append(b, "<author><name>"...)
	b = xmltext.AppendEscaped(b, author, false)
	b = append(b, "</name></author>\n<generator>mapcommons</generator>\n"...)
	fw.buf = b
	_, err := fw.w.Write(b)
	return err
}

// element appends <name>escaped text</name> and a line feed.
func element(b []byte, name, text string) []byte {
	b = append(append(append(b, '<'), name...), '>')
	b = xmltext.AppendEscaped(b, text, false)
	return append(append(append(b, "</"...), name...), ">\n"...)
}

func (fw *feedWriter) entry(f *mapcommons.Feature) error {
	b := append(fw.buf[:0], "<entry>\n<title>"...)
	title := ""
	if fw.titleCol >= 0 && fw.titleCol < len(f.Values) {
		fw.val = appendValue(fw.val[:0], f.Values[fw.titleCol])
		title = strings.TrimSpace(string(fw.val))
	}
	if title == "" {
		title = "Feature " + strconv.FormatInt(f.Position, 10)
	}
	b = xmltext.AppendEscaped(b, title, false)
	b = append(b, "</title>\n<id>"...)
	b = xmltext.AppendEscaped(b, fw.id+"#feature-"+strconv.FormatInt(f.Position, 10), false)
	b = append(b, "</id>\n<updated>"...)
	b = append(b, fw.updated...)
	b = append(b, "</updated>\n<content type=\"html\">"...)
	h := append(fw.html[:0], "<table>"...)
	for i, a := range fw.attrs {
		h = append(h, "<tr><th>"...)
		h = appendHTML(h, a.Name)
		h = append(h, "</th><td>"...)
		if i < len(f.Values) {
			fw.val = appendValue(fw.val[:0], f.Values[i])
			h = appendHTML(h, string(fw.val))
		}
		h = append(h, "</td></tr>"...)
	}
	h = append(h, "</table>"...)
	fw.html = h
	b = xmltext.AppendEscaped(b, string(h), false)
	b = append(b, "</content>\n"...)
	if len(f.Geometry) > 0 {
		g, err := wkb.Decode(f.Geometry)
		if err != nil {
			return fmt.Errorf("atom: feature %d: %w", f.Position, err)
		}
		b = appendGeoRSS(b, g)
	}
	b = append(b, "</entry>\n"...)
	fw.buf = b
	_, err := fw.w.Write(b)
	return err
}

// appendValue appends an attribute value as text (nothing for nil).
func appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return dst
	case string:
		return append(dst, x...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		return wkb.AppendFloat(dst, x)
	case bool:
		return strconv.AppendBool(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	}
	return fmt.Append(dst, v)
}

// appendHTML appends s escaped for HTML text and attribute values.
func appendHTML(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&#34;"...)
		case '\'':
			dst = append(dst, "&#39;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendLatLon appends the positions of xy (x, y pairs) as "lat lon" pairs
// separated by spaces.
func appendLatLon(dst []byte, xy []float64) []byte {
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = wkb.AppendFloat(dst, xy[i+1])
		dst = append(dst, ' ')
		dst = wkb.AppendFloat(dst, xy[i])
	}
	return dst
}

// usable drops what a location element cannot hold: empty points, lines
// of fewer than 2 positions, rings of fewer than 4, polygons without a
// shell, empty members. ok is false when nothing is left.
func usable(g wkb.Geom) (wkb.Geom, bool) {
	switch g.Type {
	case wkb.Point:
		return g, len(g.Coords) >= 2
	case wkb.LineString:
		return g, len(g.Coords) >= 4
	case wkb.Polygon:
		if len(g.Rings) == 0 || len(g.Rings[0]) < 8 {
			return g, false
		}
		rings := make([][]float64, 1, len(g.Rings))
		rings[0] = g.Rings[0]
		for _, r := range g.Rings[1:] {
			if len(r) >= 8 {
				rings = append(rings, r)
			}
		}
		g.Rings = rings
		return g, true
	}
	parts := make([]wkb.Geom, 0, len(g.Parts))
	for _, p := range g.Parts {
		if q, ok := usable(p); ok {
			parts = append(parts, q)
		}
	}
	g.Parts = parts
	return g, len(parts) > 0
}

// appendGeoRSS appends the location element of g.
func appendGeoRSS(dst []byte, g wkb.Geom) []byte {
	g, ok := usable(g)
	if !ok {
		return dst
	}
	switch {
	case g.Type == wkb.Point:
		dst = append(dst, "<georss:point>"...)
		dst = appendLatLon(dst, g.Coords)
		return append(dst, "</georss:point>\n"...)
	case g.Type == wkb.LineString:
		dst = append(dst, "<georss:line>"...)
		dst = appendLatLon(dst, g.Coords)
		return append(dst, "</georss:line>\n"...)
	case g.Type == wkb.Polygon && len(g.Rings) == 1:
		dst = append(dst, "<georss:polygon>"...)
		dst = appendLatLon(dst, g.Rings[0])
		return append(dst, "</georss:polygon>\n"...)
	}
	dst = append(dst, "<georss:where>"...)
	dst = appendGML(dst, g, ` xmlns:gml="`+nsGML+`"`)
	return append(dst, "</georss:where>\n"...)
}

// gdalHint is the comment at the start of every feed (see Write).
const gdalHint = "<!-- GeoRSS in Atom, read as a GeoRSS feed (not <rss, but xmlns:georss) -->"

// gmlNames are the element and member names of the GML collections.
var gmlNames = map[uint32][2]string{
	wkb.MultiPoint:         {"MultiPoint", "pointMember"},
	wkb.MultiLineString:    {"MultiLineString", "lineStringMember"},
	wkb.MultiPolygon:       {"MultiPolygon", "polygonMember"},
	wkb.GeometryCollection: {"MultiGeometry", "geometryMember"},
}

// appendGML appends g as GML 3 with "lat lon" positions; decl goes into
// the outermost start tag.
func appendGML(dst []byte, g wkb.Geom, decl string) []byte {
	switch g.Type {
	case wkb.Point:
		dst = append(append(append(dst, "<gml:Point"...), decl...), "><gml:pos>"...)
		dst = appendLatLon(dst, g.Coords)
		return append(dst, "</gml:pos></gml:Point>"...)
	case wkb.LineString:
		dst = append(append(append(dst, "<gml:LineString"...), decl...), "><gml:posList>"...)
		dst = appendLatLon(dst, g.Coords)
		return append(dst, "</gml:posList></gml:LineString>"...)
	case wkb.Polygon:
		dst = append(append(append(dst, "<gml:Polygon"...), decl...), '>')
		for i, r := range g.Rings {
			tag := "interior"
			if i == 0 {
				tag = "exterior"
			}
			dst = append(append(append(dst, "<gml:"...), tag...), "><gml:LinearRing><gml:posList>"...)
			dst = appendLatLon(dst, r)
			dst = append(append(append(dst, "</gml:posList></gml:LinearRing></gml:"...), tag...), '>')
		}
		return append(dst, "</gml:Polygon>"...)
	}
	names := gmlNames[g.Type]
	dst = append(append(append(append(dst, "<gml:"...), names[0]...), decl...), '>')
	for _, p := range g.Parts {
		dst = append(append(append(dst, "<gml:"...), names[1]...), '>')
		dst = appendGML(dst, p, "")
		dst = append(append(append(dst, "</gml:"...), names[1]...), '>')
	}
	return append(append(append(dst, "</gml:"...), names[0]...), '>')
}
