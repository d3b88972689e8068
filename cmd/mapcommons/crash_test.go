package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"mapcommons/internal/pgtest"
)

// TestMain lets the test binary act as the mapcommons binary, so that the
// crash test can kill a real server process.
func TestMain(m *testing.M) {
	if os.Getenv("MAPCOMMONS_TEST_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	// The PostgreSQL store's tests start a private server (pgtest), which
	// Main stops when the tests are over.
	pgtest.Main(m)
}

// spawn starts this test binary as "mapcommons serve" on data and returns
// the process and its base URL.
func spawn(t *testing.T, data string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr := spawnServe(t, "--data", data)
	return cmd, "http://" + addr
}

// spawnServe starts this test binary as "mapcommons serve" on a port of
// its choosing with more flags, and returns the process and the address it
// listens on; when it does not start, the test fails with what it said.
func spawnServe(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "MAPCOMMONS_TEST_AS_MAIN=1", "MAPCOMMONS_ADMIN_PASSWORD=e2e-secret", "MAPCOMMONS_BCRYPT_COST="+fastBcrypt)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "msg=listening addr="); i >= 0 {
				addr <- strings.Fields(sc.Text()[i+len("msg=listening addr="):])[0]
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	select {
	case a := <-addr:
		return cmd, a
	case <-time.After(2 * time.Minute): // a bound on a hang, not a measure: CI machines are loaded
		cmd.Process.Kill()
		var said []string
		for l := range lines {
			said = append(said, l)
		}
		t.Fatalf("the server did not start:\n%s", strings.Join(said, "\n"))
	}
	return nil, ""
}

// TestKillDuringUpload kills the server with SIGKILL while it ingests a large
// upload, at several moments, restarts it on the same store and checks that
// no half-created dataset is there, that every acknowledged dataset is
// complete, and that the database is intact.
func TestKillDuringUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns servers")
	}
	var csv strings.Builder
	csv.WriteString("id,lat,lon,name\n")
	rows := 400000
	if raceEnabled {
		rows = 100000
	}
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&csv, "%d,%.5f,%.5f,name %d\n", i, float64(i%170)-85+0.5, float64(i%360)-180+0.25, i)
	}
	body := csv.String()
	data := t.TempDir()
	acknowledged := 0
	for round, delay := range []time.Duration{30 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, 800 * time.Millisecond, 1200 * time.Millisecond, 0} {
		cmd, url := spawn(t, data)
		result := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest("POST", url+"/datasets.json", strings.NewReader(body))
			req.Header.Set("Content-Type", "text/csv")
			req.SetBasicAuth("admin", "e2e-secret")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				result <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			result <- resp.StatusCode
		}()
		status := 0
		if delay > 0 {
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
			status = <-result
		} else {
			status = <-result // the last round runs to completion
			cmd.Process.Signal(syscall.SIGTERM)
		}
		cmd.Wait()
		t.Logf("round %d: killed after %v, upload status %d", round, delay, status)
		if status == http.StatusCreated {
			acknowledged++
		} else if status != 0 {
			t.Fatalf("round %d: upload answered %d", round, status)
		}

		// Restart and look.
		cmd, url = spawn(t, data)
		count := 0
		for id := 1; id <= round+1; id++ {
			resp, err := http.Get(fmt.Sprintf("%s/datasets/%d.json", url, id))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				FeatureCount int    `json:"feature_count"`
				State        string `json:"state"`
			}
			json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			if resp.StatusCode == 404 {
				continue
			}
			if resp.StatusCode != 200 || doc.FeatureCount != rows || doc.State != "complete" {
				t.Fatalf("round %d: dataset %d answered %d with %+v", round, id, resp.StatusCode, doc)
			}
			count++
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if count < acknowledged {
			t.Fatalf("round %d: %d acknowledged datasets, %d found", round, acknowledged, count)
		}
		db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "mapcommons.db"))
		if err != nil {
			t.Fatal(err)
		}
		var check string
		if err := db.QueryRowContext(context.Background(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("round %d: integrity_check %q %v", round, check, err)
		}
		var datasets int
		db.QueryRow(`SELECT count(*) FROM datasets`).Scan(&datasets)
		db.Close()
		// The restart removed what the killed one left half-written.
		files, _ := os.ReadDir(filepath.Join(data, "features"))
		if len(files) != datasets || datasets != count {
			t.Fatalf("round %d: %d files in features/, %d datasets, %d visible", round, len(files), datasets, count)
		}
	}
	if acknowledged == 0 {
		t.Fatal("no upload was ever acknowledged")
	}
}

