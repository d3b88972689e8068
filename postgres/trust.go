package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// LoginTrustService implements mapcommons.LoginTrustService on the store,
// so that every server's login limiter knows where a user logged in from.
// Times are kept to the second, as the embedded store keeps them.
type LoginTrustService struct{ db *DB }

var _ mapcommons.LoginTrustService = (*LoginTrustService)(nil)

// TrustLogin implements mapcommons.LoginTrustService. It also drops the
// user's expired entries and, past MaxTrustedKeys, the oldest.
func (s *LoginTrustService) TrustLogin(ctx context.Context, userID int64, key string, until time.Time) (err error) {
	defer derrors.Wrap(&err, "LoginTrustService.TrustLogin(%d)", userID)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO login_trust (user_id, key, until)
			SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM users WHERE id = $1)
			ON CONFLICT (user_id, key) DO UPDATE SET until = greatest(login_trust.until, excluded.until)`,
			userID, key, time.Unix(until.Unix(), 0)); err != nil {
			return formatError(err)
		}
		_, err := tx.Exec(ctx, `DELETE FROM login_trust WHERE user_id = $1 AND (until <= $2 OR key NOT IN
			(SELECT key FROM login_trust WHERE user_id = $1 ORDER BY until DESC, key COLLATE "C" LIMIT $3))`,
			userID, time.Unix(s.db.Now().Unix(), 0), mapcommons.MaxTrustedKeys)
		return formatError(err)
	})
}

// LoginTrusted implements mapcommons.LoginTrustService.
func (s *LoginTrustService) LoginTrusted(ctx context.Context, userID int64, keys []string, now time.Time) (_ bool, err error) {
	defer derrors.Wrap(&err, "LoginTrustService.LoginTrusted(%d)", userID)
	var ok bool
	err = s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM login_trust
		WHERE user_id = $1 AND key = ANY ($2) AND key <> '' AND until > $3)`, userID, keys, time.Unix(now.Unix(), 0)).Scan(&ok)
	return ok, formatError(err)
}
