package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// How ScanFeatures and GroupFeatures split the work between SQL and Go,
// so as to give exactly the answers of the segment engine (segment/plan.go):
//
//   - SQL prefilters: the box column && the query's boxes (spatial.BBoxRects
//     of the bbox, spatial.Near.Boxes of the buffer) through the GiST
//     index, and the ids (fid = ANY). The boxes are a superset (PostGIS
//     compares boxes rounded outwards); the exact spatial answer is Go's,
//     with package spatial's predicates on the decoded geometry, as the
//     segment engine tests it.
//   - SQL filters on attribute values exactly as the segment engine does,
//     in forms the columns' indexes serve (attrindex.go; plan.filter):
//     numbers compared as float64 (an integer column against the range
//     of integers whose float64 passes, computed in Go), NaN below every
//     number as cmp.Compare has it (SQL puts it above, so it is tested
//     for), booleans as 0 and 1, strings and dates byte by byte (they are
//     bytea, compared as bytes.Compare does); a null passes no filter.
//   - SQL orders: by position, or by the sort attribute (nulls last in
//     both directions, NaN first ascending, ties by position ascending),
//     the order Go's comparisons give; a page of it as the parts of the
//     index that give it (plan.sortedPage).
//   - Paging: in SQL (OFFSET, LIMIT; without any condition or sort, a
//     range of positions) when SQL's answer is exact, that is with no
//     spatial condition and no Where left for Go; otherwise in Go, over the rows that
//     pass the exact tests, streaming (in SQL's order already).
//   - Where (a CQL2 expression): its top-level conditions that are
//     attribute filters (mapcommons.SplitWhere: comparisons, BETWEEN, IN,
//     LIKE of a prefix) join the filters, in SQL, and so do its top-level
//     ORs whose every branch is filters alone (plan.orFilters); the rest is evaluated
//     in Go, per prefiltered row, by the segment engine's own evaluator
//     (feature.Where). Its top-level spatial condition, if any, gives
//     the box prefilter more boxes (feature.Boxes), as it gives the
//     segment engine's index search.
//   - Groups are computed in Go over the rows SQL and the exact tests
//     select, in position order, with the segment engine's accumulation
//     (feature.GroupSet), not by GROUP BY: its aggregates have no exact
//     SQL equivalent (an integer sum turns float on overflow, float sums
//     depend on the order of addition, min and max meet NaN as Go's < does,
//     -0 groups with 0). Memory grows with the groups, not the rows.

// plan is a FeatureQuery compiled against one dataset's table.
type plan struct {
	ds      *datasetRow
	q       *mapcommons.FeatureQuery
	bbox    []wkb.Rect    // the bbox parameter's boxes, tested exactly in Go
	near    *spatial.Near // the buffer query, tested exactly in Go
	where   *feature.Where
	onlyPts bool // every geometry is a single point
	conds   []string
	args    []any
	order   string
	sortCol int // the sort attribute's index; -1: by position
	// countPage: the page's rows carry the count of every match, its
	// paging aside (count(*) OVER (), their last column), so that
	// FeatureQuery.Count comes with the page in one statement.
	countPage bool
	counted   bool // scan set FeatureQuery.Count
	// knn: a condition is one box's, which the box and position index
	// (knnIndex) serves in position order.
	knn bool
}

// arg adds a parameter and returns its placeholder.
func (p *plan) arg(v any) string {
	p.args = append(p.args, v)
	return "$" + strconv.Itoa(len(p.args))
}

