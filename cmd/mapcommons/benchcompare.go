package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The side-by-side measure of `bench -compare-pgfs BIN`: pg_featureserv
// (built unmodified from its repository; BIN with its assets directory
// beside it) serves the bench's points from the same PostgreSQL database
// as this store, from a table made of the dataset's view as its
// documentation has a table set up (a geometry column with a GiST index,
// a primary key, B-trees on the columns the requests filter and sort
// by), and each request shape is measured on both, interleaved, at
// concurrency 16: three rounds, medians, and our ratio to it.

// pgfsTable is the table pg_featureserv serves.
const pgfsTable = "pgfs_bench"

// compareShapes are the requests measured on both servers: ours (under
// /ogc/collections/{id}) and pg_featureserv's (under
// /collections/public.pgfs_bench).
var compareShapes = []struct{ name, query string }{
	{"items bbox=5,40,15,50&limit=30", "/items?bbox=5,40,15,50&limit=30"},
	{"CQL2 filter=id=123456", "/items?filter=id=123456"},
	{"queryable id=123456", "/items?id=123456"},
	{"CQL2 x BETWEEN 500 AND 501, limit=30", "/items?filter=x BETWEEN 500 AND 501&limit=30"},
	{"one item items/123457", "/items/123457"},
	{"sortby=x&limit=30", "/items?sortby=x&limit=30"},
	{"bbox + filter=cat='c3', limit=30", "/items?bbox=5,40,15,50&filter=cat='c3'&limit=30"},
	{"limit=10000", "/items?limit=10000"},
}

// makeRivalTable makes the table the rivals serve from dataset id's view
// (see above), and returns a function that drops it.
func makeRivalTable(ctx context.Context, out func(string, ...any), conn *pgx.Conn, id int64) (func(), error) {
	t := time.Now()
	view := pgx.Identifier{fmt.Sprintf("dataset_%d", id)}.Sanitize()
	for _, stmt := range []string{
		`DROP TABLE IF EXISTS ` + pgfsTable,
		`CREATE TABLE ` + pgfsTable + ` AS SELECT fid, geom::geometry(Point, 4326) AS geom, id, n, x, cat, label, ts FROM ` + view,
		`ALTER TABLE ` + pgfsTable + ` ADD PRIMARY KEY (fid)`,
		`CREATE INDEX ON ` + pgfsTable + ` USING gist (geom)`,
		`CREATE INDEX ON ` + pgfsTable + ` (id)`,
		`CREATE INDEX ON ` + pgfsTable + ` (x)`,
		`CREATE INDEX ON ` + pgfsTable + ` (cat)`,
		`VACUUM ANALYZE ` + pgfsTable,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return nil, fmt.Errorf("%s: %v", stmt, err)
		}
	}
	out("\nthe rivals' table %s made from the dataset's view, indexed, analyzed: %v", pgfsTable, time.Since(t).Round(time.Millisecond))
	return func() { conn.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+pgfsTable) }, nil
}

