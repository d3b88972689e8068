package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"mapcommons"
	"mapcommons/segment"
)

// FeatureService implements mapcommons.FeatureService on the store.
type FeatureService struct{ db *DB }

// NewFeatureService returns the feature service of db.
func NewFeatureService(db *DB) *FeatureService { return &FeatureService{db: db} }

var _ mapcommons.FeatureService = (*FeatureService)(nil)

// segmentOf acquires the segment of a dataset; release must be called.
func (s *FeatureService) segmentOf(ctx context.Context, datasetID int64) (*segment.Segment, func(), error) {
	for try := 0; ; try++ {
		_, name, err := s.db.dataset(ctx, datasetID)
		if err != nil {
			return nil, nil, err
		}
		seg, release, err := s.db.segs.acquire(name)
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND && try < 3 {
			continue // replaced between the two reads: read the row again
		} else if err != nil {
			return nil, nil, datasetNotFound(err, datasetID)
		}
		return seg, release, nil
	}
}

// ScanFeatures implements mapcommons.FeatureService.
func (s *FeatureService) ScanFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	seg, release, err := s.segmentOf(ctx, datasetID)
	if err != nil {
		return err
	}
	defer release()
	return seg.Query(ctx, q, fn)
}

// GroupFeatures implements mapcommons.FeatureService.
func (s *FeatureService) GroupFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery) ([]mapcommons.Group, error) {
	seg, release, err := s.segmentOf(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	defer release()
	return seg.Groups(ctx, q)
}

// AddFeatures implements mapcommons.FeatureService: a new segment holds the
// old features and the new ones, and replaces the old in one update of the
// dataset's row. The old features keep their ids; the new get the next ids.
func (s *FeatureService) AddFeatures(ctx context.Context, datasetID int64, src mapcommons.FeatureSource) (int64, error) {
	var added int64
	err := s.rewrite(ctx, datasetID, func(old *segment.Segment, w *segment.Writer) error {
		if a, ok := src.(mapcommons.AppendAware); ok {
			a.AppendingTo(int64(old.Len())) // under the dataset's write lock
		}
		f := &mapcommons.Feature{}
		for pos := 0; pos < old.Len(); pos++ {
			old.Read(pos, f)
			if err := w.Add(f); err != nil {
				return err
			}
		}
		for {
			nf, err := src.Next()
			if errors.Is(err, mapcommons.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			nf.ID = 0 // the next id, whatever the source says
			if err := w.Add(nf); err != nil {
				return err
			}
			added++
		}
	})
	return added, err
}

// DeleteFeatures implements mapcommons.FeatureService. The features left
// keep their ids; the ids of those deleted are not given again.
func (s *FeatureService) DeleteFeatures(ctx context.Context, datasetID int64, positions []int64) error {
	return s.rewrite(ctx, datasetID, func(old *segment.Segment, w *segment.Writer) error {
		gone := make(map[int64]bool, len(positions))
		for _, p := range positions {
			if p < 0 || p >= int64(old.Len()) {
				return mapcommons.Errorf(mapcommons.EINVALID, "ids: there is no feature %d (the dataset has %d)", p, old.Len())
			}
			gone[p] = true
		}
		f := &mapcommons.Feature{}
		for pos := 0; pos < old.Len(); pos++ {
			if !gone[int64(pos)] {
				old.Read(pos, f)
				if err := w.Add(f); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// ApplyEdits implements mapcommons.FeatureService: a new segment holds
// the old features, updated ones in their place and deleted ones left
// out, then the added ones with the next ids, and replaces the old one as
// any write does.
func (s *FeatureService) ApplyEdits(ctx context.Context, datasetID int64, e *mapcommons.Edits) (*mapcommons.EditResult, error) {
	res := &mapcommons.EditResult{}
	err := s.rewrite(ctx, datasetID, func(old *segment.Segment, w *segment.Writer) error {
		if err := segment.CheckEdits(old.Attributes(), e); err != nil {
			return err
		}
		updated := make(map[int]*mapcommons.Feature, len(e.Updates))
		for i := range e.Updates {
			pos, ok := old.Position(e.Updates[i].ID)
			if !ok {
				return segment.MissingFeature("updates", i, e.Updates[i].ID)
			}
			updated[pos] = &e.Updates[i]
		}
		gone := make(map[int]bool, len(e.Deletes))
		for i, id := range e.Deletes {
			pos, ok := old.Position(id)
			if !ok {
				return segment.MissingFeature("deletes", i, id)
			}
			gone[pos] = true
		}
		if n := int64(old.Len()-len(gone)) + int64(len(e.Adds)); e.MaxFeatures > 0 && n > e.MaxFeatures {
			return segment.TooManyFeatures(e.MaxFeatures)
		}
		f := &mapcommons.Feature{}
		for pos := 0; pos < old.Len(); pos++ {
			if gone[pos] {
				continue
			}
			if u := updated[pos]; u != nil {
				if err := w.Add(&mapcommons.Feature{ID: u.ID, Values: u.Values, Geometry: u.Geometry}); err != nil {
					return err
				}
				continue
			}
			old.Read(pos, f)
			if err := w.Add(f); err != nil {
				return err
			}
		}
		for i := range e.Adds {
			a := mapcommons.Feature{Values: e.Adds[i].Values, Geometry: e.Adds[i].Geometry} // the next id
			if err := w.Add(&a); err != nil {
				return err
			}
			res.AddIDs = append(res.AddIDs, w.LastID())
		}
		res.FeatureCount = int64(old.Len()-len(gone)) + int64(len(e.Adds))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// rewrite replaces a dataset's segment by the one fill writes from the
// old, and the row's summary with the new segment's, atomically. The new
// segment gives ids from the old one's next id on, never an old id again.
func (s *FeatureService) rewrite(ctx context.Context, id int64, fill func(old *segment.Segment, w *segment.Writer) error) error {
	unlock := s.db.lockFeatures(id)
	defer unlock()
	ds, oldName, err := findDatasetRow(ctx, s.db.write, id)
	if err != nil {
		return err
	}
	old, release, err := s.db.segs.acquire(oldName)
	if err != nil {
		return datasetNotFound(err, id)
	}
	defer release()
	w, err := segment.NewWriter(s.db.segs.dir, ds.Attributes)
	if err != nil {
		return err
	}
	w.SetNextID(old.NextID())
	if err := fill(old, w); err != nil {
		w.Abort()
		return err
	}
	if err := ctx.Err(); err != nil {
		w.Abort()
		return err
	}
	name := newSegmentName()
	sum, err := w.Finish(filepath.Join(s.db.segs.dir, name))
	if err != nil {
		return err
	}
	sum.Apply(ds)
	statsJSON, err := json.Marshal(ds.Stats)
	if err != nil {
		s.db.segs.retire(name)
		return err
	}
	var ext [4]any
	if e := ds.Extent; e != nil {
		ext = [4]any{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	if err := s.db.swap(ctx, id, func(tx *sql.Tx) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE datasets SET feature_count = ?, minx = ?, miny = ?, maxx = ?, maxy = ?,
		geometry_types = ?, geometry_mask = ?, stats = ?, segment = ?, updated_at = ?, version = version + 1 WHERE id = ? AND segment = ?`,
			ds.FeatureCount, ext[0], ext[1], ext[2], ext[3], strings.Join(ds.GeometryTypes, ","), ds.GeometryMask,
			string(statsJSON), name, s.db.now(), id, oldName)
	}); err != nil {
		s.db.segs.retire(name)
		return err
	}
	s.db.segs.retire(oldName)
	return nil
}

// swap runs update, which points dataset id at a new segment, and
// rewrites the search entries of the maps that show it, in one
// transaction. ENOTFOUND when update changed no row (the dataset was
// deleted or its segment replaced meanwhile).
func (db *DB) swap(ctx context.Context, id int64, update func(tx *sql.Tx) (sql.Result, error)) error {
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
	if err := datasetChanged(ctx, tx, id); err != nil {
		return err
	}
	return formatError(tx.Commit())
}
