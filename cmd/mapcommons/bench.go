package main

// The benchmark command: it generates (or reads) a million-point CSV, starts
// this binary's server as a child process on a fresh store, and measures it
// over HTTP: ingest time and peak memory, query latency and throughput
// against the machine's floor (the same binary serving a pre-encoded answer
// of the same size), grouping, and streaming exports.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons/postgres"
)

// writePoints writes n deterministic points in the schema of
// shared/bench/gen_points.py: id,lon,lat,n,x,cat,label,ts.
func writePoints(w io.Writer, n int, seed uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	bw.WriteString("id,lon,lat,n,x,cat,label,ts\n")
	var label [8]byte
	var line []byte
	for i := 1; i <= n; i++ {
		lon := -180 + 360*r.Float64()
		lat := -85 + 170*r.Float64()
		for k := range label {
			label[k] = byte('a' + r.IntN(26))
		}
		ts := t0.Add(time.Duration(r.IntN(366*86400)) * time.Second)
		line = line[:0]
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, lon, 'f', 6, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, lat, 'f', 6, 64)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(r.IntN(1000)), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, 1000*r.Float64(), 'f', 6, 64)
		line = append(line, ",c"...)
		line = strconv.AppendInt(line, int64(r.IntN(10)), 10)
		line = append(line, ',')
		line = append(line, label[:]...)
		line = append(line, ',')
		line = ts.AppendFormat(line, "2006-01-02T15:04:05Z")
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// child is a server process started by the benchmark.
type child struct {
	cmd  *exec.Cmd
	base string
	// compactions are the server's log lines of finished compactions, as
	// JSON objects of their attributes.
	compactions chan string
	// copies are the ids of the datasets it copied locally (PostgreSQL:
	// --local-copies), from its log.
	copies chan int64
}

// waitCopy asks the child for dataset id's features and waits until it
// has copied the dataset locally (its first read has the copy built).
func (c *child) waitCopy(id int64) error {
	if _, err := get(fmt.Sprintf("%s/ogc/collections/%d/items?limit=1", c.base, id)); err != nil {
		return err
	}
	limit := time.After(10 * time.Minute)
	for {
		select {
		case got := <-c.copies:
			if got == id {
				return nil
			}
		case <-limit:
			return fmt.Errorf("%s did not copy dataset %d in 10 minutes", c.base, id)
		}
	}
}

func startChild(args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return startChildOf(exe, args...)
}

// logfmtJSON turns the key=value pairs of a log line (slog's text form,
// values without spaces) into a JSON object of numbers and strings.
func logfmtJSON(line string) string {
	m := map[string]any{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			m[k] = x
		} else {
			m[k] = strings.Trim(v, `"`)
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// startChildOf starts the server binary exe (another build, to compare).
func startChildOf(exe string, args ...string) (*child, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "MAPCOMMONS_ADMIN_PASSWORD=bench-secret")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	compactions := make(chan string, 16)
	copies := make(chan int64, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "msg=\"dataset compacted\"") {
				select {
				case compactions <- logfmtJSON(sc.Text()):
				default:
				}
			}
			if strings.Contains(sc.Text(), "msg=\"dataset copied locally\"") {
				var m struct{ Dataset int64 }
				if json.Unmarshal([]byte(logfmtJSON(sc.Text())), &m) == nil {
					select {
					case copies <- m.Dataset:
					default:
					}
				}
			}
			if i := strings.Index(sc.Text(), "addr="); i >= 0 && !sent && strings.Contains(sc.Text(), "listening") {
				addr <- strings.Fields(sc.Text()[i+len("addr="):])[0]
				sent = true
			}
		}
	}()
	select {
	case a := <-addr:
		return &child{cmd: cmd, base: "http://" + a, compactions: compactions, copies: copies}, nil
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, errors.New("the server did not start")
	}
}

func (c *child) stop() {
	c.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
	}
}

// mem reads a field of /proc/<pid>/status in MiB (0 where there is no /proc).
func (c *child) mem(field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024
}

