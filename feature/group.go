package feature

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"mapcommons"
)

// Group accumulates one group of a grouped query: its grouping values,
// its count and its aggregates.
type Group struct {
	Values []any
	Count  int64
	Aggs   []Agg
}

// Agg accumulates one aggregate of one group. Nulls are not added.
type Agg struct {
	n        int64
	sum      float64
	isum     int64
	overflow bool
	min, max float64
	smin     []byte
	smax     []byte
}

// AddFloat adds a value of a float column.
func (a *Agg) AddFloat(x float64) {
	if a.n == 0 || x < a.min {
		a.min = x
	}
	if a.n == 0 || x > a.max {
		a.max = x
	}
	a.sum += x
	a.n++
}

// AddInt adds a value of an integer column: its sum is kept exact while
// it fits in 64 bits.
func (a *Agg) AddInt(v int64) {
	sum := a.isum + v
	if (v > 0 && sum < a.isum) || (v < 0 && sum > a.isum) {
		a.overflow = true
	}
	a.isum = sum
	a.AddFloat(float64(v))
}

// AddBool adds a value of a boolean column (its minimum and maximum).
func (a *Agg) AddBool(v bool) {
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
	a.n++
}

// AddBytes adds a value of a string or date column (its minimum and
// maximum); b is kept, not copied, until the result is taken.
func (a *Agg) AddBytes(b []byte) {
	if a.n == 0 || bytes.Compare(b, a.smin) < 0 {
		a.smin = b
	}
	if a.n == 0 || bytes.Compare(b, a.smax) > 0 {
		a.smax = b
	}
	a.n++
}

// Add adds an attribute value (nil, int64, float64, bool or string), as
// the typed adds do.
func (a *Agg) Add(value any) {
	switch v := value.(type) {
	case int64:
		a.AddInt(v)
	case float64:
		a.AddFloat(v)
	case bool:
		a.AddBool(v)
	case string:
		a.AddBytes([]byte(v))
	}
}

// result is the aggregate's value: nil when the group had no values.
func (a *Agg) result(calc string, t mapcommons.AttrType) any {
	if a.n == 0 {
		return nil
	}
	switch t {
	case mapcommons.AttrString, mapcommons.AttrDate:
		if calc == mapcommons.CalcMin {
			return string(a.smin)
		}
		return string(a.smax)
	case mapcommons.AttrBoolean:
		if calc == mapcommons.CalcMin {
			return a.min == 1
		}
		return a.max == 1
	}
	switch calc {
	case mapcommons.CalcMin:
		if t == mapcommons.AttrInteger {
			return int64(a.min)
		}
		return a.min
	case mapcommons.CalcMax:
		if t == mapcommons.AttrInteger {
			return int64(a.max)
		}
		return a.max
	case mapcommons.CalcSum:
		if t == mapcommons.AttrInteger && !a.overflow {
			return a.isum
		}
		return a.sum
	}
	return a.sum / float64(a.n)
}

// Grouper accumulates the groups of a query's matches, each found by a
// key its store encodes from a feature's grouping values (equal values,
// and only they, giving equal keys; -0 as 0).
type Grouper struct {
	groups map[string]*Group
	key    []byte
}

// NewGrouper returns an empty Grouper.
func NewGrouper() *Grouper { return &Grouper{groups: map[string]*Group{}} }

// Key returns a buffer to encode a key in, reused between calls of Find.
func (g *Grouper) Key() []byte { return g.key[:0] }

// Find returns the group of key, made with nvalues grouping values (for
// the caller to set when new is true) and naggs aggregates when it is new.
func (g *Grouper) Find(key []byte, nvalues, naggs int) (grp *Group, isNew bool) {
	g.key = key
	if grp, ok := g.groups[string(key)]; ok {
		return grp, false
	}
	grp = &Group{Values: make([]any, nvalues), Aggs: make([]Agg, naggs)}
	g.groups[string(key)] = grp
	return grp, true
}

// AddCount counts n features into the one group of a query without
// groups or aggregates, as n features found by an empty key would.
func (g *Grouper) AddCount(n int64) {
	if n == 0 {
		return
	}
	grp, ok := g.groups[""]
	if !ok {
		grp = &Group{Values: []any{}, Aggs: []Agg{}}
		g.groups[""] = grp
	}
	grp.Count += n
}

