package mapcommons

// Two-factor sign-in (issue 23): a user may add a second factor, a TOTP
// secret (RFC 6238) that an authenticator app holds; a login of such a
// user then needs a code from the app (or a one-use recovery code) with
// the password. The HOTP/TOTP algorithm is a few lines on crypto/hmac, so
// it is here rather than a dependency: the server needs the time step a
// code matched (to refuse it a second time), which the libraries' Validate
// does not say. It is tested against RFC 6238's appendix B.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"strings"
	"time"
)

// TOTP parameters: those every authenticator app uses (SHA-1, 6 digits,
// 30-second steps), a 160-bit secret (RFC 4226's recommendation), and a
// code accepted one step either side of now, for clocks a little off.
const (
	TOTPPeriod     = 30 * time.Second
	TOTPDigits     = 6
	TOTPSecretLen  = 20
	TOTPSkew       = 1
	RecoveryCodes  = 10
	recoveryLength = 10 // bytes of randomness in a recovery code
)

// HOTP is the RFC 4226 one-time password of secret at counter, digits
// long (zero-padded).
func HOTP(secret []byte, counter uint64, digits int) string {
	m := hmac.New(sha1.New, secret)
	binary.Write(m, binary.BigEndian, counter)
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	s := make([]byte, digits)
	v %= mod
	for i := digits - 1; i >= 0; i-- {
		s[i] = byte('0' + v%10)
		v /= 10
	}
	return string(s)
}

// TOTPStep is the RFC 6238 time step of t.
func TOTPStep(t time.Time) int64 { return t.Unix() / int64(TOTPPeriod/time.Second) }

// TOTPCode is the code of secret at step.
func TOTPCode(secret []byte, step int64) string { return HOTP(secret, uint64(step), TOTPDigits) }

// MatchTOTP returns the step, within TOTPSkew of now's and after last (a
// step already used is refused: a code counts once), whose code is code;
// ok false when none is. The codes are compared in constant time.
func MatchTOTP(secret []byte, code string, now time.Time, last int64) (step int64, ok bool) {
	code = strings.ReplaceAll(code, " ", "")
	if len(code) != TOTPDigits {
		return 0, false
	}
	cur := TOTPStep(now)
	for s := cur - TOTPSkew; s <= cur+TOTPSkew; s++ {
		if subtle.ConstantTimeCompare([]byte(TOTPCode(secret, s)), []byte(code)) == 1 && s > last && !ok {
			step, ok = s, true
		}
	}
	return step, ok
}

// NewTOTPSecret returns a random secret.
func NewTOTPSecret() []byte {
	b := make([]byte, TOTPSecretLen)
	rand.Read(b)
	return b
}

// TOTPSecretText is secret as authenticator apps take it typed in:
// base32 without padding.
func TOTPSecretText(secret []byte) string {
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
}

// TOTPURI is the otpauth:// URI of secret for login at issuer (the
// Key Uri Format that authenticator apps read from a QR code).
func TOTPURI(issuer, login string, secret []byte) string {
	v := url.Values{}
	v.Set("secret", TOTPSecretText(secret))
	v.Set("issuer", issuer)
	v.Set("algorithm", "SHA1")
	v.Set("digits", "6")
	v.Set("period", "30")
	return "otpauth://totp/" + url.PathEscape(issuer+":"+login) + "?" + v.Encode()
}

// NewRecoveryCodes returns RecoveryCodes random codes to show the user
// once, and their hashes (HashRecoveryCode) to keep.
func NewRecoveryCodes() (codes, hashes []string) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	for range RecoveryCodes {
		b := make([]byte, recoveryLength)
		rand.Read(b)
		s := strings.ToLower(enc.EncodeToString(b)) // 16 characters
		codes = append(codes, s[:4]+"-"+s[4:8]+"-"+s[8:12]+"-"+s[12:])
		hashes = append(hashes, HashRecoveryCode(s))
	}
	return codes, hashes
}

// HashRecoveryCode is the kept form of a recovery code: the hex SHA-256
// of it without dashes or spaces, in lower case. A code is 80 random
// bits, so a fast hash is enough (no dictionary to try).
func HashRecoveryCode(code string) string {
	code = strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(code))
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// IsRecoveryCode reports whether code has a recovery code's form (not a
// TOTP code's).
func IsRecoveryCode(code string) bool {
	return len(strings.NewReplacer("-", "", " ", "").Replace(code)) == 16
}

