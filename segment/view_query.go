package segment

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"mapcommons/feature"
	"math"

	"mapcommons"
)

// errPageFull stops a walk of the base once the view's page is sent.
var errPageFull = errors.New("segment: page full")

// Query is Segment.Query on the view: the same features, in the same
// order and with the same positions as a fully compacted segment holding
// the view's live features would give. The base's plan skips its dead
// positions and hands out its first offset+limit matches in the query's
// order; the delta's matches (few) are merged into them, by id in position
// order, by sort value then id in an attribute's order.
func (v *View) Query(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	if !v.Pending() {
		return v.base.Query(ctx, q, fn)
	}
	bp, err := v.base.compile(q)
	if err != nil {
		return err
	}
	bp.dead = v.bits
	if err := ctx.Err(); err != nil { // no work begins past the deadline
		return err
	}
	offset, limit := page(q)
	if limit == 0 {
		return nil
	}
	e := &emitter{q: q, near: bp.near, fn: fn}
	// No condition at all: the page is a range of positions.
	if bp.sortCol < 0 && bp.index == nil && len(bp.filters) == 0 && bp.ids == nil && bp.where == nil {
		return v.scanRange(ctx, offset, limit, q.Descending, e)
	}
	end := offset + limit // the rank past the page
	if end < offset {
		end = math.MaxInt64
	}
	m := &viewMerge{v: v, ctx: ctx, e: e, sortCol: bp.sortCol, desc: q.Descending, offset: offset, limit: limit}
	if v.delta != nil {
		dp, err := v.delta.compile(q)
		if err != nil {
			return err
		}
		if err := dp.run(ctx, 0, end, func(pos int) error { m.dk = append(m.dk, pos); return nil }); err != nil {
			return err
		}
	}
	err = bp.run(ctx, 0, end, m.base)
	for ; err == nil && m.i < len(m.dk); m.i++ {
		err = m.out(v.delta, m.dk[m.i], v.DeltaPosition(m.dk[m.i]))
	}
	if err == errPageFull {
		return nil
	}
	return err
}

// viewMerge merges the base's matches, given one by one, with the delta's
// (dk), and sends the page of the merged stream.
type viewMerge struct {
	v       *View
	ctx     context.Context
	e       *emitter
	sortCol int
	desc    bool
	dk      []int // the delta's matches, in the query's order
	i       int   // the next of dk
	offset  int64
	limit   int64
	skipped int64
	sent    int64
}

// base takes the base's next match: the delta's that come before it
// first.
func (m *viewMerge) base(pos int) error {
	v := m.v
	for ; m.i < len(m.dk) && m.deltaFirst(m.dk[m.i], pos); m.i++ {
		if err := m.out(v.delta, m.dk[m.i], v.DeltaPosition(m.dk[m.i])); err != nil {
			return err
		}
	}
	if m.skipped < m.offset { // not worth its position
		m.skipped++
		return nil
	}
	return m.out(v.base, pos, v.BasePosition(pos))
}

// out sends feature pos of s, at position at of the view, unless the
// offset skips it; errPageFull once the page is full.
func (m *viewMerge) out(s *Segment, pos, at int) error {
	if m.skipped < m.offset {
		m.skipped++
		return nil
	}
	if m.sent%checkCostlyEvery == 0 {
		if err := m.ctx.Err(); err != nil {
			return err
		}
	}
	if err := m.e.emit(s, pos, at); err != nil {
		return err
	}
	if m.sent++; m.sent >= m.limit {
		return errPageFull
	}
	return nil
}

// deltaFirst reports whether delta match k comes before base match p in
// the query's order: that of the sort column (nulls last either way),
// then of the ids (position order), as a compacted segment orders them.
func (m *viewMerge) deltaFirst(k, p int) bool {
	d, b := m.v.delta, m.v.base
	if m.sortCol < 0 {
		if m.desc {
			return d.ID(k) > b.ID(p)
		}
		return d.ID(k) < b.ID(p)
	}
	nd, nb := d.IsNull(m.sortCol, k), b.IsNull(m.sortCol, p)
	switch {
	case nd && nb:
	case nd:
		return false
	case nb:
		return true
	default:
		if c := compareAcross(d, k, b, p, m.sortCol); c != 0 {
			return (c < 0) != m.desc
		}
	}
	return d.ID(k) < b.ID(p)
}

