package segment

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"

	"mapcommons"
)

// attrIndex is one column's permutation (see attrindex_write.go), checked
// before its first use: a permutation out of range or out of order is
// never used (the queries scan instead).
type attrIndex struct {
	perm    []uint32
	once    sync.Once
	ok      bool
	nonNull int // the non-null positions come first, this many
}

// attrIndex returns column col's index, nil when the segment has none for
// it or it failed its check.
func (s *Segment) attrIndex(col int) *attrIndex {
	if s.noAttrIndex || col < 0 || col >= len(s.perms) || s.perms[col] == nil {
		return nil
	}
	ix := s.perms[col]
	ix.once.Do(func() { ix.ok = s.checkPerm(col, ix) })
	if !ix.ok {
		return nil
	}
	return ix
}

// hasAttrIndex reports whether attribute col has a usable index (checking it).
func (s *Segment) hasAttrIndex(col int) bool { return s.attrIndex(col) != nil }

// checkPerm checks what the accessors trust, as check does for the other
// sections: that ix holds every position once and the non-null ones
// first (null positions ascending), and finds where the nulls start. The
// order of the values is trusted as the tree's boxes are: checking it
// reads the column at random (a fifth of a second for a million floats
// on a cold mapping), and a wrong order gives wrong answers, never a read
// out of range.
func (s *Segment) checkPerm(col int, ix *attrIndex) bool {
	if len(ix.perm) != s.n {
		return false
	}
	seen := make([]uint64, (s.n+63)/64)
	ix.nonNull = s.n
	for i, u := range ix.perm {
		p := int(u)
		if p >= s.n || bitSet(seen, p) {
			return false
		}
		seen[p/64] |= 1 << (p % 64)
		if s.IsNull(col, p) {
			if ix.nonNull == s.n {
				ix.nonNull = i
			} else if p <= int(ix.perm[i-1]) {
				return false
			}
		} else if ix.nonNull != s.n {
			return false // a value after a null
		}
	}
	return true
}

// compareCol orders two non-null values of column col as compareAt does.
func (s *Segment) compareCol(col, a, b int) int { return compareAcross(s, a, s, b, col) }

// span is a run [lo, hi) of a permutation.
type span struct{ lo, hi int }

// compareValue compares the value of f's column at pos with f's value k,
// as matchValues does.
func (f *filter) compareValue(s *Segment, pos, k int) int {
	if f.strs != nil {
		v, _ := s.Bytes(f.col, pos)
		return bytes.Compare(v, f.strs[k])
	}
	var v float64
	if f.typ == mapcommons.AttrBoolean {
		v = float64(s.cols[f.col].data[pos])
	} else {
		v, _ = s.Float(f.col, pos)
	}
	return cmp.Compare(v, f.nums[k])
}

// spans returns the runs of ix's permutation whose rows pass f, ascending
// and disjoint; ok is false when f cannot be answered so.
func (f *filter) spans(s *Segment, ix *attrIndex) (out []span, ok bool) {
	n, perm := ix.nonNull, ix.perm
	k := len(f.nums)
	if f.strs != nil {
		k = len(f.strs)
	}
	first := func(v int, strict bool) int { // the first row above (or at) value v
		return sort.Search(n, func(i int) bool {
			c := f.compareValue(s, int(perm[i]), v)
			return c > 0 || (!strict && c == 0)
		})
	}
	switch f.op {
	case mapcommons.OpMin, mapcommons.OpMax, mapcommons.OpLess, mapcommons.OpGreater:
		if k == 0 {
			return nil, false
		}
		switch f.op {
		case mapcommons.OpMin:
			return []span{{first(0, false), n}}, true
		case mapcommons.OpGreater:
			return []span{{first(0, true), n}}, true
		case mapcommons.OpLess:
			return []span{{0, first(0, false)}}, true
		}
		return []span{{0, first(0, true)}}, true
	case mapcommons.OpEquals, mapcommons.OpIn:
	default:
		return nil, false
	}
	for v := 0; v < k; v++ {
		if lo, hi := first(v, false), first(v, true); lo < hi {
			out = append(out, span{lo, hi})
		}
	}
	// Equal values (0 and -0) give the same run, others disjoint ones.
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	return slices.Compact(out), true
}

