// Package postgres is the PostgreSQL/PostGIS store of mapcommons: the
// catalogue in tables any number of servers share (pgx v5, pgxpool), so
// that servers keep no state another server could contradict.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"mapcommons"
	"mapcommons/internal/storekit"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the key of the advisory lock under which migrations run,
// so that servers starting together migrate once ("mapcommons" in ASCII,
// folded into 63 bits).
const migrationLock int64 = 0x6d6170636f6d6d6f

// defaultMaxConns is the size of a server's pool of connections unless the
// database URL sets pool_max_conns.
const defaultMaxConns = 16

// DB is an open store: a pool of connections to one database.
type DB struct {
	pool *pgxpool.Pool
	// limits is the login limiter's service (its last sweep is per store).
	limits *LoginLimitService
	// Now is the store's clock (tests may replace it before use).
	Now func() time.Time
	// Applied are the migrations (file names) this Open applied.
	Applied []string
	// hints are the datasets' rows as reads last found them (read.go):
	// a guess, checked in every read's snapshot.
	hints rowHints
	// catalogue keeps the datasets' rows FindDatasetByID read, checked
	// against the database at every use (catalogue.go).
	catalogue catalogue
	// indexer builds the features tables' attribute indexes (attrindex.go).
	indexer indexer
	// tables are the features tables of the datasets edits locked: a
	// guess, checked in the edit's transaction (edits.go).
	tables tableGuesses
	// replicas are the hot standbys reads of features may go to
	// (replica.go); nil without.
	replicas *replicaSet
	// mirror keeps local copies of datasets' features (mirror.go); nil
	// without.
	mirror *mirror
}

// Open connects to the database at url (postgres://… or a key=value
// connection string; pgxpool's pool_* parameters apply) and brings its
// schema up to date.
func Open(ctx context.Context, url string) (*DB, error) {
	return OpenWithReplicas(ctx, url, nil)
}

// OpenWithReplicas is Open with read replicas: hot standbys of url's
// database (PostgreSQL streaming replication), which answer the reads of
// features when they can (replica.go says which and why they are
// consistent). Migrations run on url only; a replica that does not
// answer now is not an error: it is tried again later.
func OpenWithReplicas(ctx context.Context, url string, replicas []string) (*DB, error) {
	cfg, err := poolConfig(url)
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "database url: %v", err)
	}
	rcfgs := make([]*pgxpool.Config, len(replicas))
	for i, u := range replicas {
		if rcfgs[i], err = poolConfig(u); err != nil {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "replica url %d: %v", i+1, err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	db := &DB{pool: pool, Now: time.Now}
	db.limits = &LoginLimitService{db: db}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if len(rcfgs) > 0 {
		if db.replicas, err = openReplicas(ctx, db, rcfgs); err != nil {
			pool.Close()
			return nil, err
		}
	}
	db.indexer.start(db)
	return db, nil
}

// poolConfig is the configuration of a pool on the database at url, the
// primary's or a replica's.
func poolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgxpool's default, max(4, CPUs), is a few slow downloads (a
		// scan holds its connection while the client reads): more, unless
		// the URL says.
		cfg.MaxConns = max(cfg.MaxConns, defaultMaxConns)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		// So that pg_stat_activity says whose connections these are.
		cfg.ConnConfig.RuntimeParams["application_name"] = "mapcommons"
	}
	return cfg, nil
}

// Close cancels the index build under way, if any, and closes every
// connection of the pool.
func (db *DB) Close() error {
	db.catalogue.listen.close()
	db.indexer.stop()
	db.mirror.close()
	db.replicas.close()
	db.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return formatError(db.pool.Ping(ctx))
}

// now is the store's time as the database keeps it: UTC, microseconds.
func (db *DB) now() time.Time { return db.Now().UTC().Truncate(time.Microsecond) }

// utc returns t as read from the database: in UTC (pgx gives local time).
func utc(t time.Time) time.Time { return t.UTC() }

// Services are the services of the store db that exist so far; the others
// are nil (storetest skips their parts).
func (db *DB) Services() mapcommons.Services {
	return mapcommons.Services{
		Users:         &UserService{db: db},
		Groups:        &GroupService{db: db},
		Maps:          &MapService{db: db},
		Datasets:      &DatasetService{db: db},
		Features:      &FeatureService{db: db},
		Trust:         &LoginTrustService{db: db},
		LoginLimits:   db.limits,
		Sessions:      &SessionService{db: db},
		SecondFactors: &SecondFactorService{db: db},
		SignInLinks:   &SignInLinkService{db: db},
		FeedClaims:    &FeedClaimService{db: db},
		Search:        &SearchService{db: db},
		Health:        db,
	}
}

