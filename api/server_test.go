package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"mapcommons"
	"mapcommons/api"
)

var update = flag.Bool("update", false, "rewrite golden files")

const base = "http://mapcommons.test"

// testServer is a server on a fresh store with a fixed clock, and an
// administrator "admin" and a user "alice" (both with password "secret1").
type testServer struct {
	t       testing.TB
	handler http.Handler
	svc     mapcommons.Services // the store's services
	store   *testStore
	tmp     string
	cfg     api.Config
	openAPI *openAPIChecker // what its answers are checked against; nil: the served document
}

func newServer(t testing.TB, mutate ...func(*api.Config)) *testServer {
	t.Helper()
	return newServerAt(t, t.TempDir(), mutate...)
}

// newServerAt is newServer with its store and spool in dir.
func newServerAt(t testing.TB, dir string, mutate ...func(*api.Config)) *testServer {
	t.Helper()
	store := openTestStore(t, dir)
	store.setNow(func() time.Time { return time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC) })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{BaseURL: base, Mode: mapcommons.ModeHosted, Signup: true, MaxUpload: 64 << 20,
		TempDir: tmp, BcryptCost: bcrypt.MinCost}
	for _, m := range mutate {
		m(&cfg)
	}
	ts := &testServer{t: t, svc: store.services(), store: store, tmp: tmp, cfg: cfg}
	users := ts.svc.Users
	ts.restart()
	for _, u := range []struct {
		login string
		admin bool
	}{{"admin", true}, {"alice", false}, {"bob", false}} {
		hash, _ := mapcommons.HashPassword("secret1", bcrypt.MinCost)
		if err := users.CreateUser(t.Context(), &mapcommons.User{Login: u.login, Email: u.login + "@example.com",
			Fullname: "Full " + u.login, Admin: u.admin, PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// restart replaces the server with a new one on the same store, as a
// restarted process would be: nothing kept in memory.
func (ts *testServer) restart() {
	if old, ok := ts.handler.(*api.Server); ok {
		old.Close() // as the process it stands for stops
	}
	srv := api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), ts.cfg, ts.svc)
	ts.t.Cleanup(srv.Close) // before the store closes (cleanups run last first)
	ts.handler = srv
}

// req describes one request.
type req struct {
	method, path string
	user         string // "" anonymous; the password is always secret1
	ctype        string
	body         []byte
	header       map[string]string
}

func (ts *testServer) do(r req) *httptest.ResponseRecorder {
	ts.t.Helper()
	return ts.doBody(r, bytes.NewReader(r.body), int64(len(r.body)))
}

func (ts *testServer) get(path, user string) *httptest.ResponseRecorder {
	ts.t.Helper()
	return ts.do(req{method: "GET", path: path, user: user})
}

// must asserts the status of w and returns its body.
func must(t testing.TB, w *httptest.ResponseRecorder, status int) []byte {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body: %s", w.Code, status, w.Body.String())
	}
	return w.Body.Bytes()
}

// errorOf asserts an error answer: status, JSON body with code, message containing want.
func errorOf(t testing.TB, w *httptest.ResponseRecorder, status int, code, want string) map[string]any {
	t.Helper()
	body := must(t, w, status)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if m["code"] != code {
		t.Fatalf("code = %v, want %s (%s)", m["code"], code, body)
	}
	if msg, _ := m["error"].(string); !strings.Contains(msg, want) {
		t.Fatalf("error %q does not say %q", msg, want)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q", ct)
	}
	return m
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON (%v): %s", err, b)
	}
	return v
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if json.Indent(&pretty, got, "", "  ") == nil {
		got = append(pretty.Bytes(), '\n')
	}
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file:\n%s", name, got)
	}
}