// intersect intersects two ascending lists of disjoint runs.
func intersect(a, b []span) []span {
	var out []span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi); lo < hi {
			out = append(out, span{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// planIndex finds the attribute index's best answer, when nothing else (a
// spatial condition, ids) drives the query: among the filtered columns
// with an index, the one whose filters leave the fewest rows, and those
// rows' runs (p.spans); or, when fewer, the union of the runs of the
// branches of an OR of the Where (p.orParts), each branch through the
// index of its own best column.
func (p *plan) planIndex() {
	if p.index != nil || p.ids != nil {
		return
	}
	if ix, col, runs, count, used := p.bestSpans(p.filters); ix != nil {
		p.spanIx, p.spanCol, p.spans, p.spanCount = ix, col, runs, count
		p.spanExact = used == len(p.filters) && p.where == nil
	}
	if p.q.Where == nil {
		return
	}
	for _, c := range mapcommons.Conjuncts(p.q.Where) {
		if c.Op != mapcommons.ExprOr {
			continue
		}
		parts, total, ok := p.orSpans(c)
		if ok && (p.spanIx == nil && p.orParts == nil || total < p.spanCount) {
			p.spanIx, p.spans, p.orParts, p.spanCount, p.spanExact = nil, nil, parts, total, false
		}
	}
}

// bestSpans finds, among the columns of filters with an index, the one
// whose filters leave the fewest rows: its index, its runs of rows, their
// count and how many of the filters they serve (ix nil: none).
func (p *plan) bestSpans(filters []filter) (best *attrIndex, bestCol int, bestRuns []span, bestCount, bestUsed int) {
	for col := range p.s.cols {
		if !slices.ContainsFunc(filters, func(f filter) bool { return f.col == col }) {
			continue // not filtered: its index is not even checked
		}
		ix := p.s.attrIndex(col)
		if ix == nil {
			continue
		}
		var runs []span
		used := 0
		for i := range filters {
			f := &filters[i]
			if f.col != col {
				continue
			}
			r, ok := f.spans(p.s, ix)
			if !ok {
				continue
			}
			if used > 0 {
				r = intersect(runs, r)
			}
			runs = r
			used++
		}
		if used == 0 {
			continue
		}
		count := 0
		for _, r := range runs {
			count += r.hi - r.lo
		}
		if best == nil || count < bestCount {
			best, bestCol, bestRuns, bestCount, bestUsed = ix, col, runs, count, used
		}
	}
	return best, bestCol, bestRuns, bestCount, bestUsed
}

// orPart is the runs of one column's index that hold the rows of one
// branch of an OR (and maybe others: the Where is tested on them).
type orPart struct {
	ix   *attrIndex
	runs []span
}

// orSpans gives the runs of rows of each branch of the OR c, each through
// its best column's index (the filters mapcommons.SplitWhere finds in
// it), and their total; false when a branch has none.
func (p *plan) orSpans(c *mapcommons.Expr) (parts []orPart, total int, ok bool) {
	branches := mapcommons.Disjuncts(c)
	for _, b := range branches {
		fs, _ := mapcommons.SplitWhere(b)
		if len(fs) == 0 {
			return nil, 0, false
		}
		compiled := make([]filter, len(fs))
		for i, f := range fs {
			compiled[i] = compileFilter(p.s.attrs, f)
		}
		ix, _, runs, count, _ := p.bestSpans(compiled)
		if ix == nil {
			return nil, 0, false
		}
		parts = append(parts, orPart{ix, runs})
		total += count
	}
	return parts, total, true
}

// selective reports whether the rows of p.spans are few enough to be
// read one by one rather than by a scan of every row.
func (p *plan) selective() bool {
	return (p.spanIx != nil || p.orParts != nil) && p.spanCount*8 <= p.s.n
}

// selectiveFor is selective for a scan in position order that stops after
// need matches: such a scan reads about need/selectivity rows (a page of
// 30 of a filter that keeps one row in ten reads 300), while the index
// collects and sorts all the filtered rows.
func (p *plan) selectiveFor(need int64) bool {
	if !p.selective() {
		return false
	}
	count := int64(p.spanCount)
	scan := int64(p.s.n)
	if count > 0 && need < scan {
		scan = min(scan, need*scan/count)
	}
	return 4*count < scan
}

// useCandidates restricts the plan to the rows of p.spans (or of
// p.orParts, each once), in position order.
func (p *plan) useCandidates() {
	c := make([]int, 0, p.spanCount)
	for _, r := range p.spans {
		for i := r.lo; i < r.hi; i++ {
			c = append(c, int(p.spanIx.perm[i]))
		}
	}
	for _, part := range p.orParts {
		for _, r := range part.runs {
			for i := r.lo; i < r.hi; i++ {
				c = append(c, int(part.ix.perm[i]))
			}
		}
	}
	slices.Sort(c)
	if p.orParts != nil {
		c = slices.Compact(c) // a row in two branches
	}
	p.cand, p.useCand = c, true
}

// walk calls fn, in the order of the sort by ix's column (descending when
// desc; ties by position, nulls last by position, as compareAt), with each
// row of the runs of ix's permutation that passes the query's tests, until
// fn returns false.
func (p *plan) walk(ctx context.Context, ix *attrIndex, col int, runs []span, desc bool, fn func(pos int) bool) error {
	k := 0
	visit := func(i int) (bool, error) {
		if k++; k%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		pos := int(ix.perm[i])
		return !p.matchValues(pos) || fn(pos), nil
	}
	if !desc {
		for _, r := range runs {
			for i := r.lo; i < r.hi; i++ {
				if more, err := visit(i); !more {
					return err
				}
			}
		}
		return nil
	}
	for j := len(runs) - 1; j >= 0; j-- {
		r := runs[j]
		hi := min(r.hi, ix.nonNull)
		for hi > r.lo { // the values from the greatest, each by position
			last := int(ix.perm[hi-1])
			lo := r.lo + sort.Search(hi-1-r.lo, func(i int) bool {
				return p.s.compareCol(col, int(ix.perm[r.lo+i]), last) == 0
			})
			for i := lo; i < hi; i++ {
				if more, err := visit(i); !more {
					return err
				}
			}
			hi = lo
		}
	}
	for _, r := range runs { // the nulls, last
		for i := max(r.lo, ix.nonNull); i < r.hi; i++ {
			if more, err := visit(i); !more {
				return err
			}
		}
	}
	return nil
}
