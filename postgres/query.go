package postgres

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/segment"
	"mapcommons/spatial"
)

// How ScanFeatures and GroupFeatures split the work between SQL and Go,
// so as to give exactly the answers of the segment engine (segment/query.go):
//
//   - SQL prefilters: the box column && the query's boxes (spatial.BBoxRects
//     of the bbox, spatial.Near.Boxes of the buffer) through the GiST
//     index, and the ids (fid = ANY). The boxes are a superset (PostGIS
//     compares boxes rounded outwards); the exact spatial answer is Go's,
//     with package spatial's predicates on the decoded geometry, as the
//     segment engine tests it.
//   - SQL filters on attribute values exactly as the segment engine does:
//     numbers compared as float64 (integers cast to double precision, as
//     Go converts them), NaN below every number as cmp.Compare has it (SQL
//     puts it above, so it is tested for), booleans as 0 and 1, strings
//     and dates byte by byte (they are bytea, compared as bytes.Compare
//     does); a null passes no filter.
//   - SQL orders: by position, or by the sort attribute (nulls last in
//     both directions, NaN first ascending, ties by position ascending),
//     the order Go's comparisons give.
//   - Paging: in SQL (OFFSET, LIMIT; without any condition or sort, a
//     range of positions) when SQL's answer is exact, that is with no
//     spatial condition and no Where; otherwise in Go, over the rows that
//     pass the exact tests, streaming (in SQL's order already).
//   - Where (a CQL2 expression) is evaluated in Go, per prefiltered row,
//     by the segment engine's own evaluator (segment.Where): it is not
//     translated to SQL. Its top-level spatial condition, if any, gives
//     the box prefilter more boxes (segment.WhereBoxes), as it gives the
//     segment engine's index search.
//   - Groups are computed in Go over the rows SQL and the exact tests
//     select, in position order, with the segment engine's accumulation
//     (segment.GroupSet), not by GROUP BY: its aggregates have no exact
//     SQL equivalent (an integer sum turns float on overflow, float sums
//     depend on the order of addition, min and max meet NaN as Go's < does,
//     -0 groups with 0). Memory grows with the groups, not the rows.

