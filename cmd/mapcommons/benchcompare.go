package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// benchComparePGFS runs the comparison against our server at ours, whose
// dataset id holds the bench's points on the database at dbURL.
func benchComparePGFS(ctx context.Context, out func(string, ...any), bin, dbURL, ours string, id int64, dur time.Duration) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
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
			return fmt.Errorf("%s: %v", stmt, err)
		}
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+pgfsTable)
	out("\npg_featureserv's table %s made from the dataset's view, indexed, analyzed: %v", pgfsTable, time.Since(t).Round(time.Millisecond))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	cmd := exec.Command(abs)
	cmd.Dir = filepath.Dir(abs) // its assets
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "PGFS_SERVER_HTTPPORT="+strconv.Itoa(port), "PGFS_SERVER_HTTPHOST=127.0.0.1")
	log, err := os.CreateTemp("", "pg_featureserv-*.log")
	if err != nil {
		return err
	}
	defer os.Remove(log.Name())
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	theirs := fmt.Sprintf("http://127.0.0.1:%d/collections/public.%s", port, pgfsTable)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := get(theirs); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			return fmt.Errorf("pg_featureserv did not serve %s within a minute: %s", theirs, b)
		}
	}
	mine := fmt.Sprintf("%s/ogc/collections/%d", ours, id)

	out("\nside by side with pg_featureserv on the same database, c=16, %v each, medians of 3 interleaved rounds:", dur)
	out("| request | pg_featureserv req/s | mapcommons req/s | ratio | features (theirs / ours) |")
	out("|---|---|---|---|---|")
	for _, sh := range compareShapes {
		urls := [2]string{theirs + encodeQuery(sh.query), mine + encodeQuery(sh.query)}
		var counts [2]string
		for k, u := range urls {
			n, err := countReturned(u)
			if err != nil {
				return fmt.Errorf("%s: %v", sh.name, err)
			}
			counts[k] = n
		}
		var rates [2][]float64
		for range 3 {
			for k, u := range urls {
				r, _, err := throughput(u, 16, dur)
				if err != nil {
					return fmt.Errorf("%s: %v", sh.name, err)
				}
				rates[k] = append(rates[k], r)
			}
		}
		med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
		a, b := med(rates[0]), med(rates[1])
		out("| %s | %.0f | %.0f | %.2f× | %s / %s |", sh.name, a, b, b/a, counts[0], counts[1])
	}
	return nil
}

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
