package postgres

// Search over datasets and maps: a tsvector for the words (GIN), a box
// for extents (GiST), over the entries of search_docs (searchdocs.go).
// The words of documents and queries are split in Go as the embedded
// store's tokenizer splits them, so both stores find the same objects;
// relevance is ts_rank_cd with the fields weighted as the embedded
// store's bm25 weighs them, which orders the strongest matches alike but
// not every tie and near tie the same (SearchService.RelevanceApprox).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/searchdoc"
)

// SearchService implements mapcommons.SearchService on the store.
type SearchService struct{ db *DB }

var _ mapcommons.SearchService = (*SearchService)(nil)

// RelevanceApprox reports that the order of a relevance sort with words
// is ts_rank_cd's, not SQLite's bm25: the same field weights (title 10,
// tags 4, description 1), a different formula (cover density, no
// document-length or rarity terms), so that results of close relevance
// may come in another order. Every other order, the set of results and
// the totals are the embedded store's. storetest compares relevance
// orders as sets for a store that says so.
func (s *SearchService) RelevanceApprox() bool { return true }

// tsquery builds the text form of the tsquery of terms: every term a
// phrase of its words (searchWords, quoted by quoteLexeme: user text is
// never tsquery syntax), restricted to a field's weight when the term is,
// its last word a prefix when the term is; all ANDed. It reports false
// when no term has a word (the terms then match everything, as they
// restrict nothing).
func tsquery(terms []mapcommons.SearchTerm) (string, bool) {
	var parts []string
	for _, t := range terms {
		words := searchWords(t.Text)
		if len(words) == 0 {
			continue
		}
		weight := fieldWeights[t.Field]
		for i, w := range words {
			flags := weight
			if t.Prefix && i == len(words)-1 {
				flags = "*" + flags
			}
			words[i] = quoteLexeme(w)
			if flags != "" {
				words[i] += ":" + flags
			}
		}
		parts = append(parts, "("+strings.Join(words, " <-> ")+")")
	}
	return strings.Join(parts, " & "), len(parts) > 0
}

// searchQuery is the SQL of one search, built from a filter.
type searchQuery struct {
	where []string
	args  []any
	score string // the relevance expression ("" without words)
}

// arg adds a parameter and returns its placeholder.
func (q *searchQuery) arg(v any) string {
	q.args = append(q.args, v)
	return fmt.Sprintf("$%d", len(q.args))
}

// buildSearch builds the SQL of f: user text goes only into parameters.
func buildSearch(f *mapcommons.SearchFilter) *searchQuery {
	q := &searchQuery{}
	if tq, ok := tsquery(f.Terms); ok {
		p := q.arg(tq)
		q.where = append(q.where, "s.words @@ "+p+"::tsquery")
		q.score = "ts_rank_cd('" + rankWeights + "'::float4[], s.words, " + p + "::tsquery)"
	}
	for _, t := range f.Terms {
		if t.Field != mapcommons.FieldTags {
			continue
		}
		// The words matched; now the tag itself: one of the tags, whole,
		// ignoring ASCII case as the embedded store does.
		if t.Prefix {
			q.where = append(q.where, `strpos(', ' || lower(s.tags COLLATE "C"), ', ' || lower(`+q.arg(t.Text)+` COLLATE "C")) > 0`)
		} else {
			q.where = append(q.where, `strpos(', ' || lower(s.tags COLLATE "C") || ', ', ', ' || lower(`+q.arg(t.Text)+` COLLATE "C") || ', ') > 0`)
		}
	}
	if v := f.Visibility; !v.All {
		var or []string
		if v.OwnerID != 0 {
			or = append(or, "s.owner_id = "+q.arg(v.OwnerID))
		}
		if v.Datasets {
			or = append(or, "s.kind = 0")
		}
		if v.Shared {
			or = append(or, "s.shared")
		}
		if len(v.GroupIDs) > 0 {
			or = append(or, "s.groups && "+q.arg(v.GroupIDs)+"::bigint[]")
		}
		if len(or) == 0 {
			or = []string{"false"}
		}
		q.where = append(q.where, "("+strings.Join(or, " OR ")+")")
	}
	for _, u := range f.Users {
		q.where = append(q.where, "s.owner_id = (SELECT id FROM users WHERE "+loginKey+" = lower("+q.arg(u)+` COLLATE "C"))`)
	}
	switch f.Model {
	case mapcommons.ModelOverlay:
		q.where = append(q.where, "s.kind = 0")
	case mapcommons.ModelMap:
		q.where = append(q.where, "s.kind = 1")
	}
	if b := f.BBox; b != nil {
		q.bbox(b)
	}
	return q
}

