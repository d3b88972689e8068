package segment

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// plan is a FeatureQuery compiled against one segment.
type plan struct {
	s        *Segment
	q        *mapcommons.FeatureQuery
	bbox     []wkb.Rect    // the bbox parameter's boxes, tested exactly
	near     *spatial.Near // the buffer query, tested exactly
	index    []wkb.Rect    // boxes to search the index with; nil scans everything
	filters  []filter
	ids      map[int64]struct{} // FeatureQuery.IDs; nil: every feature
	where    *feature.Node      // FeatureQuery.Where, less what the index serves; nil: none
	idPos    []int              // the positions of those ids, ascending
	sortCol  int                // -1: by position
	onlyPts  bool               // every geometry is a single point: the index box is the point
	geomScan bool               // a spatial test needs the geometry
	cells    segCells           // where reads the row through it
	// The attribute index (attrindex.go): the runs of the permutation of
	// column spanCol that its filters leave, spanCount rows.
	spanIx    *attrIndex
	spanCol   int
	spans     []span
	spanCount int
	// orParts, instead of spans, are the runs of the branches of an OR.
	orParts []orPart
	// spanExact: the rows of the spans are the answer (every condition of
	// the query is a filter they serve), spanCount its count.
	spanExact bool
	// cand are the only positions to read, ascending, when useCand: the
	// ids' or the attribute index's.
	cand    []int
	useCand bool
	// dead, when not nil, is a bitmap of the positions the plan skips:
	// those of a View's base that are deleted or superseded.
	dead []uint64
}

// filter is one compiled attribute condition.
type filter struct {
	col  int
	typ  mapcommons.AttrType
	op   string
	nums []float64 // numeric and boolean columns
	strs [][]byte  // string columns
	// An "in" list longer than setMin is matched through a set (numSet or
	// strSet), so its cost per row does not grow with the list.
	numSet map[float64]struct{}
	strSet map[string]struct{}
}

// setMin is the length of an "in" list above which it is matched through a
// set rather than compared with each value (below it comparing is cheaper
// than hashing).
const setMin = feature.SetMin

func (s *Segment) compile(q *mapcommons.FeatureQuery) (*plan, error) {
	if err := q.Validate(s.attrs); err != nil {
		return nil, err
	}
	q = splitWhere(q)
	p := &plan{s: s, q: q, sortCol: -1, onlyPts: s.summary.GeometryMask == 1<<wkb.Point}
	if q.Sort != "" {
		p.sortCol = mapcommons.AttrIndex(s.attrs, q.Sort)
	}
	if b := q.BBox; b != nil {
		p.bbox = spatial.BBoxRects(b.W, b.S, b.E, b.N)
		p.index = p.bbox
	}
	if n := q.Near; n != nil {
		p.near = &spatial.Near{Kind: n.Kind, XY: n.XY, Radius: n.Radius, Metric: spatial.NewMetric(n.Units), Contained: n.Contained}
		p.near.Prepare()
		p.index = p.near.Boxes()
	}
	for _, f := range q.Filters {
		p.filters = append(p.filters, compileFilter(s.attrs, f))
	}
	if q.Where != nil {
		p.compileWhere(q.Where)
	}
	if q.IDs != nil {
		// Ids ascend with positions: each is found by binary search, and a
		// query without a spatial condition reads only those positions.
		p.ids = make(map[int64]struct{}, len(q.IDs))
		p.idPos = make([]int, 0, len(q.IDs))
		for _, id := range q.IDs {
			if _, dup := p.ids[id]; dup {
				continue
			}
			p.ids[id] = struct{}{}
			if pos, ok := s.Position(id); ok {
				p.idPos = append(p.idPos, pos)
			}
		}
		slices.Sort(p.idPos)
		p.cand, p.useCand = p.idPos, true
	}
	p.planIndex()
	return p, nil
}

