package postgres_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// replicaQueries are reads of every kind that goes to a replica: pages
// (with a count from the page, and from a prelude), a bbox, a filter, a
// group.
var replicaQueries = []*mapcommons.FeatureQuery{
	{Limit: -1},
	{Limit: 2, Offset: 1, Descending: true},
	{BBox: &mapcommons.BBox{W: -1, S: -3, E: 3, N: 1}, Limit: -1},
	{Filters: []mapcommons.Filter{{Attr: "n", Op: "min", Values: []string{"2"}}}, Limit: 2},
	{Sort: "label", Limit: 3},
}

// readAll is every answer of s to replicaQueries and a group, as text.
func readAll(t *testing.T, s mapcommons.Services, id int64) string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, q := range replicaQueries {
		q := *q
		var count int64
		q.Count = &count
		err := s.Features.ScanFeatures(ctx, id, &q, func(f *mapcommons.Feature) error {
			out = append(out, fmt.Sprintf("%d:%d:%v:%x", f.Position, f.ID, f.Values, f.Geometry))
			return nil
		})
		if err != nil {
			t.Fatalf("scan %+v: %v", q, err)
		}
		out = append(out, fmt.Sprintf("count %d |", count))
	}
	groups, err := s.Features.GroupFeatures(ctx, id, &mapcommons.FeatureQuery{GroupBy: []string{"flag"}, Limit: -1})
	if err != nil {
		t.Fatalf("group: %v", err)
	}
	out = append(out, fmt.Sprint(groups))
	return fmt.Sprint(out)
}

