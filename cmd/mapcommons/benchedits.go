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
		return benchStoreEdits(out, dbURL, id, k, n)
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
// own: no HTTP, no login, no catalogue read) against PostgreSQL's own
// single-row statement of the same kind on the same table, autocommit,
// both at concurrency 1 and interleaved (an edit, then a statement), so
// that both meet the same checkpoints, caches and neighbours: k adds
// against k INSERTs of new rows (every column, as an add writes), k
// updates of features the edits above left alone against k UPDATEs of
// others by id, k deletes of those against k DELETEs of yet others by id.
// The rows the statements deleted are put back and those they inserted
// removed at the end, which leaves the table as the server knows it (but
// for the values updated).
func benchStoreEdits(out func(string, ...any), dbURL string, id int64, k, n int) error {
	ctx := context.Background()
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	fs := db.Services().Features
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
	r := rand.New(rand.NewPCG(11, 11))
	ids := r.Perm(n)[:4*k] // the store's updates and deletes, then the statements'
	feature := func(fid int64) mapcommons.Feature {
		x, y := 5+r.Float64()*10, 40+r.Float64()*10
		return mapcommons.Feature{ID: fid, Values: []any{int64(r.IntN(n)), int64(r.IntN(1000)), r.Float64() * 1000,
			"c" + strconv.Itoa(r.IntN(10)), "edited", "2025-01-01T00:00:00Z"}, Geometry: wkb.AppendPoint(nil, x, y)}
	}
	const base = 1 << 40 // pos and fid of the statements' rows, far past the dataset's
	cols := `pos, fid, geom, minx, miny, maxx, maxy, a0, a1, a2, a3, a4, a5`
	// The rows the statements delete, kept to be put back.
	saved := make([]int64, k)
	for i := range saved {
		saved[i] = int64(ids[3*k+i] + 1)
	}
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE bench_saved AS SELECT `+cols+` FROM `+t+` WHERE fid = ANY($1)`, saved); err != nil {
		return err
	}
	kinds := []struct {
		edit, stmt string
		edits      func(i int) *mapcommons.Edits
		sql        string
		args       func(i int) []any
	}{
		{"add one", "INSERT one row",
			func(int) *mapcommons.Edits { return &mapcommons.Edits{Adds: []mapcommons.Feature{feature(0)}} },
			`INSERT INTO ` + t + ` (` + cols + `) VALUES ($1, $1, $2, $3, $4, $3, $4, $5, $6, $7, $8, $9, $10)`,
			func(i int) []any {
				x, y := 5+r.Float64()*10, 40+r.Float64()*10
				return []any{int64(base + i), wkb.AppendPoint(nil, x, y), x, y, int64(r.IntN(n)), int64(r.IntN(1000)),
					r.Float64() * 1000, []byte("c" + strconv.Itoa(r.IntN(10))), []byte("edited"), []byte("2025-01-01T00:00:00Z")}
			}},
		{"update one", "UPDATE one row by id",
			func(i int) *mapcommons.Edits {
				return &mapcommons.Edits{Updates: []mapcommons.Feature{feature(int64(ids[i] + 1))}}
			},
			`UPDATE ` + t + ` SET geom = $2, minx = $3, miny = $4, maxx = $3, maxy = $4, a5 = $5 WHERE fid = $1`,
			func(i int) []any {
				x, y := 5+r.Float64()*10, 40+r.Float64()*10
				return []any{int64(ids[2*k+i] + 1), wkb.AppendPoint(nil, x, y), x, y, []byte("edited")}
			}},
		{"delete one", "DELETE one row by id",
			func(i int) *mapcommons.Edits { return &mapcommons.Edits{Deletes: []int64{int64(ids[k+i] + 1)}} },
			`DELETE FROM ` + t + ` WHERE fid = $1`,
			func(i int) []any { return []any{saved[i]} }},
	}
	rows := make([][2][]time.Duration, len(kinds))
	for j, e := range kinds {
		for i := range k {
			ed := e.edits(i)
			t0 := time.Now()
			_, err := fs.ApplyEdits(ctx, id, ed)
			d := time.Since(t0)
			switch {
			case err == nil:
				rows[j][0] = append(rows[j][0], d)
			case mapcommons.ErrorCode(err) == mapcommons.EINVALID && len(ed.Deletes)+len(ed.Updates) > 0:
				// a feature the HTTP edits deleted
			default:
				return fmt.Errorf("%s: %v", e.edit, err)
			}
			args := e.args(i)
			t0 = time.Now()
			tag, err := conn.Exec(ctx, e.sql, args...)
			d = time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s: %v", e.stmt, err)
			}
			if tag.RowsAffected() == 1 { // none: a row the HTTP edits deleted
				rows[j][1] = append(rows[j][1], d)
			}
		}
	}
	if _, err := conn.Exec(ctx, `DELETE FROM `+t+` WHERE pos >= $1`, int64(base)); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `INSERT INTO `+t+` (`+cols+`) SELECT `+cols+` FROM bench_saved`); err != nil {
		return err
	}
	out("\nthe store's own transaction of an edit of one feature (ApplyEdits, no HTTP) and PostgreSQL's own statement on the same table, one row each, autocommit; interleaved, %d each:", k)
	out("| edit | p50 | p90 | p99 | statement | p50 | p90 | p99 | ratio of the p50s |")
	out("|---|---|---|---|---|---|---|---|---|")
	for j, e := range kinds {
		a, b := rows[j][0], rows[j][1]
		slices.Sort(a)
		slices.Sort(b)
		out("| %s | %s | %s | %s | %s | %s | %s | %s | %.2f× |", e.edit, ms(pct(a, 0.5)), ms(pct(a, 0.9)), ms(pct(a, 0.99)),
			e.stmt, ms(pct(b, 0.5)), ms(pct(b, 0.9)), ms(pct(b, 0.99)), float64(pct(a, 0.5))/float64(pct(b, 0.5)))
	}
	return nil
}

// latencyRow writes a row of p50, p90 and p99 of lat (sorted here).
func latencyRow(out func(string, ...any), name string, lat []time.Duration) {
	slices.Sort(lat)
	out("| %s | %s | %s | %s |", name, ms(pct(lat, 0.5)), ms(pct(lat, 0.9)), ms(pct(lat, 0.99)))
}
