package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// FeedClaimService implements mapcommons.FeedClaimService.
type FeedClaimService struct{ db *DB }

// NewFeedClaimService returns the feed claims of db.
func NewFeedClaimService(db *DB) *FeedClaimService { return &FeedClaimService{db: db} }

// ClaimDueFeed implements mapcommons.FeedClaimService: one UPDATE, which
// SQLite's single writer makes atomic. The claim is not a change of the
// dataset: its version and the catalogue cache stay.
func (s *FeedClaimService) ClaimDueFeed(ctx context.Context, maxAge, lease time.Duration) (_ mapcommons.FeedClaim, err error) {
	defer derrors.Wrap(&err, "FeedClaimService.ClaimDueFeed()")
	now := s.db.Now().UTC().Truncate(time.Microsecond) // the precision of timeLayout
	c := mapcommons.FeedClaim{At: now, Until: now.Add(lease)}
	err = s.db.write.QueryRowContext(ctx, `UPDATE datasets SET claimed_until = ? WHERE id = (
		SELECT id FROM datasets WHERE data_type = ? AND fetched_at != '' AND fetched_at <= ? AND claimed_until <= ?
		ORDER BY fetched_at, id LIMIT 1) RETURNING id`,
		c.Until.Format(timeLayout), mapcommons.DataTypeFeed, now.Add(-maxAge).Format(timeLayout), now.Format(timeLayout)).Scan(&c.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return mapcommons.FeedClaim{}, nil
	}
	if err != nil {
		return mapcommons.FeedClaim{}, formatError(err)
	}
	return c, nil
}

// ReleaseFeed implements mapcommons.FeedClaimService: the claim's end of
// lease, written in full, tells it from a later claim of the feed.
func (s *FeedClaimService) ReleaseFeed(ctx context.Context, c mapcommons.FeedClaim, due time.Time) (err error) {
	defer derrors.Wrap(&err, "FeedClaimService.ReleaseFeed(%d)", c.ID)
	_, err = s.db.write.ExecContext(ctx, `UPDATE datasets SET claimed_until = ? WHERE id = ? AND claimed_until = ?`,
		due.UTC().Format(timeLayout), c.ID, c.Until.UTC().Format(timeLayout))
	return formatError(err)
}
