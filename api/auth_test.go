package api

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mapcommons"
)

func client(addr string) loginClient { return loginClient{addr: addr, net: addr + "/net"} }

// TestAuthLimiter checks the token buckets of failed logins on a fake
// clock: the limit, the refill and trust.
func TestAuthLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newAuthLimiter(mapcommons.NewMemoryLoginLimits(), func() time.Time { return now })
	ctx := context.Background()
	allow := func(login, addr string) (time.Duration, bool) {
		t.Helper()
		st, err := l.state(ctx, login, client(addr))
		if err != nil {
			t.Fatal(err)
		}
		w := st.wait()
		return w, w == 0
	}
	fail := func(login string, c loginClient, trust trustLevel) {
		t.Helper()
		if err := l.fail(ctx, login, c, trust); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < loginFailures; i++ {
		if _, ok := allow("Ann", "a"); !ok {
			t.Fatalf("refused after %d failures", i)
		}
		fail("ann", client("a"), trustNone)
	}
	wait, ok := allow("ANN", "b")
	per := time.Minute / loginFailures
	if ok || wait <= per-time.Second || wait > per {
		t.Fatalf("after %d failures: wait %v, allowed %v", loginFailures, wait, ok)
	}
	now = now.Add(per)
	if _, ok := allow("ann", "b"); !ok {
		t.Fatalf("not allowed again after %v", per)
	}
	fail("ann", client("b"), trustNone)
	if _, ok := allow("ann", "b"); ok {
		t.Fatal("one token came back, one failure took it")
	}
	// A minute later the bucket is full again.
	now = now.Add(time.Minute)
	for i := 0; i < loginFailures; i++ {
		if _, ok := allow("ann", "c"); !ok {
			t.Fatalf("refill: refused after %d", i)
		}
		fail("ann", client("c"), trustNone)
	}
	// Trust: a success from "home" lets "home" past the per-login limit,
	// with a bucket of its own; the first success is due in the store, the
	// next ones not.
	if due := l.succeed("ann", client("home")); len(due) != 2 {
		t.Fatalf("due %v", due)
	}
	if due := l.succeed("ann", client("home")); len(due) != 0 {
		t.Fatalf("due again at once: %v", due)
	}
	if _, ok := allow("ann", "home"); !ok {
		t.Fatal("the trusted address is limited per login")
	}
	if _, ok := allow("ann", "elsewhere"); ok {
		t.Fatal("an untrusted address is not limited")
	}
	// Another address of home's network is trusted too.
	if st, _ := l.state(ctx, "ann", loginClient{addr: "home2", net: "home/net"}); st.trust != trustNet {
		t.Fatal("home's network is not trusted")
	}
	// The failures of strangers above took tokens of the login's overall
	// bucket too: a trusted network gets what they left.
	if st, _ := l.state(ctx, "ann", client("home")); st.allWait != 0 || st.wait() != 0 {
		t.Fatalf("home waits: %+v", st)
	}
	for i := 0; i < allFailures-loginFailures; i++ {
		fail("ann", client("home"), trustNet)
	}
	if st, _ := l.state(ctx, "ann", client("home")); st.allWait == 0 || st.netWait != 0 || st.wait() == 0 {
		t.Fatalf("the overall bucket does not hold home: %+v", st)
	}
	// A minute on, all is full again.
	now = now.Add(time.Minute)
	for i := 0; i < pairFailures; i++ {
		if _, ok := allow("ann", "home"); !ok {
			t.Fatalf("trusted client refused after %d", i)
		}
		fail("ann", client("home"), trustNet)
	}
	if _, ok := allow("ann", "home"); ok {
		t.Fatal("a trusted client fails without limit")
	}
	now = now.Add(trustTTL - trustRenew + time.Second)
	if due := l.succeed("ann", client("home")); len(due) != 2 {
		t.Fatalf("not renewed: %v", due)
	}
	now = now.Add(trustTTL + time.Second)
	for i := 0; i < loginFailures; i++ {
		fail("ann", client("x"), trustNone)
	}
	if _, ok := allow("ann", "home"); ok {
		t.Fatal("trust outlived trustTTL")
	}
}