// compileFilter compiles a validated filter (or one of
// mapcommons.SplitWhere) against attributes attrs.
func compileFilter(attrs []mapcommons.Attribute, f mapcommons.Filter) filter {
	c := mapcommons.AttrIndex(attrs, f.Attr)
	cf := filter{col: c, typ: attrs[c].Type, op: f.Op}
	for _, v := range f.Values {
		switch cf.typ {
		case mapcommons.AttrInteger, mapcommons.AttrFloat:
			x, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			cf.nums = append(cf.nums, x)
		case mapcommons.AttrBoolean:
			b, _ := mapcommons.ParseBool(v)
			cf.nums = append(cf.nums, map[bool]float64{false: 0, true: 1}[b])
		default:
			cf.strs = append(cf.strs, []byte(v))
		}
	}
	if cf.op == mapcommons.OpIn && len(f.Values) > setMin {
		// Validate refused NaN, so == on float64 (-0 == 0) is the
		// comparison matchOp makes.
		if cf.strs != nil {
			cf.strSet = make(map[string]struct{}, len(cf.strs))
			for _, v := range cf.strs {
				cf.strSet[string(v)] = struct{}{}
			}
		} else {
			cf.numSet = make(map[float64]struct{}, len(cf.nums))
			for _, v := range cf.nums {
				cf.numSet[v] = struct{}{}
			}
		}
	}
	return cf
}

// splitWhere is q with the top-level conditions of its Where that are
// attribute filters (mapcommons.SplitWhere) among its filters, for the
// attribute index to serve: a copy, when there are any.
func splitWhere(q *mapcommons.FeatureQuery) *mapcommons.FeatureQuery {
	if q.Where == nil {
		return q
	}
	fs, rest := mapcommons.SplitWhere(q.Where)
	if len(fs) == 0 {
		return q
	}
	c := *q
	c.Filters = append(slices.Clip(q.Filters), fs...)
	c.Where = rest
	return &c
}

// checkEvery is how many rows a scan reads between two looks at its
// context: often enough to stop within a millisecond or so of a deadline or
// of the client going away, seldom enough to cost nothing. Rows that cost
// far more, those whose geometry is tested against a query geometry (lines
// and polygons, up to mapcommons.MaxNearVertices vertices each) and those
// sent to the caller (read and encoded), are counted by checkCostlyEvery.
const (
	checkEvery       = 8192
	checkCostlyEvery = 64
)

// every is how many rows the plan's index search reads between two looks
// at its context.
func (p *plan) every() int {
	if p.onlyPts {
		return checkEvery
	}
	return checkCostlyEvery
}

// matchValues reports whether feature pos passes the attribute filters.
// A null value passes no condition.
func (p *plan) matchValues(pos int) bool {
	s := p.s
	if bitSet(p.dead, pos) {
		return false
	}
	if p.ids != nil {
		if _, ok := p.ids[s.ID(pos)]; !ok {
			return false
		}
	}
	for i := range p.filters {
		f := &p.filters[i]
		if s.IsNull(f.col, pos) {
			return false
		}
		if f.strs != nil {
			v, _ := s.Bytes(f.col, pos)
			if f.strSet != nil {
				if _, ok := f.strSet[string(v)]; !ok {
					return false
				}
				continue
			}
			if !matchOp(f.op, len(f.strs), func(k int) int { return bytes.Compare(v, f.strs[k]) }) {
				return false
			}
			continue
		}
		var v float64
		if f.typ == mapcommons.AttrBoolean {
			v = float64(s.cols[f.col].data[pos])
		} else {
			v, _ = s.Float(f.col, pos)
		}
		if f.numSet != nil {
			if _, ok := f.numSet[v]; !ok {
				return false
			}
			continue
		}
		if !matchOp(f.op, len(f.nums), func(k int) int { return cmp.Compare(v, f.nums[k]) }) {
			return false
		}
	}
	if p.where == nil {
		return true
	}
	p.cells.s, p.cells.pos = s, pos
	return p.where.Matches(&p.cells)
}

// matchOp applies an operation given the comparison of the value with each
// of n filter values.
func matchOp(op string, n int, compare func(k int) int) bool {
	switch op {
	case mapcommons.OpMin:
		return compare(0) >= 0
	case mapcommons.OpMax:
		return compare(0) <= 0
	case mapcommons.OpLess:
		return compare(0) < 0
	case mapcommons.OpGreater:
		return compare(0) > 0
	default: // equals, in
		for k := 0; k < n; k++ {
			if compare(k) == 0 {
				return true
			}
		}
		return false
	}
}

