package sqlite

import (
	"context"
	"database/sql"
	"time"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// SecondFactorService implements mapcommons.SecondFactorService on the store.
type SecondFactorService struct{ db *DB }

// NewSecondFactorService returns the second factor service of db.
func NewSecondFactorService(db *DB) *SecondFactorService { return &SecondFactorService{db: db} }

var _ mapcommons.SecondFactorService = (*SecondFactorService)(nil)

// FindSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) FindSecondFactor(ctx context.Context, userID int64) (_ *mapcommons.SecondFactor, err error) {
	defer derrors.Wrap(&err, "SecondFactorService.FindSecondFactor(%d)", userID)
	f := &mapcommons.SecondFactor{UserID: userID}
	var created int64
	err = s.db.read.QueryRowContext(ctx, `SELECT secret, confirmed, last_step, created_at,
		(SELECT count(*) FROM user_recovery_codes WHERE user_id = t.user_id) FROM user_totp t WHERE user_id = ?`, userID).
		Scan(&f.Secret, &f.Confirmed, &f.LastStep, &created, &f.RecoveryCodes)
	if err == sql.ErrNoRows {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no second factor")
	} else if err != nil {
		return nil, formatError(err)
	}
	f.CreatedAt = time.Unix(created, 0).UTC()
	return f, nil
}

// StartSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) StartSecondFactor(ctx context.Context, userID int64, secret []byte, now time.Time) (err error) {
	defer derrors.Wrap(&err, "SecondFactorService.StartSecondFactor(%d)", userID)
	res, err := s.db.write.ExecContext(ctx, `INSERT INTO user_totp (user_id, secret, created_at)
		SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?)
		ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = 0
		WHERE NOT user_totp.confirmed`, userID, secret, now.Unix(), userID)
	if err != nil {
		return formatError(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err := s.FindSecondFactor(ctx, userID)
		return storekit.SecondFactorNotStarted(err == nil, userID)
	}
	return nil
}

// ConfirmSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) ConfirmSecondFactor(ctx context.Context, userID int64, secret []byte, step int64, recoveryHashes []string) (err error) {
	defer derrors.Wrap(&err, "SecondFactorService.ConfirmSecondFactor(%d)", userID)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE user_totp SET confirmed = 1, last_step = ? WHERE user_id = ? AND NOT confirmed AND secret = ?`,
		step, userID, secret)
	if err != nil {
		return formatError(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no second factor being set up")
	}
	if err := replaceRecoveryCodes(ctx, tx, userID, recoveryHashes); err != nil {
		return err
	}
	return formatError(tx.Commit())
}

func replaceRecoveryCodes(ctx context.Context, tx *sql.Tx, userID int64, hashes []string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ?`, userID); err != nil {
		return formatError(err)
	}
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_recovery_codes (user_id, hash) VALUES (?, ?)`, userID, h); err != nil {
			return formatError(err)
		}
	}
	return nil
}

// UseTOTPStep implements mapcommons.SecondFactorService.
func (s *SecondFactorService) UseTOTPStep(ctx context.Context, userID int64, step int64) (_ bool, err error) {
	defer derrors.Wrap(&err, "SecondFactorService.UseTOTPStep(%d)", userID)
	res, err := s.db.write.ExecContext(ctx, `UPDATE user_totp SET last_step = ? WHERE user_id = ? AND confirmed AND last_step < ?`,
		step, userID, step)
	if err != nil {
		return false, formatError(err)
	}
	n, err := res.RowsAffected()
	return n == 1, formatError(err)
}

// UseRecoveryCode implements mapcommons.SecondFactorService.
func (s *SecondFactorService) UseRecoveryCode(ctx context.Context, userID int64, hash string) (_ bool, err error) {
	defer derrors.Wrap(&err, "SecondFactorService.UseRecoveryCode(%d)", userID)
	res, err := s.db.write.ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ? AND hash = ?`, userID, hash)
	if err != nil {
		return false, formatError(err)
	}
	n, err := res.RowsAffected()
	return n == 1, formatError(err)
}

// DeleteSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) DeleteSecondFactor(ctx context.Context, userID int64) (err error) {
	defer derrors.Wrap(&err, "SecondFactorService.DeleteSecondFactor(%d)", userID)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM user_totp WHERE user_id = ?`, userID)
	if err != nil {
		return formatError(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no second factor")
	}
	if err := replaceRecoveryCodes(ctx, tx, userID, nil); err != nil {
		return err
	}
	return formatError(tx.Commit())
}

// SignInLinkService implements mapcommons.SignInLinkService on the store.
type SignInLinkService struct{ db *DB }

// NewSignInLinkService returns the sign-in link service of db.
func NewSignInLinkService(db *DB) *SignInLinkService { return &SignInLinkService{db: db} }

var _ mapcommons.SignInLinkService = (*SignInLinkService)(nil)

// CreateSignInLink implements mapcommons.SignInLinkService.
func (s *SignInLinkService) CreateSignInLink(ctx context.Context, l *mapcommons.SignInLink) (err error) {
	defer derrors.Wrap(&err, "SignInLinkService.CreateSignInLink()")
	res, err := s.db.write.ExecContext(ctx, `INSERT INTO sign_in_links (token_hash, user_id, expires_at)
		SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?)`, l.TokenHash, l.UserID, l.ExpiresAt.Unix(), l.UserID)
	if err != nil {
		return formatError(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d not found", l.UserID)
	}
	return nil
}

// UseSignInLink implements mapcommons.SignInLinkService.
func (s *SignInLinkService) UseSignInLink(ctx context.Context, tokenHash string, now time.Time) (_ int64, err error) {
	defer derrors.Wrap(&err, "SignInLinkService.UseSignInLink()")
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, formatError(err)
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, `DELETE FROM sign_in_links WHERE token_hash = ? AND expires_at > ? RETURNING user_id`,
		tokenHash, now.Unix()).Scan(&id)
	if err != nil && err != sql.ErrNoRows {
		return 0, formatError(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_links WHERE expires_at <= ?`, now.Unix()); err != nil {
		return 0, formatError(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, formatError(err)
	}
	if id == 0 {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "no such sign-in link, or it is over")
	}
	return id, nil
}
