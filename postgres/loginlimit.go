package postgres

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// LoginLimitService implements mapcommons.LoginLimitService on the table
// login_limits, which every server of the database shares.
type LoginLimitService struct {
	db *DB
	// lastSweep is when (Unix seconds) this store last removed the
	// buckets full again.
	lastSweep atomic.Int64
}

// limitSweep is how often, at most, a spend also sweeps the buckets that
// are full again (rows that no longer count).
const limitSweep = time.Minute

// LoginLimits implements mapcommons.LoginLimitService.
func (s *LoginLimitService) LoginLimits(ctx context.Context, keys []string) (_ []time.Time, err error) {
	defer derrors.Wrap(&err, "LoginLimitService.LoginLimits()")
	rows, err := s.db.pool.Query(ctx, `SELECT key, full_at FROM login_limits WHERE key = ANY($1)`, keys)
	if err != nil {
		return nil, formatError(err)
	}
	full := map[string]time.Time{}
	var (
		k string
		t time.Time
	)
	if _, err := pgx.ForEachRow(rows, []any{&k, &t}, func() error {
		full[k] = utc(t)
		return nil
	}); err != nil {
		return nil, formatError(err)
	}
	out := make([]time.Time, len(keys))
	for i, k := range keys {
		out[i] = full[k]
	}
	return out, nil
}

// SpendLoginTokens implements mapcommons.LoginLimitService: each spend is
// one upsert that computes the new full time from the row as it is when
// the row is locked, so that spends through any number of servers at once
// all count; the batch goes in one round trip and one transaction.
func (s *LoginLimitService) SpendLoginTokens(ctx context.Context, now time.Time, spends []mapcommons.LoginSpend) (err error) {
	defer derrors.Wrap(&err, "LoginLimitService.SpendLoginTokens()")
	now = now.UTC().Truncate(time.Microsecond)
	b := &pgx.Batch{}
	for _, sp := range spends {
		per := sp.Per.Microseconds()
		b.Queue(`INSERT INTO login_limits AS l (key, full_at) VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond')
			ON CONFLICT (key) DO UPDATE SET full_at = least(greatest(l.full_at, $2::timestamptz) + $3 * interval '1 microsecond',
				$2::timestamptz + $4 * interval '1 microsecond')`,
			sp.Key, now, per, per*int64(sp.Capacity))
	}
	if err := s.db.tx(ctx, func(tx pgx.Tx) error {
		return formatError(tx.SendBatch(ctx, b).Close())
	}); err != nil {
		return err
	}
	// The sweep on its own, after the spends are in, and for what it is
	// worth: in their transaction, two servers' sweeps could deadlock with
	// each other's spends and lose a failure the limit must count.
	if last := s.lastSweep.Load(); now.Unix()-last >= int64(limitSweep/time.Second) && s.lastSweep.CompareAndSwap(last, now.Unix()) {
		s.db.pool.Exec(ctx, `DELETE FROM login_limits WHERE full_at <= $1`, now)
	}
	return nil
}
