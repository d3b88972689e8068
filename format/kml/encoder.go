package kml

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"mapcommons/format/wkb"
	"mapcommons/format/xmltext"
)

// Namespace is the KML 2.2 namespace the Encoder writes.
const Namespace = "http://www.opengis.net/kml/2.2"

// Color is an sRGB color with alpha, written as KML's aabbggrr.
type Color struct{ R, G, B, A uint8 }

func (c Color) appendKML(dst []byte) []byte {
	const hex = "0123456789abcdef"
	for _, v := range [4]uint8{c.A, c.B, c.G, c.R} {
		dst = append(dst, hex[v>>4], hex[v&15])
	}
	return dst
}

// String returns the color as KML writes it (aabbggrr).
func (c Color) String() string { return string(c.appendKML(nil)) }

// Style is a shared style: the parts whose fields are set are written.
// IconStyle when IconColor, IconScale or IconHref is set; LineStyle when
// LineColor or LineWidth is; PolyStyle when PolyColor, Fill or Outline is;
// BalloonStyle when Balloon is (its text, entities such as $[name] included).
type Style struct {
	ID                              string
	LineColor, PolyColor, IconColor *Color
	LineWidth, IconScale            float64
	IconHref                        string
	Fill, Outline                   *bool
	Balloon                         string
}

// Placemark is one feature to write.
type Placemark struct {
	ID          string // the id attribute; "" for none
	Name        string // "" for none
	Description string // "" for none; HTML goes in a CDATA section
	StyleURL    string // "#id" of a Style, or a URL; "" for none
	// ExtendedData: Names[i] with Values[i] (int64, float64, string, bool
	// or anything fmt prints); nil values are left out.
	Names  []string
	Values []any
	// Geometry is WKB (any byte order, Z and M dropped); nil for none.
	// Multi* and GeometryCollection become MultiGeometry.
	Geometry []byte
}

// Encoder writes a KML document piece by piece: StartDocument, then
// Styles, Folders, Placemarks and NetworkLinks, then EndDocument. It
// buffers its output; EndDocument flushes. After an error writing (or a
// call out of order) every call returns that error; a Placemark whose
// geometry is not valid WKB is refused alone.
type Encoder struct {
	w       *bufio.Writer
	buf     []byte
	depth   int
	folders int
	state   int // 0 before StartDocument, 1 in the document, 2 after EndDocument
	err     error
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 4<<10)}
}

func (e *Encoder) begin(what string) error {
	if e.err != nil {
		return e.err
	}
	if e.state != 1 {
		e.err = fmt.Errorf("kml: %s outside the document (after EndDocument or before StartDocument)", what)
		return e.err
	}
	e.buf = e.buf[:0]
	return nil
}

// flush writes e.buf out.
func (e *Encoder) flush() error {
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = err
	}
	e.buf = e.buf[:0]
	return e.err
}

func (e *Encoder) indent() {
	for i := 0; i < e.depth; i++ {
		e.buf = append(e.buf, ' ', ' ')
	}
}

// open writes <tag> (with an id when not empty) on its own line and indents.
func (e *Encoder) open(tag, id string) {
	e.indent()
	e.buf = append(e.buf, '<')
	e.buf = append(e.buf, tag...)
	if id != "" {
		e.buf = append(e.buf, ` id="`...)
		e.buf = xmltext.AppendEscaped(e.buf, id, true)
		e.buf = append(e.buf, '"')
	}
	e.buf = append(e.buf, '>', '\n')
	e.depth++
}

func (e *Encoder) close(tag string) {
	e.depth--
	e.indent()
	e.buf = append(e.buf, '<', '/')
	e.buf = append(e.buf, tag...)
	e.buf = append(e.buf, '>', '\n')
}

// leaf writes <tag>text</tag> on its own line.
func (e *Encoder) leaf(tag, text string, cdata bool) {
	e.indent()
	e.buf = appendElem(e.buf, tag, text, cdata)
	e.buf = append(e.buf, '\n')
}

func appendElem(dst []byte, tag, text string, cdata bool) []byte {
	dst = append(dst, '<')
	dst = append(dst, tag...)
	dst = append(dst, '>')
	if cdata && useCDATA(text) {
		dst = appendCDATA(dst, text)
	} else {
		dst = xmltext.AppendEscaped(dst, text, false)
	}
	dst = append(dst, '<', '/')
	dst = append(dst, tag...)
	return append(dst, '>')
}

// nameDesc writes the name and description elements that are not empty.
func (e *Encoder) nameDesc(name, description string) {
	if name != "" {
		e.leaf("name", name, false)
	}
	if description != "" {
		e.leaf("description", description, true)
	}
}

