package mvt

// This file walks a decoded geometry through the pixel pipeline of
// geom.go for one MVT geometry type at a time.

import (
	"math"

	"mapcommons/format/wkb"
)

// geomScratch holds the buffers one tile reuses for every geometry.
type geomScratch struct {
	proj, clipL, simp []float64
	q                 []int32
	tmp               []float64
	ringBufs, rings   [][]float64 // one polygon's projected rings
	pieces            []piece
	s                 simplifier
	clip              clipper
	poly              polyRings // the polygon rings of the feature being encoded
}

// encode appends to c the parts of g of MVT type kind (1 points, 2 lines,
// 3 polygons), in tile pixels. The polygons of g are gathered first and
// written together (polyRings.write), since their rings are checked, and
// if need be rebuilt, as one geometry: the parts of a MultiPolygon must
// not overlap once rounded either.
func (s *geomScratch) encode(c *commands, g wkb.Geom, kind int, p projector, b box, tol float64) {
	if kind == 3 {
		s.poly.reset()
		s.polygons(g, p, b, tol)
		s.poly.write(c)
		return
	}
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
	case wkb.MultiLineString, wkb.GeometryCollection:
		for _, m := range g.Parts {
			s.encode(c, m, kind, p, b, tol)
		}
	}
}

// project fills s.proj with the pixel coordinates of the lon/lat pairs;
// nil when one is not finite (the part is skipped).
func (s *geomScratch) project(xy []float64, p projector) []float64 {
	out := s.proj[:0]
	for i := 0; i+1 < len(xy); i += 2 {
		x, y := p.xy(xy[i], xy[i+1])
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil
		}
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
		s.q = quantize(s.q[:0], s.simp, false, b)
		if len(s.q) >= 4 {
			c.line(s.q, false)
		}
	})
}

// polygons adds the polygons of g to s.poly.
func (s *geomScratch) polygons(g wkb.Geom, p projector, b box, tol float64) {
	switch g.Type {
	case wkb.Polygon:
		s.polygon(g.Rings, p, b, tol)
	case wkb.MultiPolygon, wkb.GeometryCollection:
		for _, m := range g.Parts {
			s.polygons(m, p, b, tol)
		}
	}
}

// polygon adds one polygon to s.poly: the pieces the square cuts it into,
// each an exterior wound positive then its holes wound negative. Rings
// that vanish at the zoom are dropped, an exterior with its holes.
func (s *geomScratch) polygon(rings [][]float64, p projector, b box, tol float64) {
	s.rings = s.rings[:0]
	if len(rings) == 0 {
		return // POLYGON EMPTY
	}
	for i, r := range rings {
		if len(s.ringBufs) <= i {
			s.ringBufs = append(s.ringBufs, nil)
		}
		pts := s.ringBufs[i][:0]
		for k := 0; k+1 < len(r); k += 2 {
			x, y := p.xy(r[k], r[k+1])
			pts = append(pts, x, y)
		}
		s.ringBufs[i] = pts
		if x0, y0, x1, y1 := bounds(pts); math.IsInf(x1-x0, 0) || math.IsInf(y1-y0, 0) || math.IsNaN(x1-x0+y1-y0) {
			pts = nil // a coordinate is not finite: the ring is skipped
		}
		if n := len(pts); n >= 4 && pts[0] == pts[n-2] && pts[1] == pts[n-1] {
			pts = pts[:n-2] // the closing point: implicit from here on
		}
		a := area2[float64](pts)
		if len(pts) < 6 || a == 0 || math.IsNaN(a) {
			if i == 0 {
				return
			}
			continue
		}
		if (i == 0) != (a > 0) {
			reverse(pts)
		}
		s.rings = append(s.rings, pts)
	}
	x0, y0, x1, y1 := bounds(s.rings[0])
	var pieces []piece
	if b.contains(x0, y0) && b.contains(x1, y1) {
		pieces = append(s.pieces[:0], piece{rings: s.rings})
	} else {
		pieces = s.clip.clipPolygon(s.rings, b)
	}
	for _, pc := range pieces {
		dropped := false
		for i, r := range pc.rings {
			// Close the ring for the simplifier so that it keeps the
			// first point and weighs the closing segment.
			s.tmp = append(append(s.tmp[:0], r...), r[0], r[1])
			s.simp = s.s.simplify(s.simp[:0], s.tmp, tol)
			// The ring before rounding, kept should the rounded rings
			// need rebuilding.
			s.poly.addFloat(s.simp)
			if dropped {
				continue // a hole of a vanished exterior
			}
			q := quantize(s.q[:0], s.simp, true, b)
			s.q = q
			a := area2[int64](q)
			if len(q) < 6 || a == 0 {
				dropped = i == 0
				continue
			}
			if (i == 0) != (a > 0) {
				reverse(q)
			}
			s.poly.add(q)
		}
	}
}
