// relate.go: the spatial predicates of CQL2's spatial-functions class
// (S_EQUALS, S_TOUCHES, S_CROSSES, S_WITHIN, S_CONTAINS, S_OVERLAPS, and
// S_INTERSECTS of a literal with holes; S_DISJOINT is NOT S_INTERSECTS)
// by their DE-9IM meaning (OGC Simple Features), planar in lon/lat,
// computed by the simplefeatures library's relate engine: the one
// evaluator both stores use, so that they answer alike.
package feature

import (
	"github.com/peterstace/simplefeatures/geom"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// relation is a compiled spatial predicate of the feature's geometry
// against a literal.
type relation struct {
	op    string        // a mapcommons.SpatialOps member: geometry op lit
	lit   geom.Geometry // the literal, a BBox as its polygons
	env   geom.Envelope // lit's envelope
	cost  int           // the literal's size, for the Stopper's count
	empty bool          // the literal could not be read: nothing matches
	// areal: the literal is a polygon or polygons, whose boundary
	// (bound) clearOf tests a feature against first.
	areal bool
	bound geom.Geometry
	// polys are an areal literal's polygons, for locating a point
	// feature without decoding it (locate).
	polys []arealPart
}

// arealPart is one polygon of an areal literal: its box and its rings
// (flat x, y pairs, closed).
type arealPart struct {
	box   wkb.Rect
	rings [][]float64
}

// compileRelation prepares the literal of a validated spatial test.
func compileRelation(e *mapcommons.Expr) *relation {
	r := &relation{op: e.Op}
	if e.BBox != nil {
		r.lit = BBoxGeometry(e.BBox)
		r.cost = 64
	} else {
		g, err := geom.UnmarshalWKB(e.Geometry, geom.NoValidate{})
		if err != nil || g.IsEmpty() {
			return &relation{op: e.Op, empty: true}
		}
		r.lit, r.cost = g, len(e.Geometry)
	}
	r.env = r.lit.Envelope()
	if t := r.lit.Type(); t == geom.TypePolygon || t == geom.TypeMultiPolygon {
		r.areal, r.bound = true, r.lit.Boundary()
		if g, err := wkb.Decode(r.lit.AsBinary()); err == nil {
			for _, p := range append([]wkb.Geom{g}, g.Parts...) {
				if p.Type == wkb.Polygon && len(p.Rings) > 0 {
					box, _ := p.Bounds()
					r.polys = append(r.polys, arealPart{box: box, rings: p.Rings})
				}
			}
		}
	}
	return r
}

// Locations of a point against an areal literal.
const (
	locExterior = iota
	locInterior
	locBoundary
)

// locate tells where the point x, y lies against an areal literal: on a
// ring's segment (the boundary), or inside by the parity of the rings it
// is in (a ray towards +x crossing them, half-open in y so that a vertex
// counts once), holes and other polygons included.
func (r *relation) locate(x, y float64) int {
	inside := false
	for _, p := range r.polys {
		if x < p.box.MinX || x > p.box.MaxX || y < p.box.MinY || y > p.box.MaxY {
			continue // outside each of its rings: crossed an even number of times
		}
		for _, ring := range p.rings {
			for i := 0; i+3 < len(ring); i += 2 {
				x1, y1, x2, y2 := ring[i], ring[i+1], ring[i+2], ring[i+3]
				if (x-x1)*(y2-y1) == (y-y1)*(x2-x1) && min(x1, x2) <= x && x <= max(x1, x2) && min(y1, y2) <= y && y <= max(y1, y2) {
					return locBoundary
				}
				if (y1 > y) != (y2 > y) && x < x1+(y-y1)*(x2-x1)/(y2-y1) {
					inside = !inside
				}
			}
		}
	}
	if inside {
		return locInterior
	}
	return locExterior
}

// matchPoint is the test of a point feature against an areal literal, by
// where it lies: within the interior, touching on the boundary,
// intersecting either; a point contains, equals, crosses and overlaps no
// polygon.
func (r *relation) matchPoint(x, y float64) bool {
	loc := r.locate(x, y)
	switch r.op {
	case mapcommons.ExprIntersects:
		return loc != locExterior
	case mapcommons.ExprDisjoint:
		return loc == locExterior
	case mapcommons.ExprWithin:
		return loc == locInterior
	case mapcommons.ExprTouches:
		return loc == locBoundary
	}
	return false
}

// BBoxGeometry is a BBOX as the geometry the DE-9IM predicates test: the
// polygon of its corners, or two when it crosses the antimeridian (w > e),
// each a line or a point when it has no height or width.
func BBoxGeometry(b *mapcommons.BBox) geom.Geometry {
	var parts []geom.Geometry
	polys, lines := 0, 0
	for _, r := range spatial.BBoxRects(b.W, b.S, b.E, b.N) {
		g := geom.NewEnvelope(geom.XY{X: r.MinX, Y: r.MinY}, geom.XY{X: r.MaxX, Y: r.MaxY}).AsGeometry()
		switch g.Type() {
		case geom.TypePolygon:
			polys++
		case geom.TypeLineString:
			lines++
		}
		parts = append(parts, g)
	}
	switch {
	case len(parts) == 1:
		return parts[0]
	case polys == len(parts):
		ps := make([]geom.Polygon, len(parts))
		for i, p := range parts {
			ps[i] = p.MustAsPolygon()
		}
		return geom.NewMultiPolygon(ps).AsGeometry()
	case lines == len(parts):
		ls := make([]geom.LineString, len(parts))
		for i, p := range parts {
			ls[i] = p.MustAsLineString()
		}
		return geom.NewMultiLineString(ls).AsGeometry()
	}
	return geom.NewGeometryCollection(parts).AsGeometry()
}

// match tests a feature's geometry (stored WKB); a feature without one,
// or with an empty or unreadable one, is UNKNOWN, and so is one the
// relate engine fails on (a geometry too invalid for it). st counts the
// work, the feature's size and the literal's, and stops the test once
// the query's context is done (then the answer is false and st holds
// the context's error).
func (r *relation) match(b []byte, st *Stopper) tri {
	if len(b) == 0 || r.empty {
		return triUnknown
	}
	if x, y, ok := wkb.StoredPoint(b); ok && r.polys != nil { // no decoding for points
		if !st.spend(r.cost) {
			return triFalse
		}
		return truth(r.matchPoint(x, y))
	}
	g, err := geom.UnmarshalWKB(b, geom.NoValidate{})
	if err != nil || g.IsEmpty() {
		return triUnknown
	}
	if !g.Envelope().Intersects(r.env) { // every predicate but disjoint implies intersection
		return truth(r.op == mapcommons.ExprDisjoint)
	}
	if !st.spend(len(b) + r.cost) {
		return triFalse
	}
	if ok, known := r.clearOf(g); known {
		return truth(ok)
	}
	ok, err := Relate(r.op, g, r.lit)
	if err != nil {
		return triUnknown
	}
	return truth(ok)
}

// clearOf answers the predicate without the relate engine's overlay when
// the literal is areal and the feature g does not meet its boundary: each
// of g's parts (a point, a line, a polygon, connected) then lies in the
// literal's interior or in its exterior wholly, which one of its vertices
// tells, and the DE-9IM predicates follow from how many parts are in and
// out: g intersects the literal when a part is in, is within it when
// every part is, crosses it when some are in and some out (g a point or
// line set), overlaps it likewise (g areal); it touches, equals and
// contains it never (the literal's boundary is not in g). known is false
// when the test does not apply (g meets the boundary, or is a
// collection).
//
// Besides being cheaper, this avoids the overlay where it is not needed:
// simplefeatures v0.50.0 mislabels the faces of some polygons with
// near-collinear vertices (Natural Earth's Sudan, relating it to any box
// around it, comes out as containing the box).
func (r *relation) clearOf(g geom.Geometry) (ok, known bool) {
	if !r.areal || g.Type() == geom.TypeGeometryCollection || geom.Intersects(g, r.bound) {
		return false, false
	}
	in, out := 0, 0
	part := func(xy geom.XY) {
		if geom.Intersects(xy.AsPoint().AsGeometry(), r.lit) {
			in++
		} else {
			out++
		}
	}
	first := func(ls geom.LineString) {
		if seq := ls.Coordinates(); seq.Length() > 0 {
			part(seq.GetXY(0))
		}
	}
	switch g.Type() {
	case geom.TypePoint:
		if xy, ok := g.MustAsPoint().XY(); ok {
			part(xy)
		}
	case geom.TypeMultiPoint:
		mp := g.MustAsMultiPoint()
		for i := 0; i < mp.NumPoints(); i++ {
			if xy, ok := mp.PointN(i).XY(); ok {
				part(xy)
			}
		}
	case geom.TypeLineString:
		first(g.MustAsLineString())
	case geom.TypeMultiLineString:
		ml := g.MustAsMultiLineString()
		for i := 0; i < ml.NumLineStrings(); i++ {
			first(ml.LineStringN(i))
		}
	case geom.TypePolygon:
		first(g.MustAsPolygon().ExteriorRing())
	case geom.TypeMultiPolygon:
		mp := g.MustAsMultiPolygon()
		for i := 0; i < mp.NumPolygons(); i++ {
			first(mp.PolygonN(i).ExteriorRing())
		}
	}
	if in+out == 0 {
		return false, false
	}
	switch r.op {
	case mapcommons.ExprIntersects:
		return in > 0, true
	case mapcommons.ExprDisjoint:
		return in == 0, true
	case mapcommons.ExprWithin:
		return out == 0, true
	case mapcommons.ExprCrosses:
		return g.Dimension() < 2 && in > 0 && out > 0, true
	case mapcommons.ExprOverlaps:
		return g.Dimension() == 2 && in > 0 && out > 0, true
	}
	return false, true // touches, equals, contains
}

// Relate reports whether a op b holds, op one of mapcommons.SpatialOps,
// by the DE-9IM definitions of OGC Simple Features: S_INTERSECTS and
// S_DISJOINT by simplefeatures' intersection test, the others by the
// patterns of their definitions over its DE-9IM matrix (computed once).
// An error when the relate engine cannot compute it: it panics on some
// invalid geometries, and on some polygons with near-collinear vertices
// its overlay mislabels their faces, which a matrix whose
// exterior-exterior entry is not 2 (as it is for any two bounded
// geometries) betrays.
func Relate(op string, a, b geom.Geometry) (ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, mapcommons.Errorf(mapcommons.EINVALID, "%s: the geometries cannot be related: %v", op, p)
		}
	}()
	switch op {
	case mapcommons.ExprIntersects:
		return geom.Intersects(a, b), nil
	case mapcommons.ExprDisjoint:
		return !geom.Intersects(a, b), nil
	}
	m, err := geom.Relate(a, b)
	if err != nil {
		return false, err
	}
	if len(m) != 9 || m[8] != '2' {
		return false, mapcommons.Errorf(mapcommons.EINVALID, "%s: the relate engine's matrix %s is inconsistent", op, m)
	}
	matches := func(patterns ...string) (bool, error) {
		for _, pat := range patterns {
			if ok, err := geom.RelateMatches(m, pat); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}
	da, db := a.Dimension(), b.Dimension()
	switch op {
	case mapcommons.ExprEquals:
		return matches("T*F**FFF*")
	case mapcommons.ExprTouches:
		return matches("FT*******", "F**T*****", "F***T****")
	case mapcommons.ExprWithin:
		return matches("T*F**F***")
	case mapcommons.ExprContains:
		return matches("T*****FF*")
	case mapcommons.ExprCrosses:
		switch {
		case da < db:
			return matches("T*T******")
		case da > db:
			return matches("T*****T**")
		case da == 1 && db == 1:
			return matches("0********")
		}
		return false, nil
	case mapcommons.ExprOverlaps:
		switch {
		case da == db && da != 1:
			return matches("T*T***T**")
		case da == 1 && db == 1:
			return matches("1*T***T**")
		}
		return false, nil
	}
	return false, mapcommons.Errorf(mapcommons.EINVALID, "unknown spatial operation %q", op)
}

// hasHoles reports whether a geometry literal (stored WKB) has a polygon
// with holes, which the s_intersects test of package spatial does not
// handle (the relate engine does).
func hasHoles(b []byte) bool {
	g, err := geom.UnmarshalWKB(b, geom.NoValidate{})
	if err != nil {
		return false
	}
	var walk func(g geom.Geometry) bool
	walk = func(g geom.Geometry) bool {
		switch g.Type() {
		case geom.TypePolygon:
			return g.MustAsPolygon().NumInteriorRings() > 0
		case geom.TypeMultiPolygon:
			mp := g.MustAsMultiPolygon()
			for i := 0; i < mp.NumPolygons(); i++ {
				if mp.PolygonN(i).NumInteriorRings() > 0 {
					return true
				}
			}
		case geom.TypeGeometryCollection:
			gc := g.MustAsGeometryCollection()
			for i := 0; i < gc.NumGeometries(); i++ {
				if walk(gc.GeometryN(i)) {
					return true
				}
			}
		}
		return false
	}
	return walk(g)
}
