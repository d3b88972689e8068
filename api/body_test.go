package api_test

// Request bodies: a refused caller's body is never read, form and JSON
// bodies are bounded by max-form, and a slow body is cut (over a real
// listener).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
)

// recordingBody is a body of size bytes that counts what was read of it.
type recordingBody struct {
	size, read int64
	fill       byte
}

func (b *recordingBody) Read(p []byte) (int, error) {
	if b.read >= b.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > b.size-b.read {
		n = b.size - b.read
	}
	for i := range p[:n] {
		p[i] = b.fill
	}
	if b.read == 0 && n > 0 {
		p[0] = '{' // a JSON body must start so to be read as JSON
		if b.fill == 'a' {
			p[0] = 'a'
		}
	}
	b.read += n
	return int(n), nil
}

// doBody sends r with body as its body, declaring size as Content-Length
// (-1: chunked).
func (ts *testServer) doBody(r req, body io.Reader, size int64) *httptest.ResponseRecorder {
	ts.t.Helper()
	hr := httptest.NewRequest(r.method, base+r.path, body)
	hr.ContentLength = size
	if r.ctype != "" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	if r.user != "" {
		hr.SetBasicAuth(r.user, "secret1")
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	ts.handler.ServeHTTP(w, hr)
	ts.checkOpenAPI(r, w)
	return w
}

// bodyGates are the routes whose refusal may depend on the body (the
// sharing list decides who may send it); their decision before the body
// is the one given here.
var bodyGates = map[string]func(*matrixCase) int{
	"PUT dataset permissions":      editDS(200),
	"PUT overlay permissions form": editDS(200),
	"PUT map permissions":          editMap(200),
}

// TestRefusedBodyUnread walks the access matrix: every refused caller of
// every route, sending a form and a JSON body twice the size of max-form,
// gets its refusal (not 413) and the body is not read at all.
func TestRefusedBodyUnread(t *testing.T) {
	t.Parallel()
	const size = 2 << 20
	for _, mode := range []mapcommons.Mode{mapcommons.ModeHosted, mapcommons.ModeAppliance} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel() // each mode has its own store
			f := newMatrixFixture(t, mode)
			cases := 0
			for _, rt := range matrixRoutes() {
				for s := range matrixSettings {
					if rt.global && s > 0 {
						break
					}
					for _, role := range matrixRoles {
						f.n++
						c := &matrixCase{f: f, setting: s, role: role.name, ds: f.datasets[s], m: f.maps[s], n: f.n}
						want := rt.want(c)
						if want < 401 {
							continue
						}
						if gate, ok := bodyGates[rt.name]; ok && gate(c) < 400 {
							continue // decided by the body, read within max-form
						}
						r := rt.request(t, c)
						r.user = role.login
						for _, ctype := range []string{form, "application/json"} {
							cases++
							r.ctype = ctype
							b := &recordingBody{size: size, fill: 'a'}
							if ctype != form {
								b.fill = ' '
							}
							w := f.ts.doBody(r, b, size)
							if w.Code != want || b.read != 0 {
								t.Fatalf("%s, %s, %s with a %s body: %d (want %d), %d bytes of the body read: %s",
									matrixSettings[s].name, role.name, rt.name, ctype, w.Code, want, b.read, w.Body.String())
							}
						}
					}
				}
			}
			t.Logf("%d refused requests", cases)
		})
	}
}

// TestRefusedBodyUnreadSignup: with sign-up closed, an anonymous POST
// /users is refused before its body is read.
func TestRefusedBodyUnreadSignup(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance; c.Signup = false })
	b := &recordingBody{size: 2 << 20, fill: 'a'}
	errorOf(t, ts.doBody(req{method: "POST", path: "/users.json", ctype: form}, b, b.size), 401, "unauthorized", "")
	if b.read != 0 {
		t.Fatalf("%d bytes of the body read", b.read)
	}
}

