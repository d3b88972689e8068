package api_test

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"mapcommons/api"
)

// signInLink posts a link's token to /session from addr.
func (ts *testServer) signInLink(addr, token string) *httptest.ResponseRecorder {
	ts.t.Helper()
	hr := httptest.NewRequest("POST", base+"/session", strings.NewReader(url.Values{"link": {token}}.Encode()))
	hr.Header.Set("Content-Type", formType)
	hr.RemoteAddr = addr + ":5000"
	w := httptest.NewRecorder()
	ts.handler.ServeHTTP(w, hr)
	return w
}

// TestSignInLink: while her login is being guessed, alice (no second
// factor, no trusted client) is refused and told of the link; an
// administrator issues one; it signs her in once, before it is over, and
// her browser is trusted from then on.
func TestSignInLink(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	for i := range 5 {
		must(t, ts.loginTry("alice", fmt.Sprint("guess", i), fmt.Sprintf("198.51.%d.1", i), nil), 401)
	}
	errorOf(t, ts.signInFrom("203.0.113.5", "alice", "secret1", ""), 429, "too_many_requests", "one-time sign-in link")

	issue := func(user string) *httptest.ResponseRecorder {
		return ts.do(req{method: "POST", path: "/users/alice/sign_in_link.json", user: user})
	}
	errorOf(t, issue(""), 401, "unauthorized", "")
	errorOf(t, issue("bob"), 403, "forbidden", "administrator")
	doc := decode[map[string]string](t, must(t, issue("admin"), 201))
	prefix := base + "/app/signin#link="
	if !strings.HasPrefix(doc["url"], prefix) || doc["expires_at"] != now.Add(24*time.Hour).Format(time.RFC3339) {
		t.Fatalf("link %v", doc)
	}
	token := strings.TrimPrefix(doc["url"], prefix)
	errorOf(t, ts.signInLink("203.0.113.5", token+"x"), 401, "unauthorized", "link")
	w := ts.signInLink("203.0.113.5", token)
	if got := decode[map[string]any](t, must(t, w, 201)); got["login"] != "alice" {
		t.Fatalf("signed in as %v", got)
	}
	device := deviceCookie(t, w)
	if sessionCookieOf(t, w) == nil {
		t.Fatal("no session")
	}
	errorOf(t, ts.signInLink("203.0.113.5", token), 401, "unauthorized", "link")
	// Trusted from then on: her browser gets in during the guessing.
	for i := range 5 {
		ts.loginTry("alice", fmt.Sprint("more", i), fmt.Sprintf("198.51.%d.2", i), nil)
	}
	if c := ts.loginTry("alice", "secret1", "192.0.2.99", map[string]string{"Cookie": "mc_device=" + device}).Code; c != 200 {
		t.Fatalf("her browser after the link: %d", c)
	}
	// A link is over after 24 hours.
	doc = decode[map[string]string](t, must(t, issue("admin"), 201))
	now = now.Add(24 * time.Hour)
	errorOf(t, ts.signInLink("203.0.113.6", strings.TrimPrefix(doc["url"], prefix)), 401, "unauthorized", "link")
}

// TestSignInDeviceCookie: the sign-in form gives a browser new to the
// user its device cookie (it was dropped with the clearing of a stale
// session cookie), so that the browser is trusted wherever it goes.
func TestSignInDeviceCookie(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	w := ts.signInFrom("192.0.2.1", "alice", "secret1", "")
	must(t, w, 201)
	deviceCookie(t, w)
	if sessionCookieOf(t, w) == nil {
		t.Fatal("no session cookie")
	}
}
