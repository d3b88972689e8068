package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/postgres"
)

// benchEdits measures edits of the bench's dataset (ds: its URL) on a
// server srv started with --compact-after 1h, so that only the bench's
// own big edit starts a compaction: single-feature adds, updates, merge
// patches (PATCH of one attribute) and deletes; the compaction that an edit of 1,300 features then starts,
// with the bbox page's latency during it; then, on the compacted dataset,
// 1,000 adds one after another and the bbox page with them pending.
// compacted is the bbox page's p50 before any edit.
func benchEdits(out func(string, ...any), srv *child, ds, bboxURL string, n int, compacted time.Duration, dbURL string) error {
	r := rand.New(rand.NewPCG(7, 7))
	// feature is a GeoJSON feature with id fid (0: none), inside the bbox
	// page's box, so that the pages merge the edits.
	feature := func(fid int) string {
		x, y := 5+r.Float64()*10, 40+r.Float64()*10
		id := ""
		if fid > 0 {
			id = fmt.Sprintf(`"id": %d, `, fid)
		}
		return fmt.Sprintf(`{"type": "Feature", %s"properties": {"id": %d, "n": %d, "x": %g, "cat": "c%d", "label": "edited", "ts": "2025-01-01T00:00:00Z"}, "geometry": {"type": "Point", "coordinates": [%g, %g]}}`,
			id, r.IntN(n), r.IntN(1000), r.Float64()*1000, r.IntN(10), x, y)
	}
	point := func() string { return feature(0) }
	// send times one edit: answered 200 with what proves it done.
	send := func(method, url, ctype, body, done string) (time.Duration, error) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.SetBasicAuth("admin", "bench-secret")
		t := time.Now()
		resp, err := benchClient.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t)
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(done)) {
			return 0, fmt.Errorf("%s %s answered %s: %.300s", method, url, resp.Status, b)
		}
		return d, nil
	}
	edit := func(body string) (time.Duration, error) {
		return send("POST", ds+"/edits.json", "application/json", body, `"success":true`)
	}
	const k = 200
	ids := r.Perm(n)[:3*k] // distinct features of the dataset: k to update, k to delete, k to patch
	out("\nedits of one feature, POST /edits.json at concurrency 1, %d each (the dataset's own compaction off):", k)
	out("| edit | p50 | p90 | p99 |")
	out("|---|---|---|---|")
	for _, e := range []struct {
		name string
		body func(i int) string
	}{
		{"add one", func(i int) string { return `{"adds": [` + point() + `]}` }},
		{"update one", func(i int) string {
			return `{"updates": [` + feature(ids[i]+1) + `]}`
		}},
		{"delete one", func(i int) string { return fmt.Sprintf(`{"deletes": [%d]}`, ids[k+i]+1) }},
		{"patch one (PATCH …/features/{fid}, one attribute)", nil},
	} {
		var lat []time.Duration
		for i := range k {
			var d time.Duration
			var err error
			if e.body == nil {
				d, err = send("PATCH", fmt.Sprintf("%s/features/%d.json", ds, ids[2*k+i]+1), "application/merge-patch+json",
					fmt.Sprintf(`{"label": "patched", "n": %d}`, r.IntN(1000)), `"type":"Feature"`)
			} else {
				d, err = edit(e.body(i))
			}
			if err != nil {
				return err
			}
			lat = append(lat, d)
		}
		latencyRow(out, e.name, lat)
	}
	if dbURL != "" {
		// PostgreSQL edits in place and compacts nothing: the edits are
		// compared with PostgreSQL's own statements on the same table.
		id, err := strconv.ParseInt(ds[strings.LastIndex(ds, "/")+1:], 10, 64)
		if err != nil {
			return err
		}
		if err := benchStoreEdits(out, dbURL, id, k, n); err != nil {
			return err
		}
		return benchRowStatements(out, dbURL, id, k, n)
	}
	// One edit of 1,300 features takes the pending changes over the
	// threshold (2,048): the compaction starts at once, while the bbox
	// page is asked for again and again.
	pending := 6*k + 1300 // delta features: adds, updates and patches; dead: updated, patched and deleted
	var adds []string
	for range 1300 {
		adds = append(adds, point())
	}
	for len(srv.compactions) > 0 {
		<-srv.compactions
	}
	if _, err := edit(`{"adds": [` + strings.Join(adds, ",") + `]}`); err != nil {
		return err
	}
	t := time.Now()
	var during []time.Duration
	var took string
	for took == "" {
		select {
		case line := <-srv.compactions:
			took = line
		default:
		}
		if time.Since(t) > 2*time.Minute {
			return fmt.Errorf("no compaction within two minutes")
		}
		l, _, err := latency(bboxURL, 1)
		if err != nil {
			return err
		}
		during = append(during, l[0])
	}
	wall := time.Since(t)
	slices.Sort(during)
	idle, _, err := latency(bboxURL, 300)
	if err != nil {
		return err
	}
	var logged struct {
		Seconds float64 `json:"seconds"`
	}
	json.Unmarshal([]byte(took), &logged)
	out("- compaction of the dataset (%d pending changes) in the background: %.2f s (the server's log; %.2f s as seen by the client)",
		pending, logged.Seconds, wall.Seconds())
	out("- bbox page during it (%d requests): p50 %s, p99 %s; after it: p50 %s, p99 %s (p99 ratio %.2f×)",
		len(during), ms(pct(during, 0.5)), ms(pct(during, 0.99)), ms(pct(idle, 0.5)), ms(pct(idle, 0.99)),
		float64(pct(during, 0.99))/float64(pct(idle, 0.99)))

	// On the compacted dataset: 1,000 adds one after another, then the
	// bbox page with them pending.
	t = time.Now()
	for range 1000 {
		if _, err := edit(`{"adds": [` + point() + `]}`); err != nil {
			return err
		}
	}
	out("- 1,000 single-feature adds one after another, on the compacted dataset: %v", time.Since(t).Round(time.Millisecond))
	lat, _, err := latency(bboxURL, 300)
	if err != nil {
		return err
	}
	out("- bbox page with these 1,000 pending: p50 %s, p99 %s; compacted p50 %s just before, %s before any edit (%.2f× the first)",
		ms(pct(lat, 0.5)), ms(pct(lat, 0.99)), ms(pct(idle, 0.5)), ms(compacted), float64(pct(lat, 0.5))/float64(pct(idle, 0.5)))
	return nil
}