// label is the label of dataset id's feature fid as s reads it.
func label(t *testing.T, s mapcommons.Services, id, fid int64) any {
	t.Helper()
	var got any = "(no feature)"
	err := s.Features.ScanFeatures(context.Background(), id, &mapcommons.FeatureQuery{IDs: []int64{fid}, Limit: -1},
		func(f *mapcommons.Feature) error {
			got = f.Values[2]
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// replicated is a store on a new database with a standby of it as its
// replica, and a dataset made through it and on the standby already.
func replicated(t *testing.T) (sb *pgtest.Standby, url string, db *postgres.DB, id int64) {
	sb = pgtest.NewStandby(t)
	url = pgtest.URL(t)
	sb.CatchUp(t) // the database
	db = pgtest.OpenReplicas(t, url, sb.URL(url))
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := db.Services().Datasets.CreateDataset(context.Background(), ds, storetest.SampleSource(8)); err != nil {
		t.Fatal(err)
	}
	sb.CatchUp(t)
	return sb, url, db, ds.ID
}

// TestReplicaReads: the reads of features go to the replica, which gives
// the primary's answers; a query error is the read's, not the replica's.
func TestReplicaReads(t *testing.T) {
	_, url, db, id := replicated(t)
	want := readAll(t, pgtest.OpenURL(t, url).Services(), id) // the primary alone
	r0, p0, _, _ := postgres.ReplicaReads(db)
	if got := readAll(t, db.Services(), id); got != want {
		t.Fatalf("the replica's answers\n%s\nthe primary's\n%s", got, want)
	}
	r, p, _, _ := postgres.ReplicaReads(db)
	if n := int64(len(replicaQueries) + 1); r-r0 != n || p != p0 {
		t.Fatalf("%d reads on the replica and %d on the primary, want %d and 0", r-r0, p-p0, n)
	}
	// A read the store refuses (an attribute it does not have) leaves
	// the replica up.
	err := db.Services().Features.ScanFeatures(context.Background(), id,
		&mapcommons.FeatureQuery{Sort: "nosuch", Limit: -1}, func(*mapcommons.Feature) error { return nil })
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Fatalf("sort by a missing attribute: %v", err)
	}
	if postgres.ReplicaDown(db, 0) {
		t.Fatal("a query error took the replica down")
	}
	// A dataset the standby does not have yet (its replay paused) is
	// read on the primary: it has the last word.
	sb := pgtest.NewStandby(t)
	sb.Exec(t, `SELECT pg_wal_replay_pause()`)
	waitPaused(t, sb)
	db2 := pgtest.OpenReplicas(t, url, sb.URL(url))
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := db2.Services().Datasets.CreateDataset(context.Background(), ds, storetest.SampleSource(3)); err != nil {
		t.Fatal(err)
	}
	if got := label(t, db2.Services(), ds.ID, 1); got != "namea" {
		t.Fatalf("a new dataset read %v, want namea", got)
	}
	if _, p, behind, _ := postgres.ReplicaReads(db2); p != 1 || behind != 1 {
		t.Fatalf("a dataset not yet on the replica: %d reads on the primary (%d behind), want 1", p, behind)
	}
}

// TestReplicaDownAtOpen: a replica that does not answer when the store
// opens is no error: it is down, and the reads go to the primary.
func TestReplicaDownAtOpen(t *testing.T) {
	url := pgtest.URL(t)
	db := pgtest.OpenReplicas(t, url, "postgres:///x?host="+filepath.Join(t.TempDir(), "nothing")+"&user=postgres&sslmode=disable")
	if !postgres.ReplicaDown(db, 0) {
		t.Fatal("a replica with no server is up")
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := db.Services().Datasets.CreateDataset(context.Background(), ds, storetest.SampleSource(3)); err != nil {
		t.Fatal(err)
	}
	if got := label(t, db.Services(), ds.ID, 1); got != "namea" {
		t.Fatalf("read %v, want namea", got)
	}
	if r, p, _, _ := postgres.ReplicaReads(db); r != 0 || p != 1 {
		t.Fatalf("%d reads on the replica, %d on the primary; want 0 and 1", r, p)
	}
}

// waitPaused waits until the standby's replay is paused (a pause asked
// for takes effect at the next record).
func waitPaused(t *testing.T, sb *pgtest.Standby) {
	t.Helper()
	eventually(t, "the standby's replay paused", func() bool { return sb.Paused(t) })
}

// TestReplicaReadYourWrites: with the standby's replay paused (so that
// the replica is certainly behind), a read just after a write through
// the store shows the write, from the primary; so does a read through a
// second store (server) on the same primary and replica once it has read
// the dataset's row, as every request does first. Replay resumed, the
// reads go to the replica again.
func TestReplicaReadYourWrites(t *testing.T) {
	ctx := context.Background()
	sb, url, db, id := replicated(t)
	other := pgtest.OpenReplicas(t, url, sb.URL(url)) // a second server
	if got := label(t, other.Services(), id, 3); got != "namec" {
		t.Fatalf("before the edit: %v", got)
	}
	sb.Exec(t, `SELECT pg_wal_replay_pause()`)
	waitPaused(t, sb)

	// An edit in place: the row's count, kinds and table stay as they
	// were, only its version says that the features changed.
	upd := storetest.SampleSource(8).Features[2] // feature 3
	upd.ID, upd.Values = 3, []any{int64(2), 3.0, "edited", true}
	if _, err := db.Services().Features.ApplyEdits(ctx, id, &mapcommons.Edits{Updates: []mapcommons.Feature{upd}}); err != nil {
		t.Fatal(err)
	}
	_, p0, b0, _ := postgres.ReplicaReads(db)
	if got := label(t, db.Services(), id, 3); got != "edited" {
		t.Fatalf("the writer's read after its edit: %v, want edited", got)
	}
	if _, p, b, _ := postgres.ReplicaReads(db); p != p0+1 || b != b0+1 {
		t.Fatalf("the writer's read: %d on the primary (%d behind), want 1 (1)", p-p0, b-b0)
	}

	// The second server has not seen the write: its replica answers as
	// it was (the lag is real), until it reads the dataset's row.
	if got := label(t, other.Services(), id, 3); got != "namec" {
		t.Fatalf("the replica, paused, answered %v: the test cannot tell where reads go", got)
	}
	ds, err := other.Services().Datasets.FindDatasetByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if postgres.SeenVersion(other, id) != ds.Version {
		t.Fatalf("seen version %d, the row's %d", postgres.SeenVersion(other, id), ds.Version)
	}
	_, p0, _, _ = postgres.ReplicaReads(other)
	if got := label(t, other.Services(), id, 3); got != "edited" {
		t.Fatalf("the second server's read after the dataset's row: %v, want edited", got)
	}
	if _, p, _, _ := postgres.ReplicaReads(other); p != p0+1 {
		t.Fatalf("the second server's read went to the replica")
	}

	// A metadata update and a replace: each write is seen at once.
	title := "new title"
	if _, err := db.Services().Datasets.UpdateDataset(ctx, id, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Services().Datasets.ReplaceFeatures(ctx, id, storetest.SampleSource(2)); err != nil {
		t.Fatal(err)
	}
	if got := label(t, db.Services(), id, 3); got != "(no feature)" {
		t.Fatalf("after a replace with 2 features, feature 3 is %v", got)
	}

	sb.Exec(t, `SELECT pg_wal_replay_resume()`)
	sb.CatchUp(t)
	r0, _, _, _ := postgres.ReplicaReads(db)
	if got := readAll(t, db.Services(), id); got != readAll(t, pgtest.OpenURL(t, url).Services(), id) {
		t.Fatalf("caught up, the replica's answers differ from the primary's:\n%s", got)
	}
	if r, _, _, _ := postgres.ReplicaReads(db); r != r0+int64(len(replicaQueries)+1) {
		t.Fatalf("caught up, %d of the reads went to the replica, want all %d", r-r0, len(replicaQueries)+1)
	}
}

// TestReplicaKilled: the standby killed while reads run in a loop, every
// read started after it went succeeds (on the primary), only those in
// flight may fail, and once it is started again the reads go back to it.
// Twice: killed between reads (so that the first reads after it find it
// up, fail on it and must run again on the primary), then during them.
func TestReplicaKilled(t *testing.T) {
	sb, _, db, id := replicated(t)
	// The store's clock, which the retries of a replica down follow: the
	// test moves it on instead of waiting.
	var skew atomic.Int64
	db.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	s := db.Services()
	want := label(t, s, id, 5)

	const readers = 4
	var (
		gate         sync.RWMutex // held by the test to kill between reads
		killed       atomic.Bool  // reads started now started after the kill
		stop         atomic.Bool
		after        atomic.Int64 // reads started after the kill
		failedBefore atomic.Int64 // reads in flight at the kill that failed
		mu           sync.Mutex
		failedAfter  []error
		wrong        []string
		wg           sync.WaitGroup
	)
	for range readers {
		wg.Go(func() {
			for !stop.Load() {
				gate.RLock()
				wasKilled := killed.Load()
				var got any
				err := s.Features.ScanFeatures(context.Background(), id, &mapcommons.FeatureQuery{IDs: []int64{5}, Limit: -1},
					func(f *mapcommons.Feature) error { got = f.Values[2]; return nil })
				gate.RUnlock()
				mu.Lock()
				switch {
				case err == nil && got != want:
					wrong = append(wrong, fmt.Sprint(got))
				case err != nil && wasKilled:
					failedAfter = append(failedAfter, err)
				case err != nil:
					failedBefore.Add(1)
				}
				mu.Unlock()
				if wasKilled {
					after.Add(1)
				}
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	replicaReads := func() int64 { r, _, _, _ := postgres.ReplicaReads(db); return r }

	for _, between := range []bool{true, false} {
		r0 := replicaReads()
		eventually(t, "reads on the replica", func() bool { return replicaReads() >= r0+20 })
		_, _, _, f0 := postgres.ReplicaReads(db)
		if between {
			gate.Lock() // no read in flight
		}
		sb.Kill(t)
		after.Store(0)
		killed.Store(true)
		if between {
			gate.Unlock()
		}
		eventually(t, "reads after the kill", func() bool { return after.Load() >= 50 })
		if !postgres.ReplicaDown(db, 0) {
			t.Fatal("the replica killed is not down")
		}
		if _, _, _, f := postgres.ReplicaReads(db); between && f == f0 {
			t.Fatal("no read failed on the replica killed between reads: the test tells nothing")
		}
		down := replicaReads()
		killed.Store(false)

		sb.Start(t)
		// The retries follow the store's clock: move it on past any
		// backoff until a ping finds the standby back.
		eventually(t, "reads back on the replica", func() bool {
			skew.Add(int64(time.Minute))
			return replicaReads() > down
		})
		if postgres.ReplicaDown(db, 0) {
			t.Fatal("reads went to the replica while it was down")
		}
		mu.Lock()
		failed, answered := slices.Clone(failedAfter), slices.Clone(wrong)
		mu.Unlock()
		if len(failed) > 0 {
			t.Fatalf("killed between reads %v: %d reads started after the kill failed, the first: %v", between, len(failed), failed[0])
		}
		if len(answered) > 0 {
			t.Fatalf("reads answered %v, want %v", answered, want)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := failedBefore.Load(); n > readers {
		t.Fatalf("%d reads failed, more than the %d in flight at the kill", n, readers)
	}
	r, p, _, f := postgres.ReplicaReads(db)
	t.Logf("%d reads on the replica, %d on the primary, of which %d for the replica failing; %d failed in flight",
		r, p, f, failedBefore.Load())
}

// TestReplicaKilledMidRead: a replica that dies after rows of a read
// reached the caller fails that read (it cannot start again on the
// primary: the caller would get its first rows twice), and is down.
func TestReplicaKilledMidRead(t *testing.T) {
	ctx := context.Background()
	sb := pgtest.NewStandby(t)
	url := pgtest.URL(t)
	sb.CatchUp(t)
	db := pgtest.OpenReplicas(t, url, sb.URL(url))
	// Far more rows than the socket's buffers hold: most of them are
	// still to come from the server when it dies.
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := db.Services().Datasets.CreateDataset(ctx, ds, storetest.SampleSource(50000)); err != nil {
		t.Fatal(err)
	}
	sb.CatchUp(t)
	seen := map[int64]bool{}
	err := db.Services().Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		if seen[f.Position] {
			return fmt.Errorf("feature %d twice", f.Position)
		}
		if len(seen) == 0 {
			sb.Kill(t)
		}
		seen[f.Position] = true
		return nil
	})
	if err == nil || len(seen) == 50000 {
		t.Fatalf("a read whose replica died: %v after %d of 50000 features", err, len(seen))
	}
	if strings.Contains(err.Error(), "twice") {
		t.Fatalf("the read started again after rows were given: %v", err)
	}
	if !postgres.ReplicaDown(db, 0) {
		t.Fatal("the replica killed is not down")
	}
	// The next read is the primary's.
	if got := label(t, db.Services(), ds.ID, 1); got != "namea" {
		t.Fatalf("the next read: %v", got)
	}
	t.Logf("failed after %d features: %v", len(seen), err)
}

// TestReplicaLostErrors: which errors of a read take its replica down
// (the server's connection failing or the server going) and which are
// the read's own.
func TestReplicaLostErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		lost bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true},                         // admin shutdown
		{&pgconn.PgError{Code: "57P02"}, true},                         // crash shutdown
		{&pgconn.PgError{Code: "57P03"}, true},                         // cannot connect now (starting, shutting down)
		{fmt.Errorf("scan: %w", &pgconn.PgError{Code: "40001"}), true}, // a recovery conflict
		{&pgconn.PgError{Code: "42703"}, false},                        // undefined column
		{&pgconn.PgError{Code: "57014"}, false},                        // statement_timeout
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("read: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), true},
		{context.Canceled, false},
		{mapcommons.Errorf(mapcommons.EINVALID, "bad filter"), false},
	} {
		if got := postgres.LostReplica(tc.err); got != tc.lost {
			t.Errorf("%v: lost %v, want %v", tc.err, got, tc.lost)
		}
	}
}