// boxes is the condition that the box column meets one of rs.
func (p *plan) boxes(rs []wkb.Rect) string {
	if len(rs) == 0 {
		return "false"
	}
	var or []string
	for _, r := range rs {
		or = append(or, fmt.Sprintf("box && ST_MakeEnvelope(%s, %s, %s, %s)", p.arg(r.MinX), p.arg(r.MinY), p.arg(r.MaxX), p.arg(r.MaxY)))
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// anyOf is the condition that col is one of vs, of SQL type typ: = for
// one value, whose prepared statement PostgreSQL plans once, where an
// ANY of an array of unknown length it planned again at every execution
// (75 µs under load, against 14 µs to run it).
func anyOf[T any](p *plan, col string, vs []T, typ string) string {
	if len(vs) == 1 {
		return col + " = " + p.arg(vs[0]) + "::" + typ
	}
	return col + " = ANY(" + p.arg(vs) + "::" + typ + "[])"
}

// pointBoxes is the exact condition that a point lies in one of rs, edges
// included, as spatial.InAnyRect has it; the box column's && serves it
// through the index.
func (p *plan) pointBoxes(rs []wkb.Rect) string {
	var or []string
	for _, r := range rs {
		w, s, e, n := p.arg(r.MinX), p.arg(r.MinY), p.arg(r.MaxX), p.arg(r.MaxY)
		// The exact test is in a CASE, which the planner counts as
		// half the rows: the box's && already implies it, and counted as
		// the ranges of two independent columns it made 1,627 matches 2
		// in the estimate, so that sorting them looked cheaper than
		// reading the first of a page in order (knnIndex).
		or = append(or, fmt.Sprintf("(box && ST_MakeEnvelope(%s, %s, %s, %s) AND CASE WHEN minx >= %[1]s AND minx <= %[3]s AND miny >= %[2]s AND miny <= %[4]s THEN true END)", w, s, e, n))
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// compile checks q against the dataset and plans it.
func compile(ds *datasetRow, q *mapcommons.FeatureQuery) (*plan, error) {
	attrs := ds.Attributes
	if err := q.Validate(attrs); err != nil {
		return nil, err
	}
	if q.Where != nil {
		// The Where's conditions that are attribute filters join the
		// filters, exact in SQL and served by the columns' indexes; what
		// is left is tested in Go, and without a rest the page is SQL's.
		if fs, rest := mapcommons.SplitWhere(q.Where); len(fs) > 0 {
			c := *q
			c.Filters, c.Where = append(slices.Clip(q.Filters), fs...), rest
			q = &c
		}
	}
	p := &plan{ds: ds, q: q, onlyPts: ds.GeometryMask == 1<<wkb.Point}
	if b := q.BBox; b != nil {
		rs := spatial.BBoxRects(b.W, b.S, b.E, b.N)
		if p.onlyPts {
			// A point's index box is the point itself (feature.CheckFeature,
			// spatial.IndexBounds), so SQL's test of it against the boxes,
			// edges included, is Go's exact test: nothing is left for Go,
			// and the page can be cut in SQL.
			p.conds = append(p.conds, p.pointBoxes(rs))
			p.knn = len(rs) == 1
		} else {
			p.bbox = rs
			p.conds = append(p.conds, p.boxes(rs))
		}
	}
	if n := q.Near; n != nil {
		p.near = &spatial.Near{Kind: n.Kind, XY: n.XY, Radius: n.Radius, Metric: spatial.NewMetric(n.Units), Contained: n.Contained}
		p.near.Prepare()
		p.conds = append(p.conds, p.boxes(p.near.Boxes()))
	}
	p.conds = append(p.conds, p.filters(q.Filters)...)
	if q.Where != nil {
		// The ORs left whose every branch is attribute filters alone are
		// SQL too: each branch the conjunction of its filters.
		var left []*mapcommons.Expr
		for _, c := range mapcommons.Conjuncts(q.Where) {
			if sql, ok := p.orFilters(c); ok {
				p.conds = append(p.conds, sql)
			} else {
				left = append(left, c)
			}
		}
		if len(left) < len(mapcommons.Conjuncts(q.Where)) {
			c := *q
			switch len(left) {
			case 0:
				c.Where = nil
			case 1:
				c.Where = left[0]
			default:
				c.Where = &mapcommons.Expr{Op: mapcommons.ExprAnd, Args: left}
			}
			q = &c
			p.q = q
		}
	}
	switch {
	case len(q.IDs) == 1:
		// One id (an OGC item): = rather than ANY, whose array of unknown
		// length made PostgreSQL plan the prepared statement again at
		// every execution (56 µs each under load) instead of once.
		p.conds = append(p.conds, "fid = "+p.arg(q.IDs[0]))
	case q.IDs != nil:
		p.conds = append(p.conds, "fid = ANY("+p.arg(q.IDs)+")")
	}
	if q.Where != nil {
		p.where = feature.CompileWhere(attrs, q.Where)
		if rs := feature.Boxes(q.Where); rs != nil {
			p.conds = append(p.conds, p.boxes(rs)) // the index serves it too
			p.knn = p.knn || len(rs) == 1
		}
	}
	p.order, p.sortCol = "pos", -1
	if q.Descending {
		p.order = "pos DESC"
	}
	if q.Sort != "" {
		i := mapcommons.AttrIndex(attrs, q.Sort)
		p.sortCol = i
		col, dir := attrColumn(i), "ASC"
		if q.Descending {
			dir = "DESC"
		}
		p.order = col + " IS NULL, "
		switch attrs[i].Type {
		case mapcommons.AttrFloat: // NaN is the least number in Go, the greatest in SQL
			nanFirst := "DESC"
			if q.Descending {
				nanFirst = "ASC"
			}
			p.order += col + " = 'NaN' " + nanFirst + ", "
		case mapcommons.AttrBoolean:
			col = col + "::int"
		}
		p.order += col + " " + dir + ", pos"
	}
	return p, nil
}

// filters are the SQL conditions of attribute filters, and-ed.
func (p *plan) filters(fs []mapcommons.Filter) []string {
	attrs := p.ds.Attributes
	nanOut := map[int]bool{} // the columns a filter refuses NaN of
	for _, f := range fs {
		if f.Op != mapcommons.OpMax && f.Op != mapcommons.OpLess { // NaN is below every number
			nanOut[mapcommons.AttrIndex(attrs, f.Attr)] = true
		}
	}
	var out []string
	for _, f := range fs {
		i := mapcommons.AttrIndex(attrs, f.Attr)
		out = append(out, p.filter(attrColumn(i), attrs[i].Type, f, nanOut[i]))
	}
	return out
}

// orFilters is the SQL of an OR whose every branch (nested ORs
// flattened) is attribute filters alone (mapcommons.SplitWhere leaves no
// rest of it): the branches' conjunctions, or-ed; false when c is not so.
// A branch is true exactly when its filters pass, so the OR is true
// exactly when SQL's is, as Go's three-valued evaluation has it at the
// top level.
func (p *plan) orFilters(c *mapcommons.Expr) (string, bool) {
	if c.Op != mapcommons.ExprOr {
		return "", false
	}
	branches := mapcommons.Disjuncts(c)
	var splits [][]mapcommons.Filter
	for _, b := range branches {
		fs, rest := mapcommons.SplitWhere(b)
		if rest != nil || len(fs) == 0 {
			return "", false
		}
		splits = append(splits, fs)
	}
	var or []string
	for _, fs := range splits {
		or = append(or, "("+strings.Join(p.filters(fs), " AND ")+")")
	}
	return "(" + strings.Join(or, " OR ") + ")", true
}

// filter is the SQL of one attribute condition, as segment's matchValues
// evaluates it, in forms the column's index serves (attrindex.go): the
// column itself compared with parameters of its own type, never an
// expression of it. nanOut says that another filter of the same column
// refuses NaN already (a min or an equality: filters are and-ed).
func (p *plan) filter(col string, t mapcommons.AttrType, f mapcommons.Filter, nanOut bool) string {
	switch t {
	case mapcommons.AttrString, mapcommons.AttrDate:
		return p.bytesFilter(col, f)
	case mapcommons.AttrBoolean:
		// As 0 and 1: the booleans that pass, of the two.
		pass, vals := map[bool]bool{}, f.Values
		if f.Op != mapcommons.OpEquals && f.Op != mapcommons.OpIn {
			vals = vals[:1]
		}
		for _, v := range vals {
			b, _ := mapcommons.ParseBool(v)
			switch f.Op {
			case mapcommons.OpMin:
				pass[true], pass[false] = true, !b
			case mapcommons.OpMax:
				pass[false], pass[true] = true, b
			case mapcommons.OpLess:
				pass[false] = b
			case mapcommons.OpGreater:
				pass[true] = !b
			default:
				pass[b] = true
			}
		}
		var bs []bool
		for _, b := range []bool{false, true} {
			if pass[b] {
				bs = append(bs, b)
			}
		}
		return anyOf(p, col, bs, "boolean")
	}
	nums := make([]float64, len(f.Values))
	for k, v := range f.Values {
		nums[k], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	if t == mapcommons.AttrInteger {
		return p.intFilter(col, f.Op, nums)
	}
	// Floats: NaN is below every number in Go, above in SQL (and = to
	// itself in both); -0 = 0 in both. Filter values are never NaN
	// (Validate refuses them).
	if cmp, ok := floatBounds[f.Op]; ok {
		c := col + cmp + p.arg(nums[0])
		switch {
		case cmp[1] == '>': // SQL's NaN is above the bound, Go's below
			return "(" + c + " AND " + col + " < 'NaN')"
		case nanOut:
			return c
		}
		return "(" + c + " OR " + col + " = 'NaN')" // below it in Go
	}
	return anyOf(p, col, nums, "double precision")
}

// floatBounds are the filter operations that bound a float column, and
// SQL's comparison with the bound.
var floatBounds = map[string]string{
	mapcommons.OpMin: " >= ", mapcommons.OpMax: " <= ", mapcommons.OpGreater: " > ", mapcommons.OpLess: " < ",
}

// intBounds are the filter operations that bound an integer column: the
// bound in integers of a float64 value, and SQL's comparison with it.
var intBounds = map[string]struct {
	bound func(float64) (int64, bool)
	cmp   string
}{
	mapcommons.OpMin:     {intAtLeast, " >= "},
	mapcommons.OpMax:     {intAtMost, " <= "},
	mapcommons.OpGreater: {intAbove, " >= "},
	mapcommons.OpLess:    {intBelow, " <= "},
}

// intFilter is the condition on integer column col that Go's comparison
// of float64(value) with the filter values nums makes: float64(int64) is
// monotonic, so each test is a range of integers, found exactly in Go
// (past 2^53 several integers round to one float: all of them match it),
// and SQL compares integers with integers.
func (p *plan) intFilter(col, op string, nums []float64) string {
	// A bound: the integer range of the comparison, inclusive.
	if b, ok := intBounds[op]; ok {
		n, ok := b.bound(nums[0])
		if !ok {
			return "false"
		}
		return col + b.cmp + p.arg(n)
	}
	var single []int64
	var or []string
	for _, v := range nums {
		lo, ok1 := intAtLeast(v)
		hi, ok2 := intAtMost(v)
		switch {
		case !ok1 || !ok2 || lo > hi: // no integer is v (1.5)
		case lo == hi:
			single = append(single, lo)
		default:
			or = append(or, col+" BETWEEN "+p.arg(lo)+" AND "+p.arg(hi))
		}
	}
	if len(single) > 0 {
		or = append(or, anyOf(p, col, single, "bigint"))
	}
	if len(or) == 0 {
		return "false"
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// firstInt is the least int64 for which the monotonic test holds (false
// up to it, true from it on); ok false when it holds for none.
func firstInt(test func(int64) bool) (int64, bool) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !test(hi) {
		return 0, false
	}
	for lo < hi { // test(hi) holds
		mid := lo + int64(uint64(hi-lo)/2) // hi-lo overflows int64, not uint64
		if test(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// intAtLeast is the least integer c with float64(c) >= v.
func intAtLeast(v float64) (int64, bool) {
	return firstInt(func(c int64) bool { return float64(c) >= v })
}

// intAtMost is the greatest integer c with float64(c) <= v.
func intAtMost(v float64) (int64, bool) {
	return lastInt(func(c int64) bool { return float64(c) > v })
}

// intAbove is the least integer c with float64(c) > v.
func intAbove(v float64) (int64, bool) {
	return firstInt(func(c int64) bool { return float64(c) > v })
}

// intBelow is the greatest integer c with float64(c) < v.
func intBelow(v float64) (int64, bool) {
	return lastInt(func(c int64) bool { return float64(c) >= v })
}

// lastInt is the greatest integer before the first one for which past
// holds (firstInt): every integer when none is, none when all are.
func lastInt(past func(int64) bool) (int64, bool) {
	c, ok := firstInt(past)
	switch {
	case !ok:
		return math.MaxInt64, true
	case c == math.MinInt64:
		return 0, false
	}
	return c - 1, true
}

// bytesFilter is the condition on a string or date column. Its index
// holds the values up to indexedBytes only, the table's _long index the
// rows with longer ones: each arm of the condition says which, so that
// the planner can use them (a value of either length may match a min or
// a max; an equality with a short value only short ones).
func (p *plan) bytesFilter(col string, f mapcommons.Filter) string {
	short, long := shortBytes(col), longBytes(col)
	switch f.Op {
	case mapcommons.OpMin, mapcommons.OpMax, mapcommons.OpLess, mapcommons.OpGreater:
		op := map[string]string{mapcommons.OpMin: " >= ", mapcommons.OpMax: " <= ", mapcommons.OpLess: " < ", mapcommons.OpGreater: " > "}[f.Op]
		c := col + op + p.arg([]byte(f.Values[0]))
		return "((" + c + " AND " + short + ") OR (" + c + " AND " + long + "))"
	}
	var shortVals, longVals [][]byte
	for _, v := range f.Values {
		if len(v) <= indexedBytes {
			shortVals = append(shortVals, []byte(v))
		} else {
			longVals = append(longVals, []byte(v))
		}
	}
	var or []string
	if shortVals != nil {
		or = append(or, "("+anyOf(p, col, shortVals, "bytea")+" AND "+short+")")
	}
	if longVals != nil {
		or = append(or, "("+anyOf(p, col, longVals, "bytea")+" AND "+long+")")
	}
	if len(or) == 0 {
		return "false"
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// exact reports whether SQL's answer is the answer (no test left for Go).
func (p *plan) exact() bool { return p.bbox == nil && p.near == nil && p.where == nil }

// query is the SQL of the plan, selecting sel; paged in SQL when exact.
func (p *plan) query(sel string, paged bool) string {
	s := `SELECT ` + sel + ` FROM ` + ident(p.ds.table)
	offset := max(p.q.Offset, 0)
	// narrow: the page is chosen among rows that a condition or a sort
	// puts in an order other than the key's.
	// The ids alone bound the rows to sort to their number: not narrow.
	idsOnly := p.q.IDs != nil && len(p.conds) == 1 && p.q.Sort == ""
	narrow := paged && !idsOnly && (len(p.conds) > 0 || p.q.Sort != "") && p.q.Limit >= 0 && p.q.Limit <= narrowPageMax
	if p.anyOrder() {
		// Every match, in the order the rows are read: a sequential or
		// bitmap scan, not the key's walk (a million points: 0.65 s in
		// PostgreSQL ordered, 0.22 s not).
		if len(p.conds) > 0 {
			s += ` WHERE ` + strings.Join(p.conds, " AND ")
		}
		return s
	}
	if paged && len(p.conds) == 0 && p.q.Sort == "" {
		// No condition: the page is a range of positions (0 to count-1
		// in the snapshot the row was read in), found through the key
		// from the slot of its first (holes.go).
		if p.q.Descending {
			p.conds = append(p.conds, "pos < "+p.arg(p.ds.slot(p.ds.FeatureCount-min(offset, p.ds.FeatureCount))))
		} else {
			p.conds = append(p.conds, "pos >= "+p.arg(p.ds.slot(min(offset, p.ds.FeatureCount))))
		}
		offset = 0
	}
	if paged && p.sortCol >= 0 && indexed(p.sortCol) && p.q.Limit >= 0 {
		if len(p.conds) > 0 {
			// A condition's values decide the plan (a filter matching 51
			// rows: sorted, 0.5 ms; the generic plan walks the sort's
			// index for them, 86 ms).
			return p.sortedPage(sel, offset)
		}
		return genericPlan + p.sortedPage(sel, offset)
	}
	where := ""
	if len(p.conds) > 0 {
		where = ` WHERE ` + strings.Join(p.conds, " AND ")
	}
	if narrow && p.countPage {
		// The count apart from the page, once (an InitPlan): a count(*)
		// OVER () in the page's query, under its LIMIT, was costed as if
		// the scan stopped after the page, and the planner then walked
		// the key in order through a million rows to count 1,627 (0.56 s).
		t := ident(p.ds.table)
		return `SELECT ` + sel + `, (SELECT count(*) FROM ` + t + where + `) AS n_ FROM ` + t + ` WHERE pos = ANY(ARRAY(SELECT pos FROM ` +
			t + where + ` ORDER BY ` + p.pageOrder() + ` OFFSET ` + p.arg(offset) + ` LIMIT ` + p.arg(p.q.Limit) + `)) ORDER BY ` + p.order
	}
	if p.countPage {
		s = `SELECT ` + sel + `, count(*) OVER () AS n_ FROM ` + ident(p.ds.table)
	}
	if narrow && p.pageOrder() != p.order {
		// A box's page in position order, through the box and position index
		// best first: the scan reads the page's rows, whole, and stops.
		return s + where + ` ORDER BY ` + p.pageOrder() + ` OFFSET ` + p.arg(offset) + ` LIMIT ` + p.arg(p.q.Limit)
	}
	if narrow {
		// The positions of the page are chosen first, on narrow rows,
		// and only the page's rows are read whole, by their key. Sorting
		// the matches whole (a bbox page of 30 among 1,600 points)
		// carried every column through the sort: 1.4–1.7 ms against
		// 1.0 ms this way (pgbench, the bench's million points).
		return `SELECT ` + sel + ` FROM ` + ident(p.ds.table) + ` WHERE pos = ANY(ARRAY(SELECT pos FROM ` +
			ident(p.ds.table) + where + ` ORDER BY ` + p.pageOrder() + ` OFFSET ` + p.arg(offset) + ` LIMIT ` + p.arg(p.q.Limit) +
			`)) ORDER BY ` + p.order
	}
	s += where + ` ORDER BY ` + p.order
	if paged {
		s += ` OFFSET ` + p.arg(offset)
		if p.q.Limit >= 0 {
			s += ` LIMIT ` + p.arg(p.q.Limit)
		}
	}
	return s
}

// pageOrder is the order the positions of a narrow page are chosen in:
// p.order, or, by position through a box's condition, the distance of the
// position from the first one (or the last), which is the position's
// order and which the box and position index (knnIndex) gives best first: the
// scan stops after the page instead of reading every match of the box to
// sort them. Without that index (still being built) the answer is the
// same, sorted.
func (p *plan) pageOrder() string {
	switch {
	case !p.knn || p.sortCol >= 0:
		return p.order
	case p.q.Descending:
		// From 2^52: the index orders by the distance as a float8, exact
		// below 2^53 (from 2^63 every position was one distance, in any
		// order). Positions count the features ever put in a table.
		return "(" + knnPos + ") <-> 4503599627370496::int8"
	}
	return "(" + knnPos + ") <-> 0::int8"
}

// noValues reports whether the plan's rows may come without their values
// (FeatureQuery.NoValues): no test left to Go reads them.
func (p *plan) noValues() bool { return p.q.NoValues && p.where == nil }

// anyOrder reports whether the plan's rows may come in any order
// (FeatureQuery.AnyOrder): every match, uncounted.
func (p *plan) anyOrder() bool {
	q := p.q
	return q.AnyOrder && q.Offset <= 0 && q.Limit < 0 && q.Sort == "" && !q.Descending && q.Count == nil && !p.countPage
}

// canCountPage reports whether SQL's page can carry the count of the
// query's matches (plan.countPage): it is exact, and not the union of the
// parts of a sorted page.
func (p *plan) canCountPage() bool {
	// From the first page only: an empty one then says the count is 0,
	// where one past the end would say nothing.
	return p.exact() && len(p.conds) > 0 && p.q.Limit != 0 && p.q.Offset <= 0 && !(p.sortCol >= 0 && indexed(p.sortCol) && p.q.Limit >= 0)
}

// narrowPageMax is the largest page query chooses the positions of first
// (its positions go to the server as one array).
const narrowPageMax = 10000

// sortedPage is the SQL of a page sorted by an attribute (sel must hold
// its column), in the order compile's p.order has, put so that the
// column's index (col, pos) gives it and each scan stops after the page:
// a UNION ALL of the parts of that order, each a range of the index in
// one direction, each cut at offset+limit rows, numbered, and the page
// cut from them sorted by that number, the column and the position (at
// most three times offset+limit rows; an Append's order is not SQL's
// promise, a parallel one mixes its parts).
//
//   - Ascending: NaN (floats; by position: = 'NaN' is a range of the
//     index), then the numbers or values ascending, then the nulls by
//     position (IS NULL is the index's last range).
//   - Descending: the values descending (the index read backwards; ties
//     come by position descending, so the planner sorts each run of
//     equal values again, by position, an incremental sort), then NaN,
//     then the nulls.
//   - Strings and dates: their index holds the values up to indexedBytes
//     (attrindex.go), so the values are the merge, in order, of those
//     through the index and the longer ones (few, sorted).
//
// Within the NaN and the null parts the column's values are all equal
// for the sort (PostgreSQL orders NaN as equal to NaN), so the final
// order by part, column and position is each part's own.
func (p *plan) sortedPage(sel string, offset int64) string {
	t, col := ident(p.ds.table), attrColumn(p.sortCol)
	n := p.arg(offset + min(p.q.Limit, math.MaxInt64-offset))
	dir := ""
	if p.q.Descending {
		dir = " DESC"
	}
	part := func(cond, order string) string {
		conds := append(slices.Clip(p.conds), cond)
		return `(SELECT ` + sel + ` FROM ` + t + ` WHERE ` + strings.Join(conds, " AND ") + ` ORDER BY ` + order + ` LIMIT ` + n + `)`
	}
	var values string
	switch typ := p.ds.Attributes[p.sortCol].Type; {
	case isBytea(typ):
		where := ""
		if len(p.conds) > 0 {
			where = strings.Join(p.conds, " AND ") + " AND "
		}
		values = `(SELECT * FROM (SELECT ` + sel + ` FROM ` + t + ` WHERE ` + where + shortBytes(col) +
			` UNION ALL SELECT ` + sel + ` FROM ` + t + ` WHERE ` + where + longBytes(col) + `) v ORDER BY ` + col + dir + `, pos LIMIT ` + n + `)`
	case typ == mapcommons.AttrFloat:
		values = part(col+" < 'NaN'", col+dir+", pos")
	default:
		values = part(col+" IS NOT NULL", col+dir+", pos")
	}
	parts := []string{values}
	if p.ds.Attributes[p.sortCol].Type == mapcommons.AttrFloat {
		nan := part(col+" = 'NaN'", "pos")
		if p.q.Descending {
			parts = append(parts, nan)
		} else {
			parts = []string{nan, values}
		}
	}
	parts = append(parts, part(col+" IS NULL", "pos"))
	for k, q := range parts {
		parts[k] = `SELECT ` + strconv.Itoa(k) + ` AS part_, * FROM ` + q + ` p` + strconv.Itoa(k)
	}
	return `SELECT ` + sel + ` FROM (` + strings.Join(parts, " UNION ALL ") + `) s ORDER BY part_, ` + col + dir + `, pos OFFSET ` +
		p.arg(offset) + ` LIMIT ` + p.arg(p.q.Limit)
}

// selectAll is the select list of whole features.
func (p *plan) selectAll() string {
	if p.noValues() {
		return "pos, fid, geom"
	}
	return attrColumns("pos, fid, geom", len(p.ds.Attributes))
}

// matchGeometry applies the exact spatial tests, as the segment engine
// does, to a feature the box prefilter found.
func (p *plan) matchGeometry(geom []byte) bool {
	exact := spatial.Exact{BBox: p.bbox, Near: p.near}
	if exact.None() {
		return true
	}
	if p.onlyPts {
		if x, y, ok := wkb.StoredPoint(geom); ok {
			return exact.MatchPoint(x, y)
		}
	}
	g, err := wkb.Decode(geom)
	return err == nil && exact.Match(g)
}

// match applies the tests left to Go to a row read by the prefilter;
// fails once ctx is done (a LIKE over a long value looks within the row).
func (p *plan) match(ctx context.Context, geom []byte, values []any) (bool, error) {
	if !p.matchGeometry(geom) {
		return false, nil
	}
	if p.where == nil {
		return true, nil
	}
	return p.where.Match(ctx, values, geom)
}

// scan streams the features of the plan to fn. A lazy query
// (FeatureQuery.Lazy) whose tests left to Go are spatial only, over
// columns all of rawRow's forms, reads each feature's values through a
// rawRow, as asked: nothing is boxed or converted for the values no one
// reads (a low-zoom tile reads those of one point a cell).
//
// With more, a query follows in the read's transaction (QueryMore).
func (p *plan) scan(ctx context.Context, tx rowsQuerier, fn func(*mapcommons.Feature) error, more bool) error {
	q := p.q
	if p.countPage {
		*q.Count = 0 // unless the page has a row, which carries the count
	}
	if q.Limit == 0 {
		return nil
	}
	exact := p.exact()
	send := tx.Query
	if more {
		send = tx.QueryMore
	}
	rows, err := send(ctx, p.query(p.selectAll(), exact), p.args...)
	if err != nil {
		return formatError(err)
	}
	defer rows.Close()
	limit := q.Limit
	if limit < 0 {
		limit = math.MaxInt64
	}
	offset := max(q.Offset, 0)
	if exact {
		offset = 0 // SQL skipped them
	}
	f := &mapcommons.Feature{}
	rr, geoms := newRowReader(rows), &arena{}
	lazy := q.Lazy && p.where == nil && rr.lazy()
	row := &rawRow{base: 3}
	skipped, sent := int64(0), int64(0)
	for rows.Next() {
		var pos, fid, count int64
		var geom []byte
		if lazy {
			raw := rows.RawValues()
			if p.countPage {
				count, raw = rawInt(raw[len(raw)-1]), raw[:len(raw)-1]
			}
			pos, fid, geom, row.raw = rawInt(raw[0]), rawInt(raw[1]), raw[2], raw
			f.Values, f.Row = nil, row
		} else {
			vals, err := rr.values()
			if err != nil {
				return err
			}
			if p.countPage {
				count, _ = vals[len(vals)-1].(int64)
				vals = vals[:len(vals)-1]
			}
			pos, fid = vals[0].(int64), vals[1].(int64)
			geom, _ = vals[2].([]byte)
			f.Values, f.Row = featureValues(vals[3:], f.Values), nil
		}
		if p.noValues() {
			f.Values, f.Row = nil, nil
		}
		if p.countPage && !p.counted {
			*q.Count, p.counted = count, true
		}
		if ok, err := p.match(ctx, geom, f.Values); err != nil {
			return err
		} else if !ok {
			continue
		}
		if skipped < offset {
			skipped++
			continue
		}
		f.Position, f.ID, f.Geometry = p.ds.position(pos), fid, geoms.copy(geom)
		if q.WithDistance && p.near != nil {
			f.Distance = math.NaN()
			if g, err := wkb.Decode(geom); err == nil {
				f.Distance = p.near.Distance(g)
			}
		}
		if err := fn(f); err != nil {
			return err
		}
		if sent++; sent >= limit {
			return nil
		}
	}
	return formatError(rows.Err())
}

// groups answers a grouped query: the rows selected (SQL's prefilter and
// Go's exact tests), in position order, grouped and aggregated in Go as
// the segment engine does.
func (p *plan) groups(ctx context.Context, tx rowsQuerier) ([]mapcommons.Group, error) {
	p.order = "pos"
	gs := feature.NewGroupSet(p.ds.Attributes, p.q)
	if len(p.q.GroupBy) == 0 && len(p.q.Aggregates) == 0 && p.exact() {
		// A count that SQL answers exactly (OGC's numberMatched): no row
		// comes to Go.
		sql := `SELECT count(*) FROM ` + ident(p.ds.table)
		if len(p.conds) > 0 {
			sql += ` WHERE ` + strings.Join(p.conds, " AND ")
		}
		rows, err := tx.Query(ctx, sql, p.args...)
		if err != nil {
			return nil, formatError(err)
		}
		defer rows.Close()
		var n int64
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return nil, formatError(err)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, formatError(err)
		}
		gs.AddCount(n)
		return gs.Groups(), nil
	}
	rows, err := tx.Query(ctx, p.query(attrColumns("geom", len(p.ds.Attributes)), false), p.args...)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	err = eachFeature(rows, 1, func(lead, values []any) error {
		geom, _ := lead[0].([]byte)
		ok, err := p.match(ctx, geom, values)
		if ok && err == nil {
			gs.Add(values)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return gs.Groups(), nil
}