// SecondFactor is a user's TOTP secret.
type SecondFactor struct {
	UserID int64
	Secret []byte
	// Confirmed: a first code from the app was right. A pending secret
	// (shown once, not yet confirmed) does not take part in logins.
	Confirmed bool
	// LastStep is the last time step whose code was used: a code is not
	// taken twice.
	LastStep int64
	// RecoveryCodes is how many recovery codes are left.
	RecoveryCodes int
	CreatedAt     time.Time
}

// LoginFinder is a UserService that reads the user of a login and the
// user's second factor (pending or confirmed, as FindSecondFactor gives
// it; nil when none) in one read: what a login checks, in one round trip
// of a store. ENOTFOUND when there is no such user.
type LoginFinder interface {
	FindUserAndSecondFactor(ctx context.Context, login string) (*User, *SecondFactor, error)
}

// SecondFactorService keeps the users' second factors and recovery codes.
// A user's go with them when the user is deleted.
type SecondFactorService interface {
	// FindSecondFactor returns the user's second factor, pending or
	// confirmed; ENOTFOUND when none.
	FindSecondFactor(ctx context.Context, userID int64) (*SecondFactor, error)
	// StartSecondFactor keeps secret as the user's pending second factor,
	// in place of a pending one; ECONFLICT when one is confirmed,
	// ENOTFOUND when there is no such user.
	StartSecondFactor(ctx context.Context, userID int64, secret []byte, now time.Time) error
	// ConfirmSecondFactor confirms the pending secret, marks step used,
	// and keeps recovery codes by their hashes (in place of any); ENOTFOUND
	// when there is no pending secret (or it is not secret any more: it
	// changed since it was read).
	ConfirmSecondFactor(ctx context.Context, userID int64, secret []byte, step int64, recoveryHashes []string) error
	// UseTOTPStep marks step used if it is later than the last used step
	// of the user's confirmed secret, and reports whether it was (false:
	// a replay, or no confirmed secret). Concurrent uses of a step: one wins.
	UseTOTPStep(ctx context.Context, userID int64, step int64) (bool, error)
	// UseRecoveryCode removes the user's recovery code of that hash and
	// reports whether there was one.
	UseRecoveryCode(ctx context.Context, userID int64, hash string) (bool, error)
	// DeleteSecondFactor removes the user's secret and recovery codes;
	// ENOTFOUND when there was no secret.
	DeleteSecondFactor(ctx context.Context, userID int64) error
}

// SignInLink is a one-time sign-in link that an administrator issues to a
// user locked out: its token's hash (the token is only in the link).
type SignInLink struct {
	TokenHash string
	UserID    int64
	ExpiresAt time.Time
}

// SignInLinkService keeps one-time sign-in links.
type SignInLinkService interface {
	// CreateSignInLink keeps l; ENOTFOUND when there is no such user.
	CreateSignInLink(ctx context.Context, l *SignInLink) error
	// UseSignInLink removes the link of tokenHash and returns its user's
	// id if it was live at now; ENOTFOUND when there is none or it is
	// over (a link is used once: of concurrent uses, one wins). Links over
	// at now are removed too.
	UseSignInLink(ctx context.Context, tokenHash string, now time.Time) (int64, error)
}

// SignInLinkTTL is how long a one-time sign-in link holds.
const SignInLinkTTL = 24 * time.Hour

// SignInLinkPath is the path of a sign-in link of token, under the
// server's root: the sign-in page, with the token in the fragment (which
// a browser does not send: it is in no request log).
func SignInLinkPath(token string) string { return "/app/signin#link=" + token }

// IssueSignInLink keeps a new one-time sign-in link for userID, live
// from now for SignInLinkTTL, and returns its token (only its hash is
// kept).
func IssueSignInLink(ctx context.Context, links SignInLinkService, userID int64, now time.Time) (token string, expires time.Time, err error) {
	token, hash := NewSessionToken()
	expires = now.Add(SignInLinkTTL)
	if err := links.CreateSignInLink(ctx, &SignInLink{TokenHash: hash, UserID: userID, ExpiresAt: expires}); err != nil {
		return "", time.Time{}, err
	}
	return token, expires, nil
}
