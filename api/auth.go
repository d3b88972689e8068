package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
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
// Without an Authorization header, a session cookie authenticates
// (sessionUser). Failed logins are limited (see checkLogin); w receives
// the device cookie of a client that logs in from somewhere new.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*mapcommons.User, error) {
	if r.Header.Get("Authorization") == "" {
		return s.sessionUser(w, r)
	}
	login, password, ok := r.BasicAuth()
	if !ok {
		return nil, mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "only HTTP Basic authorization is supported")
	}
	if login == "" && password == "" {
		return nil, nil
	}
	return s.checkLogin(w, r, login, password, "", true)
}

// checkLogin checks a login and password, from Basic credentials or the
// sign-in form (with code, the second factor's): 401 when they are wrong,
// 429 while the login or the client has failed too often (see
// authLimiter). A user with a second factor is checked by
// checkSecondFactor, whatever the login's limit; from Basic credentials,
// the code follows the password.
func (s *Server) checkLogin(w http.ResponseWriter, r *http.Request, login, password, code string, basic bool) (*mapcommons.User, error) {
	c := s.loginClient(r)
	bad := mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "invalid login or password")
	// The user is looked for while the limits are read (two round trips
	// of a store at once); a login the limits refuse waits for both.
	type found struct {
		u   *mapcommons.User
		f   *mapcommons.SecondFactor
		err error
	}
	var lookup chan found
	if len(login) <= 100 {
		lookup = make(chan found, 1)
		go func() {
			u, f, err := s.findLogin(r.Context(), login)
			lookup <- found{u, f, err}
		}()
		defer func() {
			if lookup != nil {
				<-lookup // not left behind the request
			}
		}()
	}
	st, err := s.limiter.state(r.Context(), login, c)
	if err != nil {
		return nil, err
	}
	if st.addrWait > 0 {
		return nil, tooManyLogins(st.addrWait, false)
	}
	maxLen := mapcommons.MaxPasswordLen
	if basic {
		maxLen += mapcommons.TOTPDigits // a second factor's code may follow
	}
	if len(login) > 100 || len(password) > maxLen {
		return nil, s.failedLogin(r, login, c, st.trust, bad)
	}
	res := <-lookup
	lookup = nil
	u, f, err := res.u, res.f, res.err
	if err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		return nil, err
	}
	if u != nil && f != nil {
		return s.checkSecondFactor(w, r, u, f, login, password, code, basic, c)
	}
	if st.trust < trustDevice && st.wait() > 0 && u != nil && s.svc.Trust != nil {
		// The login is being guessed: clients its user logged in from
		// before (remembered in the store, also across restarts) still
		// get to try; strangers wait.
		if err := s.storeTrust(r.Context(), u, c, &st); err != nil {
			return nil, err
		}
	}
	if wait := st.wait(); wait > 0 {
		return nil, tooManyLogins(wait, wait > st.addrWait)
	}
	if u == nil {
		// Spend the time a real check would, so timing does not tell which logins exist.
		mapcommons.CheckPassword(s.auth.dummyHash, password)
		return nil, s.failedLogin(r, login, c, st.trust, bad)
	}
	if !s.auth.ok(u, password, false) {
		if !mapcommons.CheckPassword(u.PasswordHash, password) {
			return nil, s.failedLogin(r, login, c, st.trust, bad)
		}
		s.auth.remember(u, password, false)
	}
	s.trustClient(w, r, u, login, c)
	return u, nil
}

// findLogin finds the user of a login and the user's confirmed second
// factor (nil without one): in one read when the store can
// (mapcommons.LoginFinder). ENOTFOUND when there is no such user.
func (s *Server) findLogin(ctx context.Context, login string) (*mapcommons.User, *mapcommons.SecondFactor, error) {
	if lf, ok := s.svc.Users.(mapcommons.LoginFinder); ok && s.svc.SecondFactors != nil {
		u, f, err := lf.FindUserAndSecondFactor(ctx, login)
		if f != nil && !f.Confirmed {
			f = nil
		}
		return u, f, err
	}
	u, err := s.svc.Users.FindUserByLogin(ctx, login)
	if err != nil {
		return nil, nil, err
	}
	f, err := s.secondFactor(ctx, u)
	return u, f, err
}

