package api_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"mapcommons/api"
)

// loginTry makes one Basic-authenticated request from addr (host only),
// with extra headers, and returns the recorder.
func (ts *testServer) loginTry(login, password, addr string, header map[string]string) *httptest.ResponseRecorder {
	hr := httptest.NewRequest("GET", base+"/healthz", nil)
	hr.SetBasicAuth(login, password)
	hr.RemoteAddr = addr + ":5000"
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	ts.handler.ServeHTTP(w, hr)
	return w
}

// TestAuthRateLimit: failed logins are limited per login and per address;
// the right password is refused too while limited, then works again.
func TestAuthRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	try := func(login, password, addr string) *httptest.ResponseRecorder {
		return ts.loginTry(login, password, addr, nil)
	}
	for i := 0; i < 5; i++ {
		errorOf(t, try("alice", "wrong"+strconv.Itoa(i), "198.51.100.1"), 401, "unauthorized", "invalid")
	}
	w := try("alice", "wrong", "198.51.100.1")
	errorOf(t, w, 429, "too_many_requests", "try again")
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra != 12 {
		t.Fatalf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	// Limited per login: the right password, from anywhere new, waits too.
	errorOf(t, try("alice", "secret1", "203.0.113.2"), 429, "too_many_requests", "")
	// Other logins are not affected.
	must(t, try("bob", "secret1", "198.51.100.1"), 200)
	// A token comes back after 12 s.
	now = now.Add(12 * time.Second)
	must(t, try("alice", "secret1", "203.0.113.2"), 200)

	// Per address: 30 failures over many logins.
	for i := 0; i < 30; i++ {
		errorOf(t, try("nobody"+strconv.Itoa(i), "x", "203.0.113.9"), 401, "unauthorized", "invalid")
	}
	errorOf(t, try("bob", "secret1", "203.0.113.9"), 429, "too_many_requests", "")
	// An IPv6 client is counted by its /64.
	for i := 0; i < 30; i++ {
		try("v6user"+strconv.Itoa(i), "x", "[2001:db8:1:2::"+strconv.Itoa(i+1)+"]")
	}
	errorOf(t, try("bob", "secret1", "[2001:db8:1:2::ffff]"), 429, "too_many_requests", "")
	must(t, try("bob", "secret1", "[2001:db8:1:3::1]"), 200)
}

// TestAuthRateLimitTwoServers: the failures counted by one server hold
// the login at the other (servers sharing a store behind a load balancer
// limit a password guessed through both as through one).
func TestAuthRateLimitTwoServers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	other := &testServer{t: t, svc: ts.svc, cfg: ts.cfg, handler: api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), ts.cfg, ts.svc)}
	for i := range 5 {
		s := ts
		if i%2 == 1 {
			s = other
		}
		errorOf(t, s.loginTry("alice", "wrong"+strconv.Itoa(i), "198.51.100.1", nil), 401, "unauthorized", "invalid")
	}
	for _, s := range []*testServer{ts, other} {
		errorOf(t, s.loginTry("alice", "wrong", "198.51.100.7", nil), 429, "too_many_requests", "try again")
	}
	now = now.Add(12 * time.Second)
	must(t, other.loginTry("alice", "secret1", "203.0.113.2", nil), 200)
}