// matchGeometry applies the exact spatial tests to a feature found through
// the index with box.
func (p *plan) matchGeometry(pos int, box wkb.Rect) bool {
	exact := spatial.Exact{BBox: p.bbox, Near: p.near}
	if exact.None() { // the index serves Where, tested per row
		return true
	}
	if p.onlyPts {
		return exact.MatchPoint(box.MinX, box.MinY)
	}
	g, err := wkb.Decode(p.s.Geometry(pos))
	return err == nil && exact.Match(g)
}

// everyHitTaken reports whether every live feature the index search finds
// is selected: points in a box, and no other condition.
func (p *plan) everyHitTaken() bool {
	return p.onlyPts && p.near == nil && len(p.filters) == 0 && p.ids == nil && p.where == nil
}

// inOrder calls fn with each feature the query selects in position order
// (descending when desc), until fn returns false: through the index's
// best-first search when a spatial condition drives the query.
//
// need > 0 promises that fn returns false at the need-th feature it
// accepts at the latest.
func (p *plan) inOrder(ctx context.Context, desc bool, need int64, fn func(pos int) bool) error {
	if p.index == nil {
		return p.matches(ctx, desc, fn)
	}
	k, every := 0, p.every()
	var err error
	hint := 0 // the search's own need: the leaves it gives are all taken
	if p.everyHitTaken() && need > 0 {
		hint = int(min(need, maxNeed+1)) // past maxNeed the search does not prune
	}
	p.s.SearchOrdered(p.index, desc, hint, p.dead, func(pos int, box wkb.Rect) bool {
		if k++; k%every == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		if p.matchGeometry(pos, box) && p.matchValues(pos) {
			return fn(pos)
		}
		return true
	})
	return err
}

// matches calls fn with each feature the query selects, in index order
// when a spatial condition drives it, else in position order (descending
// when desc). fn returns false to stop.
func (p *plan) matches(ctx context.Context, desc bool, fn func(pos int) bool) error {
	p.cells.stop.SetContext(ctx)
	return p.cells.stop.Or(p.matchRows(ctx, desc, fn))
}

// matchRows is matches, without the look at the error of an evaluation
// stopped within a row.
func (p *plan) matchRows(ctx context.Context, desc bool, fn func(pos int) bool) error {
	if p.index == nil {
		n := p.s.n
		if p.useCand {
			n = len(p.cand) // only the positions of the ids asked for, or the index's
		}
		for k := 0; k < n; k++ {
			if k%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			pos := k
			if desc {
				pos = n - 1 - k
			}
			if p.useCand {
				pos = p.cand[pos]
			}
			if p.matchValues(pos) && !fn(pos) {
				return nil
			}
		}
		return nil
	}
	var seen []uint64 // a bitmap, when several boxes may find a feature twice
	if len(p.index) > 1 {
		seen = make([]uint64, (p.s.n+63)/64)
	}
	k, every := 0, p.every()
	var err error
	for _, r := range p.index {
		stopped := false
		p.s.Search(r, func(pos int, box wkb.Rect) bool {
			if k++; k%every == 0 {
				if err = ctx.Err(); err != nil {
					stopped = true
					return false
				}
			}
			if seen != nil {
				if bitSet(seen, pos) {
					return true
				}
				seen[pos/64] |= 1 << (pos % 64)
			}
			if p.matchGeometry(pos, box) && p.matchValues(pos) && !fn(pos) {
				stopped = true
				return false
			}
			return true
		})
		if stopped {
			break
		}
	}
	return err
}

// compareAt orders two features by the sort column, nulls last, then by
// position.
func (p *plan) compareAt(a, b int) int {
	s := p.s
	na, nb := s.IsNull(p.sortCol, a), s.IsNull(p.sortCol, b)
	switch {
	case na && nb:
	case na:
		return 1
	case nb:
		return -1
	default:
		if c := s.compareCol(p.sortCol, a, b); c != 0 {
			if p.q.Descending {
				return -c
			}
			return c
		}
	}
	return cmp.Compare(a, b)
}

