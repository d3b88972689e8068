package mvt

// This file walks a decoded geometry through the pixel pipeline of
// geom.go for one MVT geometry type at a time.

import (
	"math"

	"mapcommons/format/wkb"
)

// geomScratch holds the buffers one tile reuses for every geometry.
type geomScratch struct {
	proj, clipA, clipB, clipL, simp []float64
	q                               []int32
	polys                           []int32 // quantized rings of one polygon
	ringEnds                        []int
	s                               simplifier
}

// encode appends to c the parts of g of MVT type kind (1 points, 2 lines,
// 3 polygons), in tile pixels.
func (s *geomScratch) encode(c *commands, g wkb.Geom, kind int, p projector, b box, tol float64) {
	switch g.Type {
	case wkb.Point, wkb.MultiPoint:
		if kind != 1 {
			return
		}
		q := s.q[:0]
		var add func(g wkb.Geom)
		add = func(g wkb.Geom) {
			if len(g.Coords) >= 2 {
				x, y := p.xy(g.Coords[0], g.Coords[1])
				if b.contains(x, y) {
					q = append(q, int32(math.Round(x)), int32(math.Round(y)))
				}
			}
			for _, m := range g.Parts {
				add(m)
			}
		}
		add(g)
		s.q = q
		c.points(q)
	case wkb.LineString:
		if kind == 2 {
			s.line(c, g.Coords, p, b, tol)
		}
	case wkb.Polygon:
		if kind == 3 {
			s.polygon(c, g.Rings, p, b, tol)
		}
	case wkb.MultiLineString, wkb.MultiPolygon, wkb.GeometryCollection:
		for _, m := range g.Parts {
			s.encode(c, m, kind, p, b, tol)
		}
	}
}

// project fills s.proj with the pixel coordinates of the lon/lat pairs.
func (s *geomScratch) project(xy []float64, p projector) []float64 {
	out := s.proj[:0]
	for i := 0; i+1 < len(xy); i += 2 {
		x, y := p.xy(xy[i], xy[i+1])
		out = append(out, x, y)
	}
	s.proj = out
	return out
}

func (s *geomScratch) line(c *commands, xy []float64, p projector, b box, tol float64) {
	pts := s.project(xy, p)
	if len(pts) < 4 {
		return
	}
	s.clipL = clipLine(pts, b, s.clipL, func(part []float64) {
		s.simp = s.s.simplify(s.simp[:0], part, tol)
		s.q = quantize(s.q[:0], s.simp, false)
		if len(s.q) >= 4 {
			c.line(s.q, false)
		}
	})
}

// polygon encodes one polygon: its exterior, wound positive, then its
// holes, wound negative. Nothing when the exterior vanishes.
func (s *geomScratch) polygon(c *commands, rings [][]float64, p projector, b box, tol float64) {
	s.polys, s.ringEnds = s.polys[:0], s.ringEnds[:0]
	for i, r := range rings {
		pts := s.project(r, p)
		if n := len(pts); n >= 4 && pts[0] == pts[n-2] && pts[1] == pts[n-1] {
			pts = pts[:n-2] // the closing point: implicit from here on
		}
		if len(pts) < 6 {
			if i == 0 {
				return
			}
			continue
		}
		x0, y0, x1, y1 := bounds(pts)
		if x1 < b.min || y1 < b.min || x0 > b.max || y0 > b.max {
			if i == 0 {
				return
			}
			continue
		}
		if x0 < b.min || y0 < b.min || x1 > b.max || y1 > b.max {
			pts, s.clipA, s.clipB = clipRing(pts, b, s.clipA, s.clipB)
		}
		if len(pts) < 6 {
			if i == 0 {
				return
			}
			continue
		}
		// Close the ring for the simplifier so that it keeps the first
		// point and weighs the closing segment.
		pts = append(pts, pts[0], pts[1])
		s.simp = s.s.simplify(s.simp[:0], pts, tol)
		q := quantize(s.q[:0], s.simp, true)
		s.q = q
		a := area2(q)
		if len(q) < 6 || a == 0 {
			if i == 0 {
				return
			}
			continue
		}
		if (i == 0) != (a > 0) {
			reverse(q)
		}
		s.polys = append(s.polys, q...)
		s.ringEnds = append(s.ringEnds, len(s.polys))
	}
	start := 0
	for _, end := range s.ringEnds {
		c.line(s.polys[start:end], true)
		start = end
	}
}
