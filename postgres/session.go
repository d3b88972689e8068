package postgres

import (
	"context"
	"time"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// SessionService implements mapcommons.SessionService on the store: every
// server of several knows every session. Expiry times are kept to the
// second, as the embedded store keeps them.
type SessionService struct{ db *DB }

var _ mapcommons.SessionService = (*SessionService)(nil)

// CreateSession implements mapcommons.SessionService.
func (s *SessionService) CreateSession(ctx context.Context, sess *mapcommons.Session) (err error) {
	defer derrors.Wrap(&err, "SessionService.CreateSession()")
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = s.db.now()
	}
	n, err := affected(s.db.pool.Exec(ctx, `INSERT INTO sessions (token_hash, user_id, created_at, expires_at)
		SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM users WHERE id = $2)`,
		sess.TokenHash, sess.UserID, sess.CreatedAt.UTC().Truncate(time.Microsecond), time.Unix(sess.ExpiresAt.Unix(), 0)))
	if err != nil {
		return err
	}
	if n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d not found", sess.UserID)
	}
	return nil
}

// FindSessionByToken implements mapcommons.SessionService.
func (s *SessionService) FindSessionByToken(ctx context.Context, tokenHash string) (_ *mapcommons.Session, err error) {
	defer derrors.Wrap(&err, "SessionService.FindSessionByToken()")
	sess := &mapcommons.Session{TokenHash: tokenHash}
	err = s.db.pool.QueryRow(ctx, `SELECT user_id, created_at, expires_at FROM sessions WHERE token_hash = $1`, tokenHash).
		Scan(&sess.UserID, &sess.CreatedAt, &sess.ExpiresAt)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no such session")
	} else if err != nil {
		return nil, err
	}
	sess.CreatedAt, sess.ExpiresAt = utc(sess.CreatedAt), utc(sess.ExpiresAt)
	return sess, nil
}

// DeleteSession implements mapcommons.SessionService.
func (s *SessionService) DeleteSession(ctx context.Context, tokenHash string) (err error) {
	defer derrors.Wrap(&err, "SessionService.DeleteSession()")
	n, err := affected(s.db.pool.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash))
	if err != nil {
		return err
	}
	if n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such session")
	}
	return nil
}

// DeleteUserSessions implements mapcommons.SessionService.
func (s *SessionService) DeleteUserSessions(ctx context.Context, userID int64, keep string) (_ int, err error) {
	defer derrors.Wrap(&err, "SessionService.DeleteUserSessions(%d)", userID)
	return affected(s.db.pool.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND token_hash <> $2`, userID, keep))
}

// DeleteExpiredSessions implements mapcommons.SessionService.
func (s *SessionService) DeleteExpiredSessions(ctx context.Context, now time.Time) (_ int, err error) {
	defer derrors.Wrap(&err, "SessionService.DeleteExpiredSessions()")
	return affected(s.db.pool.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, time.Unix(now.Unix(), 0)))
}
