package sqlite

// Search over datasets and maps: FTS5 for the words, bm25 for relevance, an
// R*Tree for boxes. The index (migration 0004) is kept in the same
// transaction as the rows it describes, by triggers for datasets and by
// the policy's rule in Go for maps (mapsearch.go, migration 0006); this
// file only reads it.

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/searchdoc"
)

// SearchService implements mapcommons.SearchService on the store.
type SearchService struct {
	db *DB
}

// NewSearchService returns the search service of db.
func NewSearchService(db *DB) *SearchService { return &SearchService{db: db} }

var _ mapcommons.SearchService = (*SearchService)(nil)

// bm25Weights weigh a match in the title, description and tags.
const bm25Weights = "10.0, 1.0, 4.0"

// ftsColumns names the index's columns by field.
var ftsColumns = map[string]string{
	mapcommons.FieldTitle: "title", mapcommons.FieldDescription: "description", mapcommons.FieldTags: "tags",
}

// ftsString quotes s as an FTS5 string: inside double quotes nothing is
// syntax, and a double quote is written twice. The tokenizer then splits it
// into a phrase of words.
func ftsString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// matchExpr builds the FTS5 MATCH expression of terms: every term a quoted
// string (a phrase of its words), restricted to a column when the term is,
// a prefix query when the term is; all ANDed. User input never reaches the
// expression unquoted.
func matchExpr(terms []mapcommons.SearchTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" AND ")
		}
		if col := ftsColumns[t.Field]; col != "" {
			b.WriteString(col + " : ")
		}
		b.WriteString(ftsString(t.Text))
		if t.Prefix {
			b.WriteString(" *")
		}
	}
	return b.String()
}

// searchQuery is the SQL of one search, built from a filter.
type searchQuery struct {
	from  string // FROM … of the matching rows
	id    string // the docid of a matching row
	where []string
	args  []any
	score string // the relevance expression ("" without words)
}

func (q *searchQuery) cond(c string, args ...any) {
	q.where = append(q.where, c)
	q.args = append(q.args, args...)
}

// buildSearch builds the SQL of f. With words to match and nothing else
// that needs a row's columns (a box, a tag, an order by a column), the
// matches are never joined with search_docs: kind is the docid's parity,
// and visibility and owners are looked up only where the parity does not
// decide, which keeps searches for common words fast.
func buildSearch(f *mapcommons.SearchFilter) *searchQuery {
	q := &searchQuery{from: "search_docs s", id: "s.docid"}
	if len(f.Terms) > 0 {
		q.from, q.id = "search_fts JOIN search_docs s ON s.docid = search_fts.rowid", "search_fts.rowid"
		ftsOnly := f.BBox == nil && (f.Sort == "" || f.Sort == mapcommons.SortRelevance)
		for _, t := range f.Terms {
			ftsOnly = ftsOnly && t.Field != mapcommons.FieldTags
		}
		if ftsOnly {
			q.from = "search_fts"
			q.ftsOnly(f)
			return q
		}
		q.cond("search_fts MATCH ?", matchExpr(f.Terms))
		q.score = "bm25(search_fts, " + bm25Weights + ")"
		for _, t := range f.Terms {
			if t.Field != mapcommons.FieldTags {
				continue
			}
			// The words matched; now the tag itself: one of the tags, whole.
			if t.Prefix {
				q.cond("instr(', ' || lower(s.tags), ', ' || lower(?)) > 0", t.Text)
			} else {
				q.cond("instr(', ' || lower(s.tags) || ', ', ', ' || lower(?) || ', ') > 0", t.Text)
			}
		}
	}
	if v := f.Visibility; !v.All {
		var or []string
		if v.OwnerID != 0 {
			or = append(or, "s.owner_id = ?")
			q.args = append(q.args, v.OwnerID)
		}
		if v.Datasets {
			or = append(or, "s.kind = 0")
		}
		if v.Shared {
			or = append(or, "s.shared = 1")
		}
		if len(v.GroupIDs) > 0 {
			or = append(or, "s.docid IN (SELECT docid FROM search_grants WHERE group_id IN (SELECT value FROM json_each(?)))")
			q.args = append(q.args, groupsJSON(v.GroupIDs))
		}
		if len(or) == 0 {
			or = []string{"0"}
		}
		q.where = append(q.where, "("+strings.Join(or, " OR ")+")")
	}
	for _, u := range f.Users {
		q.cond("s.owner_id = (SELECT id FROM users WHERE login = ?)", u)
	}
	switch f.Model {
	case mapcommons.ModelOverlay:
		q.cond("s.kind = 0")
	case mapcommons.ModelMap:
		q.cond("s.kind = 1")
	}
	if b := f.BBox; b != nil {
		q.bbox(b, len(f.Terms) == 0)
	}
	return q
}

