package sqlite

import (
	"context"

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
	var name string
	if err := s.db.read.QueryRowContext(ctx, `SELECT segment FROM datasets WHERE id = ?`, datasetID).Scan(&name); err != nil {
		return nil, nil, datasetNotFound(formatError(err), datasetID)
	}
	seg, release, err := s.db.segs.acquire(name)
	if err != nil {
		return nil, nil, datasetNotFound(err, datasetID)
	}
	return seg, release, nil
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
