package api_test

import (
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
)

// signInFrom posts the sign-in form from addr (host only) with a code.
func (ts *testServer) signInFrom(addr, login, password, code string) *httptest.ResponseRecorder {
	ts.t.Helper()
	form := url.Values{"login": {login}, "password": {password}}
	if code != "" {
		form.Set("code", code)
	}
	hr := httptest.NewRequest("POST", base+"/session", strings.NewReader(form.Encode()))
	hr.Header.Set("Content-Type", formType)
	hr.RemoteAddr = addr + ":5000"
	w := httptest.NewRecorder()
	ts.handler.ServeHTTP(w, hr)
	return w
}

// basicAuth is the Authorization header of login and password.
func basicAuth(login, password string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))}
}

// enrol sets up a second factor for login (password secret1) at the
// server's clock and returns its secret and recovery codes.
func enrol(t *testing.T, ts *testServer, login string) ([]byte, []string) {
	t.Helper()
	w := ts.do(req{method: "POST", path: "/users/" + login + "/second_factor", user: login, ctype: formType, body: []byte("password=secret1")})
	doc := decode[map[string]string](t, must(t, w, 201))
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(doc["secret"])
	if err != nil || len(secret) != mapcommons.TOTPSecretLen {
		t.Fatalf("secret %q: %v", doc["secret"], err)
	}
	if !strings.HasPrefix(doc["otpauth_uri"], "otpauth://totp/") || !strings.Contains(doc["otpauth_uri"], "secret="+doc["secret"]) {
		t.Fatalf("uri %q", doc["otpauth_uri"])
	}
	png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(doc["qr_code"], "data:image/png;base64,"))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("QR code %.40q: %v", doc["qr_code"], err)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Fatal("the secret may be cached")
	}
	code := mapcommons.TOTPCode(secret, mapcommons.TOTPStep(ts.cfg.Now()))
	w = ts.do(req{method: "PUT", path: "/users/" + login + "/second_factor", user: login, ctype: formType, body: []byte("code=" + code)})
	doc2 := decode[struct {
		RecoveryCodes []string `json:"recovery_codes"`
		Status        string   `json:"status"`
	}](t, must(t, w, 200))
	codes := doc2.RecoveryCodes
	if len(codes) != mapcommons.RecoveryCodes {
		t.Fatalf("recovery codes %v", codes)
	}
	return secret, codes
}

