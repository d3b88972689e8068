package postgres

import (
	"bytes"
	"context"
	"errors"
	"mapcommons/feature"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// ApplyEdits implements mapcommons.FeatureService. An edit is made in
// place, in one transaction under the dataset's write lock: the deleted
// rows go (their pos become holes, holes.go), the updated rows are
// updated where they are, keeping their pos and ids, the added rows are
// copied in past the last slot with the next ids, and the dataset's row
// follows (editInPlace). Only an edit that would leave the table more
// than maxHoles holes rewrites it whole, as a new generation
// (editRewrite).
func (s *FeatureService) ApplyEdits(ctx context.Context, datasetID int64, e *mapcommons.Edits) (_ *mapcommons.EditResult, err error) {
	defer derrors.Wrap(&err, "FeatureService.ApplyEdits(%d)", datasetID)
	if r := s.db.tables.row(datasetID); r != nil {
		res, after, err := s.fastEdit(ctx, r, e)
		s.db.tables.keep(datasetID, after)
		switch {
		case err == nil:
			s.db.tables.fast.Add(1)
			return res, nil
		case !goLongWay(err):
			return nil, err
		}
		if errors.Is(err, errRefused) {
			s.db.tables.missed.Add(1)
		}
	}
	var res *mapcommons.EditResult
	var g *generation
	err = s.inPlace(ctx, datasetID, e.AddSource == nil, namedIDs(e),
		func(tx pgx.Tx, old *datasetRow, named map[int64]*namedRow) (bool, error) {
			g = nil
			if err := feature.CheckVersion(e, old.Version); err != nil {
				return true, err
			}
			if len(old.holes)+len(e.Deletes) > maxHoles {
				return false, nil
			}
			var err error
			res, g, err = s.editInPlace(ctx, tx, old, e, named)
			return true, err
		},
		func() (err error) { g = nil; res, err = s.editRewrite(ctx, datasetID, e); return err })
	if err == nil && g != nil {
		s.db.tables.keep(datasetID, g.after)
	}
	return res, err
}

// inPlace runs edit in one transaction under the dataset's write lock,
// with the dataset's row as the lock holds it; when edit says it cannot
// be made in place (the table would keep too many holes), nothing of the
// transaction stays and rewrite runs instead.
//
// The maps that show the dataset, whose search entries follow its
// count and extent, are looked for unlocked with the row: when there are
// none (as for most datasets), the transaction ends with a check of that
// under the maps' lock (mapcommons_no_map_shows, migration 0014) that
// goes with its COMMIT, rather than with a query of them it would wait
// for. A map that came meanwhile fails the check, and the edit runs
// again, looking for them under the lock. An edit that may not run twice
// (adds streamed from its request: once) always looks under the lock.
//
// The rows of the features named (ids: those an edit updates or
// deletes) are read in the same round trip as the dataset's row, from the
// table the dataset had at its last edit on this server (tableGuesses);
// edit gets them (by id) when the row says so too, else nil. A cached table that is gone fails
// the transaction, which runs again without the guess (an edit that may
// not run twice makes none).
func (s *FeatureService) inPlace(ctx context.Context, id int64, again bool, ids []int64,
	edit func(tx pgx.Tx, old *datasetRow, named map[int64]*namedRow) (done bool, err error), rewrite func() error) error {
	peek := again
	var guess *tableGuess
	if len(ids) > 0 && again {
		guess = s.db.tables.get(id)
	}
	for {
		done := false
		err := s.db.tx(ctx, func(tx pgx.Tx) error {
			// Every statement of an edit in place finds its rows by a key
			// (pos, fid, id), whatever the values: planned once, not at
			// every execution (PostgreSQL kept planning most of them
			// again, 0.37 ms of an edit's 1.5).
			if err := later(ctx, tx, nil, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
				return err
			}
			if err := lockFeatures(ctx, tx, id); err != nil {
				return err
			}
			var maps bool
			if peek {
				if err := laterRow(ctx, tx, func(row pgx.Row) error { return row.Scan(&maps) },
					`SELECT EXISTS (SELECT 1 FROM search_map_datasets WHERE dataset_id = $1)`, id); err != nil {
					return err
				}
			}
			var named map[int64]*namedRow
			if guess != nil {
				if err := readNamed(ctx, tx, *guess, ids, &named); err != nil {
					return err
				}
			}
			// The lock keeps its features as they are; the row's lock, its
			// metadata (which the search entry is written from,
			// generation.point). The row stays locked for the whole edit
			// (short: an edit in place writes the rows it names, and
			// summarizes at most ExactSummaryMax rows), so the writes of
			// its metadata, a feed's claim and the summaries' wait for it.
			old, err := findDataset(ctx, tx, id, true)
			if err != nil {
				return err
			}
			if afterEditRead != nil {
				afterEditRead()
			}
			old.noMaps = peek && !maps
			if guess != nil && *guess != (tableGuess{old.table, len(old.Attributes)}) {
				named = nil
			}
			s.db.tables.put(id, tableGuess{old.table, len(old.Attributes)})
			done, err = edit(tx, old, named)
			return err
		})
		var pe *pgconn.PgError
		switch {
		case peek && errors.As(err, &pe) && pe.Code == pgMapCame:
			peek = false
			continue
		case guess != nil && errors.As(err, &pe) && pe.Code == pgUndefinedTable:
			guess = nil
			continue
		}
		if err != nil || done {
			return err
		}
		return rewrite()
	}
}

// tableGuess is the features table a dataset had when an edit last
// locked it, and its count of attribute columns.
type tableGuess struct {
	table string
	attrs int
}

// tableGuesses are the tables of the datasets edits locked, for a bounded
// number of datasets.
type tableGuesses struct {
	mu sync.Mutex
	m  map[int64]tableGuess
	// rows are the datasets' rows as this server's last edit of each left
	// them, for the next edit (editfast.go)
	rows map[int64]*datasetRow
	// fast counts the edits made in one round trip, and missed those
	// sent so that went the long way (for the tests)
	fast, missed atomic.Int64
}

// row is dataset id's row as this server's last edit left it, or nil.
func (g *tableGuesses) row(id int64) *datasetRow {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rows[id]
}

// keep keeps r, the row an edit left (nil: forgets dataset id's).
func (g *tableGuesses) keep(id int64, r *datasetRow) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r == nil {
		delete(g.rows, id)
		return
	}
	g.rows = putBounded(g.rows, id, r, maxCatalogue)
}