// settle vacuums and analyzes dataset id's features table, as
// autovacuum does soon after the ingest, so that no run of it over the
// million new rows falls in the shapes measured (the first of them varied
// the most between runs).
func settle(ctx context.Context, out func(string, ...any), conn *pgx.Conn, id int64) error {
	t := time.Now()
	var table string
	if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, id).Scan(&table); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) `+pgx.Identifier{table}.Sanitize()); err != nil {
		return fmt.Errorf("vacuum of %s: %v", table, err)
	}
	out("the dataset's table %s vacuumed and analyzed: %v", table, time.Since(t).Round(time.Millisecond))
	return nil
}

// startRival starts the server binary bin in its own directory (its
// assets) with env, and waits until it answers ready (a URL of it, given
// its port); stop kills it.
func startRival(bin string, env func(port int) []string, ready func(port int) string) (port int, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	abs, err := filepath.Abs(bin)
	if err != nil {
		return 0, nil, err
	}
	cmd := exec.Command(abs)
	cmd.Dir = filepath.Dir(abs)
	cmd.Env = append(os.Environ(), env(port)...)
	log, err := os.CreateTemp("", filepath.Base(abs)+"-*.log")
	if err != nil {
		return 0, nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		os.Remove(log.Name())
		return 0, nil, err
	}
	stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
		os.Remove(log.Name())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := get(ready(port)); err == nil {
			return port, stop, nil
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			stop()
			return 0, nil, fmt.Errorf("%s did not serve %s within a minute: %s", bin, ready(port), b)
		}
	}
}

// benchCompare runs the comparisons asked for (pgfs and pgts, the
// binaries of pg_featureserv and pg_tileserv; either may be "") against
// our servers at ours (the response cache off) and cached (on), whose dataset id holds the bench's points on the
// database at dbURL.
// compareServers are the base URLs of our servers the comparison
// measures, all with the tile cache off: db has no local copies and the
// response cache off (every feature from a query), ours local copies and
// the cache off, cached both on (the default).
type compareServers struct{ db, ours, cached string }

func benchCompare(ctx context.Context, out func(string, ...any), pgfs, pgts, dbURL string, servers compareServers, id int64, dur time.Duration) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	drop, err := makeRivalTable(ctx, out, conn, id)
	if err != nil {
		return err
	}
	defer drop()
	if err := settle(ctx, out, conn, id); err != nil {
		return err
	}
	if pgfs != "" {
		if err := comparePGFS(out, pgfs, dbURL, servers, id, dur); err != nil {
			return err
		}
	}
	if pgts != "" {
		return comparePGTS(out, pgts, dbURL, servers, id)
	}
	return nil
}

// comparePGFS measures the request shapes on pg_featureserv and on ours,
// with the response cache off (every request runs its query: ours) and
// on (cached: a repeated request is answered from memory once its
// catalogue row is known), and items of random ids, which a cache
// rarely answers; the items on the floor too (bench-pgfloor: the least a
// server reading the row per request costs on this machine).
func comparePGFS(out func(string, ...any), bin, dbURL string, servers compareServers, id int64, dur time.Duration) error {
	port, stop, err := startRival(bin,
		func(port int) []string {
			return []string{"DATABASE_URL=" + dbURL, "PGFS_SERVER_HTTPPORT=" + strconv.Itoa(port), "PGFS_SERVER_HTTPHOST=127.0.0.1"}
		},
		func(port int) string {
			return fmt.Sprintf("http://127.0.0.1:%d/collections/public.%s", port, pgfsTable)
		})
	if err != nil {
		return err
	}
	defer stop()
	floor, err := startChild("bench-pgfloor", "--database-url", dbURL)
	if err != nil {
		return err
	}
	defer floor.stop()
	bases := [5]string{fmt.Sprintf("http://127.0.0.1:%d/collections/public.%s", port, pgfsTable),
		fmt.Sprintf("%s/ogc/collections/%d", servers.db, id), fmt.Sprintf("%s/ogc/collections/%d", servers.ours, id),
		fmt.Sprintf("%s/ogc/collections/%d", servers.cached, id), floor.base}
	const floorAt = 4

	out("\nside by side with pg_featureserv on the same database, c=16, %v each, medians of 3 interleaved rounds;"+
		" mapcommons reading every feature from the database (no local copy, cache off), from its local copy (cache off),"+
		" and with the response cache on too (the defaults); the floor (items only): net/http, a pgx pool and one statement by the key, nothing else (bench-pgfloor):", dur)
	out("| request | pg_featureserv req/s | mapcommons, database | ratio | local copy | ratio | local copy, cache on | ratio | floor | ratio | features (theirs / ours) |")
	out("|---|---|---|---|---|---|---|---|---|---|---|")
	shapes := append(slices.Clone(compareShapes), struct{ name, query string }{"items/{fid}, a random fid each", ""})
	for _, sh := range shapes {
		// next gives the k-th request of client i of server s.
		next := func(s int) func(i, k int) string {
			return func(int, int) string { return bases[s] + encodeQuery(sh.query) }
		}
		if sh.query == "" {
			next = func(s int) func(i, k int) string {
				return func(i, k int) string {
					// Random, never the same sequence twice (a cache
					// answers only the fids asked before by chance).
					return fmt.Sprintf("%s/items/%d", bases[s], 1+rand.IntN(1000000))
				}
			}
		}
		var counts [2]string
		for k := range counts {
			n, err := countReturned(next(k)(0, 0))
			if err != nil {
				return fmt.Errorf("%s: %v", sh.name, err)
			}
			counts[k] = n
		}
		item := sh.query == "" || strings.HasPrefix(sh.query, "/items/")
		var rates [len(bases)][]float64
		for range 3 {
			for k := range bases {
				if k == floorAt && !item {
					continue
				}
				r, _, err := throughputOf(next(k), 16, dur)
				if err != nil {
					return fmt.Errorf("%s: %v", sh.name, err)
				}
				rates[k] = append(rates[k], r)
			}
		}
		med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
		a := med(rates[0])
		row := fmt.Sprintf("| %s | %.0f |", sh.name, a)
		for k := 1; k < len(bases); k++ {
			if k == floorAt && !item {
				row += " — | — |"
				continue
			}
			r := med(rates[k])
			row += fmt.Sprintf(" %.0f | %.2f× |", r, r/a)
		}
		out("%s %s / %s |", row, counts[0], counts[1])
	}
	return nil
}

// comparePGTS measures vector tiles on pg_tileserv and on ours (whose
// tile cache the bench's server has off): the tile of each zoom 0-4 that
// holds 10°E 45°N, medians of 5 interleaved fetches, and 200 random tiles
// of zooms 10-14, the same on both, p50.
func comparePGTS(out func(string, ...any), bin, dbURL string, servers compareServers, id int64) error {
	port, stop, err := startRival(bin,
		func(port int) []string {
			return []string{"DATABASE_URL=" + dbURL, "TS_HTTPPORT=" + strconv.Itoa(port), "TS_HTTPHOST=127.0.0.1"}
		},
		func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d/public.%s.json", port, pgfsTable) })
	if err != nil {
		return err
	}
	defer stop()
	theirs := func(z, x, y int) string {
		return fmt.Sprintf("http://127.0.0.1:%d/public.%s/%d/%d/%d.pbf", port, pgfsTable, z, x, y)
	}
	ours := func(base string) func(z, x, y int) string {
		return func(z, x, y int) string {
			return fmt.Sprintf("%s/ogc/collections/%d/tiles/WebMercatorQuad/%d/%d/%d", base, id, z, y, x)
		}
	}
	servs := []func(z, x, y int) string{theirs, ours(servers.db), ours(servers.ours)}
	tileOf := func(z int, lon, lat float64) (x, y int) {
		n := float64(int(1) << z)
		s := math.Sin(lat * math.Pi / 180)
		return int((lon + 180) / 360 * n), int((0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)) * n)
	}
	out("\nvector tiles side by side with pg_tileserv (its defaults: 4096 extent, a 256 buffer, at most 50,000 features a tile) on the same database:")
	out("| tile z/x/y | pg_tileserv | bytes | mapcommons, database | bytes | ratio (their time / ours) | local copy | bytes | ratio |")
	out("|---|---|---|---|---|---|---|---|---|")
	row := func(name string, lats [][]time.Duration, sizes []string) string {
		a := pct(sorted(lats[0]), 0.5)
		line := fmt.Sprintf("| %s | %s | %s |", name, ms(a), sizes[0])
		for k := 1; k < len(lats); k++ {
			b := pct(sorted(lats[k]), 0.5)
			line += fmt.Sprintf(" %s | %s | %.2f× |", ms(b), sizes[k], float64(a)/float64(b))
		}
		return line
	}
	for z := 0; z <= 4; z++ {
		x, y := tileOf(z, 10, 45)
		lats := make([][]time.Duration, len(servs))
		sizes := make([]string, len(servs))
		for range 5 {
			for k, sv := range servs {
				t := time.Now()
				n, err := get(sv(z, x, y))
				if err != nil {
					return err
				}
				lats[k] = append(lats[k], time.Since(t))
				sizes[k] = strconv.FormatInt(n, 10)
			}
		}
		out("%s", row(fmt.Sprintf("%d/%d/%d", z, x, y), lats, sizes))
	}
	r := rand.New(rand.NewPCG(3, 5))
	lats := make([][]time.Duration, len(servs))
	bytes := make([]int64, len(servs))
	for i := range 200 {
		x, y := tileOf(10+i%5, -180+360*r.Float64(), -80+160*r.Float64())
		for k, sv := range servs {
			t := time.Now()
			n, err := get(sv(10+i%5, x, y))
			if err != nil {
				return err
			}
			lats[k] = append(lats[k], time.Since(t))
			bytes[k] += n
		}
	}
	sizes := make([]string, len(servs))
	for k, b := range bytes {
		sizes[k] = fmt.Sprintf("%d avg", b/200)
	}
	out("%s", row("200 tiles of zooms 10-14, p50", lats, sizes))
	return nil
}

// sorted sorts ds and returns it.
func sorted(ds []time.Duration) []time.Duration { slices.Sort(ds); return ds }

// countReturned fetches u and says how many features it answered: its
// numberReturned, or 1 for a single feature.
func countReturned(u string) (string, error) {
	resp, err := benchClient.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %.300s", u, resp.Status, b)
	}
	var fc struct {
		Type           string `json:"type"`
		NumberReturned *int   `json:"numberReturned"`
		Features       []json.RawMessage
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		return "", fmt.Errorf("GET %s: %v", u, err)
	}
	if strings.EqualFold(fc.Type, "Feature") {
		return "1", nil
	}
	return strconv.Itoa(len(fc.Features)), nil
}
