// Package sqlite is the embedded store of mapcommons: one SQLite database
// file (modernc.org/sqlite, pure Go) in WAL mode, written by one connection
// and read by many.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"mapcommons"
	"mapcommons/internal/storekit"
)

//go:embed migrations/*.sql
var migrations embed.FS

// timeLayout is how times are stored: UTC, sortable, microseconds.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// DB is an open store.
type DB struct {
	path  string
	write *sql.DB // one connection: SQLite has one writer
	read  *sql.DB // many connections, query-only
	segs  *segments
	cat   catalog
	// compactor merges datasets' deltas into their bases (compact.go).
	compactor compactor
	// limits are the login limiter's buckets: in memory, as one process
	// at a time serves an embedded store (data/LOCK).
	limits *mapcommons.MemoryLoginLimits
	Now    func() time.Time
	// Applied are the migrations (file names) this Open applied.
	Applied []string
	// reserve is room kept for signing in on a full disk (reserve.go).
	reserve *reserve
}

// Open opens (creating when missing) the database file at path and brings
// its schema up to date. Features live in segment files in the directory
// "features" beside it.
func Open(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	segs, err := newSegments(filepath.Join(filepath.Dir(path), "features"))
	if err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, url.Values{"_auto_vacuum": {"INCREMENTAL"}, "_txlock": {"immediate"}},
		"busy_timeout(30000)", "foreign_keys(1)", "journal_mode(WAL)", "synchronous(FULL)",
		"cache_size(-65536)", "temp_store(FILE)", "journal_size_limit(67108864)"))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, write: w, segs: segs, limits: mapcommons.NewMemoryLoginLimits(), Now: time.Now, reserve: newReserve(path)}
	segs.loadDelta = db.loadDelta
	if err := db.migrate(context.Background()); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	if err := db.collectSegments(context.Background()); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, url.Values{"_txlock": {"deferred"}},
		"busy_timeout(30000)", "query_only(1)", "cache_size(-16384)"))
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(16)
	r.SetMaxIdleConns(16)
	db.read = r
	db.compactor.start(db)
	if err := db.schedulePending(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// dsn is the data source name of the database file at path with the
// driver's parameters params and the pragmas, which the driver sets on
// every connection it opens: the write and the read connections differ
// only in these.
func dsn(path string, params url.Values, pragmas ...string) string {
	for _, p := range pragmas {
		params.Add("_pragma", p)
	}
	return "file:" + path + "?" + params.Encode()
}

// Close closes the database.
func (db *DB) Close() error {
	db.compactor.stop()
	db.segs.closeAll()
	return errors.Join(db.read.Close(), db.write.Close())
}

// collectSegments removes the segment files no dataset references.
func (db *DB) collectSegments(ctx context.Context) error {
	rows, err := db.write.QueryContext(ctx, `SELECT segment FROM datasets`)
	if err != nil {
		return err
	}
	defer rows.Close()
	inUse := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		for _, f := range parseLayout(name).files() {
			inUse[f] = true
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// The deltas no row names (none, unless a bug left one).
	if _, err := db.write.ExecContext(ctx, `DELETE FROM segment_deltas WHERE NOT EXISTS
		(SELECT 1 FROM datasets d WHERE instr(' ' || d.segment || ' ', ' ' || segment_deltas.name || ' ') > 0)`); err != nil {
		return err
	}
	return db.segs.collect(inUse)
}

// loadDelta reads a committed delta segment.
func (db *DB) loadDelta(name string) ([]byte, error) {
	var data []byte
	err := db.read.QueryRow(`SELECT data FROM segment_deltas WHERE name = ?`, name).Scan(&data)
	if err == sql.ErrNoRows {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset not found") // replaced meanwhile
	}
	return data, err
}

// schedulePending asks for the compaction of the datasets left with
// pending changes by the last run.
func (db *DB) schedulePending(ctx context.Context) error {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM datasets WHERE instr(segment, ' ') > 0`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		db.compactor.changed(id, 1)
	}
	return rows.Err()
}

// CompactInBackground turns the background compactions on or off (tests
// and benchmarks compact with Compact when they choose).
func (db *DB) CompactInBackground(on bool) {
	db.compactor.mu.Lock()
	db.compactor.off = !on
	db.compactor.mu.Unlock()
	select {
	case db.compactor.wake <- struct{}{}:
	default:
	}
}

// SetCompactAfter sets how old the last edit of a dataset with pending
// changes is when it is compacted (compact.go); bigger changes are
// compacted at once.
func (db *DB) SetCompactAfter(d time.Duration) {
	db.compactor.mu.Lock()
	db.compactor.idle = d
	db.compactor.mu.Unlock()
}

// SetLogger sets the logger of the compactions.
func (db *DB) SetLogger(l *slog.Logger) {
	db.compactor.mu.Lock()
	db.compactor.log = l
	db.compactor.mu.Unlock()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	return db.read.QueryRowContext(ctx, "SELECT 1").Scan(&n)
}

func (db *DB) now() string { return db.Now().UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeLayout, s)
	return t
}

// migrate applies every embedded migration not yet applied, each in its
// own transaction, in file name order.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		applied, err := db.migrateFile(ctx, name)
		if err != nil {
			return err
		}
		if applied {
			db.Applied = append(db.Applied, path.Base(name))
		}
	}
	return nil
}

// migrationHooks are the Go parts of migrations: each runs in the
// transaction of the migration it follows, after its SQL.
var migrationHooks = map[string]func(ctx context.Context, tx *sql.Tx) error{
	"migrations/0006_map_search.sql": func(ctx context.Context, tx *sql.Tx) error {
		return refreshMapDocs(ctx, tx, `SELECT id FROM maps`)
	},
	"migrations/0008_normal_urls.sql": normalURLs,
}

// migrateFile applies one migration unless it was, and reports whether it
// applied it.
func (db *DB) migrateFile(ctx context.Context, name string) (bool, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return false, err
	} else if n > 0 {
		return false, nil
	}
	body, err := fs.ReadFile(migrations, name)
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	if hook := migrationHooks[name]; hook != nil {
		if err := hook(ctx, tx); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name) VALUES (?)`, name); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// formatError translates driver errors into domain errors: the one place
// that knows SQLite's error codes.
func formatError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return storekit.NoRow()
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return storekit.Taken()
		case sqlite3.SQLITE_FULL:
			return storekit.Full()
		}
	}
	return err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Services are the services of the store db, all of them.
func (db *DB) Services() mapcommons.Services {
	return mapcommons.Services{
		Users:         NewUserService(db),
		Datasets:      NewDatasetService(db),
		Features:      NewFeatureService(db),
		Maps:          NewMapService(db),
		Search:        NewSearchService(db),
		Groups:        NewGroupService(db),
		Trust:         NewLoginTrustService(db),
		LoginLimits:   db.limits,
		Sessions:      NewSessionService(db),
		SecondFactors: NewSecondFactorService(db),
		SignInLinks:   NewSignInLinkService(db),
		FeedClaims:    NewFeedClaimService(db),
		Health:        db,
	}
}
