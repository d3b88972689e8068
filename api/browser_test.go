package api_test

// Browsers cannot be turned against their users: pages of other sites may
// not change anything with the credentials the browser caches, JSONP never
// shows private data, and CORS opens only what --cors-origins says.

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

const evil = "https://evil.example"

// TestCrossSiteRefused: every state-changing request a page of another
// site can make is refused before it does anything; the same request
// without browser headers (the real clients), or from the server's own
// pages, works.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.CORSOrigins = []string{"https://app.example.org"} })
	ds := ts.createCSV("?title=T", "lat,lon,n\n1,2,3\n")
	group := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=staff")}), 201))
	groupPath := fmt.Sprintf("/groups/%v", group["id"])

	crossSite := []map[string]string{
		{"Origin": evil},
		{"Origin": evil, "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "http://other.mapcommons.test", "Sec-Fetch-Site": "same-site"},
		{"Origin": "null"},
		{"Origin": "http://mapcommons.test:8080"},
		{"Origin": base, "Sec-Fetch-Site": "cross-site"}, // contradictory: refused
	}
	attacks := []struct {
		name string
		r    req
	}{
		// A plain HTML form creates an administrator with the
		// administrator's cached credentials.
		{"HTMLFormCreatesAdmin", req{method: "POST", path: "/users.json", user: "admin", ctype: form,
			body: []byte("user[login]=mallory&user[password]=secret1&user[password_confirmation]=secret1&user[email]=m@example.com&user[admin]=1")}},
		{"TextPlainFeatures", req{method: "POST", path: ds + "/features.json", user: "admin", ctype: "text/plain",
			body: []byte(`[{"n": 9, "geometry": {"type": "Point", "coordinates": [1, 2]}}]`)}},
		{"JSONFeatures", req{method: "POST", path: ds + "/features.json", user: "admin", ctype: "application/json",
			body: []byte(`[{"n": 9, "geometry": {"type": "Point", "coordinates": [1, 2]}}]`)}},
		{"TextPlainGroupMember", req{method: "POST", path: groupPath + "/users.json", user: "admin", ctype: "text/plain", body: []byte("bob")}},
		{"FormGroupMember", req{method: "POST", path: groupPath + "/users.json", user: "admin", ctype: form, body: []byte("login=bob")}},
		{"PUTDataset", req{method: "PUT", path: ds + ".json?title=owned", user: "admin"}},
		{"DELETEDataset", req{method: "DELETE", path: ds + ".json", user: "admin"}},
		{"GETFetch", req{method: "GET", path: ds + "/fetch.json", user: "admin"}},
	}
	state := func() string {
		return string(must(t, ts.get(ds+".json", "admin"), 200)) + string(must(t, ts.get(groupPath+".json", "admin"), 200)) +
			fmt.Sprint(ts.get("/users/mallory.json", "admin").Code)
	}
	before := state()
	for _, a := range attacks {
		for _, h := range crossSite {
			r := a.r
			r.header = h
			w := ts.do(r)
			errorOf(t, w, 403, "forbidden", "refused")
			if after := state(); after != before {
				t.Fatalf("%s with %v: refused, but the state changed", a.name, h)
			}
		}
	}

	// The same from the server's own pages, a listed origin, or a client
	// that sends no browser headers.
	fromHome := []map[string]string{
		nil,
		{"Sec-Fetch-Site": "same-origin", "Origin": base},
		{"Sec-Fetch-Site": "none"},
		{"Origin": "http://MAPCOMMONS.test:80"},
		{"Origin": "https://app.example.org", "Sec-Fetch-Site": "cross-site"},
	}
	for i, h := range fromHome {
		r := req{method: "POST", path: "/maps.json", user: "alice", ctype: form, body: []byte("title=M&basemap=Acetate"), header: h}
		must(t, ts.do(r), 201)
		r = req{method: "POST", path: "/users.json", ctype: form, header: h,
			body: []byte(fmt.Sprintf("user[login]=u%d&user[password]=secret1&user[password_confirmation]=secret1&user[email]=u%d@example.com", i, i))}
		must(t, ts.do(r), 201)
	}
	// Reading is not changing: a cross-site GET is answered (the browser
	// keeps the answer from the page without CORS).
	must(t, ts.do(req{method: "GET", path: ds + ".json", header: map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}}), 200)
}