// failedLogin counts a failed login against the limits, and returns the
// error to answer with: bad, or the store's when it could not count it.
func (s *Server) failedLogin(r *http.Request, login string, c loginClient, trust trustLevel, bad error) error {
	if err := s.limiter.fail(context.WithoutCancel(r.Context()), login, c, trust); err != nil {
		return err
	}
	return bad
}

// storeTrust raises st.trust to what the store knows of c for u: its
// device cookie first (the stronger trust), else its address or network.
func (s *Server) storeTrust(ctx context.Context, u *mapcommons.User, c loginClient, st *limitState) error {
	now := s.limiter.now()
	if c.device != "" {
		ok, err := s.svc.Trust.LoginTrusted(ctx, u.ID, []string{deviceKey(c.device)}, now)
		if err != nil {
			return err
		}
		if ok {
			st.trust = trustDevice
			return nil
		}
	}
	if st.trust < trustNet {
		ok, err := s.svc.Trust.LoginTrusted(ctx, u.ID, c.netKeys(), now)
		if err != nil {
			return err
		}
		if ok {
			st.trust = trustNet
		}
	}
	return nil
}

// hasCredentials reports whether r carries credentials other than the
// blank ones that count as anonymous.
func hasCredentials(r *http.Request) bool {
	if r.Header.Get("Authorization") == "" {
		return sessionCookieToken(r) != ""
	}
	login, password, ok := r.BasicAuth()
	return !ok || login != "" || password != ""
}

// tooManyLogins is the 429 of a limited attempt; byLogin when the login's
// limits hold it (not only its address's): its user, who has no second
// factor (else the login would not be limited) and no trusted client, is
// told of the way in that does not wait. It is said of every login so
// held, existing or not, so that it tells nothing of the login.
func tooManyLogins(wait time.Duration, byLogin bool) error {
	msg := fmt.Sprintf("too many failed logins for this login or from this address: try again in %d seconds", retrySeconds(wait))
	if byLogin {
		msg += "; or ask an administrator for a one-time sign-in link, and add a second factor (an authenticator app) on your account page, with which you get in while your login is being guessed"
	}
	e := mapcommons.Errorf(mapcommons.ETOOMANY, "%s", msg)
	e.RetryAfter = wait
	return e
}

// trustClient remembers, after a successful login, the client it came
// from: in memory at once, and in the store when that is new or due for
// renewal (about once a day per client, not once a request). A client
// without a device cookie then gets one, so that a browser (or any client
// that keeps cookies) is known wherever it connects from.
func (s *Server) trustClient(w http.ResponseWriter, r *http.Request, u *mapcommons.User, login string, c loginClient) {
	due := s.limiter.succeed(login, c)
	if len(due) == 0 || s.svc.Trust == nil {
		return
	}
	until := s.limiter.now().Add(trustTTL)
	if c.device == "" {
		token := make([]byte, 32)
		rand.Read(token)
		c.device = base64.RawURLEncoding.EncodeToString(token)
		due = append(due, deviceKey(c.device))
		http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: c.device, Path: "/", MaxAge: int(trustTTL / time.Second),
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || strings.HasPrefix(s.cfg.BaseURL, "https:")})
		s.limiter.remember(login, deviceKey(c.device))
	}
	for _, k := range due {
		if err := s.svc.Trust.TrustLogin(r.Context(), u.ID, k, until); err != nil {
			s.logger.WarnContext(r.Context(), "remembering a login's client", "err", err)
		}
	}
}

// deviceCookie is the cookie that marks a client a user has logged in
// from. It only ever lifts the per-login limit on failed logins for that
// user; it authenticates nothing.
const deviceCookie = "mc_device"

// deviceKey is the store's key of a device token: its hash, so that the
// store holds nothing a client could present.
func deviceKey(token string) string {
	h := sha256.Sum256([]byte(token))
	return "device:" + hex.EncodeToString(h[:])
}

