// Package wkb is the one geometry encoding of mapcommons: every geometry is
// stored and passed around as OGC Well-Known Binary, 2-D, little endian,
// without an SRID flag (what the original service's clients parse, see the
// wire contract section 2.1). This file builds such values; read.go walks
// them into GeoJSON, WKT and bounds; wkt.go parses WKT.
package wkb

import (
	"encoding/binary"
	"math"
)

// OGC geometry type codes.
const (
	Point              uint32 = 1
	LineString         uint32 = 2
	Polygon            uint32 = 3
	MultiPoint         uint32 = 4
	MultiLineString    uint32 = 5
	MultiPolygon       uint32 = 6
	GeometryCollection uint32 = 7
)

// TypeName returns the GeoJSON name of an OGC type code ("" when unknown).
func TypeName(t uint32) string {
	switch t {
	case Point:
		return "Point"
	case LineString:
		return "LineString"
	case Polygon:
		return "Polygon"
	case MultiPoint:
		return "MultiPoint"
	case MultiLineString:
		return "MultiLineString"
	case MultiPolygon:
		return "MultiPolygon"
	case GeometryCollection:
		return "GeometryCollection"
	}
	return ""
}

func appendHeader(dst []byte, t uint32) []byte {
	dst = append(dst, 1)
	return binary.LittleEndian.AppendUint32(dst, t)
}

func appendUint32(dst []byte, n int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(n))
}

// AppendXY appends the coordinates x and y as little-endian doubles.
func AppendXY(dst []byte, x, y float64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(y))
}

// AppendCoords appends a little-endian 32-bit point count and the points
// of a flat x,y slice (as AppendXY), the body of a LineString or a ring.
func AppendCoords(dst []byte, xy []float64) []byte {
	n := len(xy) / 2
	dst = appendUint32(dst, n)
	for i := 0; i < n; i++ {
		dst = AppendXY(dst, xy[2*i], xy[2*i+1])
	}
	return dst
}

// AppendPoint appends a Point.
func AppendPoint(dst []byte, x, y float64) []byte {
	return AppendXY(appendHeader(dst, Point), x, y)
}

// AppendLineString appends a LineString of the flat x,y pairs in xy.
func AppendLineString(dst []byte, xy []float64) []byte {
	return AppendCoords(appendHeader(dst, LineString), xy)
}

// AppendPolygon appends a Polygon; rings[0] is the shell, the rest are holes,
// each a flat x,y slice (closed by the caller).
func AppendPolygon(dst []byte, rings [][]float64) []byte {
	dst = appendUint32(appendHeader(dst, Polygon), len(rings))
	for _, r := range rings {
		dst = AppendCoords(dst, r)
	}
	return dst
}

// AppendMultiPoint appends a MultiPoint of the flat x,y pairs in xy.
func AppendMultiPoint(dst []byte, xy []float64) []byte {
	n := len(xy) / 2
	dst = appendUint32(appendHeader(dst, MultiPoint), n)
	for i := 0; i < n; i++ {
		dst = AppendPoint(dst, xy[2*i], xy[2*i+1])
	}
	return dst
}

// AppendMultiLineString appends a MultiLineString.
func AppendMultiLineString(dst []byte, lines [][]float64) []byte {
	dst = appendUint32(appendHeader(dst, MultiLineString), len(lines))
	for _, l := range lines {
		dst = AppendLineString(dst, l)
	}
	return dst
}

// AppendMultiPolygon appends a MultiPolygon; each element is a polygon's rings.
func AppendMultiPolygon(dst []byte, polys [][][]float64) []byte {
	dst = appendUint32(appendHeader(dst, MultiPolygon), len(polys))
	for _, p := range polys {
		dst = AppendPolygon(dst, p)
	}
	return dst
}

// AppendCollection appends a GeometryCollection of already-encoded members.
func AppendCollection(dst []byte, members [][]byte) []byte {
	dst = appendUint32(appendHeader(dst, GeometryCollection), len(members))
	for _, m := range members {
		dst = append(dst, m...)
	}
	return dst
}
