package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/segment"
	"mapcommons/storetest"
)

// TestMirrorContract runs the contract's parts on features with every
// read answered from a local copy (built in the read when there is none
// at the dataset's version): the copies answer as the database does.
func TestMirrorContract(t *testing.T) {
	postgres.SetMissedReads(t, 1) // every read that misses builds
	var stores []*postgres.DB
	storetest.RunFeatures(t, func(tb testing.TB) mapcommons.Services {
		db := pgtest.Open(tb)
		db.Now = storetest.ClockFor(tb)
		postgres.SetMirrorEager(tb, db, tb.TempDir(), 1<<40)
		stores = append(stores, db)
		return db.Services()
	})
	var served int64
	for _, db := range stores {
		s, _ := postgres.MirrorReads(db)
		served += s
	}
	if served < 1000 {
		t.Errorf("the copies answered %d reads: the contract hardly ran on them", served)
	}
}

// mirrored opens a store on url with local copies of at most maxBytes in
// a directory of its own, whose builds and checks the channels hear.
func mirrored(t *testing.T, url string, maxBytes int64, failing bool) (*postgres.DB, string, chan int64, chan int64) {
	t.Helper()
	db := pgtest.OpenURL(t, url)
	dir := t.TempDir()
	if err := db.SetMirror(dir, maxBytes, segment.Copies{}); err != nil {
		t.Fatal(err)
	}
	built, checked := make(chan int64, 64), make(chan int64, 64)
	postgres.OnMirrorBuilt(db, func(id int64, err error) {
		if err != nil && !failing {
			t.Errorf("building the copy of dataset %d: %v", id, err)
		}
		built <- id
	})
	postgres.OnMirrorChecked(db, func(id int64) { checked <- id })
	return db, dir, built, checked
}

// wait waits for id on ch, with a safety limit for a test that broke.
func wait(t *testing.T, ch chan int64, id int64, what string) {
	t.Helper()
	limit := time.After(time.Minute)
	for {
		select {
		case got := <-ch:
			if got == id {
				return
			}
		case <-limit:
			t.Fatalf("no %s of dataset %d in a minute", what, id)
		}
	}
}

// names reads the "k" of every feature of dataset id, in order.
func names(t *testing.T, ctx context.Context, s mapcommons.Services, id int64) []string {
	t.Helper()
	var out []string
	err := s.Features.ScanFeatures(ctx, id, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		out = append(out, fmt.Sprintf("%d %v", f.ID, f.Values[0]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// files lists the copies' files in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func kSource(keys ...string) *storetest.SliceSource {
	src := &storetest.SliceSource{Attrs: []mapcommons.Attribute{{Name: "k", Type: mapcommons.AttrString}}}
	for i, k := range keys {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{k}, Geometry: wkb.AppendPoint(nil, float64(i), 1)})
	}
	return src
}

// TestMirrorAnswersAtTheRowsVersion: the first read of a dataset goes
// to the database and has a copy built; then anonymous reads, given the
// row from the catalogue, and other reads, which ask the version, are
// answered from it. An edit by another server makes the copy stale: every
// read after it sees the edit, from the database, until enough reads
// have missed the copy to build it again; then the new copy answers. A
// deletion heard removes the copy and its file.
func TestMirrorAnswersAtTheRowsVersion(t *testing.T) {
	postgres.SetMinMissedReads(t, 3)
	ctx := context.Background()
	url := pgtest.URL(t)
	db, dir, built, checked := mirrored(t, url, 1<<30, false)
	other := pgtest.OpenURL(t, url).Services()
	s := db.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, kSource("a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 a", "2 b", "3 c"}
	if got := names(t, ctx, s, ds.ID); !slices.Equal(got, want) {
		t.Fatalf("first read: %v, want %v", got, want)
	}
	wait(t, built, ds.ID, "build")
	recent := func() context.Context {
		rc := mapcommons.WithRecentCatalogue(ctx)
		if _, err := s.Datasets.FindDatasetByID(rc, ds.ID); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	for _, c := range []context.Context{ctx, recent(), recent()} {
		before, _ := postgres.MirrorReads(db)
		if got := names(t, c, s, ds.ID); !slices.Equal(got, want) {
			t.Fatalf("from the copy: %v, want %v", got, want)
		}
		if after, _ := postgres.MirrorReads(db); after != before+1 {
			t.Fatalf("the copy answered %d reads, want 1", after-before)
		}
	}

	// Another server edits: no read answers from before the edit.
	res, err := other.Features.ApplyEdits(ctx, ds.ID, &mapcommons.Edits{Deletes: []int64{2}, Adds: kSource("d").Features})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"1 a", "3 c", fmt.Sprintf("%d d", res.AddIDs[0])}
	for i := 0; i < 2; i++ {
		before, _ := postgres.MirrorReads(db)
		if got := names(t, ctx, s, ds.ID); !slices.Equal(got, want) {
			t.Fatalf("read %d after the edit: %v, want %v", i, got, want)
		}
		if after, _ := postgres.MirrorReads(db); after != before {
			t.Fatalf("read %d after the edit answered by the stale copy", i)
		}
	}
	names(t, ctx, s, ds.ID) // the third read that missed: the copy is built again
	wait(t, built, ds.ID, "build")
	before, nbuilt := postgres.MirrorReads(db)
	if got := names(t, ctx, s, ds.ID); !slices.Equal(got, want) {
		t.Fatalf("from the new copy: %v, want %v", got, want)
	}
	if after, _ := postgres.MirrorReads(db); after != before+1 || nbuilt != 2 {
		t.Fatalf("the new copy answered %d reads (want 1), %d copies built (want 2)", after-before, nbuilt)
	}
	if f := files(t, dir); len(f) != 1 {
		t.Fatalf("files of the copies: %v, want the new one alone", f)
	}

	// Another server deletes the dataset: the copy goes.
	if err := other.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	// (a check may be the edit's, heard late: until one finds it gone)
	for len(files(t, dir)) != 0 {
		wait(t, checked, ds.ID, "check after the deletion")
	}
	if n, count := postgres.MirrorBytes(db); n != 0 || count != 0 {
		t.Fatalf("after the deletion: %d bytes in %d copies", n, count)
	}
	err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{}, func(*mapcommons.Feature) error { return nil })
	if mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Fatalf("a read of the deleted dataset: %v", err)
	}
}

