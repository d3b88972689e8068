package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/internal/derrors"
	"mapcommons/segment"
)

// FeatureService implements mapcommons.FeatureService on the store.
type FeatureService struct{ db *DB }

// NewFeatureService returns the feature service of db.
func NewFeatureService(db *DB) *FeatureService { return &FeatureService{db: db} }

var _ mapcommons.FeatureService = (*FeatureService)(nil)

// viewOf acquires the view of a dataset's features; release must be
// called.
func (s *FeatureService) viewOf(ctx context.Context, datasetID int64) (*segment.View, func(), error) {
	for try := 0; ; try++ {
		_, name, err := s.db.dataset(ctx, datasetID)
		if err != nil {
			return nil, nil, err
		}
		v, release, err := s.db.segs.acquireView(name)
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND && try < 3 {
			continue // replaced between the two reads: read the row again
		} else if err != nil {
			return nil, nil, datasetNotFound(err, datasetID)
		}
		return v, release, nil
	}
}

// ScanFeatures implements mapcommons.FeatureService.
func (s *FeatureService) ScanFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) (err error) {
	// The errors of fn (and of q.Then's function) are the caller's:
	// they come back as they were returned, not named with the scan.
	var theirs error
	defer derrors.WrapExcept(&err, &theirs, "FeatureService.ScanFeatures(%d)", datasetID)
	q, fn = derrors.ThroughQuery(&theirs, q, fn)
	v, release, err := s.viewOf(ctx, datasetID)
	if err != nil {
		return err
	}
	defer release()
	return v.Scan(ctx, q, fn)
}

// GroupFeatures implements mapcommons.FeatureService.
func (s *FeatureService) GroupFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery) (_ []mapcommons.Group, err error) {
	defer derrors.Wrap(&err, "FeatureService.GroupFeatures(%d)", datasetID)
	v, release, err := s.viewOf(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	defer release()
	return v.Groups(ctx, q)
}

// AddFeatures implements mapcommons.FeatureService: the new features go
// to the dataset's delta (see edit), with the next ids.
func (s *FeatureService) AddFeatures(ctx context.Context, datasetID int64, src mapcommons.FeatureSource) (_ int64, err error) {
	defer derrors.Wrap(&err, "FeatureService.AddFeatures(%d)", datasetID)
	var added int64
	err = s.db.edit(ctx, datasetID, 0, func(v *segment.View) (*change, error) {
		if a, ok := src.(mapcommons.AppendAware); ok {
			a.AppendingTo(int64(v.Len())) // under the dataset's write lock
		}
		return &change{adds: func(add func(*mapcommons.Feature) error) error {
			for {
				nf, err := src.Next()
				if errors.Is(err, mapcommons.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				nf.ID = 0 // the next id, whatever the source says
				if err := add(nf); err != nil {
					return err
				}
				added++
			}
		}}, nil
	})
	return added, err
}

// DeleteFeatures implements mapcommons.FeatureService. The features left
// keep their ids; the ids of those deleted are not given again.
func (s *FeatureService) DeleteFeatures(ctx context.Context, datasetID int64, positions []int64) (err error) {
	defer derrors.Wrap(&err, "FeatureService.DeleteFeatures(%d)", datasetID)
	return s.db.edit(ctx, datasetID, 0, func(v *segment.View) (*change, error) {
		c := &change{deletes: make(map[int64]bool, len(positions))}
		for _, p := range positions {
			if p < 0 || p >= int64(v.Len()) {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "ids: there is no feature %d (the dataset has %d)", p, v.Len())
			}
			c.deletes[v.ID(int(p))] = true
		}
		return c, nil
	})
}

// ApplyEdits implements mapcommons.FeatureService: updated features keep
// their ids and positions (a partial update merged with the feature read
// from the view), deleted ones are gone, added ones get the next
// ids, all in one write of the dataset's delta (see edit).
func (s *FeatureService) ApplyEdits(ctx context.Context, datasetID int64, e *mapcommons.Edits) (_ *mapcommons.EditResult, err error) {
	defer derrors.Wrap(&err, "FeatureService.ApplyEdits(%d)", datasetID)
	res := &mapcommons.EditResult{}
	err = s.db.edit(ctx, datasetID, e.Version, func(v *segment.View) (*change, error) {
		// Partial updates are merged with the features as the lock holds
		// them: two patches of one feature at once both hold.
		e, err := feature.MergePatches(e, len(v.Attributes()), func(id int64) (*mapcommons.Feature, bool, error) {
			p, ok := v.Position(id)
			if !ok {
				return nil, false, nil
			}
			f := &mapcommons.Feature{}
			v.Read(p, f) // its geometry aliases the view, held until the write
			return f, true, nil
		})
		if err != nil {
			return nil, err
		}
		if err := feature.CheckEdits(v.Attributes(), e); err != nil {
			return nil, err
		}
		c := &change{updates: make(map[int64]*mapcommons.Feature, len(e.Updates)), deletes: make(map[int64]bool, len(e.Deletes))}
		for i := range e.Updates {
			if _, ok := v.Position(e.Updates[i].ID); !ok {
				return nil, feature.MissingFeature("updates", i, e.Updates[i].ID)
			}
			c.updates[e.Updates[i].ID] = &e.Updates[i]
		}
		for i, id := range e.Deletes {
			if _, ok := v.Position(id); !ok {
				return nil, feature.MissingFeature("deletes", i, id)
			}
			c.deletes[id] = true
		}
		n := int64(v.Len()-len(c.deletes)) + feature.NumAdds(e)
		if e.MaxFeatures > 0 && n > e.MaxFeatures {
			return nil, feature.TooManyFeatures(e.MaxFeatures)
		}
		res.FeatureCount = n
		if feature.NumAdds(e) == 0 {
			return c, nil // no adds: the delta may stay as it is
		}
		c.adds = func(add func(*mapcommons.Feature) error) error {
			src := feature.AddsOf(v.Attributes(), e)
			for {
				a, err := src.Next() // without an id: the next one
				if errors.Is(err, mapcommons.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				if err := add(a); err != nil {
					return err
				}
				res.AddIDs = append(res.AddIDs, a.ID)
			}
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// swap runs update, which points dataset id at a new segment, and
// rewrites the search entries of the maps that show it, in one
// transaction. ENOTFOUND when update changed no row (the dataset was
// deleted or its segment replaced meanwhile).
func (db *DB) swap(ctx context.Context, id int64, update func(tx *sql.Tx) (sql.Result, error)) error {
	return db.swapThen(ctx, id, update, datasetChanged)
}

// swapThen is swap, with changed rewriting what depends on the row.
func (db *DB) swapThen(ctx context.Context, id int64, update func(tx *sql.Tx) (sql.Result, error), changed func(ctx context.Context, tx execQuerier, id int64) error) error {
	defer db.forget(id)
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	res, err := update(tx)
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return datasetNotFound(formatError(sql.ErrNoRows), id) // deleted meanwhile
	}
	if err := changed(ctx, tx, id); err != nil {
		return err
	}
	return formatError(tx.Commit())
}
