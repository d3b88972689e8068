package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// inspect opens a store on a new database and a connection to look into it.
func inspect(t *testing.T) (mapcommons.Services, *pgx.Conn) {
	t.Helper()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	conn := rawConn(t, url)
	return s, conn
}

// featureTables lists the features tables of the database.
func featureTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, _ := conn.Query(context.Background(), `SELECT tablename FROM pg_tables WHERE tablename LIKE 'features\_%' ORDER BY tablename`)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestGenerations checks that every write of features but an append or
// a delete leaves one table, a new one, and that a failed write leaves the old one
// as it was and nothing else.
func TestGenerations(t *testing.T) {
	ctx := context.Background()
	s, conn := inspect(t)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(4)); err != nil {
		t.Fatal(err)
	}
	tables := featureTables(t, conn)
	if len(tables) != 1 {
		t.Fatalf("after create: tables %v", tables)
	}
	// An append and a delete are made in place.
	if _, err := s.Features.AddFeatures(ctx, ds.ID, storetest.SampleSource(2)); err != nil {
		t.Fatal(err)
	}
	if now := featureTables(t, conn); !slices.Equal(now, tables) {
		t.Fatalf("after append: tables %v, before %v", now, tables)
	}
	if err := s.Features.DeleteFeatures(ctx, ds.ID, []int64{1}); err != nil {
		t.Fatal(err)
	}
	if now := featureTables(t, conn); !slices.Equal(now, tables) {
		t.Fatalf("after delete: tables %v, before %v", now, tables)
	}
	writes := []func() error{
		func() error { _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, storetest.SampleSource(3)); return err },
	}
	for i, write := range writes {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		now := featureTables(t, conn)
		if len(now) != 1 || now[0] == tables[0] {
			t.Fatalf("write %d: tables %v, before %v", i, now, tables)
		}
		tables = now
	}
	before, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Failed writes: a source that fails, a value of the wrong type, a
	// position that does not exist.
	failing := func() *storetest.SliceSource {
		src := storetest.SampleSource(3)
		src.Err = mapcommons.Errorf(mapcommons.EINVALID, "line 4: bad")
		return src
	}
	wrong := func() *storetest.SliceSource {
		src := storetest.SampleSource(2)
		src.Features[1].Values[0] = "not a number"
		return src
	}
	for i, write := range []func() error{
		func() error { _, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, failing()); return err },
		func() error { _, err := s.Features.AddFeatures(ctx, ds.ID, wrong()); return err },
		func() error { return s.Features.DeleteFeatures(ctx, ds.ID, []int64{0, 3}) },
		func() error { return s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, wrong()) },
		func() error { return s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, failing()) },
		func() error {
			// Text columns hold no NUL byte (features' strings do).
			bad := &mapcommons.Dataset{Type: "csv", Metadata: mapcommons.Metadata{Title: "a\x00b"}}
			return s.Datasets.CreateDataset(ctx, bad, storetest.SampleSource(1))
		},
	} {
		if err := write(); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Fatalf("failed write %d: %v, want EINVALID", i, err)
		}
		if now := featureTables(t, conn); !slices.Equal(now, tables) {
			t.Fatalf("failed write %d: tables %v, before %v", i, now, tables)
		}
		after, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil || after.Version != before.Version || after.FeatureCount != 3 {
			t.Fatalf("failed write %d changed the dataset: %+v, %v", i, after, err)
		}
		var rows int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{tables[0]}.Sanitize()).Scan(&rows); err != nil || rows != 3 {
			t.Fatalf("failed write %d: the table holds %d rows (%v), want 3", i, rows, err)
		}
	}
	// A request that ends in the middle of a load (the client went away)
	// leaves nothing either.
	cctx, cancel := context.WithCancel(ctx)
	src := &cancelling{SliceSource: storetest.SampleSource(10000), at: 5000, cancel: cancel}
	if err := s.Datasets.CreateDataset(cctx, &mapcommons.Dataset{Type: "csv"}, src); err == nil {
		t.Fatal("a create whose context ended in the middle succeeded")
	}
	src = &cancelling{SliceSource: storetest.SampleSource(10000), at: 5000, cancel: cancel}
	cctx, cancel = context.WithCancel(ctx)
	src.cancel = cancel
	if _, err := s.Datasets.ReplaceFeatures(cctx, ds.ID, src); err == nil {
		t.Fatal("a replace whose context ended in the middle succeeded")
	}
	if now := featureTables(t, conn); !slices.Equal(now, tables) {
		t.Fatalf("after cancelled writes: tables %v, before %v", now, tables)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM datasets`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("datasets after failed creates: %d, %v", n, err)
	}
	if err := s.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	if now := featureTables(t, conn); len(now) != 0 {
		t.Fatalf("after delete: tables %v", now)
	}
}

// cancelling is a source that cancels its request's context when it has
// given at features.
type cancelling struct {
	*storetest.SliceSource
	at, n  int
	cancel func()
}

func (c *cancelling) Next() (*mapcommons.Feature, error) {
	if c.n++; c.n == c.at {
		c.cancel()
	}
	return c.SliceSource.Next()
}

// eventually waits until cond holds, polling the server's state (which
// has no other signal), with two minutes as a bound on a hang, never as a
// measure.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within two minutes", what)
		}
	}
}

// waiting waits until n sessions wait for a lock.
func waiting(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d sessions waiting for a lock", n), func() bool {
		var k int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name <> $1`, postgres.BuildApp).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k >= n
	})
}

