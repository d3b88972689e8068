package spatialite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"mapcommons/format/wkb"
)

// SpatiaLite's geometry BLOB ("BLOB-Geometry", the classic uncompressed
// form every SpatiaLite since 2.x reads):
//
//	0x00                       start
//	0x01                       little endian (0x00: big)
//	int32                      SRID
//	4 × double                 MBR: min x, min y, max x, max y
//	0x7C                       end of MBR
//	int32                      class: 1 Point … 7 GeometryCollection (2-D)
//	…                          the class's data
//	0xFE                       end
//
// Point: x, y. LineString: point count, points. Polygon: ring count, then
// each ring's point count and points (shell first). MultiPoint,
// MultiLineString, MultiPolygon and GeometryCollection: element count, then
// each element as 0x69, its class (1, 2 or 3) and its data. A collection
// holds only elementary geometries: SpatiaLite has no nested collections.
const (
	markStart  = 0x00
	markLE     = 0x01
	markMBREnd = 0x7C
	markEntity = 0x69
	markEnd    = 0xFE

	headerLen = 39 // start, endian, SRID, MBR, MBR end
	pointLen  = headerLen + 4 + 16 + 1
)

// ErrInvalid is wrapped by every error of Decode.
var ErrInvalid = errors.New("invalid SpatiaLite geometry blob")

// AppendGeometry appends the SpatiaLite geometry BLOB of the WKB value b
// with the given SRID and returns it with its bounding box. An empty
// geometry has no BLOB (SpatiaLite has no empty geometries): ok is false
// and dst comes back unchanged; the caller stores NULL. Empty members of a
// multi-geometry or collection and empty holes are left out, and members of
// a GeometryCollection that are themselves collections are replaced by
// their elements, since SpatiaLite's collections hold only points, lines
// and polygons.
func AppendGeometry(dst, b []byte, srid int32) (out []byte, mbr wkb.Rect, ok bool, err error) {
	if len(b) == 0 {
		return dst, mbr, false, nil
	}
	if x, y, isPoint := wkb.StoredPoint(b); isPoint {
		mbr = wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}
		dst = appendHeader(dst, srid, mbr, wkb.Point)
		dst = wkb.AppendXY(dst, x, y)
		return append(dst, markEnd), mbr, true, nil
	}
	g, err := wkb.Decode(b)
	if err != nil {
		return dst, mbr, false, err
	}
	g, ok = clean(g)
	if !ok {
		return dst, mbr, false, nil
	}
	mbr, _ = g.Bounds()
	dst = appendHeader(dst, srid, mbr, g.Type)
	dst = appendBody(dst, g)
	return append(dst, markEnd), mbr, true, nil
}

// clean returns the form of g SpatiaLite can store (see AppendGeometry);
// ok is false when nothing is left. It may change g's slices in place.
func clean(g wkb.Geom) (wkb.Geom, bool) {
	switch g.Type {
	case wkb.Point, wkb.LineString:
		return g, len(g.Coords) >= 2
	case wkb.Polygon:
		if len(g.Rings) == 0 || len(g.Rings[0]) < 2 {
			return g, false
		}
		for _, r := range g.Rings[1:] {
			if len(r) < 2 { // drop empty holes, copying only then
				rings := [][]float64{g.Rings[0]}
				for _, r := range g.Rings[1:] {
					if len(r) >= 2 {
						rings = append(rings, r)
					}
				}
				g.Rings = rings
				break
			}
		}
		return g, true
	case wkb.GeometryCollection:
		parts := flatten(nil, g.Parts)
		return wkb.Geom{Type: g.Type, Parts: parts}, len(parts) > 0
	default: // multi-geometries: members are of the one elementary type
		for i, p := range g.Parts {
			if _, ok := clean(p); !ok { // drop empty members, copying only then
				parts := append([]wkb.Geom(nil), g.Parts[:i]...)
				for _, p := range g.Parts[i+1:] {
					if p, ok := clean(p); ok {
						parts = append(parts, p)
					}
				}
				return wkb.Geom{Type: g.Type, Parts: parts}, len(parts) > 0
			}
			g.Parts[i], _ = clean(p)
		}
		return g, len(g.Parts) > 0
	}
}

// flatten appends the non-empty elementary geometries of parts.
func flatten(dst, parts []wkb.Geom) []wkb.Geom {
	for _, p := range parts {
		switch p.Type {
		case wkb.Point, wkb.LineString, wkb.Polygon:
			if p, ok := clean(p); ok {
				dst = append(dst, p)
			}
		default:
			dst = flatten(dst, p.Parts)
		}
	}
	return dst
}

func appendHeader(dst []byte, srid int32, mbr wkb.Rect, class uint32) []byte {
	dst = append(dst, markStart, markLE)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(srid))
	dst = wkb.AppendXY(dst, mbr.MinX, mbr.MinY)
	dst = wkb.AppendXY(dst, mbr.MaxX, mbr.MaxY)
	dst = append(dst, markMBREnd)
	return binary.LittleEndian.AppendUint32(dst, class)
}