// loginClient is who is logging in, as the limiter knows clients.
type loginClient struct {
	addr   string // the address (an IPv6 address by its /64) failures are counted against
	net    string // its network: an IPv4 /24, an IPv6 /48
	device string // the device cookie's token, or ""
}

// keys are the store's keys the client may be trusted by.
func (c loginClient) keys() []string {
	k := c.netKeys()
	if c.device != "" {
		k = append(k, deviceKey(c.device))
	}
	return k
}

// netKeys are the keys of its address and network.
func (c loginClient) netKeys() []string { return []string{"addr:" + c.addr, "net:" + c.net} }

func (s *Server) loginClient(r *http.Request) loginClient {
	ip := s.clientIP(r)
	c := loginClient{addr: ip.String(), net: ip.String()}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		c.addr = p.String()
		p, _ = ip.Prefix(48)
		c.net = p.String()
	} else if ip.Is4() {
		p, _ := ip.Prefix(24)
		c.net = p.String()
	}
	if ck, err := r.Cookie(deviceCookie); err == nil && len(ck.Value) == 43 {
		if _, err := base64.RawURLEncoding.DecodeString(ck.Value); err == nil {
			c.device = ck.Value
		}
	}
	return c
}

// clientIP is the client's address: the peer's, or, when the peer is one
// of the trusted proxies (--trusted-proxies), the nearest address that is
// not, read from Forwarded (RFC 7239) or else X-Forwarded-For, from the
// right. A hop that cannot be read stops the walk at the proxy that
// reported it. Without trusted proxies, forwarding headers are ignored:
// anyone can send them.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	peer := peerIP(r.RemoteAddr)
	if len(s.cfg.TrustedProxies) == 0 || !s.trustedProxy(peer) {
		return peer
	}
	var hops []string
	if v := r.Header.Values("Forwarded"); len(v) > 0 {
		for _, el := range strings.Split(strings.Join(v, ","), ",") {
			hop := ""
			for _, pair := range strings.Split(el, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if strings.EqualFold(k, "for") {
					hop = strings.Trim(val, `"`)
				}
			}
			hops = append(hops, hop)
		}
	} else {
		for _, h := range strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		ip, ok := hopIP(hops[i])
		if !ok {
			return client
		}
		client = ip
		if !s.trustedProxy(ip) {
			return ip
		}
	}
	return client
}