// TestReadDuringReplace checks the generations' reading rule: a reader of
// the old table reads it to the end while a replace waits to drop it
// (metadata updates go on meanwhile); a reader that found the old table's
// name before the swap and waited behind the DROP reads the row again and
// then the new table.
func TestReadDuringReplace(t *testing.T) {
	ctx := context.Background()
	s, conn := inspect(t)
	ds := &mapcommons.Dataset{Type: "csv"}
	// Megabytes of rows: more than the socket's buffers hold, so that the
	// first reader's transaction (its COMMIT after its rows) stays open
	// while it stalls.
	const big = 20000
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(big)); err != nil {
		t.Fatal(err)
	}
	all := &mapcommons.FeatureQuery{Limit: -1}
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan []int64, 1)
	go func() {
		var ids []int64
		err := s.Features.ScanFeatures(ctx, ds.ID, all, func(f *mapcommons.Feature) error {
			if len(ids) == 0 {
				close(started)
				<-release
			}
			ids = append(ids, f.ID)
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		first <- ids
	}()
	<-started
	replaced := make(chan error, 1)
	go func() {
		src := storetest.SampleSource(2)
		src.Features[1].Values[0] = int64(100) // not an old row: a new id
		_, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, src)
		replaced <- err
	}()
	waiting(t, conn, 1) // the replace, to drop the old table
	// Metadata can change meanwhile: the replace holds no row lock yet.
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	title := "renamed"
	if _, err := s.Datasets.UpdateDataset(tctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatalf("updating the metadata while a replace waits: %v", err)
	}
	cancel()
	second := make(chan []int64, 1)
	go func() {
		var ids []int64
		err := s.Features.ScanFeatures(ctx, ds.ID, all, func(f *mapcommons.Feature) error { ids = append(ids, f.ID); return nil })
		if err != nil {
			t.Error(err)
		}
		second <- ids
	}()
	waiting(t, conn, 2) // and the second reader, behind it
	close(release)
	if ids := <-first; len(ids) != big || ids[0] != 1 || ids[big-1] != big {
		t.Fatalf("the first reader read %d ids, from %d to %d", len(ids), ids[0], ids[len(ids)-1])
	}
	if err := <-replaced; err != nil {
		t.Fatal(err)
	}
	if ids := <-second; !slices.Equal(ids, []int64{1, big + 1}) {
		t.Fatalf("the second reader read ids %v, want the new features' [1 %d]", ids, big+1)
	}
	got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil || got.Title != title || got.Version != 3 || got.FeatureCount != 2 {
		t.Fatalf("after the update and the replace: %+v, %v", got, err)
	}
}
