package api_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// newSetupServer is a server given a set-up link's token whose store has
// users (admin, alice, bob) but no administrator: admin is no longer one.
func newSetupServer(t *testing.T, mutate ...func(*api.Config)) (*testServer, string) {
	t.Helper()
	token := api.NewSetupToken()
	ts := newServer(t, append([]func(*api.Config){func(c *api.Config) { c.SetupToken = token }}, mutate...)...)
	no := false
	if _, err := ts.svc.Users.UpdateUser(t.Context(), userID(t, ts, "admin"), mapcommons.UserUpdate{Admin: &no}); err != nil {
		t.Fatal(err)
	}
	return ts, token
}

// setUp posts the first administrator's account with token (none when "").
func (ts *testServer) setUp(token, body string) *httptest.ResponseRecorder {
	ts.t.Helper()
	h := map[string]string{}
	if token != "" {
		h["X-Setup-Token"] = token
	}
	return ts.do(req{method: "POST", path: "/setup.json", ctype: "application/json", body: []byte(body), header: h})
}

const bossBody = `{"login":"boss","password":"boss-secret","password_confirmation":"boss-secret","email":"boss@example.com"}`

// TestSetup: the set-up link's token makes the first administrator once,
// signed in; without it, with a wrong one, a second time, or once an
// administrator exists, nothing is made; the state says so.
func TestSetup(t *testing.T) {
	t.Parallel()
	ts, token := newSetupServer(t)
	state := func() map[string]any {
		t.Helper()
		return decode[map[string]any](t, must(t, ts.get("/setup.json", ""), 200))
	}
	if s := state(); s["open"] != true || s["mode"] != "hosted" {
		t.Fatalf("GET /setup.json of a server without an administrator: %v", s)
	}
	errorOf(t, ts.setUp("", bossBody), 403, "forbidden", "set-up token")
	last := map[bool]string{true: "B", false: "A"}[strings.HasSuffix(token, "A")]
	errorOf(t, ts.setUp(token[:len(token)-1]+last, bossBody), 403, "forbidden", "set-up token")
	errorOf(t, ts.setUp(token+"x", bossBody), 403, "forbidden", "set-up token")
	// A refused form spends nothing.
	errorOf(t, ts.setUp(token, `{"login":"boss","password":"boss-secret","password_confirmation":"other"}`), 400, "invalid", "password")
	errorOf(t, ts.setUp(token, `{"login":"alice","password":"boss-secret","password_confirmation":"boss-secret"}`), 409, "conflict", "alice")
	if _, err := ts.svc.Users.FindUserByLogin(t.Context(), "boss"); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Fatalf("a refused set-up made boss: %v", err)
	}

	w := ts.setUp(token, bossBody)
	got := decode[map[string]any](t, must(t, w, 201))
	if got["login"] != "boss" || got["admin"] != true || got["mode"] != "hosted" || got["csrf_token"] == "" {
		t.Fatalf("the set-up's answer: %v", got)
	}
	if loc := w.Header().Get("Location"); loc != base+"/users/boss.json" {
		t.Fatalf("Location %q", loc)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	cookie := sessionCookieOf(t, w)
	if cookie == nil {
		t.Fatal("the set-up signed no one in")
	}
	me := decode[map[string]any](t, must(t, ts.do(req{method: "GET", path: "/session.json",
		header: map[string]string{"Cookie": "mc_session=" + cookie.Value}}), 200))
	if me["login"] != "boss" || me["admin"] != true {
		t.Fatalf("the session after the set-up: %v", me)
	}
	u, err := ts.svc.Users.FindUserByLogin(t.Context(), "boss")
	if err != nil || !u.Admin || u.Email != "boss@example.com" || !mapcommons.CheckPassword(u.PasswordHash, "boss-secret") {
		t.Fatalf("the administrator in the store: %+v, %v", u, err)
	}
	// Once: the link is spent, and an administrator exists.
	errorOf(t, ts.setUp(token, strings.ReplaceAll(bossBody, "boss", "boss2")), 404, "not_found", "administrator")
	if s := state(); s["open"] != false {
		t.Fatalf("GET /setup.json after the set-up: %v", s)
	}
	// A restarted server given the same token (it never is: each start
	// makes a new one) finds the administrator in the store.
	ts.restart()
	errorOf(t, ts.setUp(token, strings.ReplaceAll(bossBody, "boss", "boss3")), 404, "not_found", "administrator")
	if s := state(); s["open"] != false {
		t.Fatalf("GET /setup.json after a restart: %v", s)
	}
}

