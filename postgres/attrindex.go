package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mapcommons"
)

// The attribute indexes of a features table: one B-tree per attribute
// column on (a<i>, pos), named <table>_a<i>, so that a filter finds its
// rows and a sort its first page without reading the table (plan.go
// writes its SQL for them: see the comment there).
//
//   - Strings and dates (bytea) are indexed only up to indexedBytes: a
//     B-tree refuses a key of more than about 2.7 kB, which would fail
//     the build, and then every write of such a value. Those columns'
//     indexes are partial (WHERE octet_length(a<i>) <= indexedBytes), and
//     one more, <table>_long on (pos), holds the rows with a longer
//     string in any of them, so that a range or a sort finds those too.
//   - Only the first maxIndexedAttrs attributes are indexed: each index
//     costs a scan of the table to build and a write per row appended.
//
// They are built after the table is committed, not in the write's
// transaction (a million rows' worth of indexes is seconds): with CREATE
// INDEX CONCURRENTLY, which blocks neither readers nor writers, one at a
// time per server, on a goroutine of the DB (indexer). Until an index is
// valid the planner does not use it and queries scan, with the same
// answers. The indexer builds what is missing on every features table
// the datasets point to (a sweep): at start, after each write of this
// server that made a new table, and every sweepEvery, so that the
// indexes a server did not finish (it stopped, or died) are built by the
// next. An index a failed build left invalid is dropped and built again.
//
// Several servers: a builder holds an advisory lock per table
// (indexLock, hashtext of its name) on its connection while it works on
// it, so that two never build nor drop the same index. A write that drops
// a table (dropTable) takes that lock in its transaction, cancelling the
// build that holds it: the drop never waits for a build, and no build
// starts on a table being dropped. Appends go into the table in place,
// and so keep its indexes up to date by themselves.

// indexedBytes is the longest string or date an attribute index holds.
const indexedBytes = 2000

// maxIndexedAttrs is how many attributes (the first) are indexed.
const maxIndexedAttrs = 32

// sweepEvery is how often the indexer looks for missing indexes besides
// after writes (variable for tests).
var sweepEvery = 5 * time.Minute

// indexLock namespaces the advisory locks of index builds (the first key
// of pg_advisory_lock(int, int)): "ix" in ASCII.
const indexLock int32 = 0x6978

// buildApp is the application_name of the builds' connections.
const buildApp = "mapcommons index build"

// isBytea reports whether attributes of type t are stored as bytea.
func isBytea(t mapcommons.AttrType) bool {
	return t != mapcommons.AttrInteger && t != mapcommons.AttrFloat && t != mapcommons.AttrBoolean
}

// indexSpec is an index a features table should have.
type indexSpec struct {
	name   string
	create string // CREATE INDEX CONCURRENTLY …
}

// shortBytes is the condition that bytea column col is in its index.
func shortBytes(col string) string {
	return "octet_length(" + col + ") <= " + strconv.Itoa(indexedBytes)
}

// longBytes is the condition that bytea column col is not (nor null).
func longBytes(col string) string {
	return "octet_length(" + col + ") > " + strconv.Itoa(indexedBytes)
}

// attrIndexes are the indexes table should have for attributes attrs,
// and first the box and position index (knnIndex) when its rows are
// minKNNRows or more.
func attrIndexes(table string, attrs []mapcommons.Attribute, rows int64) []indexSpec {
	var specs []indexSpec
	if rows >= minKNNRows {
		specs = append(specs, knnIndex(table))
	}
	var long []string
	for i, a := range attrs {
		if i >= maxIndexedAttrs {
			break
		}
		col := attrColumn(i)
		name := table + "_a" + strconv.Itoa(i)
		where := ""
		if isBytea(a.Type) {
			where = " WHERE " + shortBytes(col)
			long = append(long, longBytes(col))
		}
		specs = append(specs, indexSpec{name, `CREATE INDEX CONCURRENTLY ` + ident(name) + ` ON ` + ident(table) +
			` (` + col + `, pos)` + where})
	}
	if len(long) > 0 {
		name := table + "_long"
		specs = append(specs, indexSpec{name, `CREATE INDEX CONCURRENTLY ` + ident(name) + ` ON ` + ident(table) +
			` (pos) WHERE ` + strings.Join(long, " OR ")})
	}
	return specs
}

