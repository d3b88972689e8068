package wkb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Geom is a decoded geometry: the form every writer walks.
type Geom struct {
	Type   uint32
	Coords []float64   // Point (empty or one x,y pair) and LineString: flat x,y pairs
	Rings  [][]float64 // Polygon: shell then holes, each flat x,y pairs
	Parts  []Geom      // MultiPoint, MultiLineString, MultiPolygon, GeometryCollection
}

// Rect is an axis-aligned bounding box in lon/lat.
type Rect struct{ MinX, MinY, MaxX, MaxY float64 }

// Extend grows r to cover o.
func (r Rect) Extend(o Rect) Rect {
	return Rect{math.Min(r.MinX, o.MinX), math.Min(r.MinY, o.MinY), math.Max(r.MaxX, o.MaxX), math.Max(r.MaxY, o.MaxY)}
}

// EmptyRect is the identity of Extend.
var EmptyRect = Rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}

// IsEmpty reports whether r covers nothing.
func (r Rect) IsEmpty() bool { return r.MinX > r.MaxX || r.MinY > r.MaxY }

// ErrInvalid is wrapped by every decoding error.
var ErrInvalid = errors.New("invalid WKB")

const maxDepth = 16

type cursor struct {
	b   []byte
	off int
}

func (c *cursor) fail(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrInvalid, c.off, fmt.Sprintf(format, args...))
}

func (c *cursor) u32(le bool) (uint32, error) {
	if len(c.b)-c.off < 4 {
		return 0, c.fail("truncated")
	}
	p := c.b[c.off : c.off+4]
	c.off += 4
	if le {
		return binary.LittleEndian.Uint32(p), nil
	}
	return binary.BigEndian.Uint32(p), nil
}

func (c *cursor) f64(le bool) float64 {
	p := c.b[c.off : c.off+8]
	c.off += 8
	if le {
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(p))
}

// coords reads a count and that many points of dims values, keeping x,y.
func (c *cursor) coords(le bool, dims int) ([]float64, error) {
	n, err := c.u32(le)
	if err != nil {
		return nil, err
	}
	return c.points(le, dims, int64(n))
}

func (c *cursor) points(le bool, dims int, n int64) ([]float64, error) {
	if n*int64(dims)*8 > int64(len(c.b)-c.off) {
		return nil, c.fail("point count %d exceeds the data", n)
	}
	xy := make([]float64, 0, 2*n)
	for i := int64(0); i < n; i++ {
		x, y := c.f64(le), c.f64(le)
		c.off += (dims - 2) * 8
		xy = append(xy, x, y)
	}
	return xy, nil
}

// header reads byte order and type, returning the base type and the number of
// ordinates per point. ISO (1000/2000/3000) and EWKB (flag bits) Z/M forms and
// an EWKB SRID are accepted; extra ordinates are dropped by the reader.
func (c *cursor) header() (le bool, typ uint32, dims int, err error) {
	if c.off >= len(c.b) {
		return false, 0, 0, c.fail("truncated")
	}
	switch c.b[c.off] {
	case 0:
		le = false
	case 1:
		le = true
	default:
		return false, 0, 0, c.fail("bad byte order %d", c.b[c.off])
	}
	c.off++
	raw, err := c.u32(le)
	if err != nil {
		return false, 0, 0, err
	}
	dims = 2
	if raw&0x80000000 != 0 {
		dims++
	}
	if raw&0x40000000 != 0 {
		dims++
	}
	if raw&0x20000000 != 0 { // EWKB SRID follows the type
		if _, err := c.u32(le); err != nil {
			return false, 0, 0, err
		}
	}
	raw &^= 0xE0000000
	switch raw / 1000 {
	case 1, 2:
		dims++
	case 3:
		dims += 2
	case 0:
	default:
		return false, 0, 0, c.fail("unknown geometry type %d", raw)
	}
	typ = raw % 1000
	if typ < Point || typ > GeometryCollection || dims > 4 {
		return false, 0, 0, c.fail("unknown geometry type %d", raw)
	}
	return le, typ, dims, nil
}