func (s *Server) trustedProxy(ip netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// peerIP parses a RemoteAddr ("host:port").
func peerIP(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, _ := netip.ParseAddr(host)
	return ip.Unmap()
}

// hopIP reads one forwarded address: "192.0.2.1", "192.0.2.1:80",
// "[2001:db8::1]", "[2001:db8::1]:80" or a bare IPv6 address.
func hopIP(h string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap(), true
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	ip, err := netip.ParseAddr(h)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// Limits of failed logins. Each login, each client address, each trusted
// network of a login, each trusted device of a login, and each login over
// all clients together has a token bucket of failures that refills
// continuously: a login may fail loginFailures times a minute from clients
// its user has not logged in from, an address addrFailures times, a
// trusted network (or a trusted device) of the login pairFailures times,
// and the login allFailures times from all clients holding no device
// cookie of its user together. When a bucket is empty, every login
// attempt it covers (right or wrong: the answer must not tell) is refused
// with 429 and Retry-After until a token comes back. Successful logins
// cost nothing.
//
// A client is trusted for a login by its network when its user logged in
// within trustTTL from that address (or /64) or from that network (IPv4
// /24, IPv6 /48, so that a new address from one's provider still counts);
// its failures are counted per network, since anyone in that network is
// trusted as much. It is trusted by its device when it holds a device
// cookie its user was given at a login: a secret no guesser has, so its
// failures are counted per device and it is not held by the login's
// overall limit. Trusted clients are not held by the login's limit, so
// someone guessing a user's password from anywhere else, at any rate and
// from any number of addresses, makes only a few checks a minute and does
// not lock the user out of a trusted device; someone guessing from a
// trusted network too makes at most allFailures checks a minute, and may
// lock out the user's clients trusted by network only. The store
// remembers trusted clients, so a restart forgets nothing. A client the
// user never logged in from waits while the login is being guessed.
const (
	loginFailures = 5
	addrFailures  = 30
	pairFailures  = 10
	allFailures   = 10
	trustTTL      = 30 * 24 * time.Hour
	// trustRenew is how long before its end a trusted client's entry in
	// the store is renewed by a login from it.
	trustRenew = trustTTL - 24*time.Hour
	// limiterEntries bounds the trusted clients the limiter knows; beyond
	// it, those whose trust is over are dropped (all of them, if need be).
	limiterEntries = 100000
)

// trustLevel is how far a client is trusted for a login.
type trustLevel int

const (
	trustNone   trustLevel = iota // a stranger
	trustNet                      // its address or network logged in before
	trustDevice                   // it holds a device cookie of the user
)

// authLimiter counts failed logins per login, per client address and per
// trusted client of a login, in buckets the store keeps (so that every
// server sharing it counts the same), and knows which clients are trusted
// for which logins (what this server knows of the store's trust).
type authLimiter struct {
	limits mapcommons.LoginLimitService
	now    func() time.Time

	mu      sync.Mutex
	trusted map[string]time.Time // login + "\x00" + key → until when
}

func newAuthLimiter(limits mapcommons.LoginLimitService, now func() time.Time) *authLimiter {
	return &authLimiter{limits: limits, now: now, trusted: map[string]time.Time{}}
}

// The limiter's buckets in the store: by client address, by login, by
// trusted (network, login) and (device, login) pair, and by login over all
// clients. A login is any bytes a client sends: it goes into a key as the
// hex SHA-256 of its loginKey, so that keys are short ASCII whatever it is
// (a store's text may hold neither NUL nor invalid UTF-8); an address
// never contains a space.
func addrLimit(c loginClient) string { return "addr:" + c.addr }
func loginLimit(login string) string { return "login:" + loginHash(login) }
func allLimit(login string) string   { return "all:" + loginHash(login) }
func netLimit(login string, c loginClient) string {
	return "pair:" + c.net + " " + loginHash(login)
}
func deviceLimit(login string, c loginClient) string {
	h := sha256.Sum256([]byte(c.device + "\x00" + loginKey(login)))
	return "dpair:" + hex.EncodeToString(h[:])
}

func loginHash(login string) string {
	h := sha256.Sum256([]byte(loginKey(login)))
	return hex.EncodeToString(h[:])
}

// loginKey is the key of a login's bucket: case-insensitive (as logins
// are), and bounded (a login longer than any real one is cut).
func loginKey(login string) string {
	if len(login) > 100 {
		login = login[:100]
	}
	return strings.ToLower(login)
}

func trustKey(login, key string) string { return loginKey(login) + "\x00" + key }

// limitState is what the limiter says of an attempt.
type limitState struct {
	addrWait, loginWait, netWait, deviceWait, allWait time.Duration
	trust                                             trustLevel // as known here
}

// wait is how long the attempt must wait: the address's limit always
// holds; a trusted device's own limit; else the login's overall limit
// and the trusted network's own limit or else the login's.
func (st limitState) wait() time.Duration {
	switch st.trust {
	case trustDevice:
		return max(st.addrWait, st.deviceWait)
	case trustNet:
		return max(st.addrWait, st.netWait, st.allWait)
	}
	return max(st.addrWait, st.loginWait, st.allWait)
}

// state returns the limits that bear on an attempt at login by c.
func (l *authLimiter) state(ctx context.Context, login string, c loginClient) (limitState, error) {
	keys := []string{addrLimit(c), loginLimit(login), netLimit(login, c), allLimit(login), ""}
	if c.device != "" {
		keys[4] = deviceLimit(login, c)
	}
	full, err := l.limits.LoginLimits(ctx, keys)
	if err != nil {
		return limitState{}, err
	}
	now := l.now()
	per := func(n int) time.Duration { return time.Minute / time.Duration(n) }
	st := limitState{
		addrWait:   mapcommons.LoginWait(full[0], now, per(addrFailures), addrFailures),
		loginWait:  mapcommons.LoginWait(full[1], now, per(loginFailures), loginFailures),
		netWait:    mapcommons.LoginWait(full[2], now, per(pairFailures), pairFailures),
		allWait:    mapcommons.LoginWait(full[3], now, per(allFailures), allFailures),
		deviceWait: mapcommons.LoginWait(full[4], now, per(pairFailures), pairFailures),
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	trusted := func(k string) bool {
		until, ok := l.trusted[trustKey(login, k)]
		return ok && now.Before(until)
	}
	for _, k := range c.netKeys() {
		if trusted(k) {
			st.trust = trustNet
		}
	}
	if c.device != "" && trusted(deviceKey(c.device)) {
		st.trust = trustDevice
	}
	return st, nil
}

// fail takes a token from the address's bucket, and from the trusted
// device's, or else from the login's overall one and the trusted
// network's or else the login's.
func (l *authLimiter) fail(ctx context.Context, login string, c loginClient, trust trustLevel) error {
	spend := func(key string, n int) mapcommons.LoginSpend {
		return mapcommons.LoginSpend{Key: key, Per: time.Minute / time.Duration(n), Capacity: n}
	}
	spends := []mapcommons.LoginSpend{spend(addrLimit(c), addrFailures)}
	switch trust {
	case trustDevice:
		spends = append(spends, spend(deviceLimit(login, c), pairFailures))
	case trustNet:
		spends = append(spends, spend(netLimit(login, c), pairFailures), spend(allLimit(login), allFailures))
	default:
		spends = append(spends, spend(loginLimit(login), loginFailures), spend(allLimit(login), allFailures))
	}
	return l.limits.SpendLoginTokens(ctx, l.now(), spends)
}

// failCode takes a token from the address's bucket for a wrong or missing
// code, and, when the code was right and the password was checked and
// wrong, from the login's overall one too (it counts the passwords
// checked).
func (l *authLimiter) failCode(ctx context.Context, login string, c loginClient, passwordChecked bool) error {
	spends := []mapcommons.LoginSpend{{Key: addrLimit(c), Per: time.Minute / addrFailures, Capacity: addrFailures}}
	if passwordChecked {
		spends = append(spends, mapcommons.LoginSpend{Key: allLimit(login), Per: time.Minute / allFailures, Capacity: allFailures})
	}
	return l.limits.SpendLoginTokens(ctx, l.now(), spends)
}

// succeed trusts c for login here, and returns the keys the store should
// (again) be told of: new ones, and those due for renewal.
func (l *authLimiter) succeed(login string, c loginClient) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var due []string
	for _, k := range c.keys() {
		tk := trustKey(login, k)
		if until, ok := l.trusted[tk]; ok && until.Sub(now) > trustRenew {
			continue
		}
		l.rememberLocked(tk, now)
		due = append(due, k)
	}
	return due
}

// remember trusts key for login here.
func (l *authLimiter) remember(login, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rememberLocked(trustKey(login, key), l.now())
}

func (l *authLimiter) rememberLocked(tk string, now time.Time) {
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
	l.trusted[tk] = now.Add(trustTTL)
}

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
	second  bool // the password with a second factor's code (see checkSecondFactor)
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

// ok reports whether password was verified for u lately; second: a
// password with a code, which only counts for a user with a second
// factor (and a password alone only for one without).
func (c *authCache) ok(u *mapcommons.User, password string, second bool) bool {
	mac := c.mac(password)
	c.mu.Lock()
	e, found := c.entries[u.ID]
	c.mu.Unlock()
	return found && e.hash == u.PasswordHash && e.second == second && time.Now().Before(e.expires) && hmac.Equal(e.mac, mac)
}

func (c *authCache) remember(u *mapcommons.User, password string, second bool) {
	mac := c.mac(password)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= authMaxEntries {
		clear(c.entries)
	}
	c.entries[u.ID] = authEntry{hash: u.PasswordHash, mac: mac, second: second, expires: time.Now().Add(authTTL)}
}

// forget drops what is remembered of u (a second factor came or went).
func (c *authCache) forget(u *mapcommons.User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, u.ID)
}