// ftsOnly adds the conditions of f on the full-text index alone.
func (q *searchQuery) ftsOnly(f *mapcommons.SearchFilter) {
	q.cond("search_fts MATCH ?", matchExpr(f.Terms))
	q.score = "bm25(search_fts, " + bm25Weights + ")"
	if v := f.Visibility; !v.All {
		var or, own []string
		if v.Datasets {
			or = append(or, "search_fts.rowid % 2 = 0")
		}
		if v.OwnerID != 0 {
			own = append(own, "v.owner_id = ?")
			q.args = append(q.args, v.OwnerID)
		}
		if v.Shared {
			own = append(own, "v.shared = 1")
		}
		if len(own) > 0 {
			or = append(or, "EXISTS (SELECT 1 FROM search_docs v WHERE v.docid = search_fts.rowid AND ("+strings.Join(own, " OR ")+"))")
		}
		if len(v.GroupIDs) > 0 {
			or = append(or, "EXISTS (SELECT 1 FROM search_grants g WHERE g.docid = search_fts.rowid AND g.group_id IN (SELECT value FROM json_each(?)))")
			q.args = append(q.args, groupsJSON(v.GroupIDs))
		}
		if len(or) == 0 {
			or = []string{"0"}
		}
		q.where = append(q.where, "("+strings.Join(or, " OR ")+")")
	}
	for _, u := range f.Users {
		q.cond("search_fts.rowid IN (SELECT docid FROM search_docs WHERE owner_id = (SELECT id FROM users WHERE login = ?))", u)
	}
	switch f.Model {
	case mapcommons.ModelOverlay:
		q.cond("search_fts.rowid % 2 = 0")
	case mapcommons.ModelMap:
		q.cond("search_fts.rowid % 2 = 1")
	}
}

// bbox adds the box condition. Without words to narrow the rows first, the
// R*Tree finds the candidates; the exact test on the stored extent (which
// may cross the antimeridian, as may the box) decides.
func (q *searchQuery) bbox(b *mapcommons.BBox, useIndex bool) {
	w, s, e, n := b.W, b.S, b.E, b.N
	whole := e-w >= 360 || (w <= -180 && e >= 180)
	if whole {
		w, e = -180, 180
	}
	q.cond("s.minx IS NOT NULL AND s.miny <= ? AND s.maxy >= ?", n, s)
	if w <= e {
		q.cond("((s.minx <= s.maxx AND s.minx <= ? AND s.maxx >= ?) OR (s.minx > s.maxx AND (s.minx <= ? OR s.maxx >= ?)))", e, w, e, w)
	} else {
		q.cond("(s.minx > s.maxx OR s.maxx >= ? OR s.minx <= ?)", w, e)
	}
	if !useIndex {
		return
	}
	if w <= e {
		q.cond("s.docid IN (SELECT id FROM search_rtree WHERE minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?)", e, w, n, s)
	} else {
		q.cond(`s.docid IN (SELECT id FROM search_rtree WHERE maxx >= ? AND miny <= ? AND maxy >= ?
			UNION ALL SELECT id FROM search_rtree WHERE minx <= ? AND miny <= ? AND maxy >= ?)`, w, n, s, e, n, s)
	}
}

// Search implements mapcommons.SearchService.
func (s *SearchService) Search(ctx context.Context, f mapcommons.SearchFilter) (_ []*mapcommons.SearchResult, _ int64, err error) {
	defer derrors.Wrap(&err, "SearchService.Search()")
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	q := buildSearch(&f)
	where := "1"
	if len(q.where) > 0 {
		where = strings.Join(q.where, " AND ")
	}
	// One read transaction: the count and the page see the same snapshot.
	tx, err := s.db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, formatError(err)
	}
	defer tx.Rollback()

	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+q.from+` WHERE `+where, q.args...).Scan(&total); err != nil {
		return nil, 0, searchError(err)
	}
	if total <= f.Offset {
		return []*mapcommons.SearchResult{}, total, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+q.id+` FROM `+q.from+` WHERE `+where+` ORDER BY `+searchdoc.OrderBy(&f, "s.title COLLATE NOCASE", q.score, false, q.id)+
		` LIMIT ? OFFSET ?`, append(q.args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, searchError(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, searchError(err)
	}
	out, err := loadResults(ctx, tx, ids)
	return out, total, err
}

// searchError turns an error of the full-text engine about the query into
// EINVALID (matchExpr quotes everything, so this is a safety net).
func searchError(err error) error {
	if err != nil && strings.Contains(err.Error(), "fts5") {
		return mapcommons.Errorf(mapcommons.EINVALID, "query: cannot be searched")
	}
	return formatError(err)
}

// loadResults reads the results with the given docids, in that order.
func loadResults(ctx context.Context, tx *sql.Tx, ids []int64) ([]*mapcommons.SearchResult, error) {
	out := make([]*mapcommons.SearchResult, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+searchdoc.ResultColumns+`, coalesce(m.permissions, d.permissions, '[]')
		`+searchdoc.ResultFrom+` WHERE s.docid IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	byID := make(map[int64]*mapcommons.SearchResult, len(ids))
	for rows.Next() {
		var row searchdoc.ResultRow
		var created, updated string
		if err := rows.Scan(row.Dest(&created, &updated)...); err != nil {
			return nil, err
		}
		r, err := row.Result()
		if err != nil {
			return nil, err
		}
		r.CreatedAt, r.UpdatedAt = parseTime(created), parseTime(updated)
		byID[row.DocID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, formatError(err)
	}
	return searchdoc.InOrder(out, ids, byID), nil
}

// groupsJSON is a list of group ids as one JSON parameter (json_each reads
// it), so that any number of groups takes one bound variable.
func groupsJSON(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
