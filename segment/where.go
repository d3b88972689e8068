// where.go: FeatureQuery.Where in a plan: what the index serves of it, and
// the rest compiled (feature.Node) and tested per row over the segment's
// columns (segCells).
package segment

import (
	"mapcommons"
	"mapcommons/feature"
	"mapcommons/spatial"
)

// compileWhere compiles q.Where into the plan: a top-level BBOX becomes
// the plan's bbox (the index search and its exact test) when the query
// has none, a top-level geometry literal gives the index its boxes when
// nothing else does, and the rest is tested per row by matchValues.
func (p *plan) compileWhere(e *mapcommons.Expr) {
	bbox, boxes, rest := feature.Index(e)
	if bbox != nil && p.bbox == nil {
		p.bbox = spatial.BBoxRects(bbox.W, bbox.S, bbox.E, bbox.N)
		if p.index == nil {
			p.index = p.bbox
		}
		e = rest
	} else if boxes != nil && p.index == nil {
		p.index = boxes
	}
	if e != nil {
		n := feature.Compile(p.s.attrs, e)
		p.where = &n
	}
}

// segCells reads feature pos of a segment for a compiled Where.
type segCells struct {
	s    *Segment
	pos  int
	stop feature.Stopper
}

func (c *segCells) Null(col int) bool { return c.s.IsNull(col, c.pos) }

func (c *segCells) Num(col int) float64 {
	if c.s.cols[col].typ == mapcommons.AttrBoolean {
		return float64(c.s.cols[col].data[c.pos])
	}
	v, _ := c.s.Float(col, c.pos)
	return v
}

func (c *segCells) Str(col int) []byte {
	b, _ := c.s.Bytes(col, c.pos)
	return b
}

func (c *segCells) Geom() []byte { return c.s.Geometry(c.pos) }

func (c *segCells) Stopper() *feature.Stopper { return &c.stop }