// plan is a FeatureQuery compiled against one dataset's table.
type plan struct {
	ds      *datasetRow
	q       *mapcommons.FeatureQuery
	bbox    []wkb.Rect    // the bbox parameter's boxes, tested exactly in Go
	near    *spatial.Near // the buffer query, tested exactly in Go
	where   *segment.Where
	onlyPts bool // every geometry is a single point
	conds   []string
	args    []any
	order   string
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

// pointBoxes is the exact condition that a point lies in one of rs, edges
// included, as spatial.InAnyRect has it; the box column's && serves it
// through the index.
func (p *plan) pointBoxes(rs []wkb.Rect) string {
	var or []string
	for _, r := range rs {
		w, s, e, n := p.arg(r.MinX), p.arg(r.MinY), p.arg(r.MaxX), p.arg(r.MaxY)
		or = append(or, fmt.Sprintf("(box && ST_MakeEnvelope(%s, %s, %s, %s) AND minx >= %[1]s AND minx <= %[3]s AND miny >= %[2]s AND miny <= %[4]s)", w, s, e, n))
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// compile checks q against the dataset and plans it.
func compile(ds *datasetRow, q *mapcommons.FeatureQuery) (*plan, error) {
	attrs := ds.Attributes
	if err := q.Validate(attrs); err != nil {
		return nil, err
	}
	p := &plan{ds: ds, q: q, onlyPts: ds.GeometryMask == 1<<wkb.Point}
	if b := q.BBox; b != nil {
		rs := spatial.BBoxRects(b.W, b.S, b.E, b.N)
		if p.onlyPts {
			// A point's index box is the point itself (segment.CheckFeature,
			// spatial.IndexBounds), so SQL's test of it against the boxes,
			// edges included, is Go's exact test: nothing is left for Go,
			// and the page can be cut in SQL.
			p.conds = append(p.conds, p.pointBoxes(rs))
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
	for _, f := range q.Filters {
		i := mapcommons.AttrIndex(attrs, f.Attr)
		p.conds = append(p.conds, p.filter(attrColumn(i), attrs[i].Type, f))
	}
	if q.IDs != nil {
		p.conds = append(p.conds, "fid = ANY("+p.arg(q.IDs)+")")
	}
	if q.Where != nil {
		p.where = segment.CompileWhere(attrs, q.Where)
		if rs := segment.WhereBoxes(q.Where); rs != nil {
			p.conds = append(p.conds, p.boxes(rs)) // the index serves it too
		}
	}
	p.order = "pos"
	if q.Descending {
		p.order = "pos DESC"
	}
	if q.Sort != "" {
		i := mapcommons.AttrIndex(attrs, q.Sort)
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

// filter is the SQL of one attribute condition, as segment's matchValues
// evaluates it.
func (p *plan) filter(col string, t mapcommons.AttrType, f mapcommons.Filter) string {
	switch t {
	case mapcommons.AttrString, mapcommons.AttrDate:
		vals := make([][]byte, len(f.Values))
		for k, v := range f.Values {
			vals[k] = []byte(v)
		}
		switch f.Op {
		case mapcommons.OpMin:
			return col + " >= " + p.arg(vals[0])
		case mapcommons.OpMax:
			return col + " <= " + p.arg(vals[0])
		}
		return col + " = ANY(" + p.arg(vals) + "::bytea[])"
	}
	nums := make([]float64, len(f.Values))
	for k, v := range f.Values {
		if t == mapcommons.AttrBoolean {
			if b, _ := mapcommons.ParseBool(v); b {
				nums[k] = 1
			}
			continue
		}
		nums[k], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	v := col + "::double precision"
	if t == mapcommons.AttrBoolean {
		v = col + "::int::double precision"
	}
	switch f.Op {
	case mapcommons.OpMin:
		if t == mapcommons.AttrFloat {
			return "(" + v + " >= " + p.arg(nums[0]) + " AND " + col + " <> 'NaN')"
		}
		return v + " >= " + p.arg(nums[0])
	case mapcommons.OpMax:
		if t == mapcommons.AttrFloat {
			return "(" + v + " <= " + p.arg(nums[0]) + " OR " + col + " = 'NaN')"
		}
		return v + " <= " + p.arg(nums[0])
	}
	// Filter values are never NaN (Validate refuses them): = is Go's ==.
	return v + " = ANY(" + p.arg(nums) + "::double precision[])"
}

// exact reports whether SQL's answer is the answer (no test left for Go).
func (p *plan) exact() bool { return p.bbox == nil && p.near == nil && p.where == nil }

// query is the SQL of the plan, selecting sel; paged in SQL when exact.
func (p *plan) query(sel string, paged bool) string {
	s := `SELECT ` + sel + ` FROM ` + ident(p.ds.table)
	offset := max(p.q.Offset, 0)
	// narrow: the page is chosen among rows that a condition or a sort
	// puts in an order other than the key's.
	narrow := paged && (len(p.conds) > 0 || p.q.Sort != "") && p.q.Limit >= 0 && p.q.Limit <= narrowPageMax
	if paged && len(p.conds) == 0 && p.q.Sort == "" {
		// No condition: the page is a range of positions (0 to count-1
		// in the snapshot the row was read in), found through the key.
		if p.q.Descending {
			p.conds = append(p.conds, "pos < "+p.arg(p.ds.FeatureCount-min(offset, p.ds.FeatureCount)))
		} else {
			p.conds = append(p.conds, "pos >= "+p.arg(offset))
		}
		offset = 0
	}
	where := ""
	if len(p.conds) > 0 {
		where = ` WHERE ` + strings.Join(p.conds, " AND ")
	}
	if narrow {
		// The positions of the page are chosen first, on narrow rows,
		// and only the page's rows are read whole, by their key. Sorting
		// the matches whole (a bbox page of 30 among 1,600 points)
		// carried every column through the sort: 1.4–1.7 ms against
		// 1.0 ms this way (pgbench, the bench's million points).
		return `SELECT ` + sel + ` FROM ` + ident(p.ds.table) + ` WHERE pos = ANY(ARRAY(SELECT pos FROM ` +
			ident(p.ds.table) + where + ` ORDER BY ` + p.order + ` OFFSET ` + p.arg(offset) + ` LIMIT ` + p.arg(p.q.Limit) +
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

// narrowPageMax is the largest page query chooses the positions of first
// (its positions go to the server as one array).
const narrowPageMax = 10000

// selectAll is the select list of whole features.
func (p *plan) selectAll() string {
	sel := "pos, fid, geom"
	for i := range p.ds.Attributes {
		sel += ", " + attrColumn(i)
	}
	return sel
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

// match applies the tests left to Go to a row read by the prefilter.
func (p *plan) match(geom []byte, values []any) bool {
	return p.matchGeometry(geom) && (p.where == nil || p.where.Match(values, geom))
}

// scan streams the features of the plan to fn.
func (p *plan) scan(ctx context.Context, tx rowsQuerier, fn func(*mapcommons.Feature) error) error {
	q := p.q
	if q.Limit == 0 {
		return nil
	}
	exact := p.exact()
	rows, err := tx.Query(ctx, p.query(p.selectAll(), exact), p.args...)
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
	skipped, sent := int64(0), int64(0)
	for rows.Next() {
		vals, err := rr.values()
		if err != nil {
			return err
		}
		geom, _ := vals[2].([]byte)
		f.Values = featureValues(vals[3:], f.Values)
		if !p.match(geom, f.Values) {
			continue
		}
		if skipped < offset {
			skipped++
			continue
		}
		f.Position, f.ID, f.Geometry, f.Row = vals[0].(int64), vals[1].(int64), geoms.copy(geom), nil
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
	gs := segment.NewGroupSet(p.ds.Attributes, p.q)
	sel := "geom"
	for i := range p.ds.Attributes {
		sel += ", " + attrColumn(i)
	}
	rows, err := tx.Query(ctx, p.query(sel, false), p.args...)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	var values []any
	rr := newRowReader(rows)
	for rows.Next() {
		vals, err := rr.values()
		if err != nil {
			return nil, err
		}
		geom, _ := vals[0].([]byte)
		values = featureValues(vals[1:], values)
		if p.match(geom, values) {
			gs.Add(values)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, formatError(err)
	}
	return gs.Groups(), nil
}
