package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"mapcommons/feature"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// An edit in one round trip. The long way of an edit in place (inPlace)
// reads the dataset's row under its lock, then writes: two round trips,
// and the row read whole. But a server that made the dataset's last edit
// knows the row as that edit left it (generation.after, kept in
// tableGuesses), and most edits come after an edit. From that row an edit
// of a large dataset (whose summary an edit extends rather than makes
// again) needs nothing more from the database: the slots of the rows it
// adds, their ids, the summary it writes and the search entry are all
// known. So fastEdit sends every statement with the COMMIT, in one round
// trip, each guarded where the row or a feature may not be as expected:
//
//   - the dataset's row is written only if its xmin is still the one
//     that edit left (any write of the row since, on any server, changes
//     it), in the statement that deletes the rows of the deletes and adds
//     their holes (dataset_holes);
//   - each update and the deletes must find their features;
//   - no map may show the dataset (mapcommons_no_map_shows, as the long
//     way checks it when it saw none).
//
// A guard that fails raises MCM02 (mapcommons_expect, migration 0015)
// before the COMMIT: nothing stays, and the edit goes the long way, which
// gives the answer and the errors an edit has always given. So does any
// edit fastEdit does not take (partial updates, streamed adds, small
// datasets, an edit that would leave too many holes).

// pgNotExpected is the error of mapcommons_expect.
const pgNotExpected = "MCM02"

// errNotFast says an edit cannot be made in one round trip from the row
// known; nothing was sent. errRefused says PostgreSQL refused a statement
// of the edit made so (the transaction rolled back).
var (
	errNotFast = errors.New("postgres: not an edit made from the row known")
	errRefused = errors.New("postgres: the edit made from the row known was refused")
)