// knnIndex is the GiST index of table on the box and the position
// (btree_gist holds the position): the features of a box in position
// order, best first (knnPos <-> 0 in plan.go), so that the first page of
// a box's points reads about the page where the box index alone reads
// every match and sorts them (a page of 30 among 1,627 of the bench's
// million points: 55 buffers and 0.24 ms against 140 and 1.0 ms). The
// load's own box index (features.go) stays: it is built sorted, in a
// third of the time, and the whole-box reads of tiles and counts use it.
//
// The position is the expression knnPos, not the column: an index on
// (box, pos) also serves pos = $1, and PostgreSQL's estimate of a GiST
// scan, which does not see that the box is not constrained, made it
// choose this index over the primary key for the edits' one-row
// statements, reading the whole index for each: 38 ms for an UPDATE of
// one row of the million where the key takes 0.3 ms. The index of that
// first form (named oldKNN) is dropped where a server made it.
func knnIndex(table string) indexSpec {
	name := table + "_near"
	return indexSpec{name, `CREATE INDEX CONCURRENTLY ` + ident(name) + ` ON ` + ident(table) + ` USING gist (box, (` + knnPos + `))`}
}

// minKNNRows is the fewest features a table has its knnIndex for
// (variable for tests). Below it a box's matches are few enough to sort,
// and the build is spared: the one statement seen to crash PostgreSQL
// (a malloc assertion of glibc in the server process, four times in the
// tests' many builds on small tables, never reproduced alone) was this
// index's build, a GiST of a geometry and an int8 from btree_gist, which
// has no sort support for int8 and so builds by insertion.
var minKNNRows int64 = 10000

// knnPos is the position as knnIndex holds it.
const knnPos = "pos + 0"

// oldKNN is the name of the (box, pos) index of the first servers with
// knnIndex, which the indexer drops.
func oldKNN(table string) string { return table + "_knn" }

// indexed reports whether column i of attrs has an index (once built).
func indexed(i int) bool { return i < maxIndexedAttrs }

// indexer builds the attribute indexes of a DB's tables in the background.
type indexer struct {
	db     *DB
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	log    *slog.Logger
	// built counts the indexes this indexer built (for the tests).
	built int
	// sweeps counts the sweeps done (for the tests).
	sweeps int
	// backends holds, by index, the server process of its last build
	// (for the tests).
	backends map[string]uint32
}

// busyRetry is how soon a sweep that left a table to another builder
// runs again, doubling while it does so again (variable for tests): the
// builder may die at it, and the lock of a server stopped in a build
// outlives it a while (its backend ends the statement before it sees the
// connection gone).
var busyRetry = 10 * time.Second

func (ix *indexer) start(db *DB) {
	ix.db, ix.wake, ix.done, ix.log = db, make(chan struct{}, 1), make(chan struct{}), slog.Default()
	ctx, cancel := context.WithCancel(context.Background())
	ix.cancel = cancel
	ix.wake <- struct{}{} // the first sweep, at start
	go ix.run(ctx)
}

// stop ends the indexer: a build under way is cancelled (the index it
// leaves invalid is dropped and built again by the next sweep, of this
// server or another).
func (ix *indexer) stop() {
	if ix.cancel == nil {
		return
	}
	ix.cancel()
	<-ix.done
}

