package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"mapcommons"
	"mapcommons/internal/sqlitetest"
	"mapcommons/sqlite"
	"mapcommons/storetest"
)

// MustOpen opens a store in a temporary directory, closed at the end of tb.
func MustOpen(tb testing.TB) *sqlite.DB {
	tb.Helper()
	return sqlitetest.Open(tb, filepath.Join(tb.TempDir(), "mapcommons.db"))
}

// open opens a store for the contract, on the contract's clock.
func open(tb testing.TB) mapcommons.Services {
	db := MustOpen(tb)
	db.Now = storetest.ClockFor(tb)
	return db.Services()
}

func TestContract(t *testing.T) { storetest.Run(t, open) }

// TestSegmentFiles checks the files behind the datasets: a failed create
// leaves none, a delete removes its file, and opening the store removes
// what an interrupted write left.
func TestSegmentFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mapcommons.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	files := func() []string {
		entries, _ := os.ReadDir(filepath.Join(dir, "features"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	ds := sqlite.NewDatasetService(db)
	ctx := context.Background()
	src := storetest.SampleSource(100)
	src.Err = mapcommons.Errorf(mapcommons.EINVALID, "broken")
	if err := ds.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, src); err == nil {
		t.Fatal("a failing source created a dataset")
	}
	if f := files(); len(f) != 0 {
		t.Fatalf("a failed create left %v", f)
	}
	a, b := &mapcommons.Dataset{Type: "csv"}, &mapcommons.Dataset{Type: "csv"}
	for _, d := range []*mapcommons.Dataset{a, b} {
		if err := ds.CreateDataset(ctx, d, storetest.SampleSource(10)); err != nil {
			t.Fatal(err)
		}
	}
	if f := files(); len(f) != 2 {
		t.Fatalf("two datasets, files %v", f)
	}
	if err := ds.DeleteDataset(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if f := files(); len(f) != 1 {
		t.Fatalf("after a delete, files %v", f)
	}
	db.Close()
	for _, stray := range []string{"ds-0123.seg", "seg-1.part", ".seg-2.tmp"} {
		os.WriteFile(filepath.Join(dir, "features", stray), []byte("x"), 0o644)
	}
	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if f := files(); len(f) != 1 {
		t.Fatalf("after reopening, files %v", f)
	}
	got, err := sqlite.NewDatasetService(db).FindDatasetByID(ctx, b.ID)
	if err != nil || got.FeatureCount != 10 {
		t.Fatalf("the surviving dataset: %+v %v", got, err)
	}
}