func TestRetrySeconds(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 6 * time.Second: 6} {
		if got := retrySeconds(d); got != want {
			t.Errorf("retrySeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

// TestClientIP: forwarding headers count only from trusted proxies, read
// from the right, stopping at the first address that is not a proxy.
func TestClientIP(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}}}
	none := &Server{}
	for _, c := range []struct {
		peer    string
		headers map[string]string
		want    string
		wantAll string // with no trusted proxies
	}{
		{"198.51.100.1:1", nil, "198.51.100.1", ""},
		{"198.51.100.1:1", map[string]string{"X-Forwarded-For": "192.0.2.9"}, "198.51.100.1", ""}, // not from a proxy
		{"10.0.0.1:1", map[string]string{"X-Forwarded-For": "192.0.2.9"}, "192.0.2.9", "10.0.0.1"},
		{"10.0.0.1:1", map[string]string{"X-Forwarded-For": "6.6.6.6, 192.0.2.9, 10.0.0.2"}, "192.0.2.9", "10.0.0.1"}, // spoofed left part ignored
		{"10.0.0.1:1", map[string]string{"X-Forwarded-For": "garbage, 10.0.0.2"}, "10.0.0.2", ""},
		{"10.0.0.1:1", map[string]string{"X-Forwarded-For": ""}, "10.0.0.1", ""},
		{"[fd00::1]:1", map[string]string{"Forwarded": `for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::17", "fd00::1"},
		{"10.0.0.1:1", map[string]string{"Forwarded": `for="192.0.2.7:80"`, "X-Forwarded-For": "6.6.6.6"}, "192.0.2.7", ""},
		{"10.0.0.1:1", map[string]string{"Forwarded": `for=unknown`}, "10.0.0.1", ""},
		{"10.0.0.1:1", map[string]string{"X-Forwarded-For": "::ffff:192.0.2.5"}, "192.0.2.5", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		if got := s.clientIP(r).String(); got != c.want {
			t.Errorf("%s %v: %s, want %s", c.peer, c.headers, got, c.want)
		}
		if c.wantAll != "" {
			if got := none.clientIP(r).String(); got != c.wantAll {
				t.Errorf("without trusted proxies, %s %v: %s, want %s", c.peer, c.headers, got, c.wantAll)
			}
		}
	}
}

// TestLimiterKeys: the keys of the limiter's buckets are short ASCII
// whatever login a client sends (a NUL byte, bytes that are not UTF-8, a
// very long one: PostgreSQL's text holds neither of the first two), the
// same for logins that differ only in case, distinct for others.
func TestLimiterKeys(t *testing.T) {
	t.Parallel()
	c := loginClient{addr: "2001:db8:1:2::/64", net: "2001:db8:1::/48"}
	d := loginClient{addr: c.addr, net: c.net, device: strings.Repeat("A", 43)}
	for _, login := range []string{"ann", "a\x00b", "\xff\xfe", strings.Repeat("x", 5000)} {
		for _, k := range []string{loginLimit(login), netLimit(login, c), addrLimit(c), allLimit(login), deviceLimit(login, d)} {
			if !utf8.ValidString(k) || strings.ContainsRune(k, 0) || len(k) > 100 {
				t.Errorf("login %.20q: key %q", login, k)
			}
		}
	}
	if loginLimit("Ann") != loginLimit("aNN") || netLimit("Ann", c) != netLimit("ann", c) || deviceLimit("Ann", d) != deviceLimit("ann", d) {
		t.Error("logins that differ in case have different buckets")
	}
	if loginLimit("ann") == loginLimit("bob") || netLimit("ann", c) == netLimit("ann", client("other")) || allLimit("ann") == allLimit("bob") {
		t.Error("different logins or clients share a bucket")
	}
}