// fastEdit makes e in one round trip from r, the dataset's row as this
// server's last edit of it left it (see above). errNotFast or errRefused
// says the edit must go the long way; another error is the edit's.
func (s *FeatureService) fastEdit(ctx context.Context, r *datasetRow, e *mapcommons.Edits) (*mapcommons.EditResult, *datasetRow, error) {
	n := r.FeatureCount - int64(len(e.Deletes))
	switch {
	case !r.noMaps, e.AddSource != nil, len(e.Patches) > 0, len(e.Adds) > fewRows,
		n <= exactSummaryMax, len(r.holes)+len(e.Deletes) > maxHoles,
		e.Version > 0 && e.Version != r.Version: // the long way tells the version it finds
		return nil, nil, errNotFast
	}
	if e.MaxFeatures > 0 && n+feature.NumAdds(e) > e.MaxFeatures {
		return nil, nil, errNotFast
	}
	if err := feature.CheckEdits(r.Attributes, e); err != nil {
		return nil, nil, errNotFast // the long way says so, from the row as it is
	}
	var res *mapcommons.EditResult
	var after *datasetRow
	refused, err := s.db.txRefused(ctx, func(tx pgx.Tx) error {
		// As the long way's (inPlace).
		if err := later(ctx, tx, nil, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return err
		}
		if err := lockFeatures(ctx, tx, r.ID); err != nil {
			return err
		}
		t := ident(r.table)
		// The adds take the slots past the last (which the deletes do not
		// move) and the next ids; g summarizes them and the updates.
		g := &generation{tx: tx, id: r.ID, attrs: r.Attributes, table: r.table, existing: true,
			holes: r.holes, n: r.FeatureCount, lastID: r.nextID - 1, nextID: r.nextID,
			sum: mapcommons.NewSummaryBuilder(r.Attributes, false)} // no medians: extendedSummary
		if len(e.Updates) > 0 {
			sql := `WITH u AS (UPDATE ` + t + ` SET ` + rowSet(len(r.Attributes)) + ` WHERE fid = $` + strconv.Itoa(6+len(r.Attributes)) +
				` RETURNING 1) SELECT mapcommons_expect(EXISTS (SELECT 1 FROM u))`
			for i := range e.Updates {
				u := &e.Updates[i]
				rect, ok, err := feature.CheckFeature(g.sum, i, u)
				if err != nil {
					return err
				}
				args := rowArgs(make([]any, 0, 7+len(u.Values)), u, rect, ok)
				if err := later(ctx, tx, nil, sql, append(args, u.ID)...); err != nil {
					return err
				}
			}
		}
		first := g.nextID
		if err := g.insertFew(ctx, e.Adds); err != nil {
			return err
		}
		g.n = n + int64(len(e.Adds))
		sum, err := extendedSummary(r, g)
		if err != nil {
			return err
		}
		// The stats as they were (a delete's, most adds') are not written
		// again: their JSON is neither made nor parsed.
		var statsJSON []byte
		if !maps.Equal(sum.Stats, r.Stats) {
			if statsJSON, err = json.Marshal(sum.Stats); err != nil {
				return err
			}
		}
		var ext [4]any
		if x := sum.Extent; x != nil {
			ext = [4]any{x.MinX, x.MinY, x.MaxX, x.MaxY}
		}
		deletes := e.Deletes
		if deletes == nil {
			deletes = []int64{}
		}
		now := s.db.now()
		// The search entry changes in its count, extent and time alone
		// (the row's xmin says nothing else of the dataset changed since
		// the entry was written with it): an UPDATE of those, heap-only
		// while the extent stays (migration 0018).
		if err := laterRowRead(ctx, tx, func(row pgx.Row) error {
			var version int64
			var xmin string
			var gone []int64
			if err := row.Scan(&version, &xmin, &gone, nil); err != nil {
				return formatError(err)
			}
			noteVersion(tx, r.ID, version)
			g.holes = mergeHoles(r.holes, gone)
			after = afterRow(r, g, sum, version, xmin, true, now)
			return nil
		}, `WITH gone AS (DELETE FROM `+t+` WHERE fid = ANY($1) RETURNING pos),
		hole AS (INSERT INTO dataset_holes (dataset_id, pos) SELECT $12, pos FROM gone),
		up AS (UPDATE datasets SET next_id = $2, feature_count = $3, minx = $4, miny = $5, maxx = $6, maxy = $7,
			geometry_types = $8, geometry_mask = $9, stats = coalesce($10::jsonb, stats), version = version + 1, updated_at = $11,
			summary_extended = true
			WHERE id = $12 AND xmin::text = $13 AND features = $14 AND (SELECT count(*) FROM gone) = $15
			RETURNING version, xmin::text AS x),
		doc AS (`+datasetDocCounts("$12", "$3", "$4", "$5", "$6", "$7", "$11")+` AND EXISTS (SELECT 1 FROM up) RETURNING 1)
		SELECT (SELECT version FROM up), (SELECT x FROM up), (SELECT coalesce(array_agg(pos), '{}') FROM gone),
			mapcommons_expect(EXISTS (SELECT 1 FROM up) AND EXISTS (SELECT 1 FROM doc))`,
			deletes, g.nextID, g.n, ext[0], ext[1], ext[2], ext[3], strings.Join(sum.GeometryTypes, ","),
			sum.GeometryMask, statsJSON, now, r.ID, r.xmin, r.table, len(deletes)); err != nil {
			return err
		}
		if err := lockMapDocs(ctx, tx); err != nil {
			return err
		}
		if err := later(ctx, tx, nil, `SELECT mapcommons_no_map_shows($1)`, r.ID); err != nil {
			return err
		}
		res = &mapcommons.EditResult{FeatureCount: g.n}
		for i := range int64(len(e.Adds)) {
			res.AddIDs = append(res.AddIDs, first+i)
		}
		return nil
	})
	switch {
	case refused:
		return nil, nil, errors.Join(errRefused, err)
	case err != nil:
		return nil, nil, err
	}
	return res, after, nil
}

// goLongWay says whether a failure of fastEdit leaves the edit to be made
// the long way: nothing of it stays.
func goLongWay(err error) bool { return errors.Is(err, errNotFast) || errors.Is(err, errRefused) }

// afterRow is the dataset's row r as the write of g (an edit in place)
// left it, with its summary sum, at version and xmin.
func afterRow(r *datasetRow, g *generation, sum *mapcommons.Summary, version int64, xmin string, bumped bool, now time.Time) *datasetRow {
	ds := copyDataset(r.Dataset)
	sum.Apply(ds)
	if ds.GeometryTypes == nil {
		ds.GeometryTypes = []string{}
	}
	ds.Version = version
	if bumped {
		ds.UpdatedAt = now
	}
	return &datasetRow{Dataset: ds, table: g.table, nextID: g.nextID, holes: slices.Clip(g.holes), xmin: xmin,
		noMaps: r.noMaps}
}