// Finish is the answer of the validated grouped query q over features
// with attributes attrs, acols being the columns of its aggregates:
// ordered by the groups' values (nulls last; reversed when q.Descending),
// paged by q.Offset and q.Limit.
func (g *Grouper) Finish(attrs []mapcommons.Attribute, acols []int, q *mapcommons.FeatureQuery) []mapcommons.Group {
	return finishGroups(g.groups, attrs, acols, q)
}

// GroupColumns are the columns of q's grouping attributes and those of its
// aggregates.
func GroupColumns(attrs []mapcommons.Attribute, q *mapcommons.FeatureQuery) (gcols, acols []int) {
	gcols = make([]int, len(q.GroupBy))
	for i, g := range q.GroupBy {
		gcols[i] = mapcommons.AttrIndex(attrs, g)
	}
	acols = make([]int, len(q.Aggregates))
	for i, a := range q.Aggregates {
		acols[i] = mapcommons.AttrIndex(attrs, a.Name)
	}
	return gcols, acols
}

// finishGroups turns the accumulated groups into the answer: ordered by
// their values (nulls last; reversed when q.Descending), paged by
// q.Offset and q.Limit; acols are the aggregates' columns.
func finishGroups(groups map[string]*Group, attrs []mapcommons.Attribute, acols []int, q *mapcommons.FeatureQuery) []mapcommons.Group {
	if len(q.GroupBy) == 0 && len(groups) == 0 { // everything in one (empty) group
		groups[""] = &Group{Aggs: make([]Agg, len(acols))}
	}
	out := make([]mapcommons.Group, 0, len(groups))
	for _, g := range groups {
		row := mapcommons.Group{Values: g.Values, Count: g.Count, Aggregates: make([]any, len(acols))}
		for i, c := range acols {
			row.Aggregates[i] = g.Aggs[i].result(q.Aggregates[i].Calc, attrs[c].Type)
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b mapcommons.Group) int {
		for i := range a.Values {
			if c := CompareValues(a.Values[i], b.Values[i]); c != 0 {
				if q.Descending && a.Values[i] != nil && b.Values[i] != nil { // null last either way
					return -c
				}
				return c
			}
		}
		return 0
	})
	offset := max(q.Offset, 0)
	if offset >= int64(len(out)) {
		return []mapcommons.Group{}
	}
	out = out[offset:]
	if q.Limit >= 0 && int64(len(out)) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// CompareValues orders attribute values of one column, nulls last.
func CompareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

// GroupSet groups features given by their values, as a store grouping
// its own rows with a Grouper does.
type GroupSet struct {
	attrs []mapcommons.Attribute
	q     *mapcommons.FeatureQuery
	gcols []int
	acols []int
	g     *Grouper
}

// NewGroupSet starts the groups of a validated grouped query q over
// features with attributes attrs.
func NewGroupSet(attrs []mapcommons.Attribute, q *mapcommons.FeatureQuery) *GroupSet {
	gcols, acols := GroupColumns(attrs, q)
	return &GroupSet{attrs: attrs, q: q, gcols: gcols, acols: acols, g: NewGrouper()}
}

// Add adds a selected feature, by its values.
func (g *GroupSet) Add(values []any) {
	key := g.g.Key()
	for _, c := range g.gcols {
		key = appendValueKey(key, values[c])
	}
	acc, isNew := g.g.Find(key, len(g.gcols), len(g.acols))
	if isNew {
		for i, c := range g.gcols {
			acc.Values[i] = values[c]
			if f, ok := acc.Values[i].(float64); ok && f == 0 {
				acc.Values[i] = 0.0 // not -0
			}
		}
	}
	acc.Count++
	for i, c := range g.acols {
		acc.Aggs[i].Add(values[c])
	}
}

// AddCount adds n selected features to the one group of a query without
// groups or aggregates (whose values it does not need), as n calls of Add
// would.
func (g *GroupSet) AddCount(n int64) { g.g.AddCount(n) }

// Groups is the answer: the groups ordered and paged by the query.
func (g *GroupSet) Groups() []mapcommons.Group { return g.g.Finish(g.attrs, g.acols, g.q) }

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