func (c *cursor) geom(depth int) (Geom, error) {
	if depth > maxDepth {
		return Geom{}, c.fail("nested too deeply")
	}
	le, typ, dims, err := c.header()
	if err != nil {
		return Geom{}, err
	}
	g := Geom{Type: typ}
	switch typ {
	case Point:
		g.Coords, err = c.points(le, dims, 1)
		if err == nil && math.IsNaN(g.Coords[0]) && math.IsNaN(g.Coords[1]) {
			g.Coords = nil // the conventional empty point
		}
	case LineString:
		g.Coords, err = c.coords(le, dims)
	case Polygon:
		var n uint32
		if n, err = c.u32(le); err != nil {
			return g, err
		}
		if int64(n)*4 > int64(len(c.b)-c.off) {
			return g, c.fail("ring count %d exceeds the data", n)
		}
		g.Rings = make([][]float64, 0, n)
		for i := uint32(0); i < n; i++ {
			r, err := c.coords(le, dims)
			if err != nil {
				return g, err
			}
			g.Rings = append(g.Rings, r)
		}
	default:
		var n uint32
		if n, err = c.u32(le); err != nil {
			return g, err
		}
		if int64(n)*5 > int64(len(c.b)-c.off) {
			return g, c.fail("member count %d exceeds the data", n)
		}
		g.Parts = make([]Geom, 0, n)
		for i := uint32(0); i < n; i++ {
			p, err := c.geom(depth + 1)
			if err != nil {
				return g, err
			}
			want := typ - 3 // MultiPoint→Point etc.
			if typ != GeometryCollection && p.Type != want {
				return g, c.fail("%s member of a %s", TypeName(p.Type), TypeName(typ))
			}
			g.Parts = append(g.Parts, p)
		}
	}
	return g, err
}

// Decode parses WKB (either byte order, 2-D to 4-D, ISO or EWKB) into a Geom.
// Trailing bytes are an error.
func Decode(b []byte) (Geom, error) {
	c := cursor{b: b}
	g, err := c.geom(0)
	if err != nil {
		return Geom{}, err
	}
	if c.off != len(b) {
		return Geom{}, c.fail("%d trailing bytes", len(b)-c.off)
	}
	return g, nil
}

// Normalize decodes b and re-encodes it in the stored form (2-D, little
// endian, no SRID), rejecting non-finite coordinates.
func Normalize(b []byte) ([]byte, error) {
	g, err := Decode(b)
	if err != nil {
		return nil, err
	}
	if !g.finite() {
		return nil, fmt.Errorf("%w: non-finite coordinate", ErrInvalid)
	}
	return g.AppendWKB(nil), nil
}