// bbox adds the box condition: the index's boxes (bounds, where an extent
// that crosses the antimeridian spans every longitude) find the
// candidates, the exact test on the stored extent (which may cross the
// antimeridian, as may the box) decides.
func (q *searchQuery) bbox(b *mapcommons.BBox) {
	w, s, e, n := b.W, b.S, b.E, b.N
	if e-w >= 360 || (w <= -180 && e >= 180) {
		w, e = -180, 180
	}
	pw, ps, pe, pn := q.arg(w), q.arg(s), q.arg(e), q.arg(n)
	box := func(w, e string) string {
		return "s.bounds && box(point(" + w + "::float8, " + ps + "::float8), point(" + e + "::float8, " + pn + "::float8))"
	}
	q.where = append(q.where, "s.minx IS NOT NULL AND s.miny <= "+pn+" AND s.maxy >= "+ps)
	if w <= e {
		q.where = append(q.where, box(pw, pe),
			"((s.minx <= s.maxx AND s.minx <= "+pe+" AND s.maxx >= "+pw+") OR (s.minx > s.maxx AND (s.minx <= "+pe+" OR s.maxx >= "+pw+")))")
	} else {
		q.where = append(q.where, "("+box(pw, "180")+" OR "+box("-180", pe)+")",
			"(s.minx > s.maxx OR s.maxx >= "+pw+" OR s.minx <= "+pe+")")
	}
}

// Search implements mapcommons.SearchService.
func (s *SearchService) Search(ctx context.Context, f mapcommons.SearchFilter) (_ []*mapcommons.SearchResult, _ int64, err error) {
	defer derrors.Wrap(&err, "SearchService.Search()")
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	for _, t := range f.Terms {
		for _, w := range searchWords(t.Text) {
			if len(w) > maxLexemeBytes {
				// No entry has the word (searchVector skips it, and a
				// tsquery cannot hold it): nothing matches.
				return []*mapcommons.SearchResult{}, 0, nil
			}
		}
	}
	q := buildSearch(&f)
	where := "true"
	if len(q.where) > 0 {
		where = strings.Join(q.where, " AND ")
	}
	// One snapshot: the count and the page agree.
	tx, err := s.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, formatError(err)
	}
	defer tx.Rollback(ctx)
	var total int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM search_docs s WHERE `+where, q.args...).Scan(&total); err != nil {
		return nil, 0, formatError(err)
	}
	if total <= f.Offset {
		return []*mapcommons.SearchResult{}, total, nil
	}
	n := len(q.args)
	rows, err := tx.Query(ctx, `SELECT s.docid FROM search_docs s WHERE `+where+` ORDER BY `+searchdoc.OrderBy(&f, `lower(s.title COLLATE "C")`, q.score, true, "s.docid")+
		fmt.Sprintf(` LIMIT $%d OFFSET $%d`, n+1, n+2), append(q.args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, formatError(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, 0, formatError(err)
	}
	out, err := loadResults(ctx, tx, ids)
	if err != nil {
		return nil, 0, err
	}
	return out, total, formatError(tx.Commit(ctx))
}

// loadResults reads the results with the given docids, in that order.
func loadResults(ctx context.Context, tx pgx.Tx, ids []int64) ([]*mapcommons.SearchResult, error) {
	out := make([]*mapcommons.SearchResult, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, `SELECT `+searchdoc.ResultColumns+`, coalesce(m.permissions, d.permissions, '[]'::jsonb)
		`+searchdoc.ResultFrom+` WHERE s.docid = ANY($1)`, ids)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	byID := make(map[int64]*mapcommons.SearchResult, len(ids))
	for rows.Next() {
		var row searchdoc.ResultRow
		var created, updated time.Time
		if err := rows.Scan(row.Dest(&created, &updated)...); err != nil {
			return nil, formatError(err)
		}
		r, err := row.Result()
		if err != nil {
			return nil, err
		}
		r.CreatedAt, r.UpdatedAt = utc(created), utc(updated)
		byID[row.DocID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, formatError(err)
	}
	return searchdoc.InOrder(out, ids, byID), nil
}
