package postgres

// The search entries of datasets and maps (table search_docs, migration
// 0005), computed in Go by the domain (mapcommons.SearchGrants,
// mapcommons.MapSearchDocument) and written in the transaction of the
// change they follow, exactly where the embedded store writes its own
// (sqlite/mapsearch.go): a dataset or map created, changed or deleted,
// and every change to what a map's entry depends on, a dataset's extent,
// count, sharing list or existence, and its owner's administrator flag and
// groups. A map's entry is written with the map's row locked (FOR
// UPDATE), so that two transactions that each change something it
// depends on write it one after the other, the last from what both did.

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"golang.org/x/text/unicode/norm"

	"mapcommons"
	"mapcommons/internal/searchdoc"
)

// Weights of the fields in search_docs.words, and of a match in each for
// relevance (ts_rank_cd's {D, C, B, A}): title 10, tags 4, description 1,
// as the embedded store's bm25 weights.
const (
	weightTitle       = "A"
	weightTags        = "B"
	weightDescription = "C"
	rankWeights       = "{0.1, 0.1, 0.4, 1.0}"
)

// fieldWeights are the weights of the fields a term may be restricted to.
var fieldWeights = map[string]string{
	mapcommons.FieldTitle: weightTitle, mapcommons.FieldTags: weightTags, mapcommons.FieldDescription: weightDescription,
}

// Limits of PostgreSQL's tsvector.
const (
	maxLexemeBytes = 2046    // a longer word is not indexed
	maxPosition    = 16383   // later words take this position
	maxPositions   = 256     // positions kept per word
	maxVectorBytes = 3 << 18 // what the words may take of a tsvector's 1 MB; later new words are not indexed
)

// searchWords splits s into words as the embedded store's FTS5 tokenizer
// (unicode61 with remove_diacritics 2) does: runs of letters, digits and
// private use characters (its categories L*, N* and Co), lowercased, without their diacritics (a Latin letter whose canonical
// decomposition is a base and combining marks becomes the base; a
// combining mark alone is dropped). Both the documents and the queries are
// split here, so that PostgreSQL's own parser and dictionaries never
// decide what a word is.
func searchWords(s string) []string {
	var words []string
	var w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			words = append(words, w.String())
			w.Reset()
		}
	}
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue // a diacritic of the word it is in
		}
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Co, r) {
			flush()
			continue
		}
		for _, b := range baseRunes(r) {
			w.WriteRune(unicode.ToLower(b))
		}
	}
	flush()
	return words
}

// baseRunes is r without its diacritics: for a Latin letter, the runes
// of its canonical decomposition that are not combining marks (SQLite's
// table of diacritics covers the Latin letters only: its Greek and
// Cyrillic letters keep theirs, and so they do here).
func baseRunes(r rune) []rune {
	if r < utf8.RuneSelf || !unicode.Is(unicode.Latin, r) {
		return []rune{r}
	}
	d := norm.NFD.String(string(r))
	out := make([]rune, 0, 2)
	for _, b := range d {
		if !unicode.Is(unicode.Mn, b) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return []rune{r}
	}
	return out
}

