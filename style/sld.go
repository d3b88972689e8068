// sld.go: a map's layers as a Styled Layer Descriptor, the style document
// GeoServer, QGIS and MapServer import: SLD 1.0.0, or SLD 1.1.0 with
// Symbology Encoding 1.1 (what QGIS writes). Each layer's look (LookOf)
// becomes rules: one per class of a classed layer (a filter on the
// classes' attribute), else one, with the symbolizers of the dataset's
// geometries.

package style

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"

	"mapcommons"
)

// The versions of SLD written.
const (
	SLD10 = "1.0.0"
	SLD11 = "1.1.0" // with SE 1.1
)

// StyledLayer is one layer of a style document: the name tools know its
// data by (the collection's readable name), its title, its look and its
// dataset (the geometries it holds, the names of its attributes).
type StyledLayer struct {
	Name, Title string
	Look        *Look
	Dataset     *mapcommons.Dataset
}

// Geometry families of a dataset's GeometryMask (bit 1<<t for WKB type t).
const (
	maskPoints   = 1<<1 | 1<<4
	maskLines    = 1<<2 | 1<<5
	maskPolygons = 1<<3 | 1<<6
	maskAny      = 1 << 7 // collections
)

// families are the geometry families a dataset's features hold (all when
// it holds collections, or nothing yet).
func families(ds *mapcommons.Dataset) (points, lines, polygons bool) {
	m := ds.GeometryMask
	if m&(maskPoints|maskLines|maskPolygons) == 0 || m&maskAny != 0 {
		return true, true, true
	}
	return m&maskPoints != 0, m&maskLines != 0, m&maskPolygons != 0
}

// WriteSLD writes layers as one StyledLayerDescriptor of version SLD10 or
// SLD11, named name.
func WriteSLD(w io.Writer, version, name string, layers []StyledLayer) error {
	x := &sldWriter{se: version == SLD11}
	x.b.WriteString(xml.Header)
	if x.se {
		x.open("StyledLayerDescriptor", `version="1.1.0" xmlns="http://www.opengis.net/sld" xmlns:se="http://www.opengis.net/se" xmlns:ogc="http://www.opengis.net/ogc" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opengis.net/sld http://schemas.opengis.net/sld/1.1.0/StyledLayerDescriptor.xsd"`)
	} else {
		x.open("StyledLayerDescriptor", `version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opengis.net/sld http://schemas.opengis.net/sld/1.0.0/StyledLayerDescriptor.xsd"`)
	}
	for _, l := range layers {
		x.layer(name, l)
	}
	x.close("StyledLayerDescriptor")
	_, err := w.Write(x.b.Bytes())
	return err
}

// sldWriter builds the document; se: SLD 1.1 (symbology in the se:
// namespace, parameters as SvgParameter).
type sldWriter struct {
	b  bytes.Buffer
	se bool
}

// sym is the name of a symbology element in the version's namespace.
func (x *sldWriter) sym(tag string) string {
	if x.se {
		return "se:" + tag
	}
	return tag
}

func (x *sldWriter) open(tag, attrs string) {
	x.b.WriteString("<" + tag)
	if attrs != "" {
		x.b.WriteString(" " + attrs)
	}
	x.b.WriteString(">")
}

func (x *sldWriter) close(tag string) { x.b.WriteString("</" + tag + ">") }

func (x *sldWriter) text(tag, s string) {
	x.open(tag, "")
	_ = xml.EscapeText(&x.b, []byte(s))
	x.close(tag)
}

// param is a CssParameter (SvgParameter in SE) of a fill or stroke.
func (x *sldWriter) param(name, value string) {
	tag := "CssParameter"
	if x.se {
		tag = "se:SvgParameter"
	}
	x.open(tag, `name="`+name+`"`)
	_ = xml.EscapeText(&x.b, []byte(value))
	x.close(tag)
}

// title writes a rule's or style's human title (inside se:Description
// in SE).
func (x *sldWriter) title(s string) {
	if x.se {
		x.open("se:Description", "")
		x.text("se:Title", s)
		x.close("se:Description")
		return
	}
	x.text("Title", s)
}