// benchStoreEdits measures the store's own transaction of an edit of one
// feature (FeatureService.ApplyEdits, in this process, on a store of its
// own: no HTTP, no login, no catalogue read), at concurrency 1, as the
// edits above: k adds, k updates of features the edits above left alone,
// k deletes of those.
func benchStoreEdits(out func(string, ...any), dbURL string, id int64, k, n int) error {
	ctx := context.Background()
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	fs := db.Services().Features
	r := rand.New(rand.NewPCG(11, 11))
	ids := r.Perm(n)[:2*k]
	feature := func(fid int64) mapcommons.Feature {
		x, y := 5+r.Float64()*10, 40+r.Float64()*10
		return mapcommons.Feature{ID: fid, Values: []any{int64(r.IntN(n)), int64(r.IntN(1000)), r.Float64() * 1000,
			"c" + strconv.Itoa(r.IntN(10)), "edited", "2025-01-01T00:00:00Z"}, Geometry: wkb.AppendPoint(nil, x, y)}
	}
	out("\nthe store's own transaction of an edit of one feature (ApplyEdits, no HTTP), %d each:", k)
	out("| edit | p50 | p90 | p99 |")
	out("|---|---|---|---|")
	for _, e := range []struct {
		name  string
		edits func(i int) *mapcommons.Edits
	}{
		{"add one", func(int) *mapcommons.Edits { return &mapcommons.Edits{Adds: []mapcommons.Feature{feature(0)}} }},
		{"update one", func(i int) *mapcommons.Edits {
			return &mapcommons.Edits{Updates: []mapcommons.Feature{feature(int64(ids[i] + 1))}}
		}},
		{"delete one", func(i int) *mapcommons.Edits { return &mapcommons.Edits{Deletes: []int64{int64(ids[k+i] + 1)}} }},
	} {
		var lat []time.Duration
		for i := range k {
			ed := e.edits(i)
			t := time.Now()
			if _, err := fs.ApplyEdits(ctx, id, ed); err != nil {
				if mapcommons.ErrorCode(err) == mapcommons.EINVALID && len(ed.Deletes)+len(ed.Updates) > 0 {
					continue // a feature the HTTP edits deleted
				}
				return fmt.Errorf("%s: %v", e.name, err)
			}
			lat = append(lat, time.Since(t))
		}
		latencyRow(out, e.name, lat)
	}
	return nil
}

