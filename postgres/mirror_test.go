package postgres_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestMirrorContract runs the contract's parts on features with every
// read answered from a local copy (built in the read when there is none
// at the dataset's version): the copies answer as the database does.
func TestMirrorContract(t *testing.T) {
	var stores []*postgres.DB
	storetest.RunFeatures(t, func(tb testing.TB) mapcommons.Services {
		db := pgtest.Open(tb)
		db.Now = storetest.ClockFor(tb)
		postgres.SetMirrorEager(tb, db, tb.TempDir())
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
	if err := db.SetMirror(dir, maxBytes); err != nil {
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