// TestMirrorBudget: the copies take no more than their budget; the least
// recently used goes for a new one, and a dataset whose copy alone would
// not fit is read from the database, leaving no file.
func TestMirrorBudget(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	// The size of one copy, measured.
	probe, _, probeBuilt, _ := mirrored(t, url, 1<<30, false)
	ps := probe.Services()
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = strings.Repeat("k", i%50)
	}
	mk := func(s mapcommons.Services) int64 {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, kSource(keys...)); err != nil {
			t.Fatal(err)
		}
		return ds.ID
	}
	first := mk(ps)
	names(t, ctx, ps, first)
	wait(t, probeBuilt, first, "build")
	one, _ := postgres.MirrorBytes(probe)
	if one == 0 {
		t.Fatal("the copy takes no bytes")
	}

	// Room for one and a half: the second copy evicts the first.
	db, dir, built, _ := mirrored(t, url, one*3/2, false)
	s := db.Services()
	second := mk(s)
	for _, id := range []int64{first, second} {
		names(t, ctx, s, id)
		wait(t, built, id, "build")
		if n, count := postgres.MirrorBytes(db); n > one*3/2 || count != 1 || len(files(t, dir)) != 1 {
			t.Fatalf("after copying dataset %d: %d bytes in %d copies, files %v", id, n, count, files(t, dir))
		}
	}
	before, _ := postgres.MirrorReads(db)
	names(t, ctx, s, second)
	names(t, ctx, s, first) // evicted: from the database, and built again
	if after, _ := postgres.MirrorReads(db); after != before+1 {
		t.Fatalf("%d reads from the copies, want 1 (the second dataset's)", after-before)
	}

	// Room for half a copy: none is kept.
	small, sdir, sbuilt, _ := mirrored(t, url, one/2, true)
	ss := small.Services()
	got := names(t, ctx, ss, first)
	wait(t, sbuilt, first, "build")
	if again := names(t, ctx, ss, first); !slices.Equal(again, got) || len(again) != len(keys) {
		t.Fatalf("read from the database: %d features, then %d", len(got), len(again))
	}
	if n, count := postgres.MirrorBytes(small); n != 0 || count != 0 || len(files(t, sdir)) != 0 {
		t.Fatalf("a copy too big for the budget: %d bytes in %d copies, files %v", n, count, files(t, sdir))
	}
}

