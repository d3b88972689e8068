package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net"
	"net/http"
	"net/netip"
	"strings"
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
	addr := clientAddr(r)
	if wait, ok := s.limiter.allow(login, addr); !ok {
		return nil, &retryAfterError{after: wait, err: mapcommons.Errorf(mapcommons.ETOOMANY,
			"too many failed logins for this login or from this address: try again in %d seconds", retrySeconds(wait))}
	}
	bad := mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "invalid login or password")
	if len(login) > 100 || len(password) > mapcommons.MaxPasswordLen {
		s.limiter.fail(login, addr)
		return nil, bad
	}
	u, err := s.svc.Users.FindUserByLogin(r.Context(), login)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		// Spend the time a real check would, so timing does not tell which logins exist.
		mapcommons.CheckPassword(s.auth.dummyHash, password)
		s.limiter.fail(login, addr)
		return nil, bad
	} else if err != nil {
		return nil, err
	}
	if !s.auth.ok(u, password) {
		if !mapcommons.CheckPassword(u.PasswordHash, password) {
			s.limiter.fail(login, addr)
			return nil, bad
		}
		s.auth.remember(u, password)
	}
	s.limiter.succeed(login, addr)
	return u, nil
}

// hasCredentials reports whether r carries credentials other than the
// blank ones that count as anonymous.
func hasCredentials(r *http.Request) bool {
	if r.Header.Get("Authorization") == "" {
		return false
	}
	login, password, ok := r.BasicAuth()
	return !ok || login != "" || password != ""
}

// clientAddr is the address failed logins are counted against: the peer's
// IP address, an IPv6 address by its /64 (one subscriber's block). Behind a
// reverse proxy every client has the proxy's address.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// Limits of failed logins. Each login and each client address has a token
// bucket of failures that refills continuously: a login may fail
// loginFailures times a minute, an address addrFailures times. When a
// bucket is empty, every login attempt it covers (right or wrong: the
// answer must not tell) is refused with 429 and Retry-After until a token
// comes back (6 seconds for a login, 2 for an address). Successful logins cost
// nothing. The address (or /64) a login last succeeded from is trusted for
// that login for trustTTL: the per-login limit does not apply to it, so
// someone guessing a user's password elsewhere does not lock the user out;
// the per-address limit still does.
const (
	loginFailures = 10
	addrFailures  = 30
	trustTTL      = 24 * time.Hour
	// limiterEntries bounds each table of the limiter; beyond it, entries
	// that no longer matter (full buckets, expired trust) are dropped.
	limiterEntries = 100000
)

// authLimiter counts failed logins per login and per client address.
type authLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	logins  map[string]*bucket
	addrs   map[string]*bucket
	trusted map[string]time.Time // login + "\x00" + addr → until when
}

// bucket is a token bucket: tokens at the time at, refilling at perMinute.
type bucket struct {
	tokens float64
	at     time.Time
}

func newAuthLimiter(now func() time.Time) *authLimiter {
	return &authLimiter{now: now, logins: map[string]*bucket{}, addrs: map[string]*bucket{}, trusted: map[string]time.Time{}}
}

// level returns the tokens of the bucket at key (full when absent) at now.
func level(m map[string]*bucket, key string, capacity float64, now time.Time) float64 {
	b, ok := m[key]
	if !ok {
		return capacity
	}
	return min(capacity, b.tokens+now.Sub(b.at).Minutes()*capacity)
}

// wait is how long until the bucket at key holds a whole token.
func wait(m map[string]*bucket, key string, capacity float64, now time.Time) time.Duration {
	t := level(m, key, capacity, now)
	if t >= 1 {
		return 0
	}
	return time.Duration((1 - t) / capacity * float64(time.Minute))
}

// loginKey is the key of a login's bucket: case-insensitive (as logins
// are), and bounded (a login longer than any real one is cut).
func loginKey(login string) string {
	if len(login) > 100 {
		login = login[:100]
	}
	return strings.ToLower(login)
}

func trustKey(login, addr string) string { return loginKey(login) + "\x00" + addr }

// allow reports whether a password may be checked for login from addr, and
// if not, how long to wait.
func (l *authLimiter) allow(login, addr string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := wait(l.addrs, addr, addrFailures, now)
	if until, ok := l.trusted[trustKey(login, addr)]; !ok || !now.Before(until) {
		w = max(w, wait(l.logins, loginKey(login), loginFailures, now))
	}
	return w, w == 0
}

// fail takes a token from the login's and the address's buckets.
func (l *authLimiter) fail(login, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, t := range []struct {
		m        map[string]*bucket
		key      string
		capacity float64
	}{{l.logins, loginKey(login), loginFailures}, {l.addrs, addr, addrFailures}} {
		if len(t.m) >= limiterEntries {
			prune(t.m, t.capacity, now)
		}
		t.m[t.key] = &bucket{tokens: max(0, level(t.m, t.key, t.capacity, now)-1), at: now}
	}
}

// succeed trusts addr for login.
func (l *authLimiter) succeed(login, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.trusted) >= limiterEntries {
		for k, until := range l.trusted {
			if !now.Before(until) {
				delete(l.trusted, k)
			}
		}
		if len(l.trusted) >= limiterEntries {
			clear(l.trusted)
		}
	}
	l.trusted[trustKey(login, addr)] = now.Add(trustTTL)
}

// prune drops the buckets that have filled up again (they count as absent);
// if that is not enough, all of them.
func prune(m map[string]*bucket, capacity float64, now time.Time) {
	for k := range m {
		if level(m, k, capacity, now) >= capacity {
			delete(m, k)
		}
	}
	if len(m) >= limiterEntries {
		clear(m)
	}
}

// retryAfterError is an error whose answer says when to try again.
type retryAfterError struct {
	after time.Duration
	err   error
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// retrySeconds rounds a wait up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
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