// quoteLexeme quotes a word for the text form of a tsvector or tsquery:
// inside single quotes nothing is syntax; a quote is doubled and a
// backslash escaped. (searchWords gives letters and digits only; this is
// the safety net.)
func quoteLexeme(w string) string {
	w = strings.ReplaceAll(w, `\`, `\\`)
	return "'" + strings.ReplaceAll(w, "'", "''") + "'"
}

// searchVector is the text form of the tsvector of an entry: the words of
// its title (weight A), tags (B) and description (C), each field's
// positions after the last one's with a gap, so that a phrase never runs
// from one field into the next.
func searchVector(title, description, tags string) string {
	type lexeme struct {
		positions []string
	}
	lexemes := map[string]*lexeme{}
	var order []string
	pos, size := 0, 0
	for _, f := range []struct{ text, weight string }{
		{title, weightTitle}, {tags, weightTags}, {description, weightDescription},
	} {
		for _, w := range searchWords(f.text) {
			pos++
			if len(w) > maxLexemeBytes {
				continue
			}
			l := lexemes[w]
			if l == nil {
				// A word takes its bytes, an entry (4) and a count of
				// positions (2), aligned (at most 3).
				if size+len(w)+9 > maxVectorBytes {
					continue
				}
				size += len(w) + 9
				l = &lexeme{}
				lexemes[w] = l
				order = append(order, w)
			}
			if len(l.positions) < maxPositions {
				l.positions = append(l.positions, strconv.Itoa(min(pos, maxPosition))+f.weight)
				size += 2
			}
		}
		pos++ // the gap
	}
	var b strings.Builder
	for i, w := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(w))
		b.WriteByte(':')
		b.WriteString(strings.Join(slices.Compact(lexemes[w].positions), ","))
	}
	return b.String()
}

// Queries of refreshMapDocs: the maps whose entries a change touches.
const (
	mapsShowingDataset = `SELECT map_id FROM search_map_datasets WHERE dataset_id = $1`
	mapsOwnedBy        = `SELECT id FROM maps WHERE owner_id = $1`
)

// datasetChanged rewrites what depends on dataset id after a change in
// tx: its own search entry, and those of the maps that show it.
func datasetChanged(ctx context.Context, tx pgx.Tx, id int64) error {
	if err := writeDatasetDoc(ctx, tx, id); err != nil {
		return err
	}
	return refreshMapDocs(ctx, tx, mapsShowingDataset, id)
}

// upsertDoc writes a row of search_docs, new or not.
const upsertDoc = `INSERT INTO search_docs (docid, kind, obj_id, owner_id, title, description, tags, words, shared,
	groups, feature_count, minx, miny, maxx, maxy, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8::tsvector, $9, $10, $11, $12, $13, $14, $15, $16, $17)
	ON CONFLICT (docid) DO UPDATE SET owner_id = EXCLUDED.owner_id, title = EXCLUDED.title,
	description = EXCLUDED.description, tags = EXCLUDED.tags, words = EXCLUDED.words, shared = EXCLUDED.shared,
	groups = EXCLUDED.groups, feature_count = EXCLUDED.feature_count, minx = EXCLUDED.minx, miny = EXCLUDED.miny,
	maxx = EXCLUDED.maxx, maxy = EXCLUDED.maxy, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at`

// datasetDocCounts is an UPDATE of the search entry of dataset id (SQL,
// e.g. a parameter) in the columns that follow its features alone: the
// count, the extent and the time of the change, from the SQL given for
// each (editfast.go writes them so, in the statement of the dataset's
// row; a heap-only update while the extent stays, migration 0018). What
// else the entry holds, upsertDatasetDoc writes.
func datasetDocCounts(id, count, minx, miny, maxx, maxy, updated string) string {
	return `UPDATE search_docs SET feature_count = ` + count + `, minx = ` + minx + `, miny = ` + miny + `, maxx = ` + maxx +
		`, maxy = ` + maxy + `, updated_at = ` + updated + ` WHERE docid = 2 * ` + id
}

// writeDatasetDoc rewrites the search entry of dataset id from its row as
// it is in tx (none when it is gone), with the row locked (the writes
// that call it hold the lock already; fillSearchDocs does not).
func writeDatasetDoc(ctx context.Context, tx pgx.Tx, id int64) error {
	r, err := findDataset(ctx, tx, id, true)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		_, err := tx.Exec(ctx, `DELETE FROM search_docs WHERE docid = $1`, searchdoc.DatasetDocID(id))
		return formatError(err)
	} else if err != nil {
		return err
	}
	return upsertDatasetDoc(ctx, tx, r.Dataset)
}

// upsertDatasetDoc writes the search entry of dataset ds, queued with the
// transaction's next statements (pipeTx).
func upsertDatasetDoc(ctx context.Context, tx pgx.Tx, ds *mapcommons.Dataset) error {
	shared, groups := mapcommons.SearchGrants(ds.Permissions)
	var owner *int64
	if ds.OwnerID != 0 {
		owner = &ds.OwnerID
	}
	var ext [4]*float64
	if e := ds.Extent; e != nil {
		ext = [4]*float64{&e.MinX, &e.MinY, &e.MaxX, &e.MaxY}
	}
	m := &ds.Metadata
	return later(ctx, tx, nil, upsertDoc, searchdoc.DatasetDocID(ds.ID), searchdoc.KindDataset, ds.ID, owner, m.Title, m.Description, m.Tags,
		searchVector(m.Title, m.Description, m.Tags), shared, nonNil(groups), ds.FeatureCount,
		ext[0], ext[1], ext[2], ext[3], ds.CreatedAt, ds.UpdatedAt)
}

// nonNil is ids, or an empty list for none (the column is NOT NULL).
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// mapDocsLock is the key of the advisory lock under which a transaction
// writes maps' search entries ("mapdocs" in ASCII). A map's entry reads
// the datasets its layers show; a dataset's change rewrites the entries of
// the maps that show it. Without one order between them, a layer added
// while its dataset is made private could keep the dataset's count and
// extent in the map's entry: the map's writer read the dataset before
// the change committed, the dataset's writer looked for its maps before
// the layer was there. Under the lock one waits for the other, and reads
// what the other committed.
//
// The rule that keeps it free of deadlocks: a transaction takes the lock
// before it locks any row of maps (a map's write, a group's or a user's
// deletion, which change maps' rows, and before looking for the maps that
// show a dataset), and holding it takes no lock on a dataset's row.
const mapDocsLock int64 = 0x6d6170646f6373

// lockMapDocs takes mapDocsLock until the end of tx (again, if tx has it).
func lockMapDocs(ctx context.Context, tx pgx.Tx) error {
	return later(ctx, tx, nil, `SELECT pg_advisory_xact_lock($1)`, mapDocsLock)
}

// refreshMapDocs rewrites the search entries of the maps the query (with
// args) selects by id.
func refreshMapDocs(ctx context.Context, tx pgx.Tx, query string, args ...any) error {
	if err := lockMapDocs(ctx, tx); err != nil {
		return err
	}
	ids, err := selectIDs(ctx, tx, query, args...)
	if err != nil {
		return err
	}
	return writeMapDocs(ctx, tx, ids)
}

// selectIDs returns the ids the query (with args) selects (of maps, or of
// datasets).
func selectIDs(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, formatError(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, formatError(err)
}

// writeMapDocs rewrites the search entries of the maps with these ids, in
// the order of their ids (so that two transactions lock them in the same
// order).
func writeMapDocs(ctx context.Context, tx pgx.Tx, ids []int64) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if err := writeMapDoc(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// writeMapDoc rewrites the search entry of map id and the list of the
// datasets its layers name, from the rows as they are in tx, with the
// map's row locked.
func writeMapDoc(ctx context.Context, tx pgx.Tx, id int64) error {
	if err := lockMapDocs(ctx, tx); err != nil {
		return err
	}
	// The map's row first: whoever else writes its entry waits here.
	m, err := findMap(ctx, tx, id, true)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		_, err := tx.Exec(ctx, `DELETE FROM search_docs WHERE docid = $1`, searchdoc.MapDocID(id))
		return formatError(err) // its search_map_datasets rows went with it
	} else if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM search_map_datasets WHERE map_id = $1`, id); err != nil {
		return formatError(err)
	}
	doc, err := searchdoc.ReadMapEntry(m, func(uid int64) (*mapcommons.User, error) {
		u, err := scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, uid))
		if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return nil, nil
		}
		return u, err
	}, func(dsID int64) (*mapcommons.Dataset, error) {
		ds, err := layerDataset(ctx, tx, dsID)
		if err != nil {
			return nil, err
		}
		_, err = tx.Exec(ctx, `INSERT INTO search_map_datasets (dataset_id, map_id) VALUES ($1, $2)`, dsID, id)
		return ds, formatError(err)
	})
	if err != nil {
		return err
	}
	e := doc.Extent
	_, err = tx.Exec(ctx, upsertDoc, doc.DocID, searchdoc.KindMap, id, doc.Owner, m.Title, doc.Description, doc.Tags,
		searchVector(m.Title, doc.Description, doc.Tags), doc.Shared, nonNil(doc.Groups), doc.FeatureCount,
		e.W, e.S, e.E, e.N, m.CreatedAt, m.UpdatedAt)
	return formatError(err)
}

