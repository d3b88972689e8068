package sqlite

import (
	"context"
	"database/sql"
	"time"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// SessionService implements mapcommons.SessionService on the store, so
// that sessions survive a restart (and, on a shared store, are known to
// every server).
type SessionService struct{ db *DB }

// NewSessionService returns the session service of db.
func NewSessionService(db *DB) *SessionService { return &SessionService{db: db} }

var _ mapcommons.SessionService = (*SessionService)(nil)

// CreateSession implements mapcommons.SessionService.
func (s *SessionService) CreateSession(ctx context.Context, sess *mapcommons.Session) (err error) {
	defer derrors.Wrap(&err, "SessionService.CreateSession()")
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = s.db.Now().UTC().Truncate(time.Microsecond)
	}
	// A sign-in on a full disk takes the room kept in reserve (reserve.go).
	var res sql.Result
	err = s.db.withReserve(func() (err error) {
		res, err = s.db.write.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, created_at, expires_at)
			SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?)`,
			sess.TokenHash, sess.UserID, sess.CreatedAt.UTC().Format(timeLayout), sess.ExpiresAt.Unix(), sess.UserID)
		return formatError(err)
	})
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d not found", sess.UserID)
	}
	return nil
}

// FindSessionByToken implements mapcommons.SessionService.
func (s *SessionService) FindSessionByToken(ctx context.Context, tokenHash string) (_ *mapcommons.Session, err error) {
	defer derrors.Wrap(&err, "SessionService.FindSessionByToken()")
	var created string
	var expires int64
	sess := &mapcommons.Session{TokenHash: tokenHash}
	err = s.db.read.QueryRowContext(ctx, `SELECT user_id, created_at, expires_at FROM sessions WHERE token_hash = ?`, tokenHash).
		Scan(&sess.UserID, &created, &expires)
	if err == sql.ErrNoRows {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no such session")
	} else if err != nil {
		return nil, formatError(err)
	}
	sess.CreatedAt, sess.ExpiresAt = parseTime(created), time.Unix(expires, 0).UTC()
	return sess, nil
}

// DeleteSession implements mapcommons.SessionService.
func (s *SessionService) DeleteSession(ctx context.Context, tokenHash string) (err error) {
	defer derrors.Wrap(&err, "SessionService.DeleteSession()")
	res, err := s.db.write.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash)
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such session")
	}
	return nil
}

// DeleteUserSessions implements mapcommons.SessionService.
func (s *SessionService) DeleteUserSessions(ctx context.Context, userID int64, keep string) (_ int, err error) {
	defer derrors.Wrap(&err, "SessionService.DeleteUserSessions(%d)", userID)
	return s.deleted(s.db.write.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?`, userID, keep))
}

// DeleteExpiredSessions implements mapcommons.SessionService.
func (s *SessionService) DeleteExpiredSessions(ctx context.Context, now time.Time) (_ int, err error) {
	defer derrors.Wrap(&err, "SessionService.DeleteExpiredSessions()")
	s.db.reserve.ensure() // the sweep is also when a reserve spent is made again
	return s.deleted(s.db.write.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, now.Unix()))
}

// deleted is the count of rows a DELETE removed.
func (s *SessionService) deleted(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, formatError(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