// saw forgets dataset id's row when a write of this server committed
// with the row at another version than the one kept (its own change of
// the metadata, a replace, a summary made exact again), so that the next
// edit goes the long way at once rather than after a refused round trip.
// An edit's own write forgets it too, and keeps the row it left after.
func (g *tableGuesses) saw(id, version int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.rows[id]; r != nil && r.Version != version {
		delete(g.rows, id)
	}
}

func (g *tableGuesses) get(id int64) *tableGuess {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.m[id]; ok {
		return &t
	}
	return nil
}

func (g *tableGuesses) put(id int64, t tableGuess) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.m = putBounded(g.m, id, t, maxCatalogue)
}

// namedRow is the row of a feature an edit names: its pos, and the
// feature as it is.
type namedRow struct {
	pos int64
	f   *mapcommons.Feature
}

// readNamed reads the rows of the features ids of table t into
// *named (queued: they come with the transaction's next statement).
func readNamed(ctx context.Context, tx pgx.Tx, t tableGuess, ids []int64, named *map[int64]*namedRow) error {
	sel := attrColumns("fid, pos, geom", t.attrs)
	return laterRows(ctx, tx, func(rows pgx.Rows) error {
		m := make(map[int64]*namedRow, len(ids))
		rr := newRowReader(rows)
		for rows.Next() {
			vals, err := rr.values()
			if err != nil {
				return err
			}
			f := &mapcommons.Feature{ID: vals[0].(int64), Values: featureValues(vals[3:], nil)}
			if g, ok := vals[2].([]byte); ok {
				f.Geometry = bytes.Clone(g) // the row's bytes go with the next row
			}
			m[f.ID] = &namedRow{pos: vals[1].(int64), f: f}
		}
		*named = m
		return nil
	}, `SELECT `+sel+` FROM `+ident(t.table)+` WHERE fid = ANY($1)`, ids)
}

// namedIDs are the ids of the features e updates or deletes.
func namedIDs(e *mapcommons.Edits) []int64 {
	ids := make([]int64, 0, len(e.Updates)+len(e.Deletes))
	for i := range e.Updates {
		ids = append(ids, e.Updates[i].ID)
	}
	return append(ids, e.Deletes...)
}

// afterEditRead, in tests, runs after an edit in place read the
// dataset's row.
var afterEditRead func()

// pgMapCame is the error of mapcommons_no_map_shows.
const pgMapCame = "MCM01"

// preparedEdit is an edit checked against the dataset's rows as the lock
// holds them: its partial updates merged, the pos of each update and of
// each delete.
type preparedEdit struct {
	e       *mapcommons.Edits
	updated []int64 // the pos of each update
	gone    []int64 // the pos of each delete, ascending
}