// Query calls fn for each feature q selects, in q's order, from q.Offset on
// and at most q.Limit of them. With q.WithDistance each feature carries its
// distance to q.Near's geometry. The *Feature is reused between calls and its
// geometry aliases the segment. Returns EINVALID when q does not fit the
// segment's attributes.
func (s *Segment) Query(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	p, err := s.compile(q)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // no work begins past the deadline
		return err
	}
	offset, limit := page(q)
	if limit == 0 {
		return nil
	}
	e := &emitter{q: q, near: p.near, fn: fn}
	return p.run(ctx, offset, limit, func(pos int) error { return e.emit(s, pos, pos) })
}

// page is q's offset (at least 0) and limit (math.MaxInt64 for none).
func page(q *mapcommons.FeatureQuery) (offset, limit int64) {
	limit = q.Limit
	if limit < 0 {
		limit = math.MaxInt64
	}
	return max(q.Offset, 0), limit
}

// emitter sends the features of a query to its function, one reused
// *Feature.
type emitter struct {
	q    *mapcommons.FeatureQuery
	near *spatial.Near
	fn   func(*mapcommons.Feature) error
	f    mapcommons.Feature
	row  rowView
}

// emit sends feature pos of s, at position at of the answer's dataset.
func (e *emitter) emit(s *Segment, pos, at int) error {
	f := &e.f
	if e.q.NoValues { // geometry, id and position alone
		f.Position, f.ID, f.Values, f.Row, f.Geometry = int64(at), s.ID(pos), nil, nil, s.Geometry(pos)
	} else if e.q.Lazy {
		e.row.s, e.row.pos = s, pos
		f.Position, f.ID, f.Values, f.Row, f.Geometry = int64(at), s.ID(pos), nil, &e.row, s.Geometry(pos)
	} else {
		s.Read(pos, f)
		f.Position = int64(at)
	}
	if e.q.WithDistance && e.near != nil {
		f.Distance = math.NaN()
		if g, err := wkb.Decode(f.Geometry); err == nil {
			f.Distance = e.near.Distance(g)
		}
	}
	return e.fn(f)
}

// run calls emit with the positions the plan selects, in its query's
// order, from offset on and at most limit (> 0) of them, until emit fails.
func (p *plan) run(ctx context.Context, offset, limit int64, emit func(pos int) error) error {
	p.cells.stop.SetContext(ctx)
	return p.cells.stop.Or(p.runRows(ctx, offset, limit, emit))
}

// runRows is run, without the look at the error of an evaluation stopped
// within a row.
func (p *plan) runRows(ctx context.Context, offset, limit int64, emit func(pos int) error) error {
	s, q := p.s, p.q
	end := offset + limit // the rank past the page
	if end < offset {
		end = math.MaxInt64
	}
	// No condition at all: the page is a range of positions.
	if p.sortCol < 0 && p.index == nil && len(p.filters) == 0 && p.ids == nil && p.where == nil && p.dead == nil {
		n := int64(s.n)
		for k := offset; k < n && k-offset < limit; k++ {
			if (k-offset)%checkCostlyEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			pos := k
			if q.Descending {
				pos = n - 1 - k
			}
			if err := emit(int(pos)); err != nil {
				return err
			}
		}
		return nil
	}
	// Streaming: position order, from the start or through the index.
	if p.sortCol < 0 {
		if p.selectiveFor(end) {
			p.useCandidates()
		}
		pg := &pager{offset: offset, limit: limit, emit: emit}
		return pg.done(p.inOrder(ctx, q.Descending, end, pg.take))
	}
	// Ordered by an attribute with an index: its permutation walked until
	// the page is full, that of the filtered runs when the filters are on
	// it; unless a filter on another column leaves fewer rows than the
	// walk would read.
	if p.index == nil && p.ids == nil {
		if six := s.attrIndex(p.sortCol); six != nil {
			runs, useWalk := []span{{0, s.n}}, true
			if p.spanIx != nil && p.spanCol == p.sortCol {
				runs = p.spans
			} else if p.selective() {
				// The walk reads about need/selectivity rows.
				need := min(end, int64(s.n))
				useWalk = need*int64(s.n) < int64(p.spanCount)*int64(max(p.spanCount, 1))
			}
			if useWalk {
				pg := &pager{offset: offset, limit: limit, emit: emit}
				return pg.done(p.walk(ctx, six, p.sortCol, runs, q.Descending, pg.take))
			}
		}
	}
	if p.selective() {
		p.useCandidates()
	}
	// Ordered by an attribute: collect the matches, select the page.
	var found []int
	if err := p.matches(ctx, false, func(pos int) bool { found = append(found, pos); return true }); err != nil {
		return err
	}
	if offset >= int64(len(found)) {
		return nil
	}
	found = smallest(found, min(end, int64(len(found))), p.compareAt)
	found = found[offset:]
	if int64(len(found)) > limit {
		found = found[:limit]
	}
	if err := ctx.Err(); err != nil { // the sort may have taken a while
		return err
	}
	for i, pos := range found {
		if i%checkCostlyEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := emit(pos); err != nil {
			return err
		}
	}
	return nil
}

