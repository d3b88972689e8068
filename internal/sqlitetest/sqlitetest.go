// Package sqlitetest opens embedded stores for tests quickly: each new store
// starts from a copy of one migrated once per test process, instead of
// running every migration again (under the race detector, migrations were a
// tenth of the api tests' time).
package sqlitetest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"mapcommons/sqlite"
)

// template is the file of an empty, migrated store, made once.
var template struct {
	once sync.Once
	data []byte
	err  error
}

// Open opens the store at path, closed at the end of tb. A store that does
// not exist yet starts as a copy of the migrated template.
func Open(tb testing.TB, path string) *sqlite.DB {
	tb.Helper()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := writeTemplate(path); err != nil {
			tb.Fatal(err)
		}
	}
	db, err := sqlite.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// writeTemplate writes a freshly migrated, empty store's file to path.
func writeTemplate(path string) error {
	template.once.Do(func() {
		dir, err := os.MkdirTemp("", "mapcommons-template-")
		if err != nil {
			template.err = err
			return
		}
		defer os.RemoveAll(dir)
		file := filepath.Join(dir, "mapcommons.db")
		db, err := sqlite.Open(file)
		if err != nil {
			template.err = err
			return
		}
		if template.err = db.Close(); template.err != nil { // checkpoints the WAL into the file
			return
		}
		template.data, template.err = os.ReadFile(file)
	})
	if template.err != nil {
		return template.err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return os.WriteFile(path, template.data, 0o600)
}