// TestLoginGuessing: someone guesses alice's password once a second, each
// time from a new address, for ten minutes. The guesses checked stay at a
// few a minute, and alice gets in throughout: from an address she logged in
// from before (also after a restart of the server, which forgets what it
// held in memory), from a new address of the same network, and from
// anywhere with the device cookie her browser was given.
func TestLoginGuessing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	w := ts.loginTry("alice", "secret1", "192.0.2.10", nil)
	must(t, w, 200)
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == "mc_device" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.MaxAge <= 0 {
		t.Fatalf("device cookie %+v", cookie)
	}
	// Only once: a client already known gets no new cookie each request.
	if w := ts.loginTry("alice", "secret1", "192.0.2.10", nil); len(w.Result().Cookies()) != 0 {
		t.Fatalf("a second cookie: %v", w.Result().Cookies())
	}
	ts.restart()

	rng := rand.New(rand.NewPCG(1, 2))
	checked, refused := 0, 0
	for sec := 0; sec < 600; sec++ {
		now = now.Add(time.Second)
		addr := netip.AddrFrom4([4]byte{byte(11 + rng.IntN(200)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(1 + rng.IntN(254))})
		switch c := ts.loginTry("alice", fmt.Sprintf("guess%d", sec), addr.String(), nil).Code; c {
		case 401:
			checked++
		case 429:
			refused++
		default:
			t.Fatalf("guess %d: %d", sec, c)
		}
		if sec%20 == 10 {
			for _, who := range []struct {
				addr   string
				header map[string]string
			}{
				{"192.0.2.10", nil}, // the address she used before
				{"192.0.2.77", nil}, // a new address of her provider's network
				{"203.0.113.50", map[string]string{"Cookie": "mc_device=" + cookie.Value}}, // elsewhere, with her browser
			} {
				if c := ts.loginTry("alice", "secret1", who.addr, who.header).Code; c != 200 {
					t.Fatalf("at %d s alice from %s is refused: %d", sec, who.addr, c)
				}
			}
		}
	}
	// 5 at once, then 5 a minute.
	if checked > 5+5*10+1 || refused < 500 {
		t.Fatalf("%d guesses checked, %d refused in 10 minutes", checked, refused)
	}
	// A stranger with the right password waits while the guessing goes on,
	// and a forged device cookie does not help.
	if c := ts.loginTry("alice", "secret1", "198.51.100.200", map[string]string{"Cookie": "mc_device=" + forged(cookie.Value)}).Code; c != 429 {
		t.Fatalf("a stranger during the guessing: %d", c)
	}
	// A trusted client's wrong passwords have their own small limit.
	for i := 0; i < 10; i++ {
		if c := ts.loginTry("alice", "typo", "192.0.2.10", nil).Code; c != 401 {
			t.Fatalf("typo %d from home: %d", i, c)
		}
	}
	if c := ts.loginTry("alice", "secret1", "192.0.2.10", nil).Code; c != 429 {
		t.Fatalf("after 10 typos from home: %d", c)
	}
}

// TestTrustedProxies: behind a trusted reverse proxy the limiter counts
// the forwarded clients, not the proxy; from anyone else the forwarding
// headers are ignored.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	// The clock stands still: the limits do not refill however slowly the
	// machine runs the test.
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		c.Now = func() time.Time { return now }
	})
	for i := 0; i < 40; i++ {
		h := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1)}
		if c := ts.loginTry(fmt.Sprintf("nobody%d", i), "x", "10.1.1.1", h).Code; c != 401 {
			t.Fatalf("failure %d through the proxy: %d", i, c)
		}
	}
	must(t, ts.loginTry("bob", "secret1", "10.1.1.1", map[string]string{"X-Forwarded-For": "203.0.113.7"}), 200)
	must(t, ts.loginTry("bob", "secret1", "10.1.1.1", map[string]string{"Forwarded": `for="203.0.113.8"`}), 200)
	// A client that is not a trusted proxy cannot pick its address.
	for i := 0; i < 30; i++ {
		ts.loginTry(fmt.Sprintf("nobody%d", i), "x", "192.0.2.1", map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1)})
	}
	errorOf(t, ts.loginTry("bob", "secret1", "192.0.2.1", map[string]string{"X-Forwarded-For": "203.0.113.9"}), 429, "too_many_requests", "")
}

// forged changes a cookie's first character: it must differ from the
// real one whatever the real one starts with (a fixed "A" matched one
// cookie in 64, and the stranger then held her real cookie).
func forged(v string) string {
	if v[0] == 'A' {
		return "B" + v[1:]
	}
	return "A" + v[1:]
}

// deviceCookie returns the device cookie w gave, or fails.
func deviceCookie(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == "mc_device" {
			return c.Value
		}
	}
	t.Fatal("no device cookie")
	return ""
}