// compareAcross orders the non-null values of column col of feature a of
// s and feature b of t (segments with the same attributes; the same one for
// compareCol): integers as integers, floats by cmp.Compare (NaN first,
// -0 = 0), booleans false first, strings byte-wise.
func compareAcross(s *Segment, a int, t *Segment, b int, col int) int {
	switch s.cols[col].typ {
	case mapcommons.AttrInteger:
		x, _ := s.Int(col, a)
		y, _ := t.Int(col, b)
		return cmp.Compare(x, y)
	case mapcommons.AttrFloat:
		x, _ := s.Float(col, a)
		y, _ := t.Float(col, b)
		return cmp.Compare(x, y)
	case mapcommons.AttrBoolean:
		return cmp.Compare(s.cols[col].data[a], t.cols[col].data[b])
	}
	x, _ := s.Bytes(col, a)
	y, _ := t.Bytes(col, b)
	return bytes.Compare(x, y)
}

// scanRange sends the features at positions offset to offset+limit of the
// view (counted from the end when desc): found by binary search, then
// walked.
func (v *View) scanRange(ctx context.Context, offset, limit int64, desc bool, e *emitter) error {
	n := int64(v.Len())
	if offset >= n {
		return nil
	}
	count := min(limit, n-offset)
	dn := 0
	if v.delta != nil {
		dn = v.delta.n
	}
	if !desc {
		p, k := v.seek(int(offset))
		for i := int64(0); i < count; i++ {
			if i%checkCostlyEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			for p < v.base.n && v.IsDead(p) {
				p++
			}
			var err error
			if k < dn && (p >= v.base.n || v.delta.ID(k) < v.base.ID(p)) {
				err = e.emit(v.delta, k, int(offset+i))
				k++
			} else {
				err = e.emit(v.base, p, int(offset+i))
				p++
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	at := n - 1 - offset
	p, k := v.seek(int(at + 1)) // the features before it
	p--
	for i := int64(0); i < count; i++ {
		if i%checkCostlyEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for p >= 0 && v.IsDead(p) {
			p--
		}
		var err error
		if k > 0 && (p < 0 || v.delta.ID(k-1) > v.base.ID(p)) {
			err = e.emit(v.delta, k-1, int(at-i))
			k--
		} else {
			err = e.emit(v.base, p, int(at-i))
			p--
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Groups is Segment.Groups on the view. Without a spatial condition the
// features are accumulated in position order, as a compacted segment
// does, so that float sums agree to the last bit; with one, a compacted
// segment accumulates in its index's order, and float sums may differ in
// their last bits (and a min or max over NaN with them).
func (v *View) Groups(ctx context.Context, q *mapcommons.FeatureQuery) ([]mapcommons.Group, error) {
	if !v.Pending() {
		return v.base.Groups(ctx, q)
	}
	bp, err := v.base.compile(q)
	if err != nil {
		return nil, err
	}
	bp.dead = v.bits
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gcols, acols := feature.GroupColumns(v.base.attrs, q)
	var dk []int // the delta's matches
	if v.delta != nil {
		dp, err := v.delta.compile(q)
		if err != nil {
			return nil, err
		}
		if dp.selective() {
			dp.useCandidates()
		}
		if err := dp.matches(ctx, false, func(pos int) bool { dk = append(dk, pos); return true }); err != nil {
			return nil, err
		}
	}
	if bp.selective() {
		bp.useCandidates()
	}
	ordered := bp.index == nil // both in position order
	ga := feature.NewGrouper()
	i := 0
	err = bp.matches(ctx, false, func(pos int) bool {
		if ordered {
			for id := v.base.ID(pos); i < len(dk) && v.delta.ID(dk[i]) < id; i++ {
				addGroup(ga, v.delta, gcols, acols, dk[i])
			}
		}
		addGroup(ga, v.base, gcols, acols, pos)
		return true
	})
	if err != nil {
		return nil, err
	}
	for ; i < len(dk); i++ {
		addGroup(ga, v.delta, gcols, acols, dk[i])
	}
	return ga.Finish(v.base.attrs, acols, q), nil
}

// Scan is what a store's ScanFeatures does over a view: q.Count (when
// asked) from the same view as the page, then the page, then q.Then's
// follow-up, all from this one state of the dataset.
func (v *View) Scan(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	if q.Count != nil && !q.Selective() {
		*q.Count = int64(v.Len())
	} else if q.Count != nil {
		groups, err := v.Groups(ctx, q.CountQuery())
		if err != nil {
			return err
		}
		*q.Count = mapcommons.GroupCount(groups)
	}
	if err := v.Query(ctx, q, fn); err != nil || q.Then == nil {
		return err
	}
	if tq, tfn := q.Then(); tq != nil {
		cp := *tq
		cp.Then = nil
		return v.Query(ctx, &cp, tfn)
	}
	return nil
}