func (x *sldWriter) layer(name string, l StyledLayer) {
	x.open("NamedLayer", "")
	x.text(x.sym("Name"), l.Name)
	x.open("UserStyle", "")
	x.text(x.sym("Name"), name)
	x.title(l.Title)
	x.open(x.sym("FeatureTypeStyle"), "")
	k := l.Look
	attr := ""
	if k.ClassCol >= 0 {
		attr = l.Dataset.Attributes[k.ClassCol].Name
	}
	if ranges := k.ClassRanges(); len(ranges) > 0 {
		for _, r := range ranges {
			x.open(x.sym("Rule"), "")
			x.text(x.sym("Name"), "class "+strconv.Itoa(r.Class+1))
			x.title(classTitle(r))
			x.classFilter(attr, r)
			colour, size := k.ClassSymbol(r.Class)
			x.symbolizers(l, k.Fill[min(r.Class, len(k.Fill)-1)], colour, size)
			x.close(x.sym("Rule"))
		}
	} else {
		x.open(x.sym("Rule"), "")
		x.text(x.sym("Name"), "all")
		x.title(l.Title)
		x.symbolizers(l, k.Fill[0], k.IconColor, k.IconScale)
		x.close(x.sym("Rule"))
	}
	x.close(x.sym("FeatureTypeStyle"))
	x.close("UserStyle")
	x.close("NamedLayer")
}

