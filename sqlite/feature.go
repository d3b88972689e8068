package sqlite

import (
	"context"

	"mapcommons"
)

// FeatureService implements mapcommons.FeatureService on the store.
type FeatureService struct{ db *DB }

// NewFeatureService returns the feature service of db.
func NewFeatureService(db *DB) *FeatureService { return &FeatureService{db: db} }

var _ mapcommons.FeatureService = (*FeatureService)(nil)

// ScanFeatures implements mapcommons.FeatureService.
func (s *FeatureService) ScanFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	var name string
	if err := s.db.read.QueryRowContext(ctx, `SELECT segment FROM datasets WHERE id = ?`, datasetID).Scan(&name); err != nil {
		return datasetNotFound(formatError(err), datasetID)
	}
	seg, release, err := s.db.segs.acquire(name)
	if err != nil {
		return datasetNotFound(err, datasetID)
	}
	defer release()
	end := int64(seg.Len())
	if q.Limit >= 0 && q.Offset+q.Limit < end {
		end = q.Offset + q.Limit
	}
	f := &mapcommons.Feature{}
	for pos := max(q.Offset, 0); pos < end; pos++ {
		if pos%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		seg.Read(int(pos), f)
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}