// TestSecondFactorEnrolment: only the user sets up their second factor,
// with their password; it is pending (logins unchanged) until a first
// code confirms it; its status is in the user's own JSON only; the user
// removes it with password and code, an administrator without.
func TestSecondFactorEnrolment(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	start := func(user, password string) *httptest.ResponseRecorder {
		return ts.do(req{method: "POST", path: "/users/alice/second_factor", user: user, ctype: formType, body: []byte("password=" + password)})
	}
	errorOf(t, start("", "secret1"), 401, "unauthorized", "")
	errorOf(t, start("bob", "secret1"), 403, "forbidden", "")
	errorOf(t, start("admin", "secret1"), 403, "forbidden", "")
	errorOf(t, start("alice", "wrong"), 403, "forbidden", "password")
	must(t, start("alice", "secret1"), 201)
	status := func(user string) any {
		return decode[map[string]map[string]any](t, must(t, ts.get("/users/alice.json", user), 200))["User"]["second_factor"]
	}
	if s := status("alice"); s != "pending" {
		t.Fatalf("status %v", s)
	}
	if s := status("bob"); s != nil {
		t.Fatalf("bob sees alice's second factor: %v", s)
	}
	if s := status("admin"); s != nil {
		t.Fatalf("the administrator sees alice's second factor: %v", s)
	}
	// Pending: logins as before.
	must(t, ts.get("/session.json", "alice"), 200)
	errorOf(t, ts.do(req{method: "PUT", path: "/users/alice/second_factor", user: "alice", ctype: formType, body: []byte("code=000000")}), 400, "invalid", "code")

	secret, codes := enrol(t, ts, "alice")
	now = now.Add(time.Minute)
	w := ts.signInFrom("192.0.2.1", "alice", "secret1", mapcommons.TOTPCode(secret, mapcommons.TOTPStep(now)))
	doc := decode[map[string]any](t, must(t, w, 201))
	br := &browser{ts: ts, cookie: sessionCookieOf(t, w), csrf: doc["csrf_token"].(string)}
	if s := decode[map[string]map[string]any](t, must(t, br.get("/users/alice.json"), 200))["User"]["second_factor"]; s != "on" {
		t.Fatalf("status %v", s)
	}
	errorOf(t, br.do(req{method: "POST", path: "/users/alice/second_factor", ctype: formType, body: []byte("password=secret1")}, true), 409, "conflict", "")
	// The password alone no longer signs in, over Basic nor the form.
	errorOf(t, ts.get("/session.json", "alice"), 401, "unauthorized", "code")
	b := decode[map[string]any](t, must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", ""), 401))
	if b["second_factor"] == nil {
		t.Fatalf("no sign of the code needed: %v", b)
	}
	// Removal by the user, signed in: password and code.
	del := func(password, code string) *httptest.ResponseRecorder {
		return br.do(req{method: "DELETE", path: "/users/alice/second_factor", ctype: formType,
			body: []byte(url.Values{"password": {password}, "code": {code}}.Encode())}, true)
	}
	errorOf(t, ts.do(req{method: "DELETE", path: "/users/alice/second_factor", user: "bob"}), 403, "forbidden", "")
	// The code of the sign-in is used: not again.
	errorOf(t, del("secret1", mapcommons.TOTPCode(secret, mapcommons.TOTPStep(now))), 403, "forbidden", "")
	errorOf(t, del("wrong", mapcommons.TOTPCode(secret, mapcommons.TOTPStep(now)+1)), 403, "forbidden", "")
	errorOf(t, del("secret1", ""), 403, "forbidden", "")
	must(t, ts.get("/session.json", "alice"), 401)
	must(t, del("secret1", codes[0]), 204)
	must(t, ts.get("/session.json", "alice"), 200)
	// Removal by an administrator.
	now = now.Add(time.Minute)
	enrol(t, ts, "alice")
	errorOf(t, ts.get("/session.json", "alice"), 401, "unauthorized", "code")
	must(t, ts.do(req{method: "DELETE", path: "/users/alice/second_factor", user: "admin"}), 204)
	must(t, ts.get("/session.json", "alice"), 200)
}

// TestSecondFactorLogin: a code signs in once; a wrong password and a
// wrong code are answered alike; over Basic the code follows the password
// and the same header is good again for a while; a recovery code once.
func TestSecondFactorLogin(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
	secret, codes := enrol(t, ts, "alice")
	code := func(d int64) string { return mapcommons.TOTPCode(secret, mapcommons.TOTPStep(now)+d) }
	now = now.Add(time.Minute)
	wrongCode := code(5)
	a := errorOf(t, ts.signInFrom("192.0.2.1", "alice", "secret1", wrongCode), 401, "unauthorized", "")
	b := errorOf(t, ts.signInFrom("192.0.2.1", "alice", "wrong", code(0)), 401, "unauthorized", "")
	if a["error"] != b["error"] || a["second_factor"] != nil || b["second_factor"] != nil {
		t.Fatalf("a wrong code and a wrong password answer differently: %v, %v", a, b)
	}
	// The code was used by the attempt with the wrong password.
	must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", code(0)), 401)
	// The next step's is good (a clock a little ahead), once.
	must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", code(1)), 201)
	must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", code(1)), 401)
	// Two steps back is too old.
	now = now.Add(2 * mapcommons.TOTPPeriod)
	must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", code(-2)), 401)
	// Basic: the code after the password.
	h := basicAuth("alice", "secret1"+code(0))
	must(t, ts.do(req{method: "GET", path: "/session.json", header: h}), 200)
	must(t, ts.do(req{method: "GET", path: "/session.json", header: h}), 200)
	must(t, ts.do(req{method: "GET", path: "/session.json", header: basicAuth("alice", "secret1"+code(1)+"x")}), 401)
	// A recovery code, once, in any case and with or without dashes.
	rc := strings.ToUpper(strings.ReplaceAll(codes[3], "-", ""))
	must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", rc), 201)
	must(t, ts.signInFrom("192.0.2.1", "alice", "secret1", codes[3]), 401)
	if left := decode[map[string]map[string]any](t, must(t, ts.do(req{method: "GET", path: "/users/alice.json", header: h}), 200))["User"]["recovery_codes_left"]; left != float64(mapcommons.RecoveryCodes-1) {
		t.Fatalf("recovery codes left: %v", left)
	}
	// Others' logins are unchanged.
	must(t, ts.get("/session.json", "bob"), 200)
}

// TestSecondFactorWhileGuessed: a guesser makes one guess a second for
// ten minutes, each from a new address across many /24s, with the right
// password among the guesses; alice, enrolled, signs in from networks
// she never used throughout, and the guesser is never told a password
// was right (every answer the same 401), nor locked out of anything but
// its address. Without the second factor, the user gets in 0 times.
func TestSecondFactorWhileGuessed(t *testing.T) {
	t.Parallel()
	for _, enrolled := range []bool{true, false} {
		now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
		ts := newServer(t, func(c *api.Config) { c.Now = func() time.Time { return now } })
		var secret []byte
		if enrolled {
			secret, _ = enrol(t, ts, "alice")
			now = now.Add(mapcommons.TOTPPeriod) // the enrolment's code is used
		}
		rng := rand.New(rand.NewPCG(5, 6))
		addr := func() string {
			return netip.AddrFrom4([4]byte{byte(11 + rng.IntN(200)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(1 + rng.IntN(254))}).String()
		}
		answers := map[string]int{}
		in, tries := 0, 0
		for sec := range 600 {
			now = now.Add(time.Second)
			password := fmt.Sprintf("guess%d", sec)
			if sec%7 == 0 {
				password = "secret1"
			}
			w := ts.signInFrom(addr(), "alice", password, fmt.Sprintf("%06d", rng.IntN(1000000)))
			answers[fmt.Sprint(w.Code)+" "+w.Body.String()]++
			if sec%30 == 15 {
				tries++
				c := ""
				if enrolled {
					c = mapcommons.TOTPCode(secret, mapcommons.TOTPStep(now))
				}
				w := ts.signInFrom(addr(), "alice", "secret1", c)
				if w.Code == http.StatusCreated {
					in++
				} else if !enrolled {
					// Told of the way in that does not wait.
					errorOf(t, w, 429, "too_many_requests", "one-time sign-in link")
				}
			}
		}
		if enrolled && (in != tries || len(answers) != 1) {
			t.Fatalf("enrolled: alice got in %d times of %d; the guesser's answers: %v", in, tries, answers)
		}
		if !enrolled && in != 0 {
			t.Fatalf("not enrolled: alice got in %d times of %d", in, tries)
		}
	}
}