// prepareEdit merges e's partial updates with their rows, checks every
// feature and id, finds the pos of those named and checks the size the
// dataset would have. named are the rows of the features named, when
// read already (inPlace).
func prepareEdit(ctx context.Context, tx pgx.Tx, old *datasetRow, e *mapcommons.Edits, named map[int64]*namedRow) (*preparedEdit, error) {
	ids := namedIDs(e)
	if named == nil && len(ids) > 0 {
		if err := readNamed(ctx, tx, tableGuess{old.table, len(old.Attributes)}, ids, &named); err != nil {
			return nil, err
		}
		if err := flush(ctx, tx); err != nil {
			return nil, err
		}
	}
	e, err := feature.MergePatches(e, len(old.Attributes), func(id int64) (*mapcommons.Feature, bool, error) {
		r, ok := named[id]
		if !ok {
			return nil, false, nil
		}
		return r.f, true, nil
	})
	if err != nil {
		return nil, err
	}
	if err := feature.CheckEdits(old.Attributes, e); err != nil {
		return nil, err
	}
	posOf := func(id int64) (int64, bool) {
		r, ok := named[id]
		if !ok {
			return 0, false
		}
		return r.pos, true
	}
	pe := &preparedEdit{e: e, updated: make([]int64, len(e.Updates)), gone: make([]int64, len(e.Deletes))}
	for i := range e.Updates {
		pos, ok := posOf(e.Updates[i].ID)
		if !ok {
			return nil, feature.MissingFeature("updates", i, e.Updates[i].ID)
		}
		pe.updated[i] = pos
	}
	for i, id := range e.Deletes {
		pos, ok := posOf(id)
		if !ok {
			return nil, feature.MissingFeature("deletes", i, id)
		}
		pe.gone[i] = pos
	}
	left := old.FeatureCount - int64(len(pe.gone))
	if n := left + feature.NumAdds(e); e.MaxFeatures > 0 && n > e.MaxFeatures {
		return nil, feature.TooManyFeatures(e.MaxFeatures)
	}
	slices.Sort(pe.gone)
	return pe, nil
}

// exactSummaryMax is mapcommons.ExactSummaryMax for an edit in place, as
// on the embedded store: above it, the old summary is extended by the
// features added and updated until the next rewrite. Variable for tests.
var exactSummaryMax int64 = mapcommons.ExactSummaryMax

// editInPlace applies e to the dataset's current table (see ApplyEdits).
// g, which it returns, holds the row as the edit left it (g.after) once
// the transaction's COMMIT was answered.
func (s *FeatureService) editInPlace(ctx context.Context, tx pgx.Tx, old *datasetRow, e *mapcommons.Edits, named map[int64]*namedRow) (*mapcommons.EditResult, *generation, error) {
	pe, err := prepareEdit(ctx, tx, old, e, named)
	if err != nil {
		return nil, nil, err
	}
	e = pe.e
	t := ident(old.table)
	// g appends the adds past the last slot and summarizes what the edit
	// writes (the adds, the updates).
	g := &generation{tx: tx, id: old.ID, attrs: old.Attributes, table: old.table, existing: true,
		holes: mergeHoles(old.holes, pe.gone), gone: pe.gone, n: old.FeatureCount - int64(len(pe.gone)),
		lastID: old.nextID - 1, nextID: old.nextID, row: old,
		sum: mapcommons.NewSummaryBuilder(old.Attributes, false)} // no medians: whole's, or extendedSummary
	if len(pe.gone) > 0 {
		if err := later(ctx, tx, nil, `DELETE FROM `+t+` WHERE pos = ANY($1)`, pe.gone); err != nil {
			return nil, nil, err
		}
	}
	if len(e.Updates) > 0 {
		sql := `UPDATE ` + t + ` SET ` + rowSet(len(old.Attributes)) + ` WHERE pos = $` + strconv.Itoa(6+len(old.Attributes))
		for i := range e.Updates {
			u := &e.Updates[i]
			r, ok, err := feature.CheckFeature(g.sum, i, u)
			if err != nil {
				return nil, nil, err
			}
			args := rowArgs(make([]any, 0, 7+len(u.Values)), u, r, ok)
			if err := later(ctx, tx, nil, sql, append(args, pe.updated[i])...); err != nil {
				return nil, nil, err
			}
		}
	}
	first := g.nextID
	if e.AddSource == nil && len(e.Adds) <= fewRows {
		if err := g.insertFew(ctx, e.Adds); err != nil {
			return nil, nil, err
		}
	} else if err := g.copyFrom(ctx, feature.AddsOf(old.Attributes, e), nil); err != nil {
		return nil, nil, err
	}
	var sum *mapcommons.Summary
	if g.n <= exactSummaryMax {
		whole := &generation{tx: tx, id: old.ID, attrs: old.Attributes, table: old.table,
			sum: mapcommons.NewSummaryBuilder(old.Attributes, false), spool: newMedianSpool(old.Attributes)}
		defer whole.spool.close()
		if err := whole.summarize(ctx); err != nil {
			return nil, nil, err
		}
		if sum, err = whole.sum.Summary(whole.spool.median); err != nil {
			return nil, nil, err
		}
	} else {
		if sum, err = extendedSummary(old, g); err != nil {
			return nil, nil, err
		}
		g.extended = true // made exact again once the dataset is left alone (resummary.go)
	}
	if err := g.point(ctx, sum, old.table, s.db.now()); err != nil {
		return nil, nil, err
	}
	res := &mapcommons.EditResult{FeatureCount: g.n}
	for i := range feature.NumAdds(e) {
		res.AddIDs = append(res.AddIDs, first+i)
	}
	return res, g, nil
}