// TestMaxForm: a form or JSON body over max-form is a 413 naming the
// limit, for callers who may do what they ask; with a declared length it
// is refused unread, a chunked one is read no further than the limit.
func TestMaxForm(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=T", "lat,lon,n\n1,2,3\n")
	m := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("title=M&basemap=Acetate")}), 201))
	mapPath := fmt.Sprintf("/maps/%v", m["id"])
	for _, r := range []req{
		{method: "PUT", path: mapPath + ".json", user: "alice"},
		{method: "POST", path: mapPath + "/layers.json", user: "alice"},
		{method: "GET", path: "/search.json"},
		{method: "POST", path: "/users.json"},
		{method: "GET", path: ds + "/features.json"},
		{method: "GET", path: ds + ".json"},
		{method: "POST", path: "/maps.json", user: "alice"},
	} {
		for _, ctype := range []string{form, "application/json"} {
			r.ctype = ctype
			fill := byte('a')
			if ctype != form {
				fill = ' '
			}
			b := &recordingBody{size: 2 << 20, fill: fill}
			errorOf(t, ts.doBody(r, b, b.size), 413, "too_large", "max-form")
			if b.read != 0 {
				t.Errorf("%s %s: %d bytes of a body declared too large read", r.method, r.path, b.read)
			}
			b = &recordingBody{size: 2 << 20, fill: fill}
			errorOf(t, ts.doBody(r, b, -1), 413, "too_large", "max-form")
			if b.read > api.DefaultMaxForm+64<<10 {
				t.Errorf("%s %s: %d bytes of a chunked body read", r.method, r.path, b.read)
			}
		}
	}
	// The limit is the configuration's; under it a form is read.
	small := newServer(t, func(c *api.Config) { c.MaxForm = 4096 })
	errorOf(t, small.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("basemap=Acetate&title=" + strings.Repeat("x", 5000))}), 413, "too_large", "4096")
	must(t, small.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
		body: []byte("basemap=Acetate&title=" + strings.Repeat("x", 100) + "&description=" + strings.Repeat("y", 3000))}), 201)
}

// slowServer is a real listener on a server whose bodies must progress
// every 300 ms and average 200 bytes a second.
func slowServer(t *testing.T) (*testServer, string) {
	ts := newServer(t, func(c *api.Config) { c.BodyTimeout = 300 * time.Millisecond; c.BodyMinRate = 200 })
	srv := httptest.NewUnstartedServer(ts.handler)
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	return ts, srv.Listener.Addr().String()
}

// rawRequest opens a connection and sends the head of a request.
func rawRequest(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	return conn
}

// ended waits (at most a minute, far more than the server needs) for the
// server to answer and close the connection, and returns the answer.
func ended(t *testing.T, conn net.Conn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server did not close a slow connection: %v (read %q)", err, b)
	}
	return string(b)
}

// TestSlowBody: a body that stops, or that trickles, is cut and its
// connection closed; the caller is authorized first.
func TestSlowBody(t *testing.T) {
	_, addr := slowServer(t)
	head := func(auth string, length int) string {
		return fmt.Sprintf("POST /maps.json HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n", auth, length)
	}
	alice := "Authorization: " + basic("alice", "secret1") + "\r\n"
	t.Run("Stalled", func(t *testing.T) {
		conn := rawRequest(t, addr, head(alice, 1000)+"title=a")
		if got := ended(t, conn); !strings.Contains(got, "400 Bad Request") || !strings.Contains(got, "too slowly") {
			t.Fatalf("answer %q", got)
		}
	})
	t.Run("Trickle", func(t *testing.T) {
		// One byte every 100 ms is progress within the idle timeout, but
		// 10 bytes a second is under the minimum rate.
		conn := rawRequest(t, addr, head(alice, 1000))
		done := make(chan string)
		go func() { done <- ended(t, conn) }()
		for i := 0; ; i++ {
			select {
			case got := <-done:
				if !strings.Contains(got, "too slowly") {
					t.Fatalf("answer %q", got)
				}
				return
			case <-time.After(100 * time.Millisecond):
				conn.Write([]byte{'a'}) // fails once the server has closed
			}
			if i > 600 {
				t.Fatal("a trickling body was never cut")
			}
		}
	})
	t.Run("AnonymousRefusedUnread", func(t *testing.T) {
		// The refusal comes at once, before any of the body is sent.
		conn := rawRequest(t, addr, head("", 100000))
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 401 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		ended(t, conn)
	})
	t.Run("KeepAliveAfterBody", func(t *testing.T) {
		// A body read to its end lifts the deadline: the connection stays
		// usable after the timeout has passed.
		body := "title=T&basemap=Acetate"
		conn := rawRequest(t, addr, head(alice, len(body))+body)
		br := bufio.NewReader(conn)
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("%v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		time.Sleep(700 * time.Millisecond)
		io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err = http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("second request on the connection: %v %v", resp, err)
		}
	})
}

