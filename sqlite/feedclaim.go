package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"mapcommons"
)

// FeedClaimService implements mapcommons.FeedClaimService.
type FeedClaimService struct{ db *DB }

// NewFeedClaimService returns the feed claims of db.
func NewFeedClaimService(db *DB) *FeedClaimService { return &FeedClaimService{db: db} }

// ClaimDueFeed implements mapcommons.FeedClaimService: one UPDATE, which
// SQLite's single writer makes atomic. The claim is not a change of the
// dataset: its version and the catalogue cache stay.
func (s *FeedClaimService) ClaimDueFeed(ctx context.Context, maxAge, lease time.Duration) (int64, error) {
	now := s.db.Now().UTC()
	var id int64
	err := s.db.write.QueryRowContext(ctx, `UPDATE datasets SET claimed_until = ? WHERE id = (
		SELECT id FROM datasets WHERE data_type = ? AND fetched_at != '' AND fetched_at <= ? AND claimed_until <= ?
		ORDER BY fetched_at, id LIMIT 1) RETURNING id`,
		now.Add(lease).Format(timeLayout), mapcommons.DataTypeFeed, now.Add(-maxAge).Format(timeLayout), now.Format(timeLayout)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, formatError(err)
}