// TestKillDuringCompaction edits a dataset of the embedded store one
// feature at a time while compactions run (--compact-after 0s: one after
// every edit), kills the server with SIGKILL at several moments, restarts
// it and checks that every acknowledged edit is there once, that nothing
// else changed (but the edit in flight when it died), that the database
// is intact and that the features directory holds only the files the
// datasets name.
func TestKillDuringCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns servers")
	}
	rows := 200000
	if raceEnabled {
		rows = 50000
	}
	var csv strings.Builder
	csv.WriteString("id,lat,lon,name\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&csv, "%d,%.5f,%.5f,name %d\n", i, float64(i%170)-85+0.5, float64(i%360)-180+0.25, i)
	}
	data := t.TempDir()
	cmd, url := spawnServe(t, "--data", data, "--compact-after", "0s")
	base := "http://" + url
	do := func(method, path, ctype, body string) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.SetBasicAuth("admin", "e2e-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	if code, body, err := do("POST", "/datasets.json", "text/csv", csv.String()); err != nil || code != 201 {
		t.Fatalf("upload: %d %v %.200s", code, err, body)
	}
	// The edits' features are at (100.5, -60.5), where no row of the CSV is.
	live := map[string]int64{} // acknowledged, not deleted: name → id
	var order []string
	maybe := map[string]bool{} // in flight at a kill
	edit := 0
	for round, delay := range []time.Duration{300 * time.Millisecond, 700 * time.Millisecond, 1100 * time.Millisecond, 1600 * time.Millisecond, 2300 * time.Millisecond} {
		if round > 0 {
			cmd, url = spawnServe(t, "--data", data, "--compact-after", "0s")
			base = "http://" + url
		}
		stop := time.Now().Add(delay)
		killed := make(chan struct{})
		go func() {
			time.Sleep(time.Until(stop))
			cmd.Process.Signal(syscall.SIGKILL)
			close(killed)
		}()
		for {
			edit++
			name := fmt.Sprintf("e%d", edit)
			body := fmt.Sprintf(`{"adds": [{"name": %q, "geometry": {"type": "Point", "coordinates": [100.5, -60.5]}}]`, name)
			var gone string
			if len(order) > 3 && edit%3 == 0 {
				gone = order[0]
				body += fmt.Sprintf(`, "deletes": [%d]`, live[gone])
			}
			body += "}"
			code, resp, err := do("POST", "/datasets/1/edits.json", "application/json", body)
			if err != nil {
				maybe[name] = true
				if gone != "" {
					maybe[gone] = true
				}
				break
			}
			if code != 200 {
				t.Fatalf("round %d: edit %d answered %d %s", round, edit, code, resp)
			}
			var ans struct {
				Adds []struct {
					ObjectID int64 `json:"objectId"`
				} `json:"addResults"`
			}
			if err := json.Unmarshal(resp, &ans); err != nil || len(ans.Adds) != 1 {
				t.Fatalf("round %d: edit answer %s", round, resp)
			}
			live[name] = ans.Adds[0].ObjectID
			order = append(order, name)
			if gone != "" {
				delete(live, gone)
				order = order[1:]
			}
		}
		<-killed
		cmd.Wait()
		t.Logf("round %d: killed after %v, %d edits so far", round, delay, edit)

		// Restart and look, without compactions.
		cmd, url = spawnServe(t, "--data", data, "--compact-after", "1h")
		base = "http://" + url
		code, body, err := do("GET", "/datasets/1/features.json?bbox=100,-61,101,-60&limit=100000", "", "")
		if err != nil || code != 200 {
			t.Fatalf("round %d: features %d %v", round, code, err)
		}
		var feats []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(body, &feats); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, f := range feats {
			if seen[f.Name] {
				t.Fatalf("round %d: %s twice", round, f.Name)
			}
			seen[f.Name] = true
			if _, ok := live[f.Name]; !ok && !maybe[f.Name] {
				t.Fatalf("round %d: %s is there, deleted or never acknowledged", round, f.Name)
			}
		}
		for name := range live {
			if !seen[name] && !maybe[name] {
				t.Fatalf("round %d: the acknowledged %s is lost", round, name)
			}
		}
		// The in-flight edit is settled now: take the store's word for it.
		for name := range maybe {
			if seen[name] {
				if _, ok := live[name]; !ok {
					live[name] = 0 // an add: its id unknown, never deleted
				}
			} else if _, ok := live[name]; ok {
				delete(live, name)
				order = slices.DeleteFunc(order, func(n string) bool { return n == name })
			}
			delete(maybe, name)
		}
		for name := range seen {
			if _, ok := live[name]; !ok {
				t.Fatalf("round %d: %s is there", round, name)
			}
		}
		code, body, err = do("GET", "/datasets/1.json", "", "")
		var doc struct {
			FeatureCount int `json:"feature_count"`
		}
		if err != nil || code != 200 || json.Unmarshal(body, &doc) != nil || doc.FeatureCount != rows+len(seen) {
			t.Fatalf("round %d: dataset %d %v %+v, want %d features", round, code, err, doc, rows+len(seen))
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "mapcommons.db"))
		if err != nil {
			t.Fatal(err)
		}
		var check, layouts string
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("round %d: integrity_check %q %v", round, check, err)
		}
		db.QueryRow(`SELECT group_concat(segment, ' ') FROM datasets`).Scan(&layouts)
		var deltas string
		db.QueryRow(`SELECT coalesce(group_concat(name, ' '), '') FROM segment_deltas`).Scan(&deltas)
		db.Close()
		want := slices.DeleteFunc(strings.Fields(layouts), func(f string) bool { return strings.HasPrefix(f, "dead:") || strings.HasPrefix(f, "dl-") })
		wantDeltas := slices.DeleteFunc(strings.Fields(layouts), func(f string) bool { return !strings.HasPrefix(f, "dl-") })
		if got := strings.Fields(deltas); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(wantDeltas))) {
			t.Fatalf("round %d: deltas %v, the datasets name %v", round, got, wantDeltas)
		}
		slices.Sort(want)
		var files []string
		entries, _ := os.ReadDir(filepath.Join(data, "features"))
		for _, e := range entries {
			files = append(files, e.Name())
		}
		if !slices.Equal(files, want) {
			t.Fatalf("round %d: files %v, the datasets name %v", round, files, want)
		}
	}
}
