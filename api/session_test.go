package api_test

// Sessions for browsers: sign-in, the cookie's flags, the cookie as
// credentials, CSRF on state-changing requests, sign-out, expiry,
// restarts, the login limiter and password changes.

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
)

const formType = "application/x-www-form-urlencoded"

// signIn posts the sign-in form of login with password.
func (ts *testServer) signIn(login, password string, header map[string]string) *httptest.ResponseRecorder {
	ts.t.Helper()
	return ts.do(req{method: "POST", path: "/session", ctype: formType, body: []byte("login=" + login + "&password=" + password), header: header})
}

// browser is a signed-in browser: its session cookie and CSRF token.
type browser struct {
	ts     *testServer
	cookie *http.Cookie
	csrf   string
}

// mustSignIn signs login in (password secret1) and returns the browser.
func (ts *testServer) mustSignIn(login string) *browser {
	ts.t.Helper()
	w := ts.signIn(login, "secret1", nil)
	doc := decode[map[string]any](ts.t, must(ts.t, w, http.StatusCreated))
	c := sessionCookieOf(ts.t, w)
	if c == nil || c.Value == "" {
		ts.t.Fatalf("sign-in set no session cookie: %v", w.Header()["Set-Cookie"])
	}
	csrf, _ := doc["csrf_token"].(string)
	if doc["login"] != login || csrf == "" {
		ts.t.Fatalf("sign-in answered %v", doc)
	}
	return &browser{ts: ts, cookie: c, csrf: csrf}
}

func sessionCookieOf(t testing.TB, w *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	var found *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == "mc_session" {
			found = c
		}
	}
	return found
}

// do sends r with the session cookie, and the CSRF token when withCSRF.
func (b *browser) do(r req, withCSRF bool) *httptest.ResponseRecorder {
	b.ts.t.Helper()
	h := map[string]string{"Cookie": "mc_session=" + b.cookie.Value}
	if withCSRF {
		h["X-CSRF-Token"] = b.csrf
	}
	for k, v := range r.header {
		h[k] = v
	}
	r.header = h
	return b.ts.do(r)
}

func (b *browser) get(path string) *httptest.ResponseRecorder {
	return b.do(req{method: "GET", path: path}, false)
}