// TestOwnOriginFromHost: without a base URL, the server's origin is the
// request's Host (under http or https: behind a TLS proxy the page is
// https).
func TestOwnOriginFromHost(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	for origin, want := range map[string]int{
		"http://mapcommons.test": 201, "https://mapcommons.test": 201, "http://mapcommons.test:8080": 403,
		"http://evil.example": 403, "http://mapcommons.test.evil.example": 403,
	} {
		w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form, body: []byte("title=M&basemap=Acetate"),
			header: map[string]string{"Origin": origin}})
		if w.Code != want {
			t.Errorf("Origin %s: %d, want %d: %s", origin, w.Code, want, w.Body.String())
		}
	}
}

// TestTextPlainNeverParsed: a text/plain body is not read as JSON or as a
// form, even from a client without browser headers.
func TestTextPlainNeverParsed(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=T", "lat,lon,n\n1,2,3\n")
	errorOf(t, ts.do(req{method: "POST", path: ds + "/features.json", user: "alice", ctype: "text/plain",
		body: []byte(`[{"n": 9, "geometry": {"type": "Point", "coordinates": [1, 2]}}]`)}), 415, "unsupported_type", "JSON")
	group := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=staff")}), 201))
	w := ts.do(req{method: "POST", path: fmt.Sprintf("/groups/%v/users.json", group["id"]), user: "admin", ctype: "text/plain", body: []byte(`{"login":"bob"}`)})
	if w.Code < 400 {
		t.Fatalf("a text/plain JSON body added a member: %d %s", w.Code, w.Body.String())
	}
	for _, r := range []req{
		{method: "PUT", path: ds + ".json", user: "alice", ctype: "text/plain", body: []byte(`{"title":"json"}`)},
		{method: "PUT", path: ds + ".json", user: "alice", ctype: "text/plain", body: []byte(`title=form`)},
	} {
		ts.do(r)
	}
	doc := decode[map[string]any](t, must(t, ts.get(ds+".json", ""), 200))
	if doc["title"] != "T" || doc["feature_count"] != 1.0 {
		t.Fatalf("text/plain bodies changed the dataset: %v %v", doc["title"], doc["feature_count"])
	}
	if got := memberLogins(t, ts, int64(group["id"].(float64))); len(got) != 0 {
		t.Fatalf("members %v", got)
	}
}

// TestJSONPAnonymous: a JSONP answer is what an anonymous caller gets,
// whatever credentials the browser sends with the <script> request.
func TestJSONPAnonymous(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	ds := ts.createCSV("?title=Private", "lat,lon,n\n1,2,3\n") // private to alice
	must(t, ts.get(ds+"/features.json", "alice"), 200)
	w := ts.get(ds+"/features.json?callback=f", "alice")
	if w.Code != 401 || strings.Contains(w.Body.String(), "\"n\"") {
		t.Fatalf("JSONP with the owner's credentials: %d %s", w.Code, w.Body.String())
	}
	if !strings.HasPrefix(w.Body.String(), "f(") {
		t.Fatalf("the refusal is not JSONP: %s", w.Body.String())
	}
	w = ts.get(ds+".json?callback=f", "alice")
	if w.Code == 200 {
		t.Fatalf("JSONP dataset with the owner's credentials: %s", w.Body.String())
	}
	// The user's own details are not shown either.
	w = ts.get("/users/alice.json?callback=f", "alice")
	if body := must(t, w, 200); strings.Contains(string(body), "alice@example.com") {
		t.Fatalf("JSONP shows the e-mail: %s", body)
	}
	// Bad credentials are ignored, not refused.
	w = ts.do(req{method: "GET", path: "/healthz?callback=f", header: map[string]string{"Authorization": basic("alice", "wrong")}})
	must(t, w, 200)
	// Public data is served as before.
	hosted := newServer(t)
	pub := hosted.createCSV("?title=Public", "lat,lon,n\n1,2,3\n")
	if body := must(t, hosted.get(pub+"/features.json?geojson=1&callback=cb", "alice"), 200); !strings.HasPrefix(string(body), "cb({") {
		t.Fatalf("JSONP %s", body)
	}
}