// classTitle names a class by its values.
func classTitle(r ClassRange) string {
	end := ")"
	if r.MaxIn {
		end = "]"
	}
	return "[" + num(r.Min) + ", " + num(r.Max) + end
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// classFilter writes the filter of a class's values.
func (x *sldWriter) classFilter(attr string, r ClassRange) {
	cmp := func(op string, v float64) {
		x.open("ogc:"+op, "")
		x.text("ogc:PropertyName", attr)
		x.text("ogc:Literal", num(v))
		x.close("ogc:" + op)
	}
	upper := "PropertyIsLessThan"
	if r.MaxIn {
		upper = "PropertyIsLessThanOrEqualTo"
	}
	x.open("ogc:Filter", "")
	x.open("ogc:And", "")
	cmp("PropertyIsGreaterThanOrEqualTo", r.Min)
	cmp(upper, r.Max)
	x.close("ogc:And")
	x.close("ogc:Filter")
}

// symbolizers writes a rule's symbolizers for the dataset's geometries:
// polygons filled (fill) and outlined, lines stroked (cased first), points
// (and polygons' centroids when the look puts symbols there) as marks of
// colour and icon-size size.
func (x *sldWriter) symbolizers(l StyledLayer, fill, colour int, size float64) {
	k := l.Look
	points, lines, polygons := families(l.Dataset)
	if polygons && (k.DrawsFill() || k.DrawsStroke()) {
		x.open(x.sym("PolygonSymbolizer"), "")
		if k.DrawsFill() {
			x.open(x.sym("Fill"), "")
			x.param("fill", hex(fill))
			x.param("fill-opacity", opacity(k.FillOpacity))
			x.close(x.sym("Fill"))
		}
		if k.DrawsStroke() && !k.Cased {
			x.stroke(k.Stroke, k.StrokeOpacity, k.StrokeWidth, k.Dash)
		}
		x.close(x.sym("PolygonSymbolizer"))
	}
	if k.DrawsStroke() && (lines || polygons && k.Cased) {
		if k.Cased {
			x.line(0xffffff, k.StrokeOpacity, k.CaseWidth, [2]float64{})
		}
		x.line(k.Stroke, k.StrokeOpacity, k.StrokeWidth, k.Dash)
	}
	if (points || polygons && k.Centroids) && k.IconOpacity > 0 && !k.SizeGone {
		x.point(l, colour, size)
	}
}

func (x *sldWriter) line(colour int, op, width float64, dash [2]float64) {
	x.open(x.sym("LineSymbolizer"), "")
	x.stroke(colour, op, width, dash)
	x.close(x.sym("LineSymbolizer"))
}

func (x *sldWriter) stroke(colour int, op, width float64, dash [2]float64) {
	x.open(x.sym("Stroke"), "")
	x.param("stroke", hex(colour))
	x.param("stroke-opacity", opacity(op))
	x.param("stroke-width", num(round3(width)))
	if dash[0] > 0 {
		x.param("stroke-dasharray", num(round3(dash[0]))+" "+num(round3(dash[1])))
	}
	x.close(x.sym("Stroke"))
}

// mark is how a palette symbol is said as a well-known mark: its shape,
// whether it is filled, its outline's colour (-1: the symbol's own) and
// width, and its size in CSS pixels at icon-size 1. The circles and
// squares are the palette's own; the pictures (balloon, pin, feather,
// flag) are said as the nearest mark.
type mark struct {
	shape   string
	filled  bool
	outline int
	width   float64
	size    float64
}

var marks = map[string]mark{
	"circle": {"circle", true, 0xffffff, 1.5, 16}, "propCircle": {"circle", true, 0xffffff, 1.5, 16},
	"circleIcon": {"circle", true, 0xffffff, 1.5, 16}, "outlineCircle": {"circle", true, 0x222222, 1.5, 16},
	"hollowCircle": {"circle", false, -1, 2, 16}, "ringIcon": {"circle", false, -1, 4, 15},
	"square": {"square", true, 0xffffff, 1.5, 16}, "propSquare": {"square", true, 0xffffff, 1.5, 16},
	"squareIcon": {"square", true, 0xffffff, 1.5, 16}, "outlineSquare": {"square", true, 0x222222, 1.5, 16},
	"hollowSquare": {"square", false, -1, 2, 16}, "xPointIcon": {"x", false, -1, 4, 14},
	"balloonIcon": {"circle", true, 0xffffff, 1.5, 16}, "pushpinIcon": {"circle", true, 0xffffff, 1.5, 16},
	"featherIcon": {"triangle", true, 0xffffff, 1.5, 18}, "flagIcon": {"triangle", true, 0xffffff, 1.5, 18},
}

// point writes a PointSymbolizer: the look's mark in colour, of icon-size
// size, or of a PROPORTIONAL layer's size by value (sqrt of the value's
// magnitude over the largest, as the web map sizes it).
func (x *sldWriter) point(l StyledLayer, colour int, size float64) {
	k := l.Look
	m, ok := marks[k.Symbol]
	if !ok {
		m = marks["circle"]
	}
	x.open(x.sym("PointSymbolizer"), "")
	x.open(x.sym("Graphic"), "")
	x.open(x.sym("Mark"), "")
	x.text(x.sym("WellKnownName"), m.shape)
	if m.filled {
		x.open(x.sym("Fill"), "")
		x.param("fill", hex(colour))
		x.close(x.sym("Fill"))
	}
	outline := m.outline
	if outline < 0 {
		outline = colour
	}
	x.open(x.sym("Stroke"), "")
	x.param("stroke", hex(outline))
	x.param("stroke-width", num(m.width))
	x.close(x.sym("Stroke"))
	x.close(x.sym("Mark"))
	x.text(x.sym("Opacity"), opacity(k.IconOpacity))
	if k.SizeCol >= 0 {
		// size × sqrt(|v|): the constant folds the mark's pixels and the
		// largest value.
		c := m.size * k.IconScale * ProportionalFactor / math.Sqrt(k.MaxValue)
		x.open(x.sym("Size"), "")
		x.open("ogc:Mul", "")
		x.text("ogc:Literal", num(round3(c)))
		x.open("ogc:Function", `name="sqrt"`)
		x.open("ogc:Function", `name="abs"`)
		x.text("ogc:PropertyName", l.Dataset.Attributes[k.SizeCol].Name)
		x.close("ogc:Function")
		x.close("ogc:Function")
		x.close("ogc:Mul")
		x.close(x.sym("Size"))
	} else {
		x.text(x.sym("Size"), num(round3(m.size*size)))
	}
	x.close(x.sym("Graphic"))
	x.close(x.sym("PointSymbolizer"))
}

// hex writes an 0xRRGGBB colour as #rrggbb.
func hex(c int) string { return fmt.Sprintf("#%06x", c&0xffffff) }

func opacity(v float64) string { return num(round3(max(0, min(1, v)))) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