func TestSession(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	ts := newServerAt(t, dir, func(c *api.Config) {
		c.Mode = mapcommons.ModeAppliance
		c.Now = func() time.Time { return now }
	})
	parent := t
	ds := ts.createCSV("?title=private", "name,lat,lon\nA,1,2\n") // alice's, private on an appliance
	anon := ts.get(ds+".json", "")
	if anon.Code == 200 {
		t.Fatalf("the private dataset is public: %s", anon.Body)
	}
	title := func() string {
		t.Helper()
		return decode[map[string]any](t, must(t, ts.get(ds+".json", "alice"), 200))["title"].(string)
	}

	t.Run("Cookie", func(t *testing.T) {
		w := ts.signIn("alice", "secret1", nil)
		doc := decode[map[string]any](t, must(t, w, 201))
		if doc["admin"] != false || doc["expires_at"] != "2026-12-06T08:00:00Z" {
			t.Fatalf("sign-in: %v", doc)
		}
		c := sessionCookieOf(t, w)
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure || c.MaxAge != 14*24*3600 || len(c.Value) != 43 {
			t.Fatalf("cookie %+v (%v)", c, w.Header()["Set-Cookie"])
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
			t.Fatalf("Cache-Control %q", cc)
		}
		// The store holds the token's hash, not the token.
		var n int
		if err := ts.store.queryRow(t, `SELECT count(*) FROM sessions WHERE token_hash = '`+mapcommons.HashSessionToken(c.Value)+`'`, &n); err != nil || n != 1 {
			t.Fatalf("sessions by hash: %d, %v", n, err)
		}
		if err := ts.store.queryRow(t, `SELECT count(*) FROM sessions WHERE token_hash = '`+c.Value+`'`, &n); err != nil || n != 0 {
			t.Fatalf("the token itself is stored: %d, %v", n, err)
		}
	})
	t.Run("SecureUnderTLS", func(t *testing.T) {
		hr := httptest.NewRequest("POST", "https://mapcommons.test/session", strings.NewReader("login=alice&password=secret1"))
		hr.Header.Set("Content-Type", formType)
		hr.TLS = &tls.ConnectionState{}
		w := httptest.NewRecorder()
		ts.handler.ServeHTTP(w, hr)
		if c := sessionCookieOf(t, w); w.Code != 201 || c == nil || !c.Secure || !c.HttpOnly {
			t.Fatalf("%d, cookie %+v", w.Code, c)
		}
		https := newServer(t, func(c *api.Config) { c.BaseURL = "https://maps.example" })
		w = https.signIn("alice", "secret1", nil)
		if c := sessionCookieOf(t, w); w.Code != 201 || c == nil || !c.Secure {
			t.Fatalf("https base URL: %d, cookie %+v", w.Code, c)
		}
	})
	t.Run("ReadsAsTheUser", func(t *testing.T) {
		b := ts.mustSignIn("alice")
		doc := decode[map[string]any](t, must(t, b.get(ds+".json"), 200))
		if doc["title"] != "private" {
			t.Fatalf("dataset: %v", doc)
		}
		me := decode[map[string]any](t, must(t, b.get("/session"), 200))
		if me["login"] != "alice" || me["csrf_token"] != b.csrf {
			t.Fatalf("GET /session: %v", me)
		}
		// Basic wins when both come: bob's credentials with alice's cookie are bob.
		w := b.do(req{method: "GET", path: "/session", user: "bob"}, false)
		if me := decode[map[string]any](t, must(t, w, 200)); me["login"] != "bob" || me["csrf_token"] != nil {
			t.Fatalf("Basic and a cookie: %v", me)
		}
		if w := b.do(req{method: "GET", path: ds + ".json", user: "bob"}, false); w.Code == 200 {
			t.Fatal("bob read alice's private dataset with her cookie beside his credentials")
		}
		// JSONP is anonymous whatever the cookie.
		if w := b.get(ds + ".json?callback=cb"); w.Code == 200 {
			t.Fatalf("JSONP served the private dataset to a cookie: %s", w.Body)
		}
		errorOf(t, b.get("/session.xml"), 404, "not_found", "xml")
	})
	t.Run("CSRF", func(t *testing.T) {
		b := ts.mustSignIn("alice")
		put := req{method: "PUT", path: ds + ".json", ctype: formType, body: []byte("title=changed")}
		errorOf(t, b.do(put, false), 403, "forbidden", "CSRF token")
		bad := put
		bad.header = map[string]string{"X-CSRF-Token": strings.Repeat("A", 43)}
		errorOf(t, b.do(bad, false), 403, "forbidden", "CSRF token")
		// Another session's token is no good either.
		other := ts.mustSignIn("alice")
		bad.header = map[string]string{"X-CSRF-Token": other.csrf}
		errorOf(t, b.do(bad, false), 403, "forbidden", "CSRF token")
		if got := title(); got != "private" {
			t.Fatalf("a refused request changed the title: %q", got)
		}
		// Refused before the body is read.
		body := &recordingBody{size: 1 << 20, fill: ' '}
		w := ts.doBody(req{method: "PUT", path: ds + ".json", ctype: "application/json",
			header: map[string]string{"Cookie": "mc_session=" + b.cookie.Value}}, body, body.size)
		if errorOf(t, w, 403, "forbidden", "CSRF"); body.read != 0 {
			t.Fatalf("%d bytes of a refused body read", body.read)
		}
		// DELETE too, and the refetch GET.
		errorOf(t, b.do(req{method: "DELETE", path: ds + ".json"}, false), 403, "forbidden", "CSRF")
		errorOf(t, b.do(req{method: "GET", path: ds + "/fetch.json"}, false), 403, "forbidden", "CSRF")
		must(t, b.get(ds+".json"), 200)
		// With the token (header, or the field of a plain form) it works.
		must(t, b.do(put, true), 201)
		if got := title(); got != "changed" {
			t.Fatalf("title %q after a PUT with the token", got)
		}
		form := req{method: "PUT", path: ds + ".json", ctype: formType, body: []byte("title=by+form&csrf_token=" + b.csrf)}
		must(t, b.do(form, false), 201)
		if got := title(); got != "by form" {
			t.Fatalf("title %q after a form with the token", got)
		}
		// Basic needs no token.
		must(t, ts.do(req{method: "PUT", path: ds + ".json", user: "alice", ctype: formType, body: []byte("title=private")}), 201)
	})
	t.Run("SignOut", func(t *testing.T) {
		b := ts.mustSignIn("alice")
		stolen := *b.cookie // a copy elsewhere
		errorOf(t, b.do(req{method: "DELETE", path: "/session"}, false), 403, "forbidden", "CSRF")
		w := b.do(req{method: "DELETE", path: "/session"}, true)
		must(t, w, 204)
		if c := sessionCookieOf(t, w); c == nil || c.MaxAge >= 0 || c.Value != "" {
			t.Fatalf("sign-out did not clear the cookie: %v", w.Header()["Set-Cookie"])
		}
		b.cookie = &stolen
		w = b.get("/session")
		errorOf(t, w, 401, "unauthorized", "not signed in")
		if h := w.Header().Get("WWW-Authenticate"); strings.HasPrefix(h, "Basic") || h == "" {
			t.Fatalf("WWW-Authenticate %q to a browser", h)
		}
		// Asked with optional=1 (the pages do), a visitor is a 204; a
		// signed-in caller the same 200 as without it.
		w = b.get("/session?optional=1")
		if must(t, w, 204); w.Body.Len() != 0 {
			t.Fatalf("optional=1 when signed out: %q", w.Body)
		}
		errorOf(t, b.get("/session?optional=0"), 401, "unauthorized", "not signed in")
		if doc := decode[map[string]any](t, must(t, ts.mustSignIn("alice").get("/session?optional=1"), 200)); doc["login"] != "alice" || doc["csrf_token"] == "" {
			t.Fatalf("optional=1 when signed in: %v", doc)
		}
		// The dead cookie is anonymous: the private dataset is refused as to anyone.
		if w := b.get(ds + ".json"); w.Code != anon.Code {
			t.Fatalf("a signed-out cookie: %d, anonymous %d", w.Code, anon.Code)
		}
	})
	t.Run("SignInAgain", func(t *testing.T) {
		// A browser signs in again while a request it sent with its old
		// cookie is being answered: that answer must not clear the
		// cookie, or, arriving after the sign-in's, it signs the browser
		// out of its new session.
		old := ts.mustSignIn("alice")
		w := old.do(req{method: "POST", path: "/session", ctype: formType, body: []byte("login=alice&password=secret1")}, false)
		must(t, w, http.StatusCreated)
		if c := sessionCookieOf(t, w); c == nil || c.Value == "" || c.Value == old.cookie.Value {
			t.Fatalf("signing in again: %v", w.Header()["Set-Cookie"])
		}
		for _, p := range []string{"/session?optional=1", "/session", ds + ".json"} {
			w := old.get(p)
			if c := sessionCookieOf(t, w); c != nil {
				t.Errorf("%s with the replaced session's cookie: Set-Cookie %v", p, w.Header()["Set-Cookie"])
			}
		}
		errorOf(t, old.get("/session"), 401, "unauthorized", "not signed in")
	})
	t.Run("Expired", func(t *testing.T) {
		b := ts.mustSignIn("alice")
		now = now.Add(14*24*time.Hour - time.Second)
		must(t, b.get("/session"), 200)
		now = now.Add(time.Second)
		w := b.get("/session")
		errorOf(t, w, 401, "unauthorized", "not signed in")
		if c := sessionCookieOf(t, w); c == nil || c.MaxAge >= 0 {
			t.Fatalf("an expired session's cookie is not cleared: %v", w.Header()["Set-Cookie"])
		}
		if w := b.get(ds + ".json"); w.Code != anon.Code {
			t.Fatalf("an expired cookie: %d", w.Code)
		}
		var n int
		if err := ts.store.queryRow(t, `SELECT count(*) FROM sessions WHERE token_hash = '`+mapcommons.HashSessionToken(b.cookie.Value)+`'`, &n); err != nil || n != 0 {
			t.Fatalf("the expired session is still stored: %d, %v", n, err)
		}
	})
	t.Run("Sweep", func(t *testing.T) {
		// Expired sessions nobody presents are removed by a later sign-in.
		b := ts.mustSignIn("alice")
		stored := func(c *http.Cookie) int {
			var n int
			if err := ts.store.queryRow(t, `SELECT count(*) FROM sessions WHERE token_hash = '`+mapcommons.HashSessionToken(c.Value)+`'`, &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		now = now.Add(15 * 24 * time.Hour)
		c := ts.mustSignIn("bob")
		if stored(b.cookie) != 0 || stored(c.cookie) != 1 {
			t.Fatal("a sign-in did not sweep the expired sessions")
		}
		// Signing in again ends the session the browser had.
		w := c.do(req{method: "POST", path: "/session", ctype: formType, body: []byte("login=bob&password=secret1")}, false)
		must(t, w, 201)
		if n := sessionCookieOf(t, w); n == nil || n.Value == c.cookie.Value || n.MaxAge <= 0 || len(w.Header()["Set-Cookie"]) != 1 || stored(c.cookie) != 0 {
			t.Fatalf("signing in again: %v, old stored %d", w.Header()["Set-Cookie"], stored(c.cookie))
		}
		errorOf(t, ts.do(req{method: "PATCH", path: "/session"}), 405, "method_not_allowed", "PATCH")
	})
	t.Run("Restart", func(t *testing.T) {
		b := ts.mustSignIn("alice")
		ts.store.reopen(parent) // the later cases use it
		ts.svc = ts.store.services()
		ts.restart()
		me := decode[map[string]any](t, must(t, b.get("/session"), 200))
		if me["login"] != "alice" || me["csrf_token"] != b.csrf {
			t.Fatalf("after a restart: %v", me)
		}
		must(t, b.get(ds+".json"), 200)
	})
	t.Run("CrossSite", func(t *testing.T) {
		for _, h := range []map[string]string{{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://mapcommons.test", "Sec-Fetch-Site": "same-site"}} {
			w := ts.signIn("alice", "secret1", h)
			errorOf(t, w, 403, "forbidden", "cross-")
			if c := sessionCookieOf(t, w); c != nil {
				t.Fatalf("%v: a cookie %v", h, c)
			}
		}
		// The server's own page may sign in.
		must(t, ts.signIn("alice", "secret1", map[string]string{"Origin": "http://mapcommons.test", "Sec-Fetch-Site": "same-origin"}), 201)
	})
	t.Run("PasswordChange", func(t *testing.T) {
		a, other := ts.mustSignIn("bob"), ts.mustSignIn("bob")
		// A session proves no password: it must give the current one.
		change := "user[password]=another1&user[password_confirmation]=another1"
		errorOf(t, a.do(req{method: "PUT", path: "/users/bob.json", ctype: formType, body: []byte(change)}, true),
			400, "invalid", "current_password: can't be blank")
		w := a.do(req{method: "PUT", path: "/users/bob.json", ctype: formType, body: []byte(change + "&user[current_password]=wrong12")}, true)
		errorOf(t, w, 403, "forbidden", "current_password: is wrong")
		if doc := decode[map[string]any](t, w.Body.Bytes()); doc["current_password"] == nil {
			t.Fatalf("no field error: %v", doc)
		}
		must(t, other.get("/session"), 200) // nothing changed, nobody signed out
		must(t, ts.signIn("bob", "secret1", nil), 201)
		w = a.do(req{method: "PUT", path: "/users/bob.json", ctype: "application/json",
			body: []byte(`{"user":{"password":"another1","password_confirmation":"another1","current_password":"secret1"}}`)}, true)
		must(t, w, 200)
		must(t, a.get("/session"), 200) // the session that changed it stays
		errorOf(t, other.get("/session"), 401, "unauthorized", "not signed in")
		// By Basic, every session ends.
		must(t, ts.do(req{method: "PUT", path: "/users/bob.json", user: "admin", ctype: formType,
			body: []byte("user[password]=secret1&user[password_confirmation]=secret1")}), 200)
		errorOf(t, a.get("/session"), 401, "unauthorized", "not signed in")
		// An administrator's session changes another user's without theirs.
		adm := ts.mustSignIn("admin")
		must(t, adm.do(req{method: "PUT", path: "/users/bob.json", ctype: formType, body: []byte("user[password]=secret1&user[password_confirmation]=secret1")}, true), 200)
		// Deleting the user ends theirs.
		c := ts.mustSignIn("bob")
		must(t, ts.do(req{method: "DELETE", path: "/users/bob.json", user: "admin"}), 204)
		errorOf(t, c.get("/session"), 401, "unauthorized", "not signed in")
	})
	t.Run("ErrWrongCurrentPassword", func(t *testing.T) {
		ts := newServer(t)
		change := "user[password]=another1&user[password_confirmation]=another1"
		// Wrong current passwords count as failed logins: the limiter then
		// holds the login, even for the client bob signed in from (his
		// trusted client's own allowance, 10).
		d := ts.mustSignIn("bob")
		for i := 0; ; i++ {
			w := d.do(req{method: "PUT", path: "/users/bob.json", ctype: formType, body: []byte(change + "&user[current_password]=wrong" + itoa(int64(i)))}, true)
			if w.Code == 429 {
				break
			}
			errorOf(t, w, 403, "forbidden", "is wrong")
			if i == 10 {
				t.Fatal("wrong current passwords are not limited")
			}
		}
		errorOf(t, d.do(req{method: "PUT", path: "/users/bob.json", ctype: formType, body: []byte(change + "&user[current_password]=secret1")}, true),
			429, "too_many_requests", "too many failed logins")
	})
	t.Run("ErrWrongPassword", func(t *testing.T) {
		ts := newServer(t)
		for i := range 5 {
			w := ts.signIn("alice", "wrong"+itoa(int64(i)), nil)
			errorOf(t, w, 401, "unauthorized", "invalid login or password")
			if c := sessionCookieOf(t, w); c != nil {
				t.Fatalf("a failed sign-in set %v", c)
			}
			if h := w.Header().Get("WWW-Authenticate"); strings.HasPrefix(h, "Basic") {
				t.Fatalf("a failed sign-in challenges with %q", h)
			}
		}
		// The same limiter as Basic: the login is now held, for the form and for Basic.
		errorOf(t, ts.signIn("alice", "secret1", nil), 429, "too_many_requests", "too many failed logins")
		errorOf(t, ts.get("/session", "alice"), 429, "too_many_requests", "too many failed logins")
		errorOf(t, ts.do(req{method: "POST", path: "/session", ctype: formType, body: []byte("login=alice")}), 401, "unauthorized", "login and password")
	})
	t.Run("JSON", func(t *testing.T) {
		w := ts.do(req{method: "POST", path: "/session.json", ctype: "application/json", body: []byte(`{"login":"admin","password":"secret1"}`)})
		if doc := decode[map[string]any](t, must(t, w, 201)); doc["admin"] != true || sessionCookieOf(t, w) == nil {
			t.Fatalf("JSON sign-in: %v", doc)
		}
	})
}
