package shapefile

import (
	"encoding/binary"
	"fmt"
	"math"

	"mapcommons/format/wkb"
)

// This file turns WKB geometries into .shp record contents.

// Shape families: a shapefile holds one shape type, so a dataset of mixed
// geometry is written as one shapefile per family.
const (
	wFamPoint = iota
	wFamMultiPoint
	wFamLine
	wFamPolygon
	wFamNull // only when no family is known for Null records
	wFamCount
)

var (
	wFamShape  = [wFamCount]int32{shapePoint, shapeMultiPoint, shapePolyLine, shapePolygon, shapeNull}
	wFamSuffix = [wFamCount]string{"point", "multipoint", "line", "polygon", "null"}
)

// wMaskFamilies returns the families of the WKB types in a geometry mask
// (bit 1<<t for type t); GeometryCollection says nothing about its members.
func wMaskFamilies(mask uint32) (fams [wFamCount]bool) {
	fams[wFamPoint] = mask&(1<<wkb.Point) != 0
	fams[wFamMultiPoint] = mask&(1<<wkb.MultiPoint) != 0
	fams[wFamLine] = mask&(1<<wkb.LineString|1<<wkb.MultiLineString) != 0
	fams[wFamPolygon] = mask&(1<<wkb.Polygon|1<<wkb.MultiPolygon) != 0
	return fams
}

// wShapes gathers the parts of one feature's geometry by family and
// encodes the record contents. Its buffers are reused from feature to
// feature.
type wShapes struct {
	seen      [wFamCount]bool // families the geometry has (empty or not)
	pts       []float64       // Point and MultiPoint coordinates
	multi     bool            // a MultiPoint was seen
	lineXY    []float64
	lineParts []int32
	polyXY    []float64
	polyParts []int32

	content [wFamCount][]byte // the record content of each family seen
	box     [wFamCount]wkb.Rect
}

var errNonFinite = fmt.Errorf("a coordinate is not a finite number")

