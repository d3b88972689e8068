package segment

// The parts of the engine other stores share, over a feature's values
// (mapcommons.Feature.Values) rather than a segment's columns: the
// evaluation of a Where expression and the grouping of features, so that
// every store answers as the segment engine does.

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// Where is a FeatureQuery.Where expression compiled against a dataset's
// attributes.
type Where struct {
	n    whereNode
	stop stopper
}

// CompileWhere compiles a validated expression (mapcommons.Expr.Validate)
// against attrs.
func CompileWhere(attrs []mapcommons.Attribute, e *mapcommons.Expr) *Where {
	return &Where{n: compileWhere(attrs, e)}
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

// WhereBoxes returns the boxes the engine's index searches with for e:
// every feature for which e is true has an index box (spatial.IndexBounds)
// that meets one of them. Nil when e has no top-level spatial condition
// (then every feature may match).
func WhereBoxes(e *mapcommons.Expr) []wkb.Rect {
	bbox, boxes, _ := whereIndex(e)
	if bbox != nil {
		return spatial.BBoxRects(bbox.W, bbox.S, bbox.E, bbox.N)
	}
	return boxes
}

// valueCells reads a feature's values.
type valueCells struct {
	values []any
	g      []byte
	st     *stopper
}

func (c *valueCells) null(col int) bool { return c.values[col] == nil }

func (c *valueCells) num(col int) float64 {
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

func (c *valueCells) str(col int) []byte {
	s, _ := c.values[col].(string)
	return []byte(s)
}

func (c *valueCells) geom() []byte { return c.g }

func (c *valueCells) stopper() *stopper { return c.st }

// GroupSet groups features given by their values, as Segment.Groups does.
type GroupSet struct {
	attrs  []mapcommons.Attribute
	q      *mapcommons.FeatureQuery
	gcols  []int
	acols  []int
	groups map[string]*groupAcc
	key    []byte
}

// NewGroupSet starts the groups of a validated grouped query q over
// features with attributes attrs.
func NewGroupSet(attrs []mapcommons.Attribute, q *mapcommons.FeatureQuery) *GroupSet {
	g := &GroupSet{attrs: attrs, q: q, groups: map[string]*groupAcc{}}
	for _, name := range q.GroupBy {
		g.gcols = append(g.gcols, mapcommons.AttrIndex(attrs, name))
	}
	for _, a := range q.Aggregates {
		g.acols = append(g.acols, mapcommons.AttrIndex(attrs, a.Name))
	}
	return g
}

// Add adds a selected feature, by its values.
func (g *GroupSet) Add(values []any) {
	key := g.key[:0]
	for _, c := range g.gcols {
		key = appendValueKey(key, values[c])
	}
	g.key = key
	acc, ok := g.groups[string(key)]
	if !ok {
		acc = &groupAcc{values: make([]any, len(g.gcols)), aggs: make([]aggAcc, len(g.acols))}
		for i, c := range g.gcols {
			acc.values[i] = values[c]
			if f, ok := acc.values[i].(float64); ok && f == 0 {
				acc.values[i] = 0.0 // not -0
			}
		}
		g.groups[string(key)] = acc
	}
	acc.count++
	for i, c := range g.acols {
		acc.aggs[i].add(values[c])
	}
}

// AddCount adds n selected features to the one group of a query without
// groups or aggregates (whose values it does not need), as n calls of Add
// would.
func (g *GroupSet) AddCount(n int64) {
	ga := grouper{groups: g.groups}
	ga.addCount(n)
}

// Groups is the answer: the groups ordered and paged by the query.
func (g *GroupSet) Groups() []mapcommons.Group {
	return finishGroups(g.groups, g.attrs, g.acols, g.q)
}

// appendValueKey appends a type-tagged encoding of a value (-0 as 0).
func appendValueKey(key []byte, v any) []byte {
	switch v := v.(type) {
	case int64:
		return binary.LittleEndian.AppendUint64(append(key, 1), uint64(v))
	case float64:
		if v == 0 {
			v = 0
		}
		return binary.LittleEndian.AppendUint64(append(key, 4), math.Float64bits(v))
	case bool:
		if v {
			return append(key, 2, 1)
		}
		return append(key, 2, 0)
	case string:
		key = binary.AppendUvarint(append(key, 3), uint64(len(v)))
		return append(key, v...)
	}
	return append(key, 0)
}

// add accumulates a value as Segment.accumulate does.
func (a *aggAcc) add(value any) {
	switch v := value.(type) {
	case nil:
		return
	case int64, float64:
		var x float64
		if iv, ok := v.(int64); ok {
			x = float64(iv)
			sum := a.isum + iv
			if (iv > 0 && sum < a.isum) || (iv < 0 && sum > a.isum) {
				a.overflow = true
			}
			a.isum = sum
		} else {
			x = v.(float64)
		}
		if a.n == 0 || x < a.min {
			a.min = x
		}
		if a.n == 0 || x > a.max {
			a.max = x
		}
		a.sum += x
	case bool:
		x := 0.0
		if v {
			x = 1
		}
		if a.n == 0 || x < a.min {
			a.min = x
		}
		if a.n == 0 || x > a.max {
			a.max = x
		}
	case string:
		b := []byte(v)
		if a.n == 0 || bytes.Compare(b, a.smin) < 0 {
			a.smin = b
		}
		if a.n == 0 || bytes.Compare(b, a.smax) > 0 {
			a.smax = b
		}
	}
	a.n++
}