// changed asks for a sweep: a write made a table.
func (ix *indexer) changed() {
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

func (ix *indexer) logger() *slog.Logger {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.log
}

func (ix *indexer) run(ctx context.Context) {
	defer close(ix.done)
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	var retry <-chan time.Time
	retryIn := busyRetry
	for {
		tick := false
		select {
		case <-ctx.Done():
			return
		case <-ix.wake:
		case <-retry:
		case <-t.C:
			tick = true
		}
		busy, err := ix.sweep(ctx)
		if err != nil && ctx.Err() == nil {
			ix.logger().Warn("attribute indexes", "err", err)
		}
		ix.mu.Lock()
		ix.sweeps++
		ix.mu.Unlock()
		// Again and again while another builder holds a table, backing
		// off to the periodic sweep's pace.
		retry = nil
		if busy {
			retry = time.After(retryIn)
			retryIn = min(2*retryIn, sweepEvery)
		} else {
			retryIn = busyRetry
		}
		if !tick {
			continue
		}
		// The summaries extended by edits, of datasets left alone since
		// (resummary.go): at the periodic sweeps only.
		if err := ix.db.resummarize(ctx, ix.db.now().Add(-resummaryIdle)); err != nil && ctx.Err() == nil {
			ix.logger().Warn("summaries", "err", err)
		}
	}
}

// sweep builds the indexes missing on the tables the datasets point to;
// busy says it left one to another builder.
func (ix *indexer) sweep(ctx context.Context) (busy bool, err error) {
	type table struct {
		name  string
		attrs []mapcommons.Attribute
		rows  int64
	}
	var tables []table
	valid, present := map[string]bool{}, map[string]bool{}
	err = ix.db.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT features, attributes, feature_count FROM datasets WHERE features <> '' ORDER BY id`)
		if err != nil {
			return formatError(err)
		}
		for rows.Next() {
			var t table
			if err := rows.Scan(&t.name, &t.attrs, &t.rows); err != nil {
				rows.Close()
				return formatError(err)
			}
			tables = append(tables, t)
		}
		if err := rows.Err(); err != nil {
			return formatError(err)
		}
		rows, err = tx.Query(ctx, `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE c.relname LIKE 'features\_%' AND c.relnamespace = current_schema()::regnamespace`)
		if err != nil {
			return formatError(err)
		}
		for rows.Next() {
			var name string
			var ok bool
			if err := rows.Scan(&name, &ok); err != nil {
				rows.Close()
				return formatError(err)
			}
			valid[name], present[name] = ok, true
		}
		return formatError(rows.Err())
	})
	if err != nil {
		return false, err
	}
	// The builds run on a connection of their own, not the pool's: a
	// write that cancels a build (cancelBuild) must never cancel the
	// statement of another user of the connection.
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	for _, t := range tables {
		var missing []indexSpec
		for _, s := range attrIndexes(t.name, t.attrs, t.rows) {
			if !valid[s.name] {
				missing = append(missing, s)
			}
		}
		var drop []string
		if present[oldKNN(t.name)] {
			drop = append(drop, oldKNN(t.name))
		}
		if len(missing) == 0 && len(drop) == 0 {
			continue
		}
		if conn == nil || conn.IsClosed() {
			cfg := ix.db.pool.Config().ConnConfig
			cfg.RuntimeParams["application_name"] = buildApp
			if conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
				return busy, err
			}
		}
		mine, err := ix.build(ctx, conn, t.name, missing, drop)
		if err != nil {
			if ctx.Err() != nil {
				return busy, nil
			}
			ix.logger().Warn("attribute indexes", "table", t.name, "err", err)
		}
		busy = busy || !mine
	}
	return busy, nil
}

// build builds the indexes specs of table, one after the other, and drops
// the indexes named drop, unless another server is at it. A table dropped
// meanwhile (a write cancels the build to drop it) ends the build quietly.
func (ix *indexer) build(ctx context.Context, conn *pgx.Conn, table string, specs []indexSpec, drop []string) (mine bool, err error) {
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, indexLock, table).Scan(&mine); err != nil || !mine {
		return err != nil, err
	}
	defer func() {
		// The lock is the session's: a connection that cannot say
		// unlock is closed, which releases it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, uerr := conn.Exec(uctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, indexLock, table); uerr != nil {
			conn.Close(uctx)
		}
	}()
	for _, name := range drop {
		if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+ident(name)); err != nil {
			return true, fmt.Errorf("%s: %w", name, formatError(err))
		}
	}
	for _, s := range specs {
		t := time.Now()
		err := ix.buildOne(ctx, conn, s)
		if err != nil {
			// Nothing more runs on a backend whose build failed or was
			// cut short: the tests' PostgreSQL (15.18, PostGIS 3.3.2,
			// btree_gist) aborted three times with "malloc assertion
			// failure in sysmalloc" in a GiST build on the build
			// connection after builds on it were cancelled. The next
			// build connects afresh (sweep), and the close releases the
			// table's lock.
			conn.Close(context.WithoutCancel(ctx))
			var pe *pgconn.PgError
			if errors.As(err, &pe) && (pe.Code == pgUndefinedTable || pe.Code == pgQueryCanceled) {
				// The table is gone, or going: a write that drops it
				// cancelled the build (dropTable).
				return true, nil
			}
			return true, fmt.Errorf("%s: %w", s.name, formatError(err))
		}
		ix.mu.Lock()
		ix.built++
		ix.mu.Unlock()
		ix.logger().Debug("attribute index built", "index", s.name, "took", time.Since(t).Round(time.Millisecond))
	}
	return true, nil
}

// buildOne builds one index, dropping first what a failed build of it
// left (an invalid index), and again what its own failure leaves.
func (ix *indexer) buildOne(ctx context.Context, conn *pgx.Conn, s indexSpec) error {
	var valid *bool
	if err := conn.QueryRow(ctx, `SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = c.oid)
		FROM (SELECT to_regclass($1) AS oid) c`, s.name).Scan(&valid); err != nil {
		return err
	}
	if valid != nil && *valid {
		return nil // another server built it since the sweep looked
	}
	drop := `DROP INDEX CONCURRENTLY IF EXISTS ` + ident(s.name)
	if valid != nil {
		if _, err := conn.Exec(ctx, drop); err != nil {
			return err
		}
	}
	ix.mu.Lock()
	ix.backends = putBounded(ix.backends, s.name, conn.PgConn().PID(), maxRowHints)
	ix.mu.Unlock()
	_, err := conn.Exec(ctx, s.create)
	var pe *pgconn.PgError
	if err != nil && ctx.Err() == nil && !(errors.As(err, &pe) && (pe.Code == pgUndefinedTable || pe.Code == pgQueryCanceled)) {
		// A failure of its own (not the table going, nor the server
		// stopping): what it left would slow every write of the table.
		conn.Exec(ctx, drop)
	}
	return err
}

// SetLogger sets the logger of the background index builds and of the
// read replicas going down and up.
func (db *DB) SetLogger(l *slog.Logger) {
	db.indexer.mu.Lock()
	db.indexer.log = l
	db.indexer.mu.Unlock()
}

// cancelBuild, in a transaction about to drop table, takes the table's
// build lock until the end of tx, cancelling the build that holds it (an
// index build or a local copy's, mirror.go, of any server; another write that holds it, dropping a table whose name
// hashes alike, is waited for), so that the drop does not wait for a build nor a build
// starts on the table. It gives up after dropLockTimeout (ETIMEOUT).
func cancelBuild(ctx context.Context, tx pgx.Tx, table string) error {
	deadline := time.Now().Add(dropLockTimeout)
	for {
		var got bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, indexLock, table).Scan(&got); err != nil {
			return formatError(err)
		}
		if got {
			return nil
		}
		if time.Now().After(deadline) {
			return mapcommons.Errorf(mapcommons.ETIMEOUT, "the dataset's features are being indexed longer than a write may wait: try again")
		}
		// Only a build is cancelled: the holder may be another write's
		// drop of a table whose name hashes alike (its transaction
		// holds the lock too), and a backend the holder's pid meanwhile
		// names may be anyone's. pg_stat_activity is read once per
		// transaction unless its snapshot is cleared: a build that
		// connected after the first look would never be seen.
		if _, err := tx.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
			return formatError(err)
		}
		// A local copy's build is ended (its connection is its own): a
		// backend blocked sending rows to a client that does not read
		// defers a cancel, not a termination.
		if _, err := tx.Exec(ctx, `SELECT CASE WHEN a.application_name = $3 THEN pg_cancel_backend(l.pid) ELSE pg_terminate_backend(l.pid) END
			FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid = $1 AND l.objid = hashtext($2)::oid AND l.objsubid = 2 AND a.application_name IN ($3, $4)`, indexLock, table, buildApp, mirrorApp); err != nil {
			return formatError(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// IndexesReady reports whether the attribute indexes of dataset id's
// features are all built and valid (the benchmark waits for them).
func IndexesReady(ctx context.Context, conn *pgx.Conn, id int64) (bool, error) {
	var table string
	var attrs []mapcommons.Attribute
	var rows int64
	if err := conn.QueryRow(ctx, `SELECT features, attributes, feature_count FROM datasets WHERE id = $1`, id).Scan(&table, &attrs, &rows); err != nil {
		return false, formatError(err)
	}
	for _, s := range attrIndexes(table, attrs, rows) {
		var valid bool
		if err := conn.QueryRow(ctx, `SELECT coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)), false)`,
			s.name).Scan(&valid); err != nil {
			return false, formatError(err)
		}
		if !valid {
			return false, nil
		}
	}
	return true, nil
}
