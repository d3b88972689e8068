// relate.go: the spatial predicates of CQL2's spatial-functions class
// (S_DISJOINT, S_EQUALS, S_TOUCHES, S_CROSSES, S_WITHIN, S_CONTAINS,
// S_OVERLAPS, and S_INTERSECTS of a literal with holes) by their DE-9IM
// meaning (OGC Simple Features), planar in lon/lat, computed by the
// simplefeatures library's relate engine: the one evaluator both stores
// use, so that they answer alike.
package feature

import (
	"github.com/peterstace/simplefeatures/geom"

	"mapcommons"
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
	return r
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
	ok, err := Relate(r.op, g, r.lit)
	if err != nil {
		return triUnknown
	}
	return truth(ok)
}

// Relate reports whether a op b holds, op one of mapcommons.SpatialOps,
// by the DE-9IM definitions of OGC Simple Features. An error when the
// relate engine cannot compute it (it panics on some invalid geometries:
// rings that cross themselves in ways it cannot node).
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
	case mapcommons.ExprEquals:
		return geom.Equals(a, b)
	case mapcommons.ExprTouches:
		return geom.Touches(a, b)
	case mapcommons.ExprCrosses:
		return geom.Crosses(a, b)
	case mapcommons.ExprWithin:
		return geom.Within(a, b)
	case mapcommons.ExprContains:
		return geom.Contains(a, b)
	case mapcommons.ExprOverlaps:
		return geom.Overlaps(a, b)
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