func finite(xy []float64) bool {
	for _, v := range xy {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func (g Geom) finite() bool {
	if !finite(g.Coords) {
		return false
	}
	for _, r := range g.Rings {
		if !finite(r) {
			return false
		}
	}
	for _, p := range g.Parts {
		if !p.finite() {
			return false
		}
	}
	return true
}

// IsEmpty reports whether g has no coordinates at all.
func (g Geom) IsEmpty() bool {
	if len(g.Coords) > 0 {
		return false
	}
	for _, r := range g.Rings {
		if len(r) > 0 {
			return false
		}
	}
	for _, p := range g.Parts {
		if !p.IsEmpty() {
			return false
		}
	}
	return true
}

// AppendWKB encodes g in the stored form.
func (g Geom) AppendWKB(dst []byte) []byte { return g.AppendWKBNaN(dst, math.NaN()) }

// AppendWKBNaN is AppendWKB with nan for the coordinates of an empty point
// (GeoPackage and GDAL write the quiet NaN 0x7FF8000000000000, another
// NaN than math.NaN()).
func (g Geom) AppendWKBNaN(dst []byte, nan float64) []byte {
	switch g.Type {
	case Point:
		if len(g.Coords) < 2 {
			return AppendPoint(dst, nan, nan)
		}
		return AppendPoint(dst, g.Coords[0], g.Coords[1])
	case LineString:
		return AppendLineString(dst, g.Coords)
	case Polygon:
		return AppendPolygon(dst, g.Rings)
	}
	dst = appendUint32(appendHeader(dst, g.Type), len(g.Parts))
	for _, p := range g.Parts {
		dst = p.AppendWKBNaN(dst, nan)
	}
	return dst
}

// Bounds returns the bounding box of g; ok is false for an empty geometry.
func (g Geom) Bounds() (r Rect, ok bool) {
	r = EmptyRect
	add := func(xy []float64) {
		for i := 0; i+1 < len(xy); i += 2 {
			r.MinX, r.MaxX = math.Min(r.MinX, xy[i]), math.Max(r.MaxX, xy[i])
			r.MinY, r.MaxY = math.Min(r.MinY, xy[i+1]), math.Max(r.MaxY, xy[i+1])
		}
	}
	var walk func(Geom)
	walk = func(g Geom) {
		add(g.Coords)
		for _, ring := range g.Rings {
			add(ring)
		}
		for _, p := range g.Parts {
			walk(p)
		}
	}
	walk(g)
	return r, !r.IsEmpty()
}

// AppendFloat appends v in the shortest form that reads back exactly, as
// JSON and WKT both accept it. Non-finite values become 0 (never stored).
func AppendFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, '0')
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	abs := math.Abs(v)
	if abs < 1e-6 || abs >= 1e21 {
		return strconv.AppendFloat(dst, v, 'e', -1, 64)
	}
	if abs < 1e9 {
		if m := math.Round(abs * 1e6); m/1e6 == abs {
			return appendMicros(dst, v < 0, uint64(m))
		}
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// appendMicros appends the decimal m millionths (negative when neg),
// without trailing zeros: what strconv's shortest form gives for the
// double it is nearest to, in half its time, for the values that came
// from a text of at most six decimals (coordinates, measures).
//
// Why it is the shortest form: m/1e6, both exact (m < 1e15 < 2^53), is
// correctly rounded, so AppendFloat's check says this decimal reads back
// as v. It has at most 15 significant digits, and two different decimals
// of at most 15 digits never read back as the same double (DBL_DIG is
// 15), so the shortest decimal that reads back as v, having no more
// digits than this one, is this one.
func appendMicros(dst []byte, neg bool, m uint64) []byte {
	if neg {
		dst = append(dst, '-')
	}
	dst = strconv.AppendUint(dst, m/1e6, 10)
	frac := m % 1e6
	if frac == 0 {
		return dst
	}
	var b [7]byte
	b[0] = '.'
	for i := 6; i > 0; i-- {
		b[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 7
	for b[n-1] == '0' {
		n--
	}
	return append(dst, b[:n]...)
}

func appendPosJSON(dst []byte, xy []float64, i int) []byte {
	dst = append(dst, '[')
	dst = AppendFloat(dst, xy[i])
	dst = append(dst, ',')
	dst = AppendFloat(dst, xy[i+1])
	return append(dst, ']')
}

func appendSeqJSON(dst []byte, xy []float64) []byte {
	dst = append(dst, '[')
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPosJSON(dst, xy, i)
	}
	return append(dst, ']')
}

func appendRingsJSON(dst []byte, rings [][]float64) []byte {
	dst = append(dst, '[')
	for i, r := range rings {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSeqJSON(dst, r)
	}
	return append(dst, ']')
}

// appendCoordsJSON appends the GeoJSON "coordinates" value of g.
func (g Geom) appendCoordsJSON(dst []byte) []byte {
	switch g.Type {
	case Point:
		if len(g.Coords) < 2 {
			return append(dst, '[', ']')
		}
		return appendPosJSON(dst, g.Coords, 0)
	case LineString:
		return appendSeqJSON(dst, g.Coords)
	case Polygon:
		return appendRingsJSON(dst, g.Rings)
	}
	dst = append(dst, '[')
	n := 0
	for _, p := range g.Parts {
		if g.Type == MultiPoint && len(p.Coords) < 2 {
			continue // GeoJSON has no empty position
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = p.appendCoordsJSON(dst)
	}
	return append(dst, ']')
}

// AppendGeoJSON appends g as a GeoJSON geometry object.
func (g Geom) AppendGeoJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, TypeName(g.Type)...)
	if g.Type == GeometryCollection {
		dst = append(dst, `","geometries":[`...)
		for i, p := range g.Parts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = p.AppendGeoJSON(dst)
		}
		return append(dst, ']', '}')
	}
	dst = append(dst, `","coordinates":`...)
	dst = g.appendCoordsJSON(dst)
	return append(dst, '}')
}

// ToGeoJSON appends the GeoJSON geometry object of the WKB value b; an empty
// b gives null.
func ToGeoJSON(dst, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return append(dst, "null"...), nil
	}
	if x, y, ok := StoredPoint(b); ok {
		dst = append(dst, `{"type":"Point","coordinates":[`...)
		dst = AppendFloat(dst, x)
		dst = append(dst, ',')
		dst = AppendFloat(dst, y)
		return append(dst, ']', '}'), nil
	}
	g, err := Decode(b)
	if err != nil {
		return dst, err
	}
	return g.AppendGeoJSON(dst), nil
}

// fastPoint recognises the stored form of a non-empty Point without decoding.
func StoredPoint(b []byte) (x, y float64, ok bool) {
	if len(b) != 21 || b[0] != 1 || binary.LittleEndian.Uint32(b[1:]) != Point {
		return 0, 0, false
	}
	x = math.Float64frombits(binary.LittleEndian.Uint64(b[5:]))
	y = math.Float64frombits(binary.LittleEndian.Uint64(b[13:]))
	if math.IsNaN(x) && math.IsNaN(y) {
		return 0, 0, false
	}
	return x, y, true
}

// PointXY returns the coordinates of b when it is a non-empty Point.
func PointXY(b []byte) (x, y float64, ok bool) {
	if x, y, ok = StoredPoint(b); ok {
		return x, y, true
	}
	g, err := Decode(b)
	if err != nil || g.Type != Point || len(g.Coords) < 2 {
		return 0, 0, false
	}
	return g.Coords[0], g.Coords[1], true
}

// BoundsOf returns the bounding box of the WKB value b.
func BoundsOf(b []byte) (Rect, bool, error) {
	if x, y, ok := StoredPoint(b); ok {
		return Rect{x, y, x, y}, true, nil
	}
	g, err := Decode(b)
	if err != nil {
		return Rect{}, false, err
	}
	r, ok := g.Bounds()
	return r, ok, nil
}