// TestMirrorRefusesARowTheCatalogueDropped: an anonymous request given a
// dataset's row (shared with everyone) from the catalogue, whose read
// comes once the server has heard that the owner unshared it, is not
// answered from the copy of the row it was given: its read fails with
// ErrCatalogueMoved, as the database's would, and the server runs it
// again with the catalogue as it is.
func TestMirrorRefusesARowTheCatalogueDropped(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db, _, built, _ := mirrored(t, url, 1<<30, false)
	other := pgtest.OpenURL(t, url).Services()
	s := db.Services()
	everyone := []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}
	ds := &mapcommons.Dataset{Type: "csv", Permissions: everyone}
	if err := other.Datasets.CreateDataset(ctx, ds, kSource("a", "b")); err != nil {
		t.Fatal(err)
	}
	names(t, ctx, s, ds.ID)
	wait(t, built, ds.ID, "build")
	var rc context.Context
	eventually(t, "the row given from the catalogue", func() bool {
		rc = mapcommons.WithRecentCatalogue(ctx)
		if _, err := s.Datasets.FindDatasetByID(rc, ds.ID); err != nil {
			t.Fatal(err)
		}
		_, ok := mapcommons.RecentRow(rc, ds.ID)
		return ok
	})
	none := []mapcommons.Permission{}
	if _, err := other.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &none}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the change heard", func() bool { return !postgres.CatalogueHas(db, ds.ID) })
	before, _ := postgres.MirrorReads(db)
	err := s.Features.ScanFeatures(rc, ds.ID, &mapcommons.FeatureQuery{}, func(*mapcommons.Feature) error { return nil })
	if !errors.Is(err, mapcommons.ErrCatalogueMoved) {
		t.Fatalf("the read of a row the catalogue dropped: %v, want ErrCatalogueMoved", err)
	}
	if after, _ := postgres.MirrorReads(db); after != before {
		t.Fatal("answered from the copy")
	}
}

// TestMirrorBuildsWhenDue: a copy that failed, or was evicted, is built
// again only after as many reads missed it as a stale copy waits for,
// not at every read: three datasets read in turn with room for one copy
// are not copied at every read, nor one whose build fails.
func TestMirrorBuildsWhenDue(t *testing.T) {
	postgres.SetMissedReads(t, 4)
	ctx := context.Background()
	url := pgtest.URL(t)
	probe, _, probeBuilt, _ := mirrored(t, url, 1<<30, false)
	ps := probe.Services()
	var ids []int64
	for range 3 {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := ps.Datasets.CreateDataset(ctx, ds, kSource("a", "b", "c", "d")); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ds.ID)
	}
	names(t, ctx, ps, ids[0])
	wait(t, probeBuilt, ids[0], "build")
	one, _ := postgres.MirrorBytes(probe)
	conn := rawConn(t, url)
	for _, id := range ids {
		waitIndexes(t, conn, id)
	}

	db := pgtest.OpenURL(t, url)
	dir := t.TempDir()
	postgres.SetMirrorEager(t, db, dir, one*3/2)
	builds := 0
	postgres.OnMirrorBuilt(db, func(int64, error) { builds++ })
	s := db.Services()
	const rounds = 8
	for range rounds {
		for _, id := range ids {
			names(t, ctx, s, id)
		}
	}
	// The first build of each, then one per 4 misses at most.
	if limit := 3 + rounds*3/4; builds > limit {
		t.Fatalf("%d builds for %d reads of 3 datasets with room for one copy, want at most %d", builds, rounds*3, limit)
	}

	// A build that fails (the directory is a file now) is not tried at
	// every read either.
	os.RemoveAll(dir)
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, kSource("e")); err != nil {
		t.Fatal(err)
	}
	waitIndexes(t, conn, ds.ID) // no build waits for the table's lock
	builds = 0
	for range 8 {
		names(t, ctx, s, ds.ID)
	}
	if builds != 2 { // the first read's, and one after 4 misses
		t.Fatalf("%d failing builds for 8 reads, want 2", builds)
	}
}

// TestMirrorBudgetCountsStrings: a dataset whose strings alone take more
// than the budget is not written out first and refused after: the build
// stops, nothing is installed nor left on disk.
func TestMirrorBudgetCountsStrings(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	const budget = 64 << 10
	db, dir, built, _ := mirrored(t, url, budget, true)
	s := db.Services()
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = strings.Repeat("x", 16<<10) + strconv.Itoa(i)
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, kSource(keys...)); err != nil {
		t.Fatal(err)
	}
	names(t, ctx, s, ds.ID)
	wait(t, built, ds.ID, "build")
	_, nbuilt := postgres.MirrorReads(db)
	if n, count := postgres.MirrorBytes(db); nbuilt != 0 || n != 0 || count != 0 || len(files(t, dir)) != 0 {
		t.Fatalf("%d copies built, %d bytes in %d installed, files %v", nbuilt, n, count, files(t, dir))
	}
}