// resetPeak resets the child's peak RSS (Linux: clear_refs 5).
func (c *child) resetPeak() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", c.cmd.Process.Pid), []byte("5"), 0)
}

var benchClient = &http.Client{Transport: &http.Transport{
	MaxIdleConns: 64, MaxIdleConnsPerHost: 64, DisableCompression: true,
	DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
}}

// get fetches a URL and returns the body's size.
func get(u string) (int64, error) {
	resp, err := benchClient.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return n, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return n, err
}

// latency runs n sequential requests and returns the durations, sorted.
func latency(u string, n int) ([]time.Duration, int64, error) {
	var ds []time.Duration
	var size int64
	for i := 0; i < n; i++ {
		t := time.Now()
		s, err := get(u)
		if err != nil {
			return nil, 0, err
		}
		ds = append(ds, time.Since(t))
		size = s
	}
	slices.Sort(ds)
	return ds, size, nil
}

// floorRounds is how many times the bench measures the uncached bbox page
// and the floor, in turns.
const floorRounds = 3

// medianOf is the median of vs (the lower middle of an even count).
func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// percents lists ratios as percentages.
func percents(ratios []float64) string {
	var b strings.Builder
	for i, r := range ratios {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.0f %%", 100*r)
	}
	return b.String()
}

func pct(ds []time.Duration, p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// throughput runs c concurrent clients for d and returns requests per second,
// with wrk when it is installed (as the rival's figures were measured).
func throughput(u string, c int, d time.Duration) (float64, string, error) {
	if wrk, err := exec.LookPath("wrk"); err == nil {
		out, err := exec.Command(wrk, "-t"+strconv.Itoa(min(2, c)), "-c"+strconv.Itoa(c), "-d"+strconv.Itoa(int(d.Seconds()))+"s", u).CombinedOutput()
		if err != nil {
			return 0, "", fmt.Errorf("wrk: %v: %s", err, out)
		}
		m := regexp.MustCompile(`Requests/sec:\s+([\d.]+)`).FindSubmatch(out)
		if m == nil {
			return 0, "", fmt.Errorf("wrk said: %s", out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v, "wrk -t2", nil
	}
	return throughputAcross([]string{u}, c, d)
}

// throughputAcross runs c concurrent Go clients for d, each sending its
// requests to the URLs in turn (servers behind a client-side balancer),
// and returns requests per second.
func throughputAcross(urls []string, c int, d time.Duration) (float64, string, error) {
	return throughputOf(func(i, k int) string { return urls[(i+k)%len(urls)] }, c, d)
}

// throughputOf runs c concurrent Go clients for d, client i sending its
// k-th request to next(i, k), and returns requests per second.
func throughputOf(next func(i, k int) string, c int, d time.Duration) (float64, string, error) {
	var n atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				if _, err := get(next(i, k)); err != nil {
					if ctx.Err() == nil {
						firstErr.CompareAndSwap(nil, err)
					}
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if e, ok := firstErr.Load().(error); ok {
		return 0, "", e
	}
	return float64(n.Load()) / d.Seconds(), "Go client", nil
}

// serveStatic is the hidden "bench-static" command: a plain net/http
// server answering every request with the same pre-encoded bytes.
func serveStatic(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-static", flag.ContinueOnError)
	size := fs.Int("size", 6500, "bytes of the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	body := []byte(strings.Repeat("x", *size))
	return serveBench(ctx, stderr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}

// serveBench serves h on a free loopback port, which it writes to stderr
// as the servers' "listening" line (startChild reads it), until ctx ends:
// the bench's helper servers.
func serveBench(ctx context.Context, stderr io.Writer, h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "msg=listening addr=%s\n", ln.Addr())
	srv := &http.Server{Handler: h}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1000000, "points to generate")
	csvPath := fs.String("csv", "", "use this CSV (e.g. from shared/bench/gen_points.py) instead of generating one")
	seconds := fs.Int("seconds", 10, "duration of each throughput run")
	reqs := fs.Int("requests", 2000, "requests per latency measurement")
	ingestOnly := fs.Bool("ingest-only", false, "measure the ingest (time and the server's peak RSS) and stop")
	dbURL := fs.String("database-url", "", "run the servers on this PostgreSQL database (a scratch one: the bench leaves its dataset there) instead of a fresh embedded store; adds the throughput of two servers")
	tilesOnly := fs.Bool("tiles-only", false, "after the ingest, measure the vector tiles only")
	imagesOnly := fs.Bool("images-only", false, "after the ingest, measure the images only (PNG map tiles, the dataset's image and its thumbnail, drawn and cached)")
	edits := fs.Bool("edits", false, "after the ingest, measure edits (single-feature adds, updates, deletes, patches; 1,000 adds; the bbox page with the pending changes; the compaction) instead of the queries")
	pgfs := fs.String("compare-pgfs", "", "with -database-url: measure pg_featureserv (this binary of it, built from its repository, its assets directory beside it) side by side on the same database, after the ingest")
	pgts := fs.String("compare-pgts", "", "with -database-url: measure pg_tileserv (this binary of it, built from its repository) side by side on the same database, after the ingest")
	compareOnly := fs.Bool("compare-only", false, "with -compare-pgfs or -compare-pgts: stop after the comparison")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*pgfs != "" || *pgts != "") && *dbURL == "" {
		return errors.New("bench: -compare-pgfs and -compare-pgts need -database-url")
	}
	work, err := os.MkdirTemp("", "mapcommons-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	out := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }

	data := *csvPath
	if data == "" {
		data = filepath.Join(work, "points.csv")
		f, err := os.Create(data)
		if err != nil {
			return err
		}
		t := time.Now()
		err = writePoints(f, *n, 42)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		out("generated %d points in %v", *n, time.Since(t).Round(time.Millisecond))
	}
	fi, err := os.Stat(data)
	if err != nil {
		return err
	}
	out("data: %s, %.1f MB", data, float64(fi.Size())/1e6)

	store := filepath.Join(work, "store")
	serve := func(cache string, more ...string) (*child, error) {
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", store, "--max-upload", "4GiB", "--response-cache", cache, "--tile-cache", cache,
			"--compact-after", "1h"}
		args = append(args, more...)
		if *dbURL != "" {
			args = append(args, "--database-url", *dbURL)
		}
		return startChild(args...)
	}
	if *dbURL != "" {
		out("store: %s", redactURL(*dbURL))
		store = filepath.Join(work, "spool1") // the servers' temporary files only
	}
	srv, err := serve("32MiB")
	if err != nil {
		return err
	}
	restMB := srv.mem("VmRSS")

	// Ingest.
	f, err := os.Open(data)
	if err != nil {
		srv.stop()
		return err
	}
	req, _ := http.NewRequest("POST", srv.base+"/datasets.json?title=bench", f)
	req.Header.Set("Content-Type", "text/csv")
	req.SetBasicAuth("admin", "bench-secret")
	req.ContentLength = fi.Size()
	t := time.Now()
	resp, err := benchClient.Do(req)
	f.Close()
	if err != nil {
		srv.stop()
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ingest := time.Since(t)
	ingestEnd := time.Now()
	if resp.StatusCode != 201 {
		srv.stop()
		return fmt.Errorf("ingest answered %s", resp.Status)
	}
	dsPath := strings.TrimPrefix(strings.TrimSuffix(resp.Header.Get("Location"), ".json"), srv.base)
	out("ingest: %v (%.0f MB/s), peak RSS of the server %.0f MiB (%.0f MiB at rest before it)", ingest.Round(time.Millisecond),
		float64(fi.Size())/1e6/ingest.Seconds(), srv.mem("VmHWM"), restMB)
	srv.stop()
	if *dbURL == "" {
		var segBytes int64
		filepath.Walk(store, func(path string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && strings.HasSuffix(path, ".seg") {
				segBytes += fi.Size()
			}
			return nil
		})
		out("segment files: %.1f MB", float64(segBytes)/1e6)
	}
	if *ingestOnly {
		return nil
	}

	// Everything but the cached throughput runs on a server without the
	// response cache, so that each request does the whole query.
	srv, err = serve("0")
	if err != nil {
		return err
	}
	ds := srv.base + dsPath
	dsID, _ := strconv.ParseInt(strings.TrimPrefix(dsPath, "/datasets/"), 10, 64)
	if *dbURL != "" {
		// The attribute indexes are built in the background after the
		// ingest (by the first server, stopped since, then this one):
		// the queries are measured once they are.
		if err := waitIndexes(ctx, out, *dbURL, dsPath, ingestEnd); err != nil {
			srv.stop()
			return err
		}
		// and once the server has its local copy of the dataset
		if err := srv.waitCopy(dsID); err != nil {
			srv.stop()
			return err
		}
	}
	if *pgfs != "" || *pgts != "" {
		id := dsID
		spool := store
		store = filepath.Join(work, "spool2") // a second server's own
		withCache, err := serve("32MiB")
		if err != nil {
			srv.stop()
			return err
		}
		// and a third's, which reads every feature from the database
		store = filepath.Join(work, "spool3")
		noCopies, err := serve("0", "--local-copies", "0")
		store = spool
		if err != nil {
			srv.stop()
			withCache.stop()
			return err
		}
		servers := compareServers{db: noCopies.base, ours: srv.base, cached: withCache.base}
		if *dbURL != "" {
			err = withCache.waitCopy(id)
		}
		if err == nil {
			err = benchCompare(ctx, out, *pgfs, *pgts, *dbURL, servers, id, time.Duration(*seconds)*time.Second)
		}
		withCache.stop()
		noCopies.stop()
		if err != nil {
			srv.stop()
			return err
		}
		if *compareOnly {
			srv.stop()
			return nil
		}
	}
	tiles := srv.base + "/ogc/collections/" + strings.TrimPrefix(dsPath, "/datasets/") + "/tiles/WebMercatorQuad"
	if *tilesOnly {
		defer srv.stop()
		return benchTiles(out, vectorTiles, tiles, *reqs)
	}
	if *imagesOnly {
		err := benchImages(out, srv.base, dsPath, *reqs)
		srv.stop()
		if err != nil {
			return err
		}
		if srv, err = serve("32MiB"); err != nil {
			return err
		}
		defer srv.stop()
		return benchThumbnail(out, srv.base, dsPath, *reqs)
	}
	if *edits {
		defer srv.stop()
		bbox := ds + encodeQuery("/features.json?bbox=5,40,15,50&limit=30")
		latency(bbox, 20)
		lat, _, err := latency(bbox, *reqs)
		if err != nil {
			return err
		}
		return benchEdits(out, srv, ds, bbox, *n, pct(lat, 0.5), *dbURL)
	}
	queries := []struct{ name, query string }{
		{"bbox page of 30 (5,40,15,50)", "/features.json?bbox=5,40,15,50&limit=30"},
		{"bbox page as GeoJSON", "/features.json?bbox=5,40,15,50&limit=30&geojson=1"},
		{"100 km radius, with_distance", "/features.json?lat=45&lon=10&radius=100&with_distance=1&limit=30"},
		{"equality filter cat=c3, page of 30", "/features.json?filter[cat][][equals]=c3&limit=30"},
		{"bbox + cat=c3", "/features.json?bbox=5,40,15,50&filter[cat][][equals]=c3&limit=30"},
		{"one feature by position", "/features.json?start=500000&limit=1"},
		{"group_by cat, count+average(x), all", "/features.json?group_by[]=cat&aggregates[][name]=x&aggregates[][calc]=average"},
		{"group_by cat in bbox", "/features.json?group_by[]=cat&aggregates[][name]=x&aggregates[][calc]=average&bbox=5,40,15,50"},
		{"sort by x, page of 30, all", "/features.json?sort=x&limit=30"},
		{"equality filter id=123456 (one feature)", "/features.json?filter[id][][equals]=123456"},
		{"range filter 500<=x<=501 (0.1%), page of 30", "/features.json?filter[x][][min]=500&filter[x][][max]=501&limit=30"},
		{"sort by x descending, page of 30", "/features.json?sort=x&order=desc&limit=30"},
		// The OGC API paths a GIS client takes, CQL2 filters among them.
		{"OGC items bbox page of 30", "/ogc/collections/{id}/items?bbox=5,40,15,50&limit=30"},
		{"OGC CQL2 id=123456 (one feature)", "/ogc/collections/{id}/items?filter=id=123456"},
		{"OGC queryable id=123456", "/ogc/collections/{id}/items?id=123456"},
		{"OGC CQL2 x BETWEEN 500 AND 501 (0.1%), page of 30", "/ogc/collections/{id}/items?filter=x BETWEEN 500 AND 501&limit=30"},
		{"OGC CQL2 JSON x>=500 and x<=501", `/ogc/collections/{id}/items?filter-lang=cql2-json&filter={"op":"and","args":[{"op":">=","args":[{"property":"x"},500]},{"op":"<=","args":[{"property":"x"},501]}]}&limit=30`},
		{"OGC one item", "/ogc/collections/{id}/items/123457"},
		{"OGC sortby=x, page of 30", "/ogc/collections/{id}/items?sortby=x&limit=30"},
		{"OGC bbox + CQL2 cat='c3'", "/ogc/collections/{id}/items?bbox=5,40,15,50&filter=cat='c3'&limit=30"},
		{"OGC limit=10000, few", "/ogc/collections/{id}/items?limit=10000"},
	}
	out("\nlatency at concurrency 1, response cache off (%d requests each, after warm-up):", *reqs)
	out("| query | p50 | p90 | p99 | bytes |")
	out("|---|---|---|---|---|")
	for _, q := range queries {
		u := ds + encodeQuery(q.query)
		if strings.HasPrefix(q.query, "/ogc/") {
			u = srv.base + strings.Replace(encodeQuery(q.query), "{id}", strings.TrimPrefix(dsPath, "/datasets/"), 1)
		}
		k := *reqs
		if strings.HasSuffix(q.name, ", all") || strings.HasSuffix(q.name, ", few") {
			k = min(k, 50) // the full scans, the big pages
		}
		latency(u, 5)
		lat, size, err := latency(u, k)
		if err != nil {
			srv.stop()
			return err
		}
		out("| %s | %s | %s | %s | %d |", q.name, ms(pct(lat, 0.5)), ms(pct(lat, 0.9)), ms(pct(lat, 0.99)), size)
	}

	if err := benchTiles(out, vectorTiles, tiles, *reqs); err != nil {
		srv.stop()
		return err
	}
	if err := benchImages(out, srv.base, dsPath, *reqs); err != nil {
		srv.stop()
		return err
	}

	// Throughput against the floor of the machine.
	bboxURL := ds + encodeQuery(queries[0].query)
	size, err := get(bboxURL)
	if err != nil {
		srv.stop()
		return err
	}
	dur := time.Duration(*seconds) * time.Second
	// The floor and the uncached page in turns, three rounds: the ratio
	// of the two in one round is what the host's load moves least.
	static, err := startChild("bench-static", "--size", strconv.FormatInt(size, 10))
	if err != nil {
		srv.stop()
		return err
	}
	var floors, uncacheds, ratios []float64
	var tool string
	for range floorRounds {
		uncached, t, err := throughput(bboxURL, 16, dur)
		if err != nil {
			static.stop()
			srv.stop()
			return err
		}
		floor, _, err := throughput(static.base+"/", 16, dur)
		if err != nil {
			static.stop()
			srv.stop()
			return err
		}
		tool = t
		floors, uncacheds, ratios = append(floors, floor), append(uncacheds, uncached), append(ratios, uncached/floor)
	}
	static.stop()
	uncached1, _, err := throughput(bboxURL, 1, dur)
	if err != nil {
		srv.stop()
		return err
	}

	// Exports.
	out("\nexports of the whole dataset:")
	for _, ext := range []string{".csv", ".geojson"} {
		srv.resetPeak()
		t := time.Now()
		n, err := get(ds + ext)
		if err != nil {
			srv.stop()
			return err
		}
		d := time.Since(t)
		out("- %s: %.1f MB in %v = %.0f MB/s, peak RSS %.0f MiB", ext, float64(n)/1e6, d.Round(time.Millisecond),
			float64(n)/1e6/d.Seconds(), srv.mem("VmHWM"))
	}
	out("\nmemory of the server: RSS %.0f MiB before the data, %.0f MiB after every query above (heap and stacks %.0f MiB, mapped segment pages %.0f MiB)",
		restMB, srv.mem("VmRSS"), srv.mem("RssAnon"), srv.mem("RssFile"))
	srv.stop()

	srv, err = serve("32MiB")
	if err != nil {
		return err
	}
	defer srv.stop()
	if *dbURL != "" {
		if err := srv.waitCopy(dsID); err != nil {
			return err
		}
	}
	if err := benchThumbnail(out, srv.base, dsPath, *reqs); err != nil {
		return err
	}
	cachedURL := srv.base + dsPath + encodeQuery(queries[0].query)
	cached, _, err := throughput(cachedURL, 16, dur)
	if err != nil {
		return err
	}
	floor := medianOf(floors)
	out("\nthroughput of the bbox page (%d bytes), %s, %d s each:", size, tool, *seconds)
	out("- static answer of the same size (plain net/http), c=16: %.0f req/s, the median of %d rounds (the floor of this machine)", floor, floorRounds)
	out("- mapcommons, response cache on (a repeated query), c=16: %.0f req/s = %.0f%% of the floor", cached, 100*cached/floor)
	out("- mapcommons, response cache off (every query run), c=16: %.0f req/s = %.0f%% of the floor: the median of the ratios of %d rounds, each the page then the floor (ratios %s)",
		medianOf(uncacheds), 100*medianOf(ratios), floorRounds, percents(ratios))
	out("- mapcommons, response cache off, c=1: %.0f req/s", uncached1)
	if *dbURL == "" {
		return nil
	}
	// Two servers on the one database against one, the same Go client
	// sending its requests to them in turn, the response cache off.
	srv.stop()
	var two []*child
	for _, spool := range []string{"spool1", "spool2"} {
		store = filepath.Join(work, spool)
		c, err := serve("0")
		if err != nil {
			return err
		}
		defer c.stop()
		if err := c.waitCopy(dsID); err != nil {
			return err
		}
		two = append(two, c)
	}
	one, _, err := throughputAcross([]string{two[0].base + dsPath + encodeQuery(queries[0].query)}, 16, dur)
	if err != nil {
		return err
	}
	both, _, err := throughputAcross([]string{two[0].base + dsPath + encodeQuery(queries[0].query), two[1].base + dsPath + encodeQuery(queries[0].query)}, 16, dur)
	if err != nil {
		return err
	}
	out("- one server (Go client), response cache off, c=16: %.0f req/s; two servers on the one database: %.0f req/s (%.2f×)", one, both, both/one)
	return nil
}

// vectorTiles and mapTiles are the titles of benchTiles' tables.
const (
	vectorTiles = "vector tiles, tile cache off (every fetch makes the tile; targets: zooms 0-4 at most 50 ms and 500 KB, zoom 10+ p50 at most 5 ms):"
	mapTiles    = "map tiles (PNG, 256 pixels square), tile cache off (every fetch draws the tile; targets: zoom 0 at most 100 ms, zoom 10 at most 10 ms):"
)

// benchTiles measures tiles of the dataset (vector or map tiles, below
// the tileset's URL tiles) on a server without
// the tile cache (--tile-cache 0, so every fetch makes its tile): the
// tile of each zoom 0 to 4 that holds 10°E 45°N (median of up to 20
// fetches, and its size), and tiles of zooms 10 to 14 around the world
// (one fetch each of up to reqs tiles, the median and p90 of all).
func benchTiles(out func(string, ...any), title, tiles string, reqs int) error {
	tile := func(z int, lon, lat float64) string {
		n := float64(int(1) << z)
		s := math.Sin(lat * math.Pi / 180)
		y := int((0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)) * n)
		x := int((lon + 180) / 360 * n)
		return fmt.Sprintf("%s/%d/%d/%d", tiles, z, y, x)
	}
	out("\n%s", title)
	out("| tile | median | bytes |")
	out("|---|---|---|")
	for z := 0; z <= 4; z++ {
		u := tile(z, 10, 45)
		latency(u, 1)
		lat, size, err := latency(u, 20)
		if err != nil {
			return err
		}
		out("| %s | %s | %d |", strings.TrimPrefix(u, tiles+"/"), ms(pct(lat, 0.5)), size)
	}
	r := rand.New(rand.NewPCG(3, 5))
	var ds []time.Duration
	var total int64
	n := min(reqs, 1000)
	for i := 0; i < n; i++ {
		u := tile(10+i%5, -180+360*r.Float64(), -80+160*r.Float64())
		t := time.Now()
		size, err := get(u)
		if err != nil {
			return err
		}
		ds = append(ds, time.Since(t))
		total += size
	}
	slices.Sort(ds)
	out("| %d tiles of zooms 10-14 | p50 %s, p90 %s | %d on average |", n, ms(pct(ds, 0.5)), ms(pct(ds, 0.9)), total/int64(n))
	return nil
}

// thumbnail is the query of a list's thumbnail at twice its size (the
// web application's srcset for a HiDPI screen asks this one).
const thumbnail = ".png?width=120&height=90&scale=2"

// benchImages measures the images of the dataset on a server without the
// caches: its PNG map tiles (benchTiles) and its thumbnail, drawn by every
// fetch (the median of up to 50).
func benchImages(out func(string, ...any), base, dsPath string, reqs int) error {
	id := strings.TrimPrefix(dsPath, "/datasets/")
	if err := benchTiles(out, mapTiles, base+"/ogc/collections/"+id+"/map/tiles/WebMercatorQuad", reqs); err != nil {
		return err
	}
	lat, size, err := latency(base+dsPath+thumbnail, min(reqs, 50))
	if err != nil {
		return err
	}
	out("\nthe dataset's thumbnail (%s, %d bytes), drawn by every fetch (the image cache off): median %s, p90 %s",
		thumbnail, size, ms(pct(lat, 0.5)), ms(pct(lat, 0.9)))
	return nil
}

// benchThumbnail measures the dataset's thumbnail on a server with the
// caches (the image made by the first fetch): the median of the fetches
// after it (target: at most 20 ms).
func benchThumbnail(out func(string, ...any), base, dsPath string, reqs int) error {
	u := base + dsPath + thumbnail
	t := time.Now()
	if _, err := get(u); err != nil {
		return err
	}
	first := time.Since(t)
	lat, _, err := latency(u, reqs)
	if err != nil {
		return err
	}
	out("\nthe dataset's thumbnail, cached (target: at most 20 ms): the first fetch %s, then median %s, p90 %s, p99 %s of %d",
		ms(first), ms(pct(lat, 0.5)), ms(pct(lat, 0.9)), ms(pct(lat, 0.99)), reqs)
	return nil
}

// waitIndexes waits until the attribute indexes of the PostgreSQL
// dataset at dsPath (/datasets/<id>) are all built, and says how long
// after the ingest they were.
func waitIndexes(ctx context.Context, out func(string, ...any), dbURL, dsPath string, since time.Time) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(dsPath, "/datasets/"), 10, 64)
	if err != nil {
		return fmt.Errorf("dataset path %q: %v", dsPath, err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for deadline := time.Now().Add(10 * time.Minute); ; {
		ok, err := postgres.IndexesReady(ctx, conn, id)
		if err != nil {
			return err
		}
		if ok {
			out("attribute indexes built in the background: valid %v after the ingest", time.Since(since).Round(time.Millisecond))
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the attribute indexes were not built within 10 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// encodeQuery escapes the brackets of a query string the way clients do.
func encodeQuery(q string) string {
	path, query, ok := strings.Cut(q, "?")
	if !ok {
		return q
	}
	vals := strings.Split(query, "&")
	for i, v := range vals {
		k, val, _ := strings.Cut(v, "=")
		vals[i] = url.QueryEscape(k) + "=" + url.QueryEscape(val)
	}
	return path + "?" + strings.Join(vals, "&")
}
