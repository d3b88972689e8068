package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"mapcommons"
)

// authenticate reads HTTP Basic credentials. No header, or blank user and
// password (a real client always sends "Basic Og=="), is anonymous; any
// other credentials must be right, or the request is refused with 401.
func (s *Server) authenticate(r *http.Request) (*mapcommons.User, error) {
	if r.Header.Get("Authorization") == "" {
		return nil, nil
	}
	login, password, ok := r.BasicAuth()
	if !ok {
		return nil, mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "only HTTP Basic authorization is supported")
	}
	if login == "" && password == "" {
		return nil, nil
	}
	bad := mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "invalid login or password")
	if len(login) > 100 || len(password) > mapcommons.MaxPasswordLen {
		return nil, bad
	}
	u, err := s.svc.Users.FindUserByLogin(r.Context(), login)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		// Spend the time a real check would, so timing does not tell which logins exist.
		mapcommons.CheckPassword(s.auth.dummyHash, password)
		return nil, bad
	} else if err != nil {
		return nil, err
	}
	if s.auth.ok(u, password) {
		return u, nil
	}
	if !mapcommons.CheckPassword(u.PasswordHash, password) {
		return nil, bad
	}
	s.auth.remember(u, password)
	return u, nil
}

// authCache remembers recently verified credentials so that a client
// sending Basic credentials on every request pays for bcrypt once, not every
// time. It holds keyed MACs of passwords, never passwords, and an entry only
// counts while the user's stored hash is the one it was verified against.
type authCache struct {
	mu        sync.Mutex
	key       []byte
	entries   map[int64]authEntry
	dummyHash string
}

type authEntry struct {
	hash    string // the bcrypt hash the password was checked against
	mac     []byte
	expires time.Time
}

const (
	authTTL        = 5 * time.Minute
	authMaxEntries = 10000
)

func newAuthCache(cost int) *authCache {
	key := make([]byte, 32)
	rand.Read(key)
	dummy, _ := mapcommons.HashPassword("not a password of anyone", cost)
	return &authCache{key: key, entries: map[int64]authEntry{}, dummyHash: dummy}
}

func (c *authCache) mac(password string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(password))
	return m.Sum(nil)
}

func (c *authCache) ok(u *mapcommons.User, password string) bool {
	mac := c.mac(password)
	c.mu.Lock()
	e, found := c.entries[u.ID]
	c.mu.Unlock()
	return found && e.hash == u.PasswordHash && time.Now().Before(e.expires) && hmac.Equal(e.mac, mac)
}

func (c *authCache) remember(u *mapcommons.User, password string) {
	mac := c.mac(password)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= authMaxEntries {
		clear(c.entries)
	}
	c.entries[u.ID] = authEntry{hash: u.PasswordHash, mac: mac, expires: time.Now().Add(authTTL)}
}
