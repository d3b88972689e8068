package sqlite

import (
	"context"
	"time"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// LoginTrustService implements mapcommons.LoginTrustService on the store.
type LoginTrustService struct{ db *DB }

// NewLoginTrustService returns the login trust service of db.
func NewLoginTrustService(db *DB) *LoginTrustService { return &LoginTrustService{db: db} }

var _ mapcommons.LoginTrustService = (*LoginTrustService)(nil)

// TrustLogin implements mapcommons.LoginTrustService. It also drops the
// user's expired entries and, past MaxTrustedKeys, the oldest.
func (s *LoginTrustService) TrustLogin(ctx context.Context, userID int64, key string, until time.Time) (err error) {
	defer derrors.Wrap(&err, "LoginTrustService.TrustLogin(%d)", userID)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO login_trust (user_id, key, until) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?)
		ON CONFLICT (user_id, key) DO UPDATE SET until = max(until, excluded.until)`, userID, key, until.Unix(), userID); err != nil {
		return formatError(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM login_trust WHERE user_id = ? AND (until <= ? OR key NOT IN
		(SELECT key FROM login_trust WHERE user_id = ? ORDER BY until DESC, key LIMIT ?))`,
		userID, s.db.Now().Unix(), userID, mapcommons.MaxTrustedKeys); err != nil {
		return formatError(err)
	}
	return formatError(tx.Commit())
}

// LoginTrusted implements mapcommons.LoginTrustService.
func (s *LoginTrustService) LoginTrusted(ctx context.Context, userID int64, keys []string, now time.Time) (_ bool, err error) {
	defer derrors.Wrap(&err, "LoginTrustService.LoginTrusted(%d)", userID)
	for _, k := range keys {
		if k == "" {
			continue
		}
		var n int
		err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM login_trust WHERE user_id = ? AND key = ? AND until > ?`,
			userID, k, now.Unix()).Scan(&n)
		if err != nil {
			return false, formatError(err)
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}