// pager passes the positions a walk gives after the first offset to emit,
// until limit are sent or emit fails.
type pager struct {
	offset, limit int64
	skipped, sent int64
	emit          func(pos int) error
	err           error
}

// take is the walk's function: false stops it.
func (pg *pager) take(pos int) bool {
	if pg.skipped < pg.offset {
		pg.skipped++
		return true
	}
	if pg.err = pg.emit(pos); pg.err != nil {
		return false
	}
	pg.sent++
	return pg.sent < pg.limit
}

// done is the answer of the walk that returned err: emit's error first.
func (pg *pager) done(err error) error {
	if pg.err != nil {
		return pg.err
	}
	return err
}

// Groups answers a grouped query: one Group per distinct combination of
// q.GroupBy values among the selected features (a single group over all of
// them when q.GroupBy is empty), ordered by those values (nulls last;
// reversed when q.Descending), paged by q.Offset and q.Limit.
func (s *Segment) Groups(ctx context.Context, q *mapcommons.FeatureQuery) ([]mapcommons.Group, error) {
	p, err := s.compile(q)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gcols, acols := feature.GroupColumns(s.attrs, q)
	if len(gcols) == 0 && len(acols) == 0 && p.spanExact && p.dead == nil {
		// A count that the attribute index knows: no row is read.
		ga := feature.NewGrouper()
		ga.AddCount(int64(p.spanCount))
		return ga.Finish(s.attrs, acols, q), nil
	}
	if g, ok := s.extremes(q, p, gcols, acols); ok {
		return g, nil
	}
	if p.selective() {
		p.useCandidates()
	}
	ga := feature.NewGrouper()
	if len(gcols) == 0 && len(acols) == 0 { // a count alone: no group to look up per row
		n := int64(0)
		if err := p.matches(ctx, false, func(int) bool { n++; return true }); err != nil {
			return nil, err
		}
		ga.AddCount(n)
		return ga.Finish(s.attrs, acols, q), nil
	}
	err = p.matches(ctx, false, func(pos int) bool {
		addGroup(ga, s, gcols, acols, pos)
		return true
	})
	if err != nil {
		return nil, err
	}
	return ga.Finish(s.attrs, acols, q), nil
}

// extremes answers, when it can, a query of the minima and maxima of
// whole columns from their attribute indexes, reading two rows a column
// rather than all of them: no grouping, every feature selected (and none
// dead), each aggregate a min or a max over an indexed column of strings,
// dates, integers or booleans (floats are left to the scan, whose NaN
// rules are its order of reading).
func (s *Segment) extremes(q *mapcommons.FeatureQuery, p *plan, gcols, acols []int) ([]mapcommons.Group, bool) {
	if len(gcols) > 0 || len(acols) == 0 || q.Selective() || p.dead != nil || s.n == 0 {
		return nil, false
	}
	ixs := make([]*attrIndex, len(acols))
	for i, c := range acols {
		if calc := q.Aggregates[i].Calc; calc != mapcommons.CalcMin && calc != mapcommons.CalcMax || s.cols[c].typ == mapcommons.AttrFloat {
			return nil, false
		}
		if ixs[i] = s.attrIndex(c); ixs[i] == nil {
			return nil, false
		}
	}
	ga := feature.NewGrouper()
	g, _ := ga.Find(nil, 0, len(acols))
	g.Count = int64(s.n)
	for i, c := range acols {
		if n := ixs[i].nonNull; n > 0 { // the least and the greatest, as a scan would find them
			s.accumulate(&g.Aggs[i], c, int(ixs[i].perm[0]))
			s.accumulate(&g.Aggs[i], c, int(ixs[i].perm[n-1]))
		}
	}
	return ga.Finish(s.attrs, acols, q), true
}