// TestFormMemory: form bodies being read share one budget; a body that
// finds it spent is a 429 with Retry-After, and the budget comes back
// when the bodies holding it are done.
func TestFormMemory(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.MaxForm = 64 << 10; c.FormMemory = 80 << 10 })
	srv := httptest.NewServer(ts.handler)
	t.Cleanup(srv.Close)
	body := "title=M&basemap=Acetate&pad=" + strings.Repeat("x", 60000)
	// A body that stops half-way holds its share of the budget.
	conn := rawRequest(t, srv.Listener.Addr().String(), fmt.Sprintf(
		"POST /maps.json HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s",
		basic("alice", "secret1"), len(body), body[:30000]))
	post := func() *http.Response {
		hr, _ := http.NewRequest("POST", srv.URL+"/maps.json", strings.NewReader(body))
		hr.SetBasicAuth("alice", "secret1")
		hr.Header.Set("Content-Type", form)
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	// Wait until the server reads the first body and holds its share (a
	// bound on a hang, not a measure: on a loaded machine the request may
	// take seconds to reach the form's reading).
	server := ts.handler.(*api.Server)
	first := bufio.NewReader(conn)
	for deadline := time.Now().Add(time.Minute); server.FormBudgetLeft() > 80<<10-30000; {
		if time.Now().After(deadline) {
			t.Fatalf("the first body was never read (%d left)", server.FormBudgetLeft())
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if b, err := first.Peek(1); err == nil || len(b) > 0 {
			line, _ := first.ReadString('\n')
			t.Fatalf("the first request was answered before its body came: %q", line)
		}
	}
	if resp := post(); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a form body while the budget was held by another (%d left): %d, Retry-After %q",
			server.FormBudgetLeft(), resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	io.WriteString(conn, body[30000:])
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(first, nil)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("the first body: %v %v", resp, err)
	}
	if resp := post(); resp.StatusCode != 201 {
		t.Fatalf("after the first body: %d", resp.StatusCode)
	}
}

// TestRefusedLargeBodyAnsweredAtOnce: a refused request declaring a body
// too large to drain is answered at once and its connection closed, long
// before the body timeout would cut it.
func TestRefusedLargeBodyAnsweredAtOnce(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BodyTimeout = 10 * time.Minute })
	srv := httptest.NewServer(ts.handler)
	t.Cleanup(srv.Close)
	for _, path := range []string{"PUT /maps/1.json", "POST /maps/1/layers.json", "PUT /maps/1/layers/0.json", "POST /groups.json"} {
		conn := rawRequest(t, srv.Listener.Addr().String(), path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 15000000\r\n\r\nti")
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(conn)
		if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 401") {
			t.Fatalf("%s: %q %v", path, b, err)
		}
	}
}

// TestAbandonedBodyAnsweredAtOnce: a chunked body refused part-way (over
// max-form) is answered at once and the connection closed, not drained
// first at the client's pace.
func TestAbandonedBodyAnsweredAtOnce(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BodyTimeout = 10 * time.Minute; c.MaxForm = 4096 })
	srv := httptest.NewServer(ts.handler)
	t.Cleanup(srv.Close)
	conn := rawRequest(t, srv.Listener.Addr().String(), fmt.Sprintf(
		"POST /maps.json HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n%s\r\n",
		basic("alice", "secret1"), strings.Repeat("a", 0x2000)))
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	// The connection ends (closed, or reset over the unread body) right
	// after the answer.
	b, err := io.ReadAll(conn)
	if (err != nil && !errors.Is(err, syscall.ECONNRESET)) || !strings.HasPrefix(string(b), "HTTP/1.1 413") {
		t.Fatalf("%q %v", b, err)
	}
}
