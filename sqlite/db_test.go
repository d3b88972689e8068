package sqlite_test

import (
	"path/filepath"
	"testing"

	"mapcommons/sqlite"
	"mapcommons/storetest"
)

// MustOpen opens a store in a temporary directory, closed at the end of tb.
func MustOpen(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(filepath.Join(tb.TempDir(), "mapcommons.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func open(tb testing.TB) storetest.Services {
	db := MustOpen(tb)
	return storetest.Services{
		Users:    sqlite.NewUserService(db),
		Datasets: sqlite.NewDatasetService(db),
		Features: sqlite.NewFeatureService(db),
	}
}

func TestContract(t *testing.T) { storetest.Run(t, open) }