// extendedSummary is the summary of the dataset whose row was old, as
// the edit that g holds leaves it: old's extended by the features g wrote
// (mapcommons.ExtendSummary), counting g.n.
func extendedSummary(old *datasetRow, g *generation) (*mapcommons.Summary, error) {
	delta, err := g.sum.Summary(nil)
	if err != nil {
		return nil, err
	}
	base := &mapcommons.Summary{Count: old.FeatureCount, Extent: old.Extent, GeometryTypes: old.GeometryTypes,
		GeometryMask: old.GeometryMask, Stats: old.Stats}
	return mapcommons.ExtendSummary(base, delta, g.n), nil
}

// rowSet is the SET list of an UPDATE of a feature's row from the
// arguments rowArgs gives, for nattrs attributes.
func rowSet(nattrs int) string {
	set := "geom = $1, minx = $2, miny = $3, maxx = $4, maxy = $5"
	for i := range nattrs {
		set += ", " + attrColumn(i) + " = $" + strconv.Itoa(6+i)
	}
	return set
}

// editRewrite applies e by a new generation, in one transaction under the
// dataset's write lock: it holds the features left untouched (copied in
// PostgreSQL, renumbered past the deleted ones), the updated ones in their
// places with their ids, then the added ones with the next ids; it is
// swapped in as any rewrite is, and has no holes.
func (s *FeatureService) editRewrite(ctx context.Context, datasetID int64, e *mapcommons.Edits) (*mapcommons.EditResult, error) {
	res := &mapcommons.EditResult{}
	err := s.rewrite(ctx, datasetID, func(old *datasetRow, g *generation) error {
		if err := feature.CheckVersion(e, old.Version); err != nil {
			return err
		}
		pe, err := prepareEdit(ctx, g.tx, old, e, nil)
		if err != nil {
			return err
		}
		e, updated, gone := pe.e, pe.updated, pe.gone
		// The untouched rows, renumbered past the deleted ones.
		cols := strings.Join(g.columns()[1:], ", ")
		if _, err := g.tx.Exec(ctx, `INSERT INTO `+ident(g.table)+` (pos, `+cols+`)
			SELECT t.np, `+cols+` FROM (SELECT row_number() OVER (ORDER BY pos) - 1 AS np, `+cols+`, pos
				FROM `+ident(old.table)+` WHERE pos <> ALL($1)) t WHERE t.pos <> ALL($2)`, gone, updated); err != nil {
			return formatError(err)
		}
		// The updated rows in their places, moved down past the deleted.
		if len(e.Updates) > 0 {
			scratch := mapcommons.NewSummaryBuilder(old.Attributes, false) // checked already: for the boxes
			buf := append([]byte(nil), copyHeader...)
			for i := range e.Updates {
				u := &e.Updates[i]
				r, ok, err := feature.CheckFeature(scratch, i, u)
				if err != nil {
					return err
				}
				before, _ := slices.BinarySearch(gone, updated[i])
				if buf, _, err = encodeRow(buf, old.position(updated[i])-int64(before), u.ID, u, r, ok); err != nil {
					return err
				}
			}
			buf = append(buf, 0xff, 0xff)
			sql := `COPY ` + ident(g.table) + ` (` + strings.Join(g.columns(), ", ") + `) FROM STDIN (FORMAT binary)`
			if err := flush(ctx, g.tx); err != nil {
				return err
			}
			if _, err := g.tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(buf), sql); err != nil {
				return formatError(err)
			}
		}
		if err := g.summarize(ctx); err != nil {
			return err
		}
		first := g.nextID
		if err := g.copyFrom(ctx, feature.AddsOf(old.Attributes, e), nil); err != nil {
			return err
		}
		for i := range feature.NumAdds(e) {
			res.AddIDs = append(res.AddIDs, first+i)
		}
		res.FeatureCount = g.n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