// TestCORS: listed origins get credentials, preflights and Vary; "*"
// opens anonymous GETs only; other origins get nothing.
func TestCORS(t *testing.T) {
	t.Parallel()
	app := "https://app.example.org"
	ts := newServer(t, func(c *api.Config) { c.CORSOrigins = []string{app, "*"} })
	ds := ts.createCSV("?title=T", "lat,lon,n\n1,2,3\n")

	w := ts.do(req{method: "GET", path: ds + ".json", user: "alice", header: map[string]string{"Origin": app}})
	must(t, w, 200)
	if h := w.Header(); h.Get("Access-Control-Allow-Origin") != app || h.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(h.Get("Vary"), "Origin") {
		t.Fatalf("listed origin: %v", h)
	}
	if w := ts.get(ds+".json", ""); !strings.Contains(w.Header().Get("Vary"), "Origin") {
		t.Fatalf("no Vary: Origin without an Origin: %v", w.Header())
	}
	w = ts.do(req{method: "GET", path: ds + ".json", header: map[string]string{"Origin": evil}})
	if h := w.Header(); h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("anonymous GET with *: %v", h)
	}
	w = ts.do(req{method: "GET", path: ds + ".json", user: "alice", header: map[string]string{"Origin": evil}})
	if h := w.Header(); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("credentialed GET from an unlisted origin: %v", h)
	}
	// Without "*" an unlisted origin gets nothing at all.
	closed := newServer(t, func(c *api.Config) { c.CORSOrigins = []string{app} })
	w = closed.do(req{method: "GET", path: "/search.json", header: map[string]string{"Origin": evil}})
	if h := w.Header(); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unlisted origin: %v", h)
	}

	preflight := func(ts *testServer, origin, method, headers string) *httptest.ResponseRecorder {
		h := map[string]string{"Origin": origin, "Access-Control-Request-Method": method}
		if headers != "" {
			h["Access-Control-Request-Headers"] = headers
		}
		return ts.do(req{method: "OPTIONS", path: ds + ".json", header: h})
	}
	p := preflight(ts, app, "PUT", "authorization, content-type")
	if p.Code != 204 || p.Header().Get("Access-Control-Allow-Origin") != app || !strings.Contains(p.Header().Get("Access-Control-Allow-Methods"), "PUT") ||
		!strings.Contains(p.Header().Get("Access-Control-Allow-Headers"), "Authorization") || p.Header().Get("Access-Control-Max-Age") == "" ||
		p.Header().Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("preflight of a listed origin: %d %v", p.Code, p.Header())
	}
	if p := preflight(ts, evil, "GET", ""); p.Code != 204 || p.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("GET preflight with *: %d %v", p.Code, p.Header())
	}
	for _, c := range []struct{ method, headers string }{{"PUT", ""}, {"DELETE", ""}, {"GET", "authorization"}} {
		if p := preflight(ts, evil, c.method, c.headers); p.Code != 403 || p.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%s preflight of an unlisted origin: %d %v", c.method, p.Code, p.Header())
		}
	}
	if p := preflight(closed, evil, "GET", ""); p.Code != 403 {
		t.Fatalf("preflight without *: %d", p.Code)
	}
	// A listed origin's page may change things with the user's credentials.
	must(t, ts.do(req{method: "PUT", path: ds + ".json?title=fromApp", user: "alice", header: map[string]string{"Origin": app, "Sec-Fetch-Site": "cross-site"}}), 201)
	// "*" lets no other page change anything.
	errorOf(t, ts.do(req{method: "PUT", path: ds + ".json?title=evil", user: "alice", header: map[string]string{"Origin": evil}}), 403, "forbidden", "origin")
}