// TestMirrorBuildYieldsToADrop: a replace of a dataset's features while
// its copy is being read from the table does not wait for the copy: it
// cancels it, as it cancels an index build.
func TestMirrorBuildYieldsToADrop(t *testing.T) {
	postgres.SetDropLockTimeout(t, 30*time.Second)
	ctx := context.Background()
	url := pgtest.URL(t)
	db, _, built, _ := mirrored(t, url, 1<<30, true)
	copying, release := make(chan struct{}), make(chan struct{})
	postgres.OnCopying(db, func(int64) { close(copying); <-release }, nil)
	s := db.Services()
	const n = 60000 // more than the sockets hold: the copy's query runs while it waits
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(n)); err != nil {
		t.Fatal(err)
	}
	waitIndexes(t, rawConn(t, url), ds.ID)
	names(t, ctx, s, ds.ID)
	<-copying
	done := make(chan error, 1)
	go func() {
		_, err := pgtest.OpenURL(t, url).Services().Datasets.ReplaceFeatures(ctx, ds.ID, kSource("new"))
		done <- err
	}()
	// The replace ends while the copy is held: it did not wait for it.
	err := <-done
	close(release)
	if err != nil {
		t.Fatalf("the replace while the copy was read: %v", err)
	}
	wait(t, built, ds.ID, "the cancelled build's end")
	if _, nbuilt := postgres.MirrorReads(db); nbuilt != 0 {
		t.Fatalf("%d copies built of a table dropped while it was read", nbuilt)
	}
}

// TestMirrorDeletedDuringItsBuild: a dataset deleted while its copy is
// being made does not keep the copy.
func TestMirrorDeletedDuringItsBuild(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db, dir, built, checked := mirrored(t, url, 1<<30, false)
	installing, release := make(chan struct{}), make(chan struct{})
	postgres.OnCopying(db, nil, func(int64) { close(installing); <-release })
	s := db.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, kSource("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Datasets.FindDatasetByID(ctx, ds.ID); err != nil { // in the catalogue
		t.Fatal(err)
	}
	names(t, ctx, s, ds.ID)
	<-installing
	if err := pgtest.OpenURL(t, url).Services().Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion heard", func() bool { return !postgres.CatalogueHas(db, ds.ID) })
	close(release)
	wait(t, built, ds.ID, "build")
	for len(files(t, dir)) != 0 {
		wait(t, checked, ds.ID, "check after the deletion")
	}
}

// TestMirrorRemovesWhatAStopLeft: the files a server stopped in a build
// left are removed by the next.
func TestMirrorRemovesWhatAStopLeft(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"ds-1-1-ab.mirror", "seg-123.part", ".seg-456.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db := pgtest.Open(t)
	if err := db.SetMirror(dir, 1<<20, segment.Copies{}); err != nil {
		t.Fatal(err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Fatalf("left: %v", f)
	}
}

// TestMirrorDeletedWhileTheListenerWasAway: a dataset deleted while the
// server's listener was disconnected (so its notification was never
// heard) loses its copy once the listener is back.
func TestMirrorDeletedWhileTheListenerWasAway(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db, dir, built, checked := mirrored(t, url, 1<<30, false)
	s := db.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, kSource("a")); err != nil {
		t.Fatal(err)
	}
	names(t, ctx, s, ds.ID)
	wait(t, built, ds.ID, "build")
	conn := rawConn(t, url)
	eventually(t, "the listener's connection ended", func() bool {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	// Deleted by a statement of no server while no one listens: the
	// listener hears nothing of it, whenever it reconnects.
	if _, err := conn.Exec(ctx, `DELETE FROM datasets WHERE id = $1`, ds.ID); err != nil {
		t.Fatal(err)
	}
	for len(files(t, dir)) != 0 {
		wait(t, checked, ds.ID, "check once the listener is back")
	}
}

// TestMirrorLooksOnlyAfterADeletion: an edit's notification makes no look
// in the database for the dataset's copy (a copy of another version
// answers no read); a deletion's does (migration 0017).
func TestMirrorLooksOnlyAfterADeletion(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db, _, built, _ := mirrored(t, url, 1<<30, false)
	s, other := db.Services(), pgtest.OpenURL(t, url).Services()
	var ids []int64
	for _, k := range []string{"a", "b", "c"} {
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, kSource(k)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ds.ID)
	}
	edited, deleted, blocker := ids[0], ids[1], ids[2]
	for _, id := range []int64{edited, deleted} {
		names(t, ctx, s, id)
		wait(t, built, id, "build")
	}
	// The worker held in the build of a third copy: the looks asked for
	// stay pending.
	installing, release := make(chan struct{}), make(chan struct{})
	postgres.OnCopying(db, nil, func(int64) { close(installing); <-release })
	defer close(release)
	names(t, ctx, s, blocker)
	<-installing
	add := &mapcommons.Edits{Adds: []mapcommons.Feature{{Values: []any{"z"}, Geometry: wkb.AppendPoint(nil, 1, 1)}}}
	if _, err := other.Features.ApplyEdits(ctx, edited, add); err != nil {
		t.Fatal(err)
	}
	if err := other.Datasets.DeleteDataset(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion's look asked for", func() bool { return slices.Contains(postgres.MirrorChecksPending(db), deleted) })
	if got := postgres.MirrorChecksPending(db); !slices.Equal(got, []int64{deleted}) {
		t.Fatalf("looks pending for %v, want only the deleted dataset %d's", got, deleted)
	}
}