// StartDocument writes the XML declaration, <kml>, <Document> and the
// document's name and description (each left out when empty).
func (e *Encoder) StartDocument(name, description string) error {
	if e.err != nil {
		return e.err
	}
	if e.state != 0 {
		e.err = errors.New("kml: StartDocument called twice")
		return e.err
	}
	e.state = 1
	e.buf = append(e.buf[:0], `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<kml xmlns="`+Namespace+`">`+"\n"...)
	e.open("Document", "")
	e.nameDesc(name, description)
	return e.flush()
}

func (e *Encoder) color(c *Color) {
	if c != nil {
		e.indent()
		e.buf = append(e.buf, "<color>"...)
		e.buf = c.appendKML(e.buf)
		e.buf = append(e.buf, "</color>\n"...)
	}
}

func (e *Encoder) number(tag string, v float64) {
	e.indent()
	e.buf = append(e.buf, '<')
	e.buf = append(e.buf, tag...)
	e.buf = append(e.buf, '>')
	e.buf = wkb.AppendFloat(e.buf, v)
	e.buf = append(e.buf, '<', '/')
	e.buf = append(e.buf, tag...)
	e.buf = append(e.buf, '>', '\n')
}

func (e *Encoder) boolean(tag string, v *bool) {
	if v != nil {
		s := "0"
		if *v {
			s = "1"
		}
		e.leaf(tag, s, false)
	}
}

// Style writes a shared <Style>.
func (e *Encoder) Style(s Style) error {
	if err := e.begin("Style"); err != nil {
		return err
	}
	e.open("Style", s.ID)
	if s.IconColor != nil || s.IconScale != 0 || s.IconHref != "" {
		e.open("IconStyle", "")
		e.color(s.IconColor)
		if s.IconScale != 0 {
			e.number("scale", s.IconScale)
		}
		if s.IconHref != "" {
			e.open("Icon", "")
			e.leaf("href", s.IconHref, false)
			e.close("Icon")
		}
		e.close("IconStyle")
	}
	if s.LineColor != nil || s.LineWidth != 0 {
		e.open("LineStyle", "")
		e.color(s.LineColor)
		if s.LineWidth != 0 {
			e.number("width", s.LineWidth)
		}
		e.close("LineStyle")
	}
	if s.PolyColor != nil || s.Fill != nil || s.Outline != nil {
		e.open("PolyStyle", "")
		e.color(s.PolyColor)
		e.boolean("fill", s.Fill)
		e.boolean("outline", s.Outline)
		e.close("PolyStyle")
	}
	if s.Balloon != "" {
		e.open("BalloonStyle", "")
		e.leaf("text", s.Balloon, true)
		e.close("BalloonStyle")
	}
	e.close("Style")
	return e.flush()
}

// StartFolder opens a <Folder> with a name and description (each left out
// when empty).
func (e *Encoder) StartFolder(name, description string) error {
	if err := e.begin("StartFolder"); err != nil {
		return err
	}
	e.open("Folder", "")
	e.nameDesc(name, description)
	e.folders++
	return e.flush()
}

// EndFolder closes the innermost open Folder.
func (e *Encoder) EndFolder() error {
	if err := e.begin("EndFolder"); err != nil {
		return err
	}
	if e.folders == 0 {
		e.err = errors.New("kml: EndFolder without an open Folder")
		return e.err
	}
	e.folders--
	e.close("Folder")
	return e.flush()
}

// NetworkLink writes a <NetworkLink> to href.
func (e *Encoder) NetworkLink(name, href string) error {
	if err := e.begin("NetworkLink"); err != nil {
		return err
	}
	e.open("NetworkLink", "")
	e.nameDesc(name, "")
	e.open("Link", "")
	e.leaf("href", href, false)
	e.close("Link")
	e.close("NetworkLink")
	return e.flush()
}

// Placemark writes a <Placemark>. A geometry that is not valid WKB is an
// error and nothing of the Placemark is written.
func (e *Encoder) Placemark(p Placemark) error {
	if err := e.begin("Placemark"); err != nil {
		return err
	}
	var g wkb.Geom
	hasGeom := false
	if len(p.Geometry) > 0 {
		var err error
		if g, err = wkb.Decode(p.Geometry); err != nil {
			return fmt.Errorf("kml: placemark %q: %w", p.Name, err)
		}
		hasGeom = !g.IsEmpty()
	}
	e.open("Placemark", p.ID)
	e.nameDesc(p.Name, p.Description)
	if p.StyleURL != "" {
		e.leaf("styleUrl", p.StyleURL, false)
	}
	data := false
	for i, v := range p.Values {
		if v == nil || i >= len(p.Names) {
			continue
		}
		if !data {
			e.open("ExtendedData", "")
			data = true
		}
		e.indent()
		e.buf = append(e.buf, `<Data name="`...)
		e.buf = xmltext.AppendEscaped(e.buf, p.Names[i], true)
		e.buf = append(e.buf, `"><value>`...)
		e.buf = appendValue(e.buf, v)
		e.buf = append(e.buf, "</value></Data>\n"...)
	}
	if data {
		e.close("ExtendedData")
	}
	if hasGeom {
		e.geometry(g)
	}
	e.close("Placemark")
	return e.flush()
}