// layerDataset reads what a map's entry needs of dataset id: nil when
// there is none.
func layerDataset(ctx context.Context, tx pgx.Tx, id int64) (*mapcommons.Dataset, error) {
	ds := &mapcommons.Dataset{ID: id}
	var minx, miny, maxx, maxy *float64
	var perms []byte
	err := tx.QueryRow(ctx, `SELECT coalesce(owner_id, 0), permissions, feature_count, minx, miny, maxx, maxy
		FROM datasets WHERE id = $1`, id).Scan(&ds.OwnerID, &perms, &ds.FeatureCount, &minx, &miny, &maxx, &maxy)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return ds, searchdoc.LayerDataset(ds, perms, minx, miny, maxx, maxy)
}

// fillSearchDocs writes the search entries of the datasets and maps that
// have none (those that existed before migration 0005, or that a server
// without search wrote since) and removes those whose object is gone. It
// runs at every Open, after the migrations.
func fillSearchDocs(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `DELETE FROM search_docs s WHERE (s.kind = 0 AND NOT EXISTS (SELECT 1 FROM datasets WHERE id = s.obj_id))
		OR (s.kind = 1 AND NOT EXISTS (SELECT 1 FROM maps WHERE id = s.obj_id))`); err != nil {
		return formatError(err)
	}
	datasets, err := selectIDs(ctx, tx, `SELECT id FROM datasets d WHERE NOT EXISTS (SELECT 1 FROM search_docs WHERE docid = 2 * d.id) ORDER BY id`)
	if err != nil {
		return err
	}
	for _, id := range datasets {
		if err := datasetChanged(ctx, tx, id); err != nil {
			return err
		}
	}
	maps, err := selectIDs(ctx, tx, `SELECT id FROM maps m WHERE NOT EXISTS (SELECT 1 FROM search_docs WHERE docid = 2 * m.id + 1)`)
	if err != nil {
		return err
	}
	return writeMapDocs(ctx, tx, maps)
}