// addGroup counts feature pos of s into its group of ga, gcols being the
// grouping columns and acols those of the aggregates.
func addGroup(ga *feature.Grouper, s *Segment, gcols, acols []int, pos int) {
	key := ga.Key()
	for _, c := range gcols {
		key = s.appendKey(key, c, pos)
	}
	g, isNew := ga.Find(key, len(gcols), len(acols))
	if isNew {
		for i, c := range gcols {
			g.Values[i] = s.Value(c, pos)
			if f, ok := g.Values[i].(float64); ok && f == 0 {
				g.Values[i] = 0.0 // not -0
			}
		}
	}
	g.Count++
	for i, c := range acols {
		s.accumulate(&g.Aggs[i], c, pos)
	}
}

// appendKey appends a type-tagged encoding of attribute col of pos.
func (s *Segment) appendKey(key []byte, col, pos int) []byte {
	if s.IsNull(col, pos) {
		return append(key, 0)
	}
	c := &s.cols[col]
	switch c.typ {
	case mapcommons.AttrInteger:
		return append(append(key, 1), c.data[8*pos:8*pos+8]...)
	case mapcommons.AttrFloat:
		if f, _ := s.Float(col, pos); f == 0 {
			return append(key, 1, 0, 0, 0, 0, 0, 0, 0, 0) // -0 groups with 0
		}
		return append(append(key, 1), c.data[8*pos:8*pos+8]...)
	case mapcommons.AttrBoolean:
		return append(key, 2, c.data[pos])
	}
	b, _ := s.Bytes(col, pos)
	key = binary.AppendUvarint(append(key, 3), uint64(len(b)))
	return append(key, b...)
}

// accumulate adds attribute col of pos to the aggregate a.
func (s *Segment) accumulate(a *feature.Agg, col, pos int) {
	if s.IsNull(col, pos) {
		return
	}
	switch s.cols[col].typ {
	case mapcommons.AttrInteger:
		v, _ := s.Int(col, pos)
		a.AddInt(v)
	case mapcommons.AttrFloat:
		v, _ := s.Float(col, pos)
		a.AddFloat(v)
	case mapcommons.AttrBoolean:
		a.AddBool(s.cols[col].data[pos] != 0)
	default:
		b, _ := s.Bytes(col, pos)
		a.AddBytes(b)
	}
}

// smallest returns the k smallest elements of xs by order, sorted; it
// reorders xs. A page of 30 out of thousands of matches needs a heap of 30,
// not a sort of thousands.
func smallest(xs []int, k int64, order func(a, b int) int) []int {
	if k <= 0 {
		return xs[:0]
	}
	if k*4 >= int64(len(xs)) {
		slices.SortFunc(xs, order)
		return xs[:k]
	}
	h := xs[:k] // a max-heap of the k smallest so far
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && order(h[r], h[l]) > 0 {
				l = r
			}
			if order(h[l], h[i]) <= 0 {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range xs[k:] {
		if order(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, order)
	return h
}

// rowView reads the values of one feature in place (mapcommons.Row).
type rowView struct {
	s   *Segment
	pos int
}

func (r *rowView) IsNull(col int) bool { return r.s.IsNull(col, r.pos) }

func (r *rowView) Int(col int) int64 {
	v, _ := r.s.Int(col, r.pos)
	return v
}

func (r *rowView) Float(col int) float64 {
	v, _ := r.s.Float(col, r.pos)
	return v
}

func (r *rowView) Bytes(col int) []byte {
	b, _ := r.s.Bytes(col, r.pos)
	return b
}

func (r *rowView) Bool(col int) bool { return r.s.cols[col].data[r.pos] == 1 }
