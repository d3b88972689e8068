package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mapcommons/internal/pgtest"
)

// haproxyPath returns the haproxy binary, skipping the test without one
// unless MAPCOMMONS_REQUIRE_HAPROXY=1 (CI installs it).
func haproxyPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("MAPCOMMONS_REQUIRE_HAPROXY") == "1" {
		t.Fatal("haproxy is not installed (apt-get install haproxy) and MAPCOMMONS_REQUIRE_HAPROXY=1")
	}
	t.Skip("haproxy is not installed")
	return ""
}

// freePort returns a port nothing listens on just now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// spawnOnDatabase starts this test binary as "mapcommons serve" on the
// PostgreSQL database at url, with a data directory of its own (its
// temporary files), and returns the process and its address.
func spawnOnDatabase(t *testing.T, url string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr := spawnServe(t, "--data", t.TempDir(), "--database-url", url)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, addr
}

// startHAProxy starts haproxy in front of the servers at addrs and returns
// its base URL once it answers. Each request goes to the servers in turn
// on a connection of its own; a request whose connection a server refuses
// (it is down) is sent to the other, never one a server received.
func startHAProxy(t *testing.T, bin string, addrs ...string) string {
	t.Helper()
	port := freePort(t)
	var servers strings.Builder
	for i, a := range addrs {
		// A killed server refuses connections, which retry-on conn-failure
		// sends to the other at once: checks need not find it fast, and one
		// slow answer of the survivor's /healthz on a loaded machine must
		// not take it out (fall 1 with the check's timeout at 200 ms did).
		fmt.Fprintf(&servers, "\tserver s%d %s check inter 200ms fall 3 rise 2\n", i, a)
	}
	cfg := fmt.Sprintf(`global
	maxconn 512
defaults
	mode http
	timeout connect 2s
	timeout client 60s
	timeout server 60s
	timeout check 10s
	option httpclose
	retries 3
	retry-on conn-failure
	option redispatch 1
frontend web
	bind 127.0.0.1:%d
	default_backend servers
backend servers
	balance roundrobin
	option httpchk GET /healthz
%s`, port, servers.String())
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("haproxy did not answer")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scaleDataset is what the workload knows of one dataset it made: the
// features of writes acknowledged, and of writes that failed (which may or
// may not have happened).
type scaleDataset struct {
	id            string
	acked, failed int
	pending       int // features of appends in flight
}

// TestScaleOut: PostgreSQL, two mapcommons servers and haproxy (real
// processes); a mixed read/write workload through haproxy while one server
// is killed (SIGKILL) part-way. No acknowledged write is lost, the only
// errors are requests in flight at the killed server when it died, and
// every read shows at least the writes acknowledged before it started and
// at most those attempted.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns servers")
	}
	bin := haproxyPath(t)
	url := pgtest.URL(t)
	st, err := openStore(context.Background(), t.TempDir(), url)
	if err != nil {
		t.Fatal(err)
	}
	missing := missingServices(st.svc)
	st.Close()
	if len(missing) > 0 {
		t.Skipf("the PostgreSQL store gives no %s yet: it cannot serve", strings.Join(missing, ", "))
	}
	killed, addrA := spawnOnDatabase(t, url)
	_, addrB := spawnOnDatabase(t, url)
	base := startHAProxy(t, bin, addrA, addrB)
	client := &http.Client{Timeout: time.Minute}
	doLoc := func(method, path, ctype, body string) (int, []byte, string, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.SetBasicAuth("admin", "e2e-secret")
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, res.Header.Get("Location"), err
	}
	do := func(method, path, ctype, body string) (int, []byte, error) {
		code, b, _, err := doLoc(method, path, ctype, body)
		return code, b, err
	}

	var (
		mu       sync.Mutex
		datasets []*scaleDataset
		failures []string
		killAt   time.Time // when the server was sent SIGKILL
		deadAt   time.Time // when it was gone
		ops      = map[string]int{}
		inFlight int // requests failed because the killed server died under them
		dying    int // requests sent while it was dying that failed
	)
	// fail records a request that failed, allowed when the killed server
	// died while it was in flight: from before the signal to after it
	// was gone (it may take a request in the moment it dies). Those sent
	// before the signal are bounded by the workers (one each); a worker
	// whose request failed may send another before the server is gone,
	// which may fail too (the load balancer may still send it there).
	fail := func(what string, start, end time.Time, detail string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case killAt.IsZero() || end.Before(killAt) || (!deadAt.IsZero() && start.After(deadAt)):
			failures = append(failures, fmt.Sprintf("%s (%s – %s, the kill at %s): %s", what,
				start.Format("15:04:05.000"), end.Format("15:04:05.000"), killAt.Format("15:04:05.000"), detail))
		case start.Before(killAt):
			inFlight++
		default:
			dying++
		}
	}
	csv := func(n int) string {
		var b strings.Builder
		b.WriteString("name,lat,lon,n\n")
		for i := range n {
			fmt.Fprintf(&b, "p%d,%.4f,%.4f,%d\n", i, 10+rand.Float64(), 20+rand.Float64(), i)
		}
		return b.String()
	}
	create := func() (ok bool) {
		n := 5 + rand.IntN(50)
		start := time.Now()
		code, body, loc, err := doLoc("POST", "/datasets.json?title=scale", "text/csv", csv(n))
		if err != nil || code != 201 {
			fail("create", start, time.Now(), fmt.Sprintf("%d %v %.200s", code, err, body))
			return false
		}
		_, rest, _ := strings.Cut(loc, "/datasets/")
		id := strings.TrimSuffix(rest, ".json")
		if id == "" {
			t.Errorf("a create answered Location %q", loc)
			return false
		}
		mu.Lock()
		datasets = append(datasets, &scaleDataset{id: id, acked: n})
		ops["create"]++
		mu.Unlock()
		return true
	}
	appendTo := func(ds *scaleDataset) {
		n := 1 + rand.IntN(5)
		var feats []string
		for i := range n {
			feats = append(feats, fmt.Sprintf(`{"name":"a%d","n":%d,"geometry":{"type":"Point","coordinates":[20.5,10.5]}}`, i, i))
		}
		mu.Lock()
		ds.pending += n
		mu.Unlock()
		start := time.Now()
		code, body, err := do("POST", "/datasets/"+ds.id+"/features.json", "application/json", "["+strings.Join(feats, ",")+"]")
		mu.Lock()
		ds.pending -= n
		if err == nil && code == 201 {
			ds.acked += n
			ops["append"]++
		} else {
			ds.failed += n
		}
		mu.Unlock()
		if err != nil || code != 201 {
			fail("append to "+ds.id, start, time.Now(), fmt.Sprintf("%d %v %.200s", code, err, body))
		}
	}
	read := func(ds *scaleDataset) {
		mu.Lock()
		low := ds.acked
		mu.Unlock()
		start := time.Now()
		code, body, err := do("GET", "/datasets/"+ds.id+".json", "", "")
		if err != nil || code != 200 {
			fail("read "+ds.id, start, time.Now(), fmt.Sprintf("%d %v %.200s", code, err, body))
			return
		}
		var doc struct {
			FeatureCount int `json:"feature_count"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Errorf("read %s: %v", ds.id, err)
			return
		}
		code, body, err = do("GET", "/datasets/"+ds.id+"/features.json?limit=1000", "", "")
		if err != nil || code != 200 {
			fail("features of "+ds.id, start, time.Now(), fmt.Sprintf("%d %v %.200s", code, err, body))
			return
		}
		var feats []json.RawMessage
		json.Unmarshal(body, &feats)
		mu.Lock()
		high := ds.acked + ds.failed + ds.pending
		ops["read"]++
		mu.Unlock()
		if doc.FeatureCount < low || doc.FeatureCount > high || len(feats) < low || len(feats) > high {
			mu.Lock()
			failures = append(failures, fmt.Sprintf("dataset %s read %d (count %d features), acknowledged before the read %d, attempted by its end %d",
				ds.id, doc.FeatureCount, len(feats), low, high))
			mu.Unlock()
		}
	}

	for range 4 {
		if !create() {
			t.Fatalf("the first datasets could not be made: %v", failures)
		}
	}
	const workers = 6
	stop := time.Now().Add(6 * time.Second)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				mu.Lock()
				ds := datasets[rand.IntN(len(datasets))]
				mu.Unlock()
				switch r := rand.IntN(10); {
				case r == 0 && w%2 == 0:
					create()
				case r < 4:
					appendTo(ds)
				default:
					read(ds)
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	mu.Lock()
	killAt = time.Now()
	mu.Unlock()
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.Process.Wait()
	mu.Lock()
	deadAt = time.Now()
	mu.Unlock()
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	// Every acknowledged write is there, through the server left.
	for _, ds := range datasets {
		code, body, err := do("GET", "/datasets/"+ds.id+".json", "", "")
		if err != nil || code != 200 {
			t.Errorf("dataset %s after the run: %d %v", ds.id, code, err)
			continue
		}
		var doc struct {
			FeatureCount int `json:"feature_count"`
		}
		json.Unmarshal(body, &doc)
		if doc.FeatureCount < ds.acked || doc.FeatureCount > ds.acked+ds.failed {
			t.Errorf("dataset %s holds %d features: %d acknowledged, %d more attempted", ds.id, doc.FeatureCount, ds.acked, ds.failed)
		}
	}
	t.Logf("%d datasets; %v acknowledged operations; %d requests failed in flight at the kill, %d sent while the server was dying (%d features of appends that may or may not be there)",
		len(datasets), ops, inFlight, dying, countFailed(datasets))
	if inFlight > workers {
		t.Errorf("%d requests failed at the kill, more than the %d in flight", inFlight, workers)
	}
	if ops["read"] < 50 || ops["append"] < 20 {
		t.Errorf("too little work to tell: %v", ops)
	}
}

// countFailed is the number of features whose append failed.
func countFailed(ds []*scaleDataset) int {
	n := 0
	for _, d := range ds {
		n += d.failed
	}
	return n
}

// TestComposeHAProxyConfig: the load balancer's configuration of the
// compose file of docs/postgres.md (examples/postgres) is one haproxy accepts.
func TestComposeHAProxyConfig(t *testing.T) {
	bin := haproxyPath(t)
	out, err := exec.Command(bin, "-c", "-f", "../../examples/postgres/haproxy.cfg").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
}