// multipartBody builds a standard multipart body of files (field → path)
// and text fields.
func multipartBody(t testing.TB, files map[string]string, fields map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for field, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := mw.CreateFormFile(field, filepath.Base(path))
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

const realData = "../testdata/real/"

func ncFiles(prefix string) map[string]string {
	return map[string]string{
		prefix + "[shp]": realData + "nc.shp",
		prefix + "[shx]": realData + "nc.shx",
		prefix + "[dbf]": realData + "nc.dbf",
		prefix + "[prj]": realData + "nc.prj",
	}
}

// createCSV uploads a CSV body as alice and returns the new dataset's id path.
func (ts *testServer) createCSV(query, csv string) string {
	ts.t.Helper()
	w := ts.do(req{method: "POST", path: "/datasets.json" + query, user: "alice", ctype: "text/csv", body: []byte(csv)})
	must(ts.t, w, http.StatusCreated)
	loc := w.Header().Get("Location")
	return strings.TrimSuffix(strings.TrimPrefix(loc, base), ".json")
}

func TestRouting(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	t.Run("Health", func(t *testing.T) {
		body := must(t, ts.get("/healthz", ""), 200)
		if !strings.Contains(string(body), `"ok"`) {
			t.Fatalf("healthz: %s", body)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		errorOf(t, ts.get("/nothing/here.json", ""), 404, "not_found", "/nothing/here.json")
		errorOf(t, ts.get("/datasets/abc.json", ""), 404, "not_found", "abc")
		errorOf(t, ts.get("/datasets/999.json", ""), 404, "not_found", "dataset 999")
	})
	t.Run("ErrMethod", func(t *testing.T) {
		w := ts.do(req{method: "PATCH", path: "/datasets/1.json", user: "alice"})
		errorOf(t, w, 405, "method_not_allowed", "PATCH")
	})
	t.Run("DoubleSlashAndOverlays", func(t *testing.T) {
		path := ts.createCSV("?title=x", "lat,lon\n1,2\n")
		id := strings.TrimPrefix(path, "/datasets/")
		for _, p := range []string{"//datasets/" + id + ".json", "/overlays/" + id + ".json", "//overlays//" + id + ".json", "/datasets/" + id} {
			doc := decode[map[string]any](t, must(t, ts.get(p, ""), 200))
			if doc["title"] != "x" {
				t.Fatalf("%s: %v", p, doc)
			}
		}
	})
	t.Run("StatusHeader", func(t *testing.T) {
		w := ts.get("/healthz", "")
		if got := w.Header().Get("Status"); got != "200 OK" {
			t.Fatalf("Status header %q", got)
		}
	})
	t.Run("ErrBadCallback", func(t *testing.T) {
		errorOf(t, ts.get("/healthz?callback=alert(1)", ""), 400, "invalid", "callback")
	})
	t.Run("Callback", func(t *testing.T) {
		w := ts.get("/healthz?callback=my.cb_1", "")
		if body := must(t, w, 200); string(body) != `my.cb_1({"status":"ok"});` {
			t.Fatalf("JSONP body %s", body)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
			t.Fatalf("JSONP Content-Type %q", ct)
		}
	})
}

func TestAuth(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	t.Run("BlankBasicIsAnonymous", func(t *testing.T) {
		w := ts.do(req{method: "GET", path: "/users/alice.json", header: map[string]string{"Authorization": "Basic Og=="}})
		doc := decode[map[string]map[string]any](t, must(t, w, 200))
		if _, ok := doc["User"]["email"]; ok {
			t.Fatal("anonymous caller sees the e-mail")
		}
	})
	t.Run("ErrWrongPassword", func(t *testing.T) {
		hr := httptest.NewRequest("GET", base+"/healthz", nil)
		hr.SetBasicAuth("alice", "wrong")
		w := httptest.NewRecorder()
		ts.handler.ServeHTTP(w, hr)
		errorOf(t, w, 401, "unauthorized", "invalid login or password")
		if got := w.Header().Get("WWW-Authenticate"); got != `Basic realm="mapcommons"` {
			t.Fatalf("WWW-Authenticate %q", got)
		}
	})
	t.Run("ErrUnknownUser", func(t *testing.T) {
		w := ts.do(req{method: "GET", path: "/healthz", user: "nobody"})
		errorOf(t, w, 401, "unauthorized", "invalid login or password")
	})
	t.Run("ErrOtherScheme", func(t *testing.T) {
		w := ts.do(req{method: "GET", path: "/healthz", header: map[string]string{"Authorization": "Bearer abc"}})
		errorOf(t, w, 401, "unauthorized", "Basic")
	})
	t.Run("CachedAndRevoked", func(t *testing.T) {
		// A right password twice (the second from the cache), then a password
		// change: the old one must stop working at once.
		for i := 0; i < 2; i++ {
			must(t, ts.do(req{method: "GET", path: "/users/bob.json", user: "bob"}), 200)
		}
		w := ts.do(req{method: "PUT", path: "/users/bob.json", user: "bob", ctype: "application/x-www-form-urlencoded",
			body: []byte("user[password]=newpass1&user[password_confirmation]=newpass1")})
		must(t, w, 200)
		errorOf(t, ts.do(req{method: "GET", path: "/users/bob.json", user: "bob"}), 401, "unauthorized", "invalid")
	})
}

type apiConfig = api.Config

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func userID(t *testing.T, ts *testServer, login string) int64 {
	t.Helper()
	u := decode[map[string]map[string]any](t, must(t, ts.get("/users/"+login+".json", ""), 200))["User"]
	return int64(u["id"].(float64))
}
