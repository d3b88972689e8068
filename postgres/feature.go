package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// FeatureService implements mapcommons.FeatureService on the store.
type FeatureService struct{ db *DB }

var _ mapcommons.FeatureService = (*FeatureService)(nil)

// ScanFeatures implements mapcommons.FeatureService (plan.go says what
// SQL answers and what Go does).
//
// With q.Count, the count comes from the read of the page, in its
// snapshot: in the page's statement (count(*) OVER (), plan.countPage)
// when SQL gives the first page, else from a count run as the read's
// prelude.
func (s *FeatureService) ScanFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) (err error) {
	// The errors of fn (and of q.Then's function) are the caller's:
	// they come back as they were returned, not named with the scan.
	var theirs error
	defer derrors.WrapExcept(&err, &theirs, "FeatureService.ScanFeatures(%d)", datasetID)
	q, fn = derrors.ThroughQuery(&theirs, q, fn)
	if v, release := s.db.mirrorView(ctx, datasetID); v != nil { // mirror.go
		defer release()
		return v.Scan(ctx, q, fn)
	}
	return s.db.read(ctx, datasetID, func(tx rowsQuerier, ds *datasetRow) error {
		p, err := compile(ds, q)
		if err != nil {
			return err
		}
		if q.Count != nil {
			switch {
			case !q.Selective():
				*q.Count = ds.FeatureCount
			case p.canCountPage():
				p.countPage = true
			default:
				cp, err := compile(ds, q.CountQuery())
				if err != nil {
					return err
				}
				groups, err := cp.groups(ctx, preludeQuerier{tx})
				if err != nil {
					return err
				}
				*q.Count = mapcommons.GroupCount(groups)
			}
		}
		if err := p.scan(ctx, tx, fn, q.Then != nil); err != nil || q.Then == nil {
			return err
		}
		// The follow-up, in the same transaction.
		tq, tfn := q.Then()
		if tq == nil {
			return nil
		}
		cp := *tq
		cp.Then, cp.Count = nil, nil
		tp, err := compile(ds, &cp)
		if err != nil {
			return err
		}
		return tp.scan(ctx, tx, tfn, false)
	})
}

// GroupFeatures implements mapcommons.FeatureService.
func (s *FeatureService) GroupFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery) (_ []mapcommons.Group, err error) {
	defer derrors.Wrap(&err, "FeatureService.GroupFeatures(%d)", datasetID)
	if v, release := s.db.mirrorView(ctx, datasetID); v != nil { // mirror.go
		defer release()
		return v.Groups(ctx, q)
	}
	var out []mapcommons.Group
	err = s.db.read(ctx, datasetID, func(tx rowsQuerier, ds *datasetRow) error {
		p, err := compile(ds, q)
		if err != nil {
			return err
		}
		out, err = p.groups(ctx, tx)
		return err
	})
	return out, err
}

// AddFeatures implements mapcommons.FeatureService: the new features are
// appended to the dataset's table in place (COPY), under the dataset's
// write lock, in the transaction that updates its row; readers see the
// features before or after. The old features keep their ids; the new get
// the next ids.
func (s *FeatureService) AddFeatures(ctx context.Context, datasetID int64, src mapcommons.FeatureSource) (_ int64, err error) {
	defer derrors.Wrap(&err, "FeatureService.AddFeatures(%d)", datasetID)
	var added int64
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockFeatures(ctx, tx, datasetID); err != nil {
			return err
		}
		old, err := findDataset(ctx, tx, datasetID, false) // the lock keeps its features as they are
		if err != nil {
			return err
		}
		if a, ok := src.(mapcommons.AppendAware); ok {
			a.AppendingTo(old.FeatureCount) // under the dataset's write lock
		}
		g, err := appendTo(ctx, tx, old)
		if err != nil {
			return err
		}
		if err := g.load(ctx, src, nil); err != nil {
			return err
		}
		added = g.n - old.FeatureCount
		return s.swap(ctx, g, old)
	})
	return added, err
}

// DeleteFeatures implements mapcommons.FeatureService. The features left
// keep their ids; the ids of those deleted are not given again. The rows
// go in place, as an edit's deletes (edits.go), unless that would leave
// more than maxHoles holes: then the table is rewritten without them.
func (s *FeatureService) DeleteFeatures(ctx context.Context, datasetID int64, positions []int64) (err error) {
	defer derrors.Wrap(&err, "FeatureService.DeleteFeatures(%d)", datasetID)
	return s.inPlace(ctx, datasetID, true, nil,
		func(tx pgx.Tx, old *datasetRow, _ map[int64]*namedRow) (bool, error) {
			slots, err := deletedSlots(old, positions)
			if err != nil || len(old.holes)+len(slots) > maxHoles {
				return false, err
			}
			var ids []int64
			rows, err := tx.Query(ctx, `SELECT fid FROM `+ident(old.table)+` WHERE pos = ANY($1)`, slots)
			if err != nil {
				return false, formatError(err)
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return false, formatError(err)
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return false, formatError(err)
			}
			_, _, err = s.editInPlace(ctx, tx, old, &mapcommons.Edits{Deletes: ids}, nil)
			return true, err
		},
		func() error {
			return s.rewrite(ctx, datasetID, func(old *datasetRow, g *generation) error {
				slots, err := deletedSlots(old, positions)
				if err != nil {
					return err
				}
				return g.copyRows(ctx, old.table, slots)
			})
		})
}

// deletedSlots checks the positions of a delete and gives their rows' pos
// (each once).
func deletedSlots(old *datasetRow, positions []int64) ([]int64, error) {
	slots := make([]int64, 0, len(positions))
	for _, p := range positions {
		if p < 0 || p >= old.FeatureCount {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "ids: there is no feature %d (the dataset has %d)", p, old.FeatureCount)
		}
		slots = append(slots, old.slot(p))
	}
	slices.Sort(slots)
	return slices.Compact(slots), nil
}

// rewrite fills a new generation of a dataset's features with fill, from
// the old, and swaps it in, in one transaction under the dataset's write
// lock. The new generation gives ids from the old one's next id on.
func (s *FeatureService) rewrite(ctx context.Context, id int64, fill func(old *datasetRow, g *generation) error) error {
	defer s.db.indexer.changed() // the new table's indexes (a failure made none: the sweep finds so)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockFeatures(ctx, tx, id); err != nil {
			return err
		}
		old, err := findDataset(ctx, tx, id, false) // the lock keeps its features as they are
		if err != nil {
			return err
		}
		g, err := newGeneration(ctx, tx, id, old.Attributes)
		if err != nil {
			return err
		}
		g.nextID = old.nextID
		if err := fill(old, g); err != nil {
			return err
		}
		return s.swap(ctx, g, old)
	})
}

// swap finishes generation g and points dataset old's row at it.
func (s *FeatureService) swap(ctx context.Context, g *generation, old *datasetRow) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sum, err := g.finish(ctx)
	if err != nil {
		return err
	}
	return g.point(ctx, sum, old.table, s.db.now())
}
