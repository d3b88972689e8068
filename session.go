package mapcommons

// Sessions: how a browser stays signed in. Clients send HTTP Basic
// credentials with every request; a browser signs in once with a form and
// then carries a session cookie. The cookie holds a random token; the store
// keeps only the token's SHA-256, so that a copy of the database opens no
// session. The CSRF token a session's state-changing requests must carry is
// derived from the token (an HMAC keyed by it): a server needs no secret of
// its own for it, any server of several computes the same, and the store,
// holding only the hash, cannot compute it.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Session is a signed-in browser.
type Session struct {
	// TokenHash is the hex SHA-256 of the session's token (HashSessionToken):
	// the store's key, never the token itself.
	TokenHash string
	UserID    int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Expired reports whether the session is over at now.
func (s *Session) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// NewSessionToken returns a new session token (32 random bytes from
// crypto/rand, base64url without padding: 43 characters) and its hash.
func NewSessionToken() (token, hash string) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (Go 1.24: it crashes the program instead)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashSessionToken(token)
}

// HashSessionToken is the hash by which the store knows a token.
func HashSessionToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// ValidSessionToken reports whether s has the form of a token
// (NewSessionToken's), so that anything else is refused unread.
func ValidSessionToken(s string) bool {
	if len(s) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// SessionCSRFToken is the CSRF token of the session whose token is token:
// base64url of HMAC-SHA256 keyed by the token. It shows nothing of the
// token.
func SessionCSRFToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("mapcommons csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckSessionCSRF reports, in constant time, whether given is the CSRF
// token of the session whose token is token.
func CheckSessionCSRF(token, given string) bool {
	return hmac.Equal([]byte(SessionCSRFToken(token)), []byte(given))
}

// SessionService stores sessions. Expiry is the caller's to check
// (Session.Expired): the store returns what it holds until it is deleted.
type SessionService interface {
	// CreateSession stores s (TokenHash, UserID, ExpiresAt; CreatedAt is
	// set when zero). ENOTFOUND when there is no such user; ECONFLICT when
	// the hash is taken.
	CreateSession(ctx context.Context, s *Session) error
	// FindSessionByToken returns the session whose token hashes to
	// tokenHash (HashSessionToken); ENOTFOUND when none.
	FindSessionByToken(ctx context.Context, tokenHash string) (*Session, error)
	// DeleteSession ends the session with that token hash; ENOTFOUND when
	// there is none.
	DeleteSession(ctx context.Context, tokenHash string) error
	// DeleteUserSessions ends every session of the user but the one whose
	// token hash is keep ("" keeps none) and returns how many ended. A
	// user's sessions also end when the user is deleted (DeleteUser).
	DeleteUserSessions(ctx context.Context, userID int64, keep string) (int, error)
	// DeleteExpiredSessions removes the sessions over at now and returns
	// how many.
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
}
