package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// FeedClaimService implements mapcommons.FeedClaimService.
type FeedClaimService struct{ db *DB }

// ClaimDueFeed implements mapcommons.FeedClaimService. The due feed is
// locked FOR UPDATE SKIP LOCKED: servers claiming at the same moment take
// different feeds instead of waiting for each other, and the claim is
// written before the lock goes. The claim is not a change of the dataset:
// its version stays.
func (s *FeedClaimService) ClaimDueFeed(ctx context.Context, maxAge, lease time.Duration) (_ mapcommons.FeedClaim, err error) {
	defer derrors.Wrap(&err, "FeedClaimService.ClaimDueFeed()")
	now := s.db.now()
	c := mapcommons.FeedClaim{At: now}
	err = s.db.pool.QueryRow(ctx, `UPDATE datasets SET claimed_until = $1 WHERE id = (
		SELECT id FROM datasets WHERE data_type = $2 AND fetched_at <= $3 AND (claimed_until IS NULL OR claimed_until <= $4)
		ORDER BY fetched_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, claimed_until`,
		now.Add(lease), mapcommons.DataTypeFeed, now.Add(-maxAge), now).Scan(&c.ID, &c.Until)
	if errors.Is(err, pgx.ErrNoRows) {
		return mapcommons.FeedClaim{}, nil
	}
	if err != nil {
		return mapcommons.FeedClaim{}, formatError(err)
	}
	return c, nil
}

// ReleaseFeed implements mapcommons.FeedClaimService: the end of lease
// the claim read back from the table tells it from a later claim.
func (s *FeedClaimService) ReleaseFeed(ctx context.Context, c mapcommons.FeedClaim, due time.Time) (err error) {
	defer derrors.Wrap(&err, "FeedClaimService.ReleaseFeed(%d)", c.ID)
	_, err = s.db.pool.Exec(ctx, `UPDATE datasets SET claimed_until = $1 WHERE id = $2 AND claimed_until = $3`,
		due.UTC().Truncate(time.Microsecond), c.ID, c.Until)
	return formatError(err)
}