// add walks g into the family buffers.
func (s *wShapes) add(g *wkb.Geom, depth int) error {
	if depth > 32 {
		return fmt.Errorf("geometry collections nested too deeply")
	}
	switch g.Type {
	case wkb.Point:
		s.seen[wFamPoint] = true
		if len(g.Coords) >= 2 {
			if !wFinite(g.Coords[:2]) {
				return errNonFinite
			}
			s.pts = append(s.pts, g.Coords[0], g.Coords[1])
		}
	case wkb.MultiPoint:
		s.multi = true
		s.seen[wFamMultiPoint] = true
		for i := range g.Parts {
			if p := &g.Parts[i]; len(p.Coords) >= 2 {
				if !wFinite(p.Coords[:2]) {
					return errNonFinite
				}
				s.pts = append(s.pts, p.Coords[0], p.Coords[1])
			}
		}
	case wkb.LineString:
		s.seen[wFamLine] = true
		return s.addLine(g.Coords)
	case wkb.MultiLineString:
		s.seen[wFamLine] = true
		for i := range g.Parts {
			if err := s.addLine(g.Parts[i].Coords); err != nil {
				return err
			}
		}
	case wkb.Polygon:
		s.seen[wFamPolygon] = true
		return s.addPolygon(g.Rings)
	case wkb.MultiPolygon:
		s.seen[wFamPolygon] = true
		for i := range g.Parts {
			if err := s.addPolygon(g.Parts[i].Rings); err != nil {
				return err
			}
		}
	case wkb.GeometryCollection:
		for i := range g.Parts {
			if err := s.add(&g.Parts[i], depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown geometry type %d", g.Type)
	}
	return nil
}

func wFinite(xy []float64) bool {
	for _, v := range xy {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// addLine adds a line as a part; one of fewer than 2 points is dropped.
func (s *wShapes) addLine(xy []float64) error {
	if len(xy) < 4 {
		return nil
	}
	if !wFinite(xy) {
		return errNonFinite
	}
	s.lineParts = append(s.lineParts, int32(len(s.lineXY)/2))
	s.lineXY = append(s.lineXY, xy...)
	return nil
}

// addPolygon adds the rings of a polygon as parts, closed and oriented as
// the shapefile wants them: the shell clockwise, holes counter-clockwise.
// A ring of fewer than 3 distinct corners is dropped, and with a dropped
// shell the whole polygon.
func (s *wShapes) addPolygon(rings [][]float64) error {
	for i, r := range rings {
		if !wFinite(r) {
			return errNonFinite
		}
		start := len(s.polyXY)
		s.polyXY = append(s.polyXY, r...)
		if n := len(r); n >= 2 && (r[0] != r[n-2] || r[1] != r[n-1]) {
			s.polyXY = append(s.polyXY, r[0], r[1])
		}
		ring := s.polyXY[start:]
		if len(ring) < 8 {
			s.polyXY = s.polyXY[:start]
			if i == 0 {
				return nil // no shell, no polygon
			}
			continue
		}
		area := signedArea(ring) // positive when counter-clockwise
		if (i == 0 && area > 0) || (i > 0 && area < 0) {
			reverseRing(ring)
		}
		s.polyParts = append(s.polyParts, int32(start/2))
	}
	return nil
}

// encode decodes the WKB b and sets the record content of each family it
// holds (a Null record for an empty geometry); it returns false when b is
// no geometry at all: nil, or a GeometryCollection without a non-empty
// member (its empty members are left out).
func (s *wShapes) encode(b []byte) (bool, error) {
	s.seen = [wFamCount]bool{}
	s.pts, s.multi = s.pts[:0], false
	s.lineXY, s.lineParts = s.lineXY[:0], s.lineParts[:0]
	s.polyXY, s.polyParts = s.polyXY[:0], s.polyParts[:0]
	if len(b) == 0 {
		return false, nil
	}
	if x, y, ok := wkb.StoredPoint(b); ok { // the common case, without decoding
		if math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsNaN(y) {
			return false, errNonFinite
		}
		s.seen[wFamPoint] = true
		s.content[wFamPoint] = wAppendPoint(s.content[wFamPoint][:0], x, y)
		s.box[wFamPoint] = wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}
		return true, nil
	}
	g, err := wkb.Decode(b)
	if err != nil {
		return false, err
	}
	if err := s.add(&g, 0); err != nil {
		return false, err
	}
	// Points: one Point is a Point; several (in a collection), or any
	// MultiPoint, a MultiPoint.
	if s.seen[wFamPoint] || s.seen[wFamMultiPoint] {
		fam := wFamPoint
		if s.multi || len(s.pts) > 2 {
			fam = wFamMultiPoint
		}
		s.seen[wFamPoint], s.seen[wFamMultiPoint] = false, false
		s.seen[fam] = true
		c := s.content[fam][:0]
		switch {
		case len(s.pts) == 0:
			c = wAppendNull(c)
		case fam == wFamPoint:
			c = wAppendPoint(c, s.pts[0], s.pts[1])
		default:
			c = wAppendMultiPoint(c, s.pts)
		}
		s.content[fam] = c
		s.box[fam] = wBox(s.pts)
	}
	if s.seen[wFamLine] {
		s.content[wFamLine] = wAppendParts(s.content[wFamLine][:0], shapePolyLine, s.lineXY, s.lineParts)
		s.box[wFamLine] = wBox(s.lineXY)
	}
	if s.seen[wFamPolygon] {
		s.content[wFamPolygon] = wAppendParts(s.content[wFamPolygon][:0], shapePolygon, s.polyXY, s.polyParts)
		s.box[wFamPolygon] = wBox(s.polyXY)
	}
	some := false
	for fam, seen := range s.seen {
		if seen && g.Type == wkb.GeometryCollection && len(s.content[fam]) == 4 {
			s.seen[fam] = false // a Null record from empty members of a collection
		}
		some = some || s.seen[fam]
	}
	return some, nil
}

func wBox(xy []float64) wkb.Rect {
	r := wkb.EmptyRect
	for i := 0; i+1 < len(xy); i += 2 {
		r.MinX, r.MaxX = min(r.MinX, xy[i]), max(r.MaxX, xy[i])
		r.MinY, r.MaxY = min(r.MinY, xy[i+1]), max(r.MaxY, xy[i+1])
	}
	return r
}

func wPutF64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

func wPutI32(b []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }

func wAppendNull(dst []byte) []byte { return wPutI32(dst, shapeNull) }

func wAppendPoint(dst []byte, x, y float64) []byte {
	return wPutF64(wPutF64(wPutI32(dst, shapePoint), x), y)
}

func wAppendBox(dst []byte, r wkb.Rect) []byte {
	return wPutF64(wPutF64(wPutF64(wPutF64(dst, r.MinX), r.MinY), r.MaxX), r.MaxY)
}

func wAppendMultiPoint(dst []byte, xy []float64) []byte {
	dst = wAppendBox(wPutI32(dst, shapeMultiPoint), wBox(xy))
	dst = wPutI32(dst, int32(len(xy)/2))
	for _, v := range xy {
		dst = wPutF64(dst, v)
	}
	return dst
}

// wAppendParts encodes a PolyLine or Polygon record; no parts is a Null one.
func wAppendParts(dst []byte, typ int32, xy []float64, parts []int32) []byte {
	if len(parts) == 0 {
		return wAppendNull(dst)
	}
	dst = wAppendBox(wPutI32(dst, typ), wBox(xy))
	dst = wPutI32(dst, int32(len(parts)))
	dst = wPutI32(dst, int32(len(xy)/2))
	for _, p := range parts {
		dst = wPutI32(dst, p)
	}
	for _, v := range xy {
		dst = wPutF64(dst, v)
	}
	return dst
}