// tx runs fn in a transaction (a pipeTx), committed when fn returns nil
// and rolled back otherwise. The versions of datasets fn read or wrote (noteVersion)
// are recorded once it commits (replica.go).
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	_, err := db.txRefused(ctx, fn)
	return err
}

// txRefused is tx, and says whether PostgreSQL refused a statement of the
// transaction, which it then rolled back (nothing of it stays).
func (db *DB) txRefused(ctx context.Context, fn func(tx pgx.Tx) error) (refused bool, _ error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return false, formatError(err)
	}
	tx := &pipeTx{conn: conn}
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		refused = tx.refused
		if tx.err != nil && !errors.Is(err, tx.err) {
			// A queued statement failed first: what came after it
			// failed for that (an aborted transaction).
			return refused, formatError(tx.err)
		}
		return refused, err
	}
	err = tx.Commit(ctx)
	refused = tx.refused
	if tx.committed {
		db.catalogue.listen.wrote()
		db.replicas.saw(tx.seen...)
		// The rows it held are read again by the next find, in one
		// round trip rather than a stamp that differs and then the row
		// (their notifications may come after it).
		for _, v := range tx.seen {
			db.catalogue.changed(v.id)
			db.tables.saw(v.id, v.version)
		}
	}
	return refused, formatError(err)
}

// migrate applies every embedded migration not yet applied, in file name
// order, each in its own transaction, under an advisory lock held on one
// connection: a second server starting at the same time waits, then finds
// the work done. Then, under the same lock, it writes the search entries
// that are missing (fillSearchDocs): on the first open after migration
// 0005, those of every dataset and map.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		applied, err := migrateFile(ctx, conn.Conn(), name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if applied {
			db.Applied = append(db.Applied, path.Base(name))
		}
	}
	// The search entries that are missing (of objects older than search,
	// or written by a server without it), still under the lock.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := fillSearchDocs(ctx, tx); err != nil {
		return fmt.Errorf("search entries: %w", err)
	}
	return tx.Commit(ctx)
}

// migrateFile applies one migration unless it was, and reports whether it
// applied it.
func migrateFile(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	var done bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, name).Scan(&done); err != nil || done {
		return false, err
	}
	body, err := fs.ReadFile(migrations, name)
	if err != nil {
		return false, err
	}
	// Several statements in one: the simple protocol (no parameters).
	if _, err := tx.Exec(ctx, string(body), pgx.QueryExecModeSimpleProtocol); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

// PostgreSQL error codes formatError knows.
const (
	pgUniqueViolation = "23505"
	pgForeignKey      = "23503"
	pgDiskFull        = "53100"
	pgQueryCanceled   = "57014"
	pgLockTimeout     = "55P03" // lock_not_available: lock_timeout passed
	pgBadText         = "22021" // a NUL byte or invalid UTF-8 in text
)

// formatError translates driver errors into domain errors: the one place
// that knows PostgreSQL's error codes.
func formatError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return storekit.NoRow()
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgUniqueViolation:
			return storekit.Taken()
		case pgForeignKey:
			// A row referred to went, in another transaction, between
			// this one's check and its write.
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "not found (it was just deleted)")
		case pgDiskFull:
			return storekit.Full()
		case pgBadText:
			// PostgreSQL's text holds neither (features' strings are bytea).
			return mapcommons.Errorf(mapcommons.EINVALID, "text with a NUL byte or invalid UTF-8")
		case pgLockTimeout:
			return mapcommons.Errorf(mapcommons.ETIMEOUT, "the dataset's features are being read longer than a write may wait: try again")
		case pgQueryCanceled:
			return mapcommons.Errorf(mapcommons.ETIMEOUT, "the store cancelled the statement (statement_timeout)")
		}
	}
	return err
}

// affected is the count of rows a statement changed.
func affected(tag pgconn.CommandTag, err error) (int, error) {
	if err != nil {
		return 0, formatError(err)
	}
	return int(tag.RowsAffected()), nil
}