// TestLoginTrustedNetwork: after alice logs in from one address of a /24
// (bob from one /64 of a /48), a guesser with 80 other addresses of that
// network gets no more checks than one trusted client would (the bucket
// is the network's, not each address's), and alice still gets in with her
// device cookie.
func TestLoginTrustedNetwork(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	w := ts.loginTry("alice", "secret1", "192.0.2.10", nil)
	must(t, w, 200)
	device := deviceCookie(t, w)
	must(t, ts.loginTry("bob", "secret1", "2001:db8:5::1", nil), 200)
	for _, c := range []struct {
		login     string
		neighbour func(i int) string
	}{
		{"alice", func(i int) string { return fmt.Sprintf("192.0.2.%d", 100+i) }},
		{"bob", func(i int) string { return fmt.Sprintf("2001:db8:5:%x::1", i+1) }},
	} {
		checked := 0
		for i := range 80 {
			switch code := ts.loginTry(c.login, fmt.Sprintf("guess%d", i), c.neighbour(i), nil).Code; code {
			case 401:
				checked++
			case 429:
			default:
				t.Fatalf("%s: guess %d: %d", c.login, i, code)
			}
		}
		if checked != 10 {
			t.Fatalf("%s: 80 neighbours of a trusted address: %d guesses checked at once, want 10", c.login, checked)
		}
	}
	if c := ts.loginTry("alice", "secret1", "203.0.113.50", map[string]string{"Cookie": "mc_device=" + device}).Code; c != 200 {
		t.Fatalf("alice with her device cookie during the guessing: %d", c)
	}
}

// TestLoginOverallLimit: alice logged in from three networks; a guesser
// with addresses in all three and everywhere else, one guess a second
// for ten minutes, gets at most 10 checks a minute over all of them, and
// alice with her device cookie gets in throughout.
func TestLoginOverallLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	w := ts.loginTry("alice", "secret1", "192.0.2.10", nil)
	must(t, w, 200)
	device := deviceCookie(t, w)
	nets := [][3]byte{{192, 0, 2}, {198, 51, 100}, {203, 0, 113}}
	for _, n := range nets[1:] {
		must(t, ts.loginTry("alice", "secret1", fmt.Sprintf("%d.%d.%d.10", n[0], n[1], n[2]), nil), 200)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for sec := range 600 {
		now = now.Add(time.Second)
		var addr netip.Addr
		if k := rng.IntN(4); k < 3 {
			n := nets[k]
			addr = netip.AddrFrom4([4]byte{n[0], n[1], n[2], byte(20 + rng.IntN(230))})
		} else {
			addr = netip.AddrFrom4([4]byte{byte(11 + rng.IntN(100)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(1 + rng.IntN(254))})
		}
		switch c := ts.loginTry("alice", fmt.Sprintf("guess%d", sec), addr.String(), nil).Code; c {
		case 401:
			checked++
		case 429:
		default:
			t.Fatalf("guess %d: %d", sec, c)
		}
		if sec%20 == 10 {
			if c := ts.loginTry("alice", "secret1", "100.64.0.1", map[string]string{"Cookie": "mc_device=" + device}).Code; c != 200 {
				t.Fatalf("at %d s alice with her device cookie is refused: %d", sec, c)
			}
		}
	}
	// 10 at once, then 10 a minute.
	if checked > 10+10*10+1 {
		t.Fatalf("%d guesses checked in 10 minutes, want at most 110", checked)
	}
	// Her device's own typos have their own bucket.
	for i := range 10 {
		if c := ts.loginTry("alice", "typo", "100.64.0.1", map[string]string{"Cookie": "mc_device=" + device}).Code; c != 401 {
			t.Fatalf("typo %d with the device cookie: %d", i, c)
		}
	}
	if c := ts.loginTry("alice", "secret1", "100.64.0.1", map[string]string{"Cookie": "mc_device=" + device}).Code; c != 429 {
		t.Fatalf("after 10 typos with the device cookie: %d", c)
	}
}
