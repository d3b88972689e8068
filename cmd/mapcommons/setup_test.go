package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveLog is a server process and what it has written to its log.
type serveLog struct {
	cmd   *exec.Cmd
	addr  string
	mu    sync.Mutex
	lines []string
	done  chan struct{} // closed when its log ends
}

// all is every line written so far.
func (s *serveLog) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// stop ends the process and waits for the end of its log.
func (s *serveLog) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd.Wait()
}

// spawnLogged starts this test binary as "mapcommons serve" on data with
// env added to (and MAPCOMMONS_ADMIN_PASSWORD left out of) the test's
// environment, and keeps its log.
func spawnLogged(t *testing.T, data string, env ...string) *serveLog {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--data", data)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAPCOMMONS_ADMIN_PASSWORD=") && !strings.HasPrefix(kv, "MAPCOMMONS_MODE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"MAPCOMMONS_TEST_AS_MAIN=1", "MAPCOMMONS_BCRYPT_COST=" + fastBcrypt}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveLog{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
			if i := strings.Index(line, "msg=listening addr="); i >= 0 {
				addr <- strings.Fields(line[i+len("msg=listening addr="):])[0]
			}
		}
	}()
	select {
	case s.addr = <-addr:
	case <-s.done:
		t.Fatalf("the server stopped before listening:\n%s", s.all())
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the server did not start:\n%s", s.all())
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	return s
}

var setupLinkRE = regexp.MustCompile(`url="?(http://[^\s"]+/app/setup#token=([A-Za-z0-9_-]+))`)

// setupLink waits for the set-up link in the server's log (written with the line
// that says it listens; two minutes only a bound on a hang).
func (s *serveLog) setupLink(t *testing.T) (url, token string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := setupLinkRE.FindStringSubmatch(s.all()); m != nil {
			return m[1], m[2]
		}
	}
	t.Fatalf("no set-up link in the log:\n%s", s.all())
	return "", ""
}

// TestSetupLinkInLog starts the real binary on an empty store: it writes
// a set-up link to its log, at the address it listens on, with a token of
// at least 128 bits; the link makes the first administrator once and signs
// the browser in; restarted, the server writes no link. A start with
// MAPCOMMONS_ADMIN_PASSWORD writes none either.
func TestSetupLinkInLog(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns servers")
	}
	data := t.TempDir()
	srv := spawnLogged(t, data)
	link, token := srv.setupLink(t)
	if !strings.HasPrefix(link, "http://"+srv.addr+"/app/setup#token=") {
		t.Fatalf("the link %q is not at the address listened on, %s", link, srv.addr)
	}
	if len(token) < 22 { // 128 bits of base64url
		t.Fatalf("the token %q is shorter than 128 bits", token)
	}
	base := "http://" + srv.addr
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	getJSON := func(path string, v any) int {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if v != nil {
			json.NewDecoder(resp.Body).Decode(v)
		}
		return resp.StatusCode
	}
	var doc struct {
		Open bool   `json:"open"`
		Mode string `json:"mode"`
	}
	if code := getJSON("/setup.json", &doc); code != 200 || !doc.Open || doc.Mode != "hosted" {
		t.Fatalf("GET /setup.json on a fresh server = %d %+v", code, doc)
	}
	post := func(client *http.Client, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/setup.json",
			strings.NewReader(`{"login":"boss","password":"first-secret","password_confirmation":"first-secret"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Setup-Token", token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	wrong := token[:len(token)-1] + map[bool]string{true: "y", false: "x"}[strings.HasSuffix(token, "x")]
	if resp := post(client, wrong); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("POST /setup with a wrong token = %d, want 403", resp.StatusCode)
	}
	if resp := post(client, token); resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /setup with the link's token = %d, want 201", resp.StatusCode)
	}
	var me struct {
		Login string `json:"login"`
		Admin bool   `json:"admin"`
		Mode  string `json:"mode"`
	}
	if code := getJSON("/session.json", &me); code != 200 || me.Login != "boss" || !me.Admin || me.Mode != "hosted" {
		t.Fatalf("the session after the set-up = %d %+v", code, me)
	}
	if resp := post(http.DefaultClient, token); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the link used again (from another browser) = %d, want 404", resp.StatusCode)
	}
	srv.stop(t)

	again := spawnLogged(t, data)
	if code := getJSON2(t, "http://"+again.addr+"/setup.json", &doc); code != 200 || doc.Open {
		t.Fatalf("GET /setup.json once there is an administrator = %d %+v", code, doc)
	}
	again.stop(t)
	if strings.Contains(again.all(), "/app/setup") {
		t.Fatalf("a server with an administrator wrote a set-up link:\n%s", again.all())
	}

	withPassword := spawnLogged(t, t.TempDir(), "MAPCOMMONS_ADMIN_PASSWORD=e2e-secret")
	withPassword.stop(t)
	if strings.Contains(withPassword.all(), "/app/setup") || !strings.Contains(withPassword.all(), "administrator ready") {
		t.Fatalf("a server started with MAPCOMMONS_ADMIN_PASSWORD:\n%s", withPassword.all())
	}
}

func getJSON2(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(v)
	return resp.StatusCode
}

// TestSetupURL: the link is under --base-url, else at the address listened
// on, localhost for every interface's.
func TestSetupURL(t *testing.T) {
	for _, c := range []struct {
		base string
		addr net.Addr
		want string
	}{
		{"https://maps.example.org/", &net.TCPAddr{IP: net.IPv4(0, 0, 0, 0), Port: 80}, "https://maps.example.org/app/setup#token=T"},
		{"", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080/app/setup#token=T"},
		{"", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://localhost:8080/app/setup#token=T"},
		{"", &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, "http://[::1]:8080/app/setup#token=T"},
	} {
		if got := setupURL(c.base, c.addr, "T"); got != c.want {
			t.Errorf("setupURL(%q, %v) = %q, want %q", c.base, c.addr, got, c.want)
		}
	}
}