// TestSetupAdminExists: a server whose store has an administrator (or
// that was given no link) refuses the set-up, the right token or not.
func TestSetupAdminExists(t *testing.T) {
	t.Parallel()
	token := api.NewSetupToken()
	ts := newServer(t, func(c *api.Config) { c.SetupToken = token }) // admin is an administrator
	errorOf(t, ts.setUp(token, bossBody), 404, "not_found", "administrator")
	if s := decode[map[string]any](t, must(t, ts.get("/setup.json", ""), 200)); s["open"] != false {
		t.Fatalf("GET /setup.json with an administrator: %v", s)
	}
	// An administrator made otherwise (another server, the command line)
	// after this one started ends its link too.
	ts2, token2 := newSetupServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	if s := decode[map[string]any](t, must(t, ts2.get("/setup.json", ""), 200)); s["open"] != true || s["mode"] != "appliance" {
		t.Fatalf("GET /setup.json: %v", s)
	}
	yes := true
	if _, err := ts2.svc.Users.UpdateUser(t.Context(), userID(t, ts2, "bob"), mapcommons.UserUpdate{Admin: &yes}); err != nil {
		t.Fatal(err)
	}
	errorOf(t, ts2.setUp(token2, bossBody), 404, "not_found", "administrator")

	none := newServer(t, func(c *api.Config) { c.SetupToken = "" })
	no := false
	none.svc.Users.UpdateUser(t.Context(), userID(t, none, "admin"), mapcommons.UserUpdate{Admin: &no})
	errorOf(t, none.setUp("anything", bossBody), 404, "not_found", "set-up")
	if s := decode[map[string]any](t, must(t, none.get("/setup.json", ""), 200)); s["open"] != false {
		t.Fatalf("GET /setup.json of a server given no link: %v", s)
	}
}

// TestSetupBodyUnread: without the token the body is not read (a body
// larger than any form is refused 403, not 413); wrong tokens count
// against the address's limit of failed logins.
func TestSetupBodyUnread(t *testing.T) {
	t.Parallel()
	ts, token := newSetupServer(t)
	big := `{"login":"` + strings.Repeat("x", 3<<20) + `"}`
	errorOf(t, ts.setUp("", big), 403, "forbidden", "set-up token")
	errorOf(t, ts.setUp(token+"0", big), 403, "forbidden", "set-up token")
	errorOf(t, ts.setUp(token, big), 413, "too_large", "max-form")
	for i := 0; i < 40; i++ {
		if c := ts.setUp(fmt.Sprintf("guess%d", i), bossBody).Code; c == 429 {
			// The limit holds for the right token too, until it refills.
			errorOf(t, ts.setUp(token, bossBody), 429, "too_many_requests", "")
			return
		}
	}
	t.Fatal("40 wrong set-up tokens from one address were never limited")
}

// TestSetupRace: two servers on one store, each with the link's token,
// asked at once: one administrator.
func TestSetupRace(t *testing.T) {
	t.Parallel()
	ts, token := newSetupServer(t)
	servers := []*api.Server{
		api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), ts.cfg, ts.svc),
		api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), ts.cfg, ts.svc),
	}
	const n = 6
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := strings.ReplaceAll(bossBody, "boss", fmt.Sprintf("racer%d", i))
			hr := httptest.NewRequest("POST", base+"/setup.json", strings.NewReader(body))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("X-Setup-Token", token)
			hr.RemoteAddr = fmt.Sprintf("192.0.2.%d:5000", i+1)
			w := httptest.NewRecorder()
			servers[i%2].ServeHTTP(w, hr)
			codes[i] = w.Code
		})
	}
	wg.Wait()
	won := 0
	for i, c := range codes {
		switch c {
		case 201:
			won++
		case 404, 409:
		default:
			t.Fatalf("racer %d: %d", i, c)
		}
	}
	if won != 1 {
		t.Fatalf("%d racers made an administrator (%v), want 1", won, codes)
	}
}