// EndDocument closes any open Folders, the Document and kml, and flushes.
func (e *Encoder) EndDocument() error {
	if err := e.begin("EndDocument"); err != nil {
		return err
	}
	for ; e.folders > 0; e.folders-- {
		e.close("Folder")
	}
	e.close("Document")
	e.buf = append(e.buf, "</kml>\n"...)
	e.state = 2
	if e.flush() != nil {
		return e.err
	}
	if err := e.w.Flush(); err != nil {
		e.err = err
	}
	return e.err
}

// geometry writes g (not empty).
func (e *Encoder) geometry(g wkb.Geom) {
	switch g.Type {
	case wkb.Point:
		e.indent()
		e.buf = append(e.buf, "<Point><coordinates>"...)
		e.buf = appendCoords(e.buf, g.Coords)
		e.buf = append(e.buf, "</coordinates></Point>\n"...)
	case wkb.LineString:
		e.indent()
		e.buf = append(e.buf, "<LineString><coordinates>"...)
		e.buf = appendCoords(e.buf, g.Coords)
		e.buf = append(e.buf, "</coordinates></LineString>\n"...)
	case wkb.Polygon:
		e.open("Polygon", "")
		for i, r := range g.Rings {
			if len(r) == 0 {
				continue
			}
			tag := "innerBoundaryIs"
			if i == 0 {
				tag = "outerBoundaryIs"
			}
			e.indent()
			e.buf = append(e.buf, '<')
			e.buf = append(e.buf, tag...)
			e.buf = append(e.buf, "><LinearRing><coordinates>"...)
			e.buf = appendCoords(e.buf, r)
			e.buf = append(e.buf, "</coordinates></LinearRing></"...)
			e.buf = append(e.buf, tag...)
			e.buf = append(e.buf, '>', '\n')
		}
		e.close("Polygon")
	default:
		e.open("MultiGeometry", "")
		for _, m := range g.Parts {
			if !m.IsEmpty() {
				e.geometry(m)
			}
		}
		e.close("MultiGeometry")
	}
}

// appendCoords appends x,y pairs as KML tuples.
func appendCoords(dst []byte, xy []float64) []byte {
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = wkb.AppendFloat(dst, xy[i])
		dst = append(dst, ',')
		dst = wkb.AppendFloat(dst, xy[i+1])
	}
	return dst
}

// appendValue appends an attribute value as escaped text.
func appendValue(dst []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return xmltext.AppendEscaped(dst, v, false)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case int32:
		return strconv.AppendInt(dst, int64(v), 10)
	case float64:
		return appendNumber(dst, v)
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) >= 1e21 || v != 0 && math.Abs(float64(v)) < 1e-6 {
			return strconv.AppendFloat(dst, float64(v), 'g', -1, 32)
		}
		return strconv.AppendFloat(dst, float64(v), 'f', -1, 32)
	case bool:
		return strconv.AppendBool(dst, v)
	case []byte:
		return xmltext.AppendEscaped(dst, string(v), false)
	}
	return xmltext.AppendEscaped(dst, fmt.Sprint(v), false)
}

// formatValue returns an attribute value as text.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64, int, int32, float64, float32, bool:
		return string(appendValue(nil, v))
	}
	return fmt.Sprint(v)
}

// appendNumber appends v in the shortest form that reads back exactly;
// NaN and infinities as strconv writes them.
func appendNumber(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.AppendFloat(dst, v, 'g', -1, 64)
	}
	return wkb.AppendFloat(dst, v)
}

// useCDATA reports whether text reads better as CDATA: it holds markup and
// no carriage return (which a CDATA section cannot keep).
func useCDATA(s string) bool {
	return strings.ContainsAny(s, "<&") && !strings.Contains(s, "\r")
}

// appendCDATA appends s as a CDATA section, split around any "]]>", without
// the characters XML 1.0 does not allow.
func appendCDATA(dst []byte, s string) []byte {
	dst = append(dst, "<![CDATA["...)
	for {
		i := strings.Index(s, "]]>")
		if i < 0 {
			break
		}
		dst = xmltext.AppendValid(dst, s[:i])
		dst = append(dst, "]]]]><![CDATA[>"...)
		s = s[i+3:]
	}
	dst = xmltext.AppendValid(dst, s)
	return append(dst, "]]>"...)
}
