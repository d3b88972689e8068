package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// SecondFactorService implements mapcommons.SecondFactorService on the
// store: every server of the database sees the same secrets and the same
// used steps, so a code counts once whichever server takes it.
type SecondFactorService struct{ db *DB }

var _ mapcommons.SecondFactorService = (*SecondFactorService)(nil)

// FindSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) FindSecondFactor(ctx context.Context, userID int64) (_ *mapcommons.SecondFactor, err error) {
	defer derrors.Wrap(&err, "SecondFactorService.FindSecondFactor(%d)", userID)
	f := &mapcommons.SecondFactor{UserID: userID}
	err = s.db.pool.QueryRow(ctx, `SELECT secret, confirmed, last_step, created_at,
		(SELECT count(*) FROM user_recovery_codes WHERE user_id = t.user_id) FROM user_totp t WHERE user_id = $1`, userID).
		Scan(&f.Secret, &f.Confirmed, &f.LastStep, &f.CreatedAt, &f.RecoveryCodes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no second factor")
	} else if err != nil {
		return nil, formatError(err)
	}
	f.CreatedAt = utc(f.CreatedAt)
	return f, nil
}

// StartSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) StartSecondFactor(ctx context.Context, userID int64, secret []byte, now time.Time) (err error) {
	defer derrors.Wrap(&err, "SecondFactorService.StartSecondFactor(%d)", userID)
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO user_totp (user_id, secret, created_at)
		SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM users WHERE id = $1)
		ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, last_step = 0
		WHERE NOT user_totp.confirmed`, userID, secret, time.Unix(now.Unix(), 0))
	if err != nil {
		return formatError(err)
	}
	if tag.RowsAffected() == 0 {
		_, err := s.FindSecondFactor(ctx, userID)
		return storekit.SecondFactorNotStarted(err == nil, userID)
	}
	return nil
}

// ConfirmSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) ConfirmSecondFactor(ctx context.Context, userID int64, secret []byte, step int64, recoveryHashes []string) (err error) {
	defer derrors.Wrap(&err, "SecondFactorService.ConfirmSecondFactor(%d)", userID)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE user_totp SET confirmed = true, last_step = $1 WHERE user_id = $2 AND NOT confirmed AND secret = $3`,
			step, userID, secret)
		if err != nil {
			return formatError(err)
		}
		if tag.RowsAffected() == 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "no second factor being set up")
		}
		return replaceRecoveryCodes(ctx, tx, userID, recoveryHashes)
	})
}

func replaceRecoveryCodes(ctx context.Context, tx pgx.Tx, userID int64, hashes []string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM user_recovery_codes WHERE user_id = $1`, userID); err != nil {
		return formatError(err)
	}
	if len(hashes) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO user_recovery_codes (user_id, hash) SELECT $1, unnest($2::text[])`, userID, hashes)
	return formatError(err)
}

// UseTOTPStep implements mapcommons.SecondFactorService.
func (s *SecondFactorService) UseTOTPStep(ctx context.Context, userID int64, step int64) (_ bool, err error) {
	defer derrors.Wrap(&err, "SecondFactorService.UseTOTPStep(%d)", userID)
	tag, err := s.db.pool.Exec(ctx, `UPDATE user_totp SET last_step = $1 WHERE user_id = $2 AND confirmed AND last_step < $1`, step, userID)
	if err != nil {
		return false, formatError(err)
	}
	return tag.RowsAffected() == 1, nil
}

// UseRecoveryCode implements mapcommons.SecondFactorService.
func (s *SecondFactorService) UseRecoveryCode(ctx context.Context, userID int64, hash string) (_ bool, err error) {
	defer derrors.Wrap(&err, "SecondFactorService.UseRecoveryCode(%d)", userID)
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM user_recovery_codes WHERE user_id = $1 AND hash = $2`, userID, hash)
	if err != nil {
		return false, formatError(err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteSecondFactor implements mapcommons.SecondFactorService.
func (s *SecondFactorService) DeleteSecondFactor(ctx context.Context, userID int64) (err error) {
	defer derrors.Wrap(&err, "SecondFactorService.DeleteSecondFactor(%d)", userID)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM user_totp WHERE user_id = $1`, userID)
		if err != nil {
			return formatError(err)
		}
		if tag.RowsAffected() == 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "no second factor")
		}
		return replaceRecoveryCodes(ctx, tx, userID, nil)
	})
}

// SignInLinkService implements mapcommons.SignInLinkService on the store.
type SignInLinkService struct{ db *DB }

var _ mapcommons.SignInLinkService = (*SignInLinkService)(nil)

// CreateSignInLink implements mapcommons.SignInLinkService.
func (s *SignInLinkService) CreateSignInLink(ctx context.Context, l *mapcommons.SignInLink) (err error) {
	defer derrors.Wrap(&err, "SignInLinkService.CreateSignInLink()")
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO sign_in_links (token_hash, user_id, expires_at)
		SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM users WHERE id = $2)`, l.TokenHash, l.UserID, time.Unix(l.ExpiresAt.Unix(), 0))
	if err != nil {
		return formatError(err)
	}
	if tag.RowsAffected() == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d not found", l.UserID)
	}
	return nil
}

// UseSignInLink implements mapcommons.SignInLinkService.
func (s *SignInLinkService) UseSignInLink(ctx context.Context, tokenHash string, now time.Time) (_ int64, err error) {
	defer derrors.Wrap(&err, "SignInLinkService.UseSignInLink()")
	var id int64
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `DELETE FROM sign_in_links WHERE token_hash = $1 AND expires_at > $2 RETURNING user_id`,
			tokenHash, time.Unix(now.Unix(), 0)).Scan(&id)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return formatError(err)
		}
		_, err = tx.Exec(ctx, `DELETE FROM sign_in_links WHERE expires_at <= $1`, time.Unix(now.Unix(), 0))
		return formatError(err)
	})
	if err != nil {
		return 0, err
	}
	if id == 0 {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "no such sign-in link, or it is over")
	}
	return id, nil
}
