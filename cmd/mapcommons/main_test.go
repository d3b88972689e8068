package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"mapcommons/basemap/pmtiles/pmtilestest"
)

const realData = "../../testdata/real/"

// startServer runs run("serve") on port 0 in a fresh data directory and
// returns its base URL; the server stops at the end of the test, and the
// test checks that run returned cleanly.
func startServer(t *testing.T, env map[string]string) (string, string) {
	t.Helper()
	return startServerEnv(t, t.TempDir(), env)
}

// startServerOn starts a server on an existing data directory.
func startServerOn(t *testing.T, data string) (string, string) {
	t.Helper()
	return startServerEnv(t, data, nil)
}

func startServerEnv(t *testing.T, data string, env map[string]string) (string, string) {
	t.Helper()
	getenv := func(k string) string {
		if v, ok := env[k]; ok || k != "MAPCOMMONS_BCRYPT_COST" {
			return v
		}
		return fastBcrypt
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, getenv, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "msg=listening addr="); i >= 0 && !sent {
				f := strings.Fields(line[i+len("msg=listening addr="):])
				addr <- f[0]
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
	}()
	var a string
	select {
	case a = <-addr:
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the server did not start")
	}
	if a == "" {
		t.Fatal("the server did not say where it listens")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v after shutdown", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return "http://" + a, data
}

func call(t *testing.T, method, url, user, ctype string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if user != "" {
		req.SetBasicAuth(user, "e2e-secret")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func expect(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d: %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, status, body)
	}
}

// TestEndToEnd runs the real binary's run(): an administrator from the
// environment, a shapefile and a CSV uploaded, and both read back through
// every output built so far.
func TestEndToEnd(t *testing.T) {
	url, data := startServer(t, map[string]string{"MAPCOMMONS_ADMIN_PASSWORD": "e2e-secret"})

	resp, body := call(t, "GET", url+"/healthz", "", "", nil)
	expect(t, resp, body, 200)
	resp, body = call(t, "GET", url+"/users/admin.json", "admin", "", nil)
	expect(t, resp, body, 200)
	if !strings.Contains(string(body), `"admin":true`) {
		t.Fatalf("admin user: %s", body)
	}

	// The shapefile of North Carolina's 100 counties, as the Python client sends it.
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("title", "NC counties")
	for _, ext := range []string{"shp", "shx", "dbf", "prj"} {
		b, err := os.ReadFile(realData + "nc." + ext)
		if err != nil {
			t.Fatal(err)
		}
		fw, _ := mw.CreateFormFile("dataset["+ext+"]", "nc."+ext)
		fw.Write(b)
	}
	mw.Close()
	resp, body = call(t, "POST", url+"/datasets.json", "admin", mw.FormDataContentType(), &mp)
	expect(t, resp, body, 201)
	nc := resp.Header.Get("Location")
	if !strings.HasPrefix(nc, url+"/datasets/") || !strings.HasSuffix(nc, ".json") {
		t.Fatalf("Location %q", nc)
	}
	ncBase := strings.TrimSuffix(nc, ".json")

	resp, body = call(t, "GET", nc+"?include_attributes=1", "", "", nil)
	expect(t, resp, body, 200)
	var doc struct {
		ID             int64               `json:"id"`
		Title          string              `json:"title"`
		FeatureCount   int                 `json:"feature_count"`
		State          string              `json:"state"`
		Stats          map[string]struct{} `json:"stats"`
		DataAttributes []struct {
			Name     string `json:"name"`
			DataType string `json:"data_type"`
		} `json:"data_attributes"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Title != "NC counties" || doc.FeatureCount != 100 || doc.State != "complete" || len(doc.DataAttributes) != 14 {
		t.Fatalf("nc dataset: %+v", doc)
	}
	if _, ok := doc.Stats["BIR74"]; !ok {
		t.Fatalf("no stats for BIR74: %v", doc.Stats)
	}

	// Features, paged the Python client's way, then as GeoJSON.
	names := map[string]bool{}
	for start := 0; start < 100; start += 30 {
		resp, body = call(t, "GET", fmt.Sprintf("%s/features.json?start=%d&limit=30&hex_geometry=1", ncBase, start), "", "", nil)
		expect(t, resp, body, 200)
		var page []map[string]any
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for _, f := range page {
			names[f["NAME"].(string)] = true
			if g, _ := f["geometry"].(string); !strings.HasPrefix(g, "0106000000") && !strings.HasPrefix(g, "0103000000") {
				t.Fatalf("geometry %.20s is not polygon WKB hex", g)
			}
		}
	}
	if len(names) != 100 || !names["Ashe"] {
		t.Fatalf("%d distinct county names", len(names))
	}
	resp, body = call(t, "GET", ncBase+"/features.json?geojson=1&limit=1000", "", "", nil)
	expect(t, resp, body, 200)
	var fc struct {
		Type     string `json:"type"`
		Features []json.RawMessage
	}
	if err := json.Unmarshal(body, &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 100 {
		t.Fatalf("geojson: %v %s %d", err, fc.Type, len(fc.Features))
	}

	// A CSV body, as the Ruby client sends it.
	csvBody := "name,latitude,longitude,visitors\nFalls,35.1,-80.5,120\nPeak,36.2,-81.7,\nLake,34.9,-79.1,33\n"
	resp, body = call(t, "POST", url+"/datasets.json?title=garden%20sculptures", "admin", "text/csv", strings.NewReader(csvBody))
	expect(t, resp, body, 201)
	pts := strings.TrimSuffix(resp.Header.Get("Location"), ".json")

	for _, ds := range []string{ncBase, pts} {
		for _, ext := range []string{".json", ".csv", ".geojson"} {
			resp, body = call(t, "GET", ds+ext, "", "", nil)
			expect(t, resp, body, 200)
			switch ext {
			case ".csv":
				rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
				if err != nil {
					t.Fatalf("%s: %v", ds+ext, err)
				}
				want := 101
				if ds == pts {
					want = 4
				}
				if len(rows) != want {
					t.Fatalf("%s: %d rows, want %d", ds+ext, len(rows), want)
				}
			default:
				if !json.Valid(body) {
					t.Fatalf("%s is not JSON", ds+ext)
				}
			}
		}
	}
	resp, body = call(t, "GET", pts+".csv", "", "", nil)
	if got := string(body); got != "name,visitors,latitude,longitude,WKT\nFalls,120,35.1,-80.5,POINT (-80.5 35.1)\nPeak,,36.2,-81.7,POINT (-81.7 36.2)\nLake,33,34.9,-79.1,POINT (-79.1 34.9)\n" {
		t.Fatalf("csv round trip:\n%s", got)
	}

	// The store lives where --data says.
	if _, err := os.Stat(filepath.Join(data, "mapcommons.db")); err != nil {
		t.Fatal(err)
	}
	resp, body = call(t, "DELETE", pts+".json", "admin", "", nil)
	expect(t, resp, body, 204)
}

func TestUserCreateCommand(t *testing.T) {
	data := t.TempDir()
	var out, errb bytes.Buffer
	getenv := testEnv
	err := run(context.Background(), []string{"user", "create", "--admin", "--data", data, "root"}, getenv, strings.NewReader("pw-123456\n"), &out, &errb)
	if err != nil || !strings.Contains(out.String(), "root") {
		t.Fatalf("user create: %v %s %s", err, out.String(), errb.String())
	}
	// Flags after the login; without --admin an ordinary user.
	out.Reset()
	if err := run(context.Background(), []string{"user", "create", "plain", "--data", data, "--email", "plain@example.com"}, getenv, strings.NewReader("pw-plain1\n"), &out, &errb); err != nil ||
		!strings.Contains(out.String(), "user plain ready") {
		t.Fatalf("an ordinary user: %v %s", err, out.String())
	}
	if err := run(context.Background(), []string{"user", "create", "--data", data}, getenv, strings.NewReader("pw-123456\n"), &out, &errb); err == nil {
		t.Fatal("user create without a login succeeded")
	}
	if err := run(context.Background(), []string{"user", "create", "--admin", "--data", data, "x"}, getenv, strings.NewReader("short\n"), &out, &errb); err == nil || !strings.Contains(err.Error(), "short") {
		t.Fatalf("a short password: %v", err)
	}
	// The administrator can log in to a server on that store.
	url, _ := startServerOn(t, data)
	req, _ := http.NewRequest("GET", url+"/users/root.json", nil)
	req.SetBasicAuth("root", "pw-123456")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"admin":true`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	req, _ = http.NewRequest("GET", url+"/users/plain.json", nil)
	req.SetBasicAuth("plain", "pw-plain1")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"admin":false`) || !strings.Contains(string(b), "plain@example.com") {
		t.Fatalf("the ordinary user: %d %s", resp.StatusCode, b)
	}
}

func TestServeFlags(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"MAPCOMMONS_MODE": "cloud"}[k] }
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, getenv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cloud") {
		t.Fatalf("a bad MAPCOMMONS_MODE: %v", err)
	}
	err = run(context.Background(), []string{"serve", "--max-upload", "lots"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "lots") {
		t.Fatalf("a bad --max-upload: %v", err)
	}
	if p, err := parseCIDRs("10.0.0.0/8, 192.0.2.7 ,fd00::/8;::ffff:198.51.100.1"); err != nil || len(p) != 4 ||
		p[1].String() != "192.0.2.7/32" || p[3].String() != "198.51.100.1/32" {
		t.Fatalf("parseCIDRs: %v %v", p, err)
	}
	err = run(context.Background(), []string{"serve", "--trusted-proxies", "10.0.0.0/8,proxy.local"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "proxy.local") {
		t.Fatalf("a bad --trusted-proxies: %v", err)
	}
	var help bytes.Buffer
	if err := run(context.Background(), []string{"serve", "-h"}, func(string) string { return "" }, nil, io.Discard, &help); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(help.String(), "512MiB") {
		t.Fatalf("serve -h: %v\n%s", err, help.String())
	}
	for n, want := range map[int64]string{512 << 20: "512MiB", 64 << 10: "64KiB", 2 << 30: "2GiB", 1000: "1000", 1536 << 10: "1536KiB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %s", n, got)
		}
		if back, err := parseSize(want); err != nil || back != n {
			t.Errorf("parseSize(formatSize(%d)) = %d, %v", n, back, err)
		}
	}
	err = run(context.Background(), []string{"serve", "--max-features", "-3"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-3") {
		t.Fatalf("a bad --max-features: %v", err)
	}
	// --query-timeout: 30 s by default, from the environment, or the flag.
	for _, tc := range []struct {
		env  string
		args []string
		want time.Duration
	}{{"", nil, 30 * time.Second}, {"2s", nil, 2 * time.Second}, {"2s", []string{"--query-timeout", "1m"}, time.Minute}, {"0", nil, 0}} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		st, err := serverFlags(fs, func(k string) string { return map[string]string{"MAPCOMMONS_QUERY_TIMEOUT": tc.env}[k] })
		if err == nil {
			err = fs.Parse(tc.args)
		}
		if err != nil || st.queryTimeout != tc.want {
			t.Fatalf("query timeout (env %q, %v) = %v, %v; want %v", tc.env, tc.args, st.queryTimeout, err, tc.want)
		}
	}
	if _, err := serverFlags(flag.NewFlagSet("serve", flag.ContinueOnError), func(k string) string {
		return map[string]string{"MAPCOMMONS_QUERY_TIMEOUT": "soon"}[k]
	}); err == nil || !strings.Contains(err.Error(), "MAPCOMMONS_QUERY_TIMEOUT") {
		t.Fatalf("a bad MAPCOMMONS_QUERY_TIMEOUT: %v", err)
	}
	// --local-copies: 2 GiB by default, 0 for none, from the environment
	// or the flag; a negative size is refused.
	for _, tc := range []struct {
		env  string
		args []string
		want int64
	}{{"", nil, 2 << 30}, {"0", nil, 0}, {"", []string{"--local-copies", "0"}, 0}, {"512MiB", []string{"--local-copies", "1G"}, 1 << 30}} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		st, err := serverFlags(fs, func(k string) string { return map[string]string{"MAPCOMMONS_LOCAL_COPIES": tc.env}[k] })
		if err == nil {
			err = fs.Parse(tc.args)
		}
		if err != nil || st.localCopies != tc.want {
			t.Fatalf("local copies (env %q, %v) = %d, %v; want %d", tc.env, tc.args, st.localCopies, err, tc.want)
		}
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := serverFlags(fs, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	} else if err := fs.Parse([]string{"--local-copies", "-1"}); err == nil {
		t.Fatal("--local-copies -1 was taken")
	}
	for in, want := range map[string]int64{"512MiB": 512 << 20, "10k": 10 << 10, "2G": 2 << 30, "1000": 1000} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Fatalf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
}

// TestDefaultShare: on an appliance --default-share (here from the
// environment) shares new datasets and maps; without it they are private.
func TestDefaultShare(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--default-share", "everyone:read"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--default-share") {
		t.Fatalf("a bad --default-share: %v", err)
	}
	for _, c := range []struct {
		share  string
		status int
	}{{"everyone:view,download", 200}, {"", 401}} {
		url, _ := startServer(t, map[string]string{"MAPCOMMONS_ADMIN_PASSWORD": "e2e-secret", "MAPCOMMONS_MODE": "appliance",
			"MAPCOMMONS_DEFAULT_SHARE": c.share})
		resp, body := call(t, "POST", url+"/datasets.json?title=Shared", "admin", "text/csv", strings.NewReader("lat,lon\n1,2\n"))
		expect(t, resp, body, 201)
		ds := resp.Header.Get("Location")
		resp, body = call(t, "POST", url+"/maps.json", "admin", "application/x-www-form-urlencoded", strings.NewReader("title=m&basemap=Acetate"))
		expect(t, resp, body, 201)
		m := resp.Header.Get("Location")
		for _, u := range []string{ds, strings.TrimSuffix(ds, ".json") + ".csv", m} {
			resp, body = call(t, "GET", u, "", "", nil)
			expect(t, resp, body, c.status)
		}
		resp, body = call(t, "GET", ds, "admin", "", nil)
		want := `"permissions":[]`
		if c.share != "" {
			want = `"permissions":[{"group_id":"everyone","permissions":{"download":true,"edit":false,"view":true}}]`
		}
		if !strings.Contains(string(body), want) {
			t.Fatalf("share %q: %s", c.share, body)
		}
	}
}

// TestDataLock: one server at a time on a data directory. A second serve
// exits naming the holder and sweeps nothing; user create says to use the
// API; once the first server stops, the directory is free again.
func TestDataLock(t *testing.T) {
	data := t.TempDir()
	getenv := testEnv
	t.Run("held", func(t *testing.T) {
		url, _ := startServerOn(t, data)
		inflight := filepath.Join(data, "tmp", "upload-in-flight")
		if err := os.WriteFile(inflight, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, getenv, nil, io.Discard, &errb)
		host := strings.TrimPrefix(url, "http://")
		if err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) ||
			!strings.Contains(err.Error(), host) {
			t.Fatalf("a second serve on the same data: %v", err)
		}
		if _, err := os.Stat(inflight); err != nil {
			t.Fatalf("the second serve swept the first one's uploads: %v", err)
		}
		var out bytes.Buffer
		err = run(context.Background(), []string{"user", "create", "--admin", "--data", data, "root"}, getenv, strings.NewReader("pw-123456\n"), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "API") {
			t.Fatalf("user create while the server runs: %v", err)
		}
		resp, _ := call(t, "GET", url+"/healthz", "", "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the first server after the refused second: %d", resp.StatusCode)
		}
	})
	// The first server has stopped: both commands work now.
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"user", "create", "--admin", "--data", data, "root"}, getenv, strings.NewReader("pw-123456\n"), &out, &errb); err != nil {
		t.Fatalf("user create after the server stopped: %v", err)
	}
	startServerOn(t, data)
}

// TestVersion: version and --version print the module's version and the
// Go version from the build information.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if s := out.String(); !strings.HasPrefix(s, "mapcommons ") || !strings.Contains(s, "go1.") {
			t.Fatalf("%s: %q", arg, s)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  string
		a    bool
		d    string
	}{
		{[]string{"x", "--a", "--d", "dir"}, "x", true, "dir"},
		{[]string{"--d=dir", "x", "y", "-a"}, "x y", true, "dir"},
		{[]string{"x", "--", "-a"}, "x -a", false, ""},
		{nil, "", false, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		a := fs.Bool("a", false, "")
		d := fs.String("d", "", "")
		pos, err := parseInterspersed(fs, c.args)
		if err != nil || strings.Join(pos, " ") != c.pos || *a != c.a || *d != c.d {
			t.Errorf("%q: %q %v %q %v", c.args, pos, *a, *d, err)
		}
	}
}

// TestHealth: health exits cleanly for a running server and fails for an
// address where none listens.
func TestHealth(t *testing.T) {
	url, _ := startServer(t, nil)
	getenv := testEnv
	var out bytes.Buffer
	if err := run(context.Background(), []string{"health", "--addr", strings.TrimPrefix(url, "http://")}, getenv, nil, &out, io.Discard); err != nil || out.String() != "ok\n" {
		t.Fatalf("health of a running server: %v %q", err, out.String())
	}
	if err := run(context.Background(), []string{"health", "--addr", "127.0.0.1:1"}, getenv, nil, io.Discard, io.Discard); err == nil {
		t.Fatal("health of nothing succeeded")
	}
}

// TestMaxFeaturesFlag: MAPCOMMONS_MAX_FEATURES (as --max-features) bounds
// the features of a dataset: past it an upload is refused with 413 naming
// the flag; 0 lifts the limit.
func TestMaxFeaturesFlag(t *testing.T) {
	for _, c := range []struct {
		limit  string
		status int
	}{{"2", 413}, {"0", 201}, {"3", 201}} {
		url, _ := startServer(t, map[string]string{"MAPCOMMONS_ADMIN_PASSWORD": "e2e-secret", "MAPCOMMONS_MAX_FEATURES": c.limit})
		resp, body := call(t, "POST", url+"/datasets.json?title=Three", "admin", "text/csv", strings.NewReader("lat,lon\n1,2\n3,4\n5,6\n"))
		expect(t, resp, body, c.status)
		if c.status == 413 && !strings.Contains(string(body), "max-features") {
			t.Fatalf("the refusal does not name max-features: %s", body)
		}
	}
}

// TestImport: import puts files straight into a stopped server's store,
// with progress lines when not on a terminal; while a server runs it says
// to use --url, and with --url sends them to the server.
func TestImport(t *testing.T) {
	data := t.TempDir()
	getenv := testEnv
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"user", "create", "--admin", "--data", data, "admin"}, getenv, strings.NewReader("pw-123456\n"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(context.Background(), []string{"import", "--data", data, "../../examples/places.csv", "../../examples/nc.shp"}, getenv, nil, &out, &errb)
	if err != nil {
		t.Fatalf("import: %v %s", err, errb.String())
	}
	if !strings.Contains(out.String(), `dataset 1 "places", 40 features`) || !strings.Contains(out.String(), `dataset 2 "nc", 100 features`) {
		t.Fatalf("import said %q", out.String())
	}
	err = run(context.Background(), []string{"import", "--data", data, "--title", "x", "a.csv", "b.csv"}, getenv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--title") {
		t.Fatalf("--title with two files: %v", err)
	}
	err = run(context.Background(), []string{"import", "--data", data, "--owner", "nobody", "../../examples/places.csv"}, getenv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("an unknown owner: %v", err)
	}
	err = run(context.Background(), []string{"import", "--data", data, "../../examples/README.md"}, getenv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot be imported") {
		t.Fatalf("a .md file: %v", err)
	}

	url, _ := startServerOn(t, data)
	resp, body := call(t, "GET", url+"/datasets/2.json", "", "", nil)
	expect(t, resp, body, 200)
	if !strings.Contains(string(body), `"feature_count":100`) || !strings.Contains(string(body), `"contributor":"admin"`) {
		t.Fatalf("the imported counties: %s", body)
	}
	err = run(context.Background(), []string{"import", "--data", data, "../../examples/places.csv"}, getenv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--url") {
		t.Fatalf("import while the server runs: %v", err)
	}
	out.Reset()
	errb.Reset()
	err = run(context.Background(), []string{"import", "--url", url, "--user", "admin", "--title", "Capitals", "../../examples/places.csv"},
		getenv, strings.NewReader("pw-123456\n"), &out, &errb)
	if err != nil || !strings.Contains(out.String(), `dataset 3 "Capitals", 40 features`) {
		t.Fatalf("import --url: %v %q %q", err, out.String(), errb.String())
	}
	err = run(context.Background(), []string{"import", "--url", url, "--user", "admin", "../../examples/places.csv"},
		getenv, strings.NewReader("wrong-password\n"), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("import --url with a wrong password: %v", err)
	}
}

// TestImportHelp: import --help lists import's own flags (the store, what
// an upload makes, and the import's), none of the server's others.
func TestImportHelp(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"import", "--help"}, testEnv, nil, &out, &errb)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("import --help: %v", err)
	}
	help := errb.String()
	listed := func(name string) bool { // "  -name type" or, a bool, "  -name"
		return strings.Contains(help, "\n  -"+name+" ") || strings.Contains(help, "\n  -"+name+"\n")
	}
	mine := map[string]bool{}
	for _, name := range []string{"data", "database-url", "mode", "default-share", "max-upload", "max-features",
		"title", "owner", "layer", "url", "user"} {
		mine[name] = true
		if !listed(name) {
			t.Errorf("import --help does not list -%s:\n%s", name, help)
		}
	}
	server := flag.NewFlagSet("serve", flag.ContinueOnError)
	if _, err := serverFlags(server, testEnv); err != nil {
		t.Fatal(err)
	}
	server.VisitAll(func(f *flag.Flag) {
		if !mine[f.Name] && listed(f.Name) {
			t.Errorf("import --help lists the server's -%s:\n%s", f.Name, help)
		}
	})
	if server.Lookup("addr") == nil || listed("addr") {
		t.Errorf("import --help lists -addr, or serverFlags defines none:\n%s", help)
	}
}

// TestProgressLine: a report names the file, how far it was read, the
// features a second and the time left.
func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.every = time.Hour
	f, err := os.Open("../../examples/places.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p.start("places.csv", 0)
	p.opened(f)
	f.Seek(512, io.SeekStart)
	p.feature()
	p.feature()
	p.began = time.Now().Add(-time.Second)
	p.show()
	p.stop()
	line := b.String()
	for _, want := range []string{"places.csv: 512 B of 1.", "%)", "2 features, ", "features/s", "left"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress %q lacks %q", line, want)
		}
	}
}

// TestBodyAndBrowserFlags: --max-form, --body-timeout and --cors-origins
// (from the environment) reach the real server.
func TestBodyAndBrowserFlags(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--cors-origins", "app.example.org"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cors-origins") {
		t.Fatalf("a bad --cors-origins: %v", err)
	}
	url, _ := startServer(t, map[string]string{"MAPCOMMONS_MAX_FORM": "4KiB", "MAPCOMMONS_BODY_TIMEOUT": "300ms",
		"MAPCOMMONS_CORS_ORIGINS": "https://app.example.org, *"})
	resp, body := call(t, "POST", url+"/users.json", "", "application/x-www-form-urlencoded", strings.NewReader("user[login]="+strings.Repeat("x", 5000)))
	expect(t, resp, body, 413)
	if !strings.Contains(string(body), "max-form") {
		t.Fatalf("413 %s", body)
	}
	req, _ := http.NewRequest("OPTIONS", url+"/maps.json", nil)
	req.Header.Set("Origin", "https://app.example.org")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" {
		t.Fatalf("preflight %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest("POST", url+"/users.json", strings.NewReader("user[login]=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("cross-origin POST: %d", resp.StatusCode)
	}
	// A body that stops is cut, and its connection closed.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /users.json HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nuser")
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	got, err := io.ReadAll(conn)
	if err != nil || !strings.Contains(string(got), "too slowly") {
		t.Fatalf("a stalled body: %q %v", got, err)
	}
}

// fastBcrypt is the bcrypt cost of the tests' servers and commands: the
// least, so that hashing does not dominate their time.
const fastBcrypt = "4"

// testEnv is an empty environment but for the least bcrypt cost.
func testEnv(k string) string {
	if k == "MAPCOMMONS_BCRYPT_COST" {
		return fastBcrypt
	}
	return ""
}

// TestBcryptCost: --bcrypt-cost and MAPCOMMONS_BCRYPT_COST set the cost of
// the hashes the server and user create make; out of range is refused.
func TestBcryptCost(t *testing.T) {
	data := t.TempDir()
	env := func(k string) string { return map[string]string{"MAPCOMMONS_BCRYPT_COST": "5"}[k] }
	if err := run(context.Background(), []string{"user", "create", "--data", data, "carol"}, env, strings.NewReader("pw-123456\n"), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	db, err := openStore(context.Background(), data, "")
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.svc.Users.FindUserByLogin(context.Background(), "carol")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || cost != 5 {
		t.Fatalf("cost %d (%v), want 5", cost, err)
	}
	for _, bad := range []string{"3", "32", "x"} {
		err := run(context.Background(), []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, func(k string) string {
			return map[string]string{"MAPCOMMONS_BCRYPT_COST": bad}[k]
		}, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "BCRYPT_COST") {
			t.Errorf("MAPCOMMONS_BCRYPT_COST=%s: %v", bad, err)
		}
	}
	err = run(context.Background(), []string{"serve", "--bcrypt-cost", "40", "--data", t.TempDir()}, testEnv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--bcrypt-cost") {
		t.Errorf("--bcrypt-cost 40: %v", err)
	}
}

// TestBasemapFlag: --basemap is repeatable, replaces MAPCOMMONS_BASEMAP
// (a list), refuses a malformed value, and reaches the server's list.
func TestBasemapFlag(t *testing.T) {
	const osm = "osm=https://tile.openstreetmap.org/{z}/{x}/{y}.png"
	env := func(k string) string {
		if k == "MAPCOMMONS_BASEMAP" {
			return osm + ", topo=https://tiles.example.org/{z}/{x}/{y}.png"
		}
		return ""
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "osm,topo"},
		{[]string{"--basemap", "a=http://10.0.0.1/{z}/{x}/{y}.png", "--basemap", "b=http://10.0.0.2/t/{z}/{x}/{y}"}, "a,b"},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		st, err := serverFlags(fs, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := st.apiConfig()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range cfg.Basemaps {
			names = append(names, b.Name)
		}
		if strings.Join(names, ",") != tc.want {
			t.Errorf("%v: basemaps %v, want %s", tc.args, names, tc.want)
		}
	}
	err := run(context.Background(), []string{"serve", "--basemap", "osm=ftp://x/{z}/{x}/{y}"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--basemap") {
		t.Fatalf("a bad --basemap: %v", err)
	}
	url, _ := startServer(t, map[string]string{"MAPCOMMONS_BASEMAP": osm})
	resp, body := call(t, "GET", url+"/basemaps", "", "", nil)
	expect(t, resp, body, 200)
	if !strings.Contains(string(body), `"name":"osm"`) || !strings.Contains(string(body), `"name":"builtin"`) {
		t.Fatalf("/basemaps: %s", body)
	}
}

// TestUserLinkCommand: `mapcommons user link` prints a one-time sign-in
// link that signs the user in on a server of the store, once.
func TestUserLinkCommand(t *testing.T) {
	data := t.TempDir()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"user", "create", "--data", data, "ann"}, testEnv, strings.NewReader("pw-123456\n"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"user", "link", "--data", data, "--base-url", "https://maps.example", "ann"}, testEnv, nil, &out, &errb); err != nil {
		t.Fatalf("user link: %v %s", err, errb.String())
	}
	link := strings.TrimSpace(out.String())
	token, ok := strings.CutPrefix(link, "https://maps.example/app/signin#link=")
	if !ok || len(token) < 40 {
		t.Fatalf("link %q", link)
	}
	if err := run(context.Background(), []string{"user", "link", "--data", data, "nobody"}, testEnv, nil, &out, &errb); err == nil {
		t.Fatal("a link for no user")
	}
	url, _ := startServerOn(t, data)
	for _, want := range []int{201, 401} {
		resp, err := http.Post(url+"/session.json", "application/x-www-form-urlencoded", strings.NewReader("link="+token))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == 201 && !strings.Contains(string(b), `"login":"ann"`)) {
			t.Fatalf("following the link: %d %s, want %d", resp.StatusCode, b, want)
		}
	}
}

// TestBasemapPMTilesFlag: --basemap-pmtiles (MAPCOMMONS_BASEMAP_PMTILES)
// opens its file at start, a bad one stops the start with its name, and
// the basemap reaches the server's list.
func TestBasemapPMTilesFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pmtiles")
	if err := os.WriteFile(bad, []byte("not a PMTiles file"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "--basemap-pmtiles", bad}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--basemap-pmtiles") || !strings.Contains(err.Error(), "bad.pmtiles") {
		t.Fatalf("a bad --basemap-pmtiles: %v", err)
	}
	good := filepath.Join(t.TempDir(), "streets.pmtiles")
	if err := os.WriteFile(good, pmtilestest.Write([]pmtilestest.Tile{{Z: 0, Data: []byte{0x1f, 0x8b}}}, pmtilestest.Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	url, _ := startServer(t, map[string]string{"MAPCOMMONS_BASEMAP_PMTILES": good})
	resp, body := call(t, "GET", url+"/basemaps", "", "", nil)
	expect(t, resp, body, 200)
	if !strings.Contains(string(body), `"name":"streets"`) || !strings.Contains(string(body), `"pmtiles":true`) {
		t.Fatalf("/basemaps: %s", body)
	}
}