func appendBody(dst []byte, g wkb.Geom) []byte {
	switch g.Type {
	case wkb.Point:
		return wkb.AppendXY(dst, g.Coords[0], g.Coords[1])
	case wkb.LineString:
		return wkb.AppendCoords(dst, g.Coords)
	case wkb.Polygon:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(g.Rings)))
		for _, r := range g.Rings {
			dst = wkb.AppendCoords(dst, r)
		}
		return dst
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(g.Parts)))
	for _, p := range g.Parts {
		dst = append(dst, markEntity)
		dst = binary.LittleEndian.AppendUint32(dst, p.Type)
		dst = appendBody(dst, p)
	}
	return dst
}

// Decode parses a SpatiaLite geometry BLOB of a 2-D geometry (classes 1 to
// 7, either byte order) into a Geom and its SRID. Trailing bytes, a bad
// mark, an element class a collection cannot hold and the 3-D, measured
// and compressed classes are errors.
func Decode(blob []byte) (g wkb.Geom, srid int32, err error) {
	d := decoder{b: blob}
	if len(blob) < headerLen+4+1 || blob[0] != markStart || blob[len(blob)-1] != markEnd || blob[38] != markMBREnd {
		return g, 0, fmt.Errorf("%w: bad header or end mark", ErrInvalid)
	}
	switch blob[1] {
	case 0:
		d.order = binary.BigEndian
	case 1:
		d.order = binary.LittleEndian
	default:
		return g, 0, fmt.Errorf("%w: bad byte order %d", ErrInvalid, blob[1])
	}
	srid = int32(d.order.Uint32(blob[2:]))
	d.off = headerLen
	d.end = len(blob) - 1
	class, err := d.u32()
	if err != nil {
		return g, 0, err
	}
	g, err = d.body(class, false)
	if err != nil {
		return g, 0, err
	}
	if d.off != d.end {
		return g, 0, fmt.Errorf("%w: %d trailing bytes", ErrInvalid, d.end-d.off)
	}
	return g, srid, nil
}

type decoder struct {
	b        []byte
	off, end int
	order    binary.ByteOrder
}

func (d *decoder) u32() (uint32, error) {
	if d.end-d.off < 4 {
		return 0, fmt.Errorf("%w: truncated at byte %d", ErrInvalid, d.off)
	}
	v := d.order.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

func (d *decoder) seq(n uint32) ([]float64, error) {
	if int64(n)*16 > int64(d.end-d.off) {
		return nil, fmt.Errorf("%w: point count %d exceeds the data", ErrInvalid, n)
	}
	xy := make([]float64, 2*n)
	for i := range xy {
		xy[i] = math.Float64frombits(d.order.Uint64(d.b[d.off:]))
		d.off += 8
	}
	return xy, nil
}

func (d *decoder) body(class uint32, member bool) (wkb.Geom, error) {
	g := wkb.Geom{Type: class}
	switch class {
	case wkb.Point:
		xy, err := d.seq(1)
		g.Coords = xy
		return g, err
	case wkb.LineString:
		n, err := d.u32()
		if err != nil {
			return g, err
		}
		g.Coords, err = d.seq(n)
		return g, err
	case wkb.Polygon:
		n, err := d.u32()
		if err != nil {
			return g, err
		}
		if int64(n)*4 > int64(d.end-d.off) {
			return g, fmt.Errorf("%w: ring count %d exceeds the data", ErrInvalid, n)
		}
		g.Rings = make([][]float64, n)
		for i := range g.Rings {
			m, err := d.u32()
			if err != nil {
				return g, err
			}
			if g.Rings[i], err = d.seq(m); err != nil {
				return g, err
			}
		}
		return g, nil
	case wkb.MultiPoint, wkb.MultiLineString, wkb.MultiPolygon, wkb.GeometryCollection:
		if member {
			return g, fmt.Errorf("%w: nested collection", ErrInvalid)
		}
		n, err := d.u32()
		if err != nil {
			return g, err
		}
		if int64(n)*5 > int64(d.end-d.off) {
			return g, fmt.Errorf("%w: element count %d exceeds the data", ErrInvalid, n)
		}
		g.Parts = make([]wkb.Geom, n)
		for i := range g.Parts {
			if d.off >= d.end || d.b[d.off] != markEntity {
				return g, fmt.Errorf("%w: missing entity mark at byte %d", ErrInvalid, d.off)
			}
			d.off++
			c, err := d.u32()
			if err != nil {
				return g, err
			}
			if class != wkb.GeometryCollection && c != class-3 {
				return g, fmt.Errorf("%w: class %d element of class %d", ErrInvalid, c, class)
			}
			if g.Parts[i], err = d.body(c, true); err != nil {
				return g, err
			}
		}
		return g, nil
	}
	return g, fmt.Errorf("%w: unsupported class %d", ErrInvalid, class)
}