// benchRowStatements measures PostgreSQL's own single-row statements on
// the dataset's table, each its own transaction at concurrency 1, as the
// edits above are: k inserts of new rows (every column, as an add
// writes), k updates of existing rows by id, then k deletes of the rows
// inserted (which leaves the table as the
// server knows it, but for the values updated).
func benchRowStatements(out func(string, ...any), dbURL string, id int64, k, n int) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var table string
	if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, id).Scan(&table); err != nil {
		return err
	}
	t := pgx.Identifier{table}.Sanitize()
	r := rand.New(rand.NewPCG(9, 9))
	const base = 1 << 40 // pos and fid far past the dataset's
	stmts := []struct {
		name string
		sql  string
		args func(i int) []any
	}{
		// Every column, with values like the edits': each attribute's
		// index takes its key.
		{"INSERT one row", `INSERT INTO ` + t + ` (pos, fid, geom, minx, miny, maxx, maxy, a0, a1, a2, a3, a4, a5)
			VALUES ($1, $1, $2, $3, $4, $3, $4, $5, $6, $7, $8, $9, $10)`,
			func(i int) []any {
				x, y := 5+r.Float64()*10, 40+r.Float64()*10
				return []any{int64(base + i), wkb.AppendPoint(nil, x, y), x, y, int64(r.IntN(n)), int64(r.IntN(1000)),
					r.Float64() * 1000, []byte("c" + strconv.Itoa(r.IntN(10))), []byte("edited"), []byte("2025-01-01T00:00:00Z")}
			}},
		{"UPDATE one row by id", `UPDATE ` + t + ` SET geom = $2, minx = $3, miny = $4, maxx = $3, maxy = $4, a5 = $5 WHERE fid = $1`,
			func(i int) []any {
				x, y := 5+r.Float64()*10, 40+r.Float64()*10
				return []any{int64(1 + r.IntN(n)), wkb.AppendPoint(nil, x, y), x, y, []byte("edited")}
			}},
		{"DELETE one row by id", `DELETE FROM ` + t + ` WHERE fid = $1`, func(i int) []any { return []any{int64(base + i)} }},
	}
	out("\nPostgreSQL's own statements on the same table, one row each, autocommit, %d each:", k)
	out("| statement | p50 | p90 | p99 |")
	out("|---|---|---|---|")
	for _, st := range stmts {
		var lat []time.Duration
		for i := range k {
			args := st.args(i)
			t0 := time.Now()
			tag, err := conn.Exec(ctx, st.sql, args...)
			if err != nil {
				return fmt.Errorf("%s: %v", st.name, err)
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("%s: %d rows", st.name, tag.RowsAffected())
			}
			lat = append(lat, time.Since(t0))
		}
		latencyRow(out, st.name, lat)
	}
	return nil
}

// latencyRow writes a row of p50, p90 and p99 of lat (sorted here).
func latencyRow(out func(string, ...any), name string, lat []time.Duration) {
	slices.Sort(lat)
	out("| %s | %s | %s | %s |", name, ms(pct(lat, 0.5)), ms(pct(lat, 0.9)), ms(pct(lat, 0.99)))
}
