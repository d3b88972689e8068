package feature

// The evaluation of a Where expression over a feature's values
// (mapcommons.Feature.Values), for the stores that hold them as values.

import (
	"context"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// Where is a FeatureQuery.Where expression compiled against a dataset's
// attributes.
type Where struct {
	n    Node
	stop Stopper
}

// CompileWhere compiles a validated expression (mapcommons.Expr.Validate)
// against attrs.
func CompileWhere(attrs []mapcommons.Attribute, e *mapcommons.Expr) *Where {
	return &Where{n: Compile(attrs, e)}
}

// Match reports whether the expression is true (not false, not unknown)
// for a feature with these values (aligned with the attributes, as
// mapcommons.Feature.Values) and geometry. It fails with ctx's error
// once ctx is done, which its costly tests (LIKE over long values) look
// at while they run; a Where is not for concurrent use.
func (w *Where) Match(ctx context.Context, values []any, geom []byte) (bool, error) {
	w.stop.ctx = ctx
	ok := w.n.match(&valueCells{values: values, g: geom, st: &w.stop}) == triTrue
	if w.stop.err != nil {
		return false, w.stop.err
	}
	return ok, nil
}

// Boxes returns the boxes the engine's index searches with for e:
// every feature for which e is true has an index box (spatial.IndexBounds)
// that meets one of them. Nil when e has no top-level spatial condition
// (then every feature may match).
func Boxes(e *mapcommons.Expr) []wkb.Rect {
	bbox, boxes, _ := Index(e)
	if bbox != nil {
		return spatial.BBoxRects(bbox.W, bbox.S, bbox.E, bbox.N)
	}
	return boxes
}

// valueCells reads a feature's values.
type valueCells struct {
	values []any
	g      []byte
	st     *Stopper
}

func (c *valueCells) Null(col int) bool { return c.values[col] == nil }

func (c *valueCells) Num(col int) float64 {
	switch v := c.values[col].(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	case bool:
		if v {
			return 1
		}
	}
	return 0
}

func (c *valueCells) Str(col int) []byte {
	s, _ := c.values[col].(string)
	return []byte(s)
}

func (c *valueCells) Geom() []byte { return c.g }

func (c *valueCells) Stopper() *Stopper { return c.st }
