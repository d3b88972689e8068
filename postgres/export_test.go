package postgres

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"

	"mapcommons/format/wkb"
	"mapcommons/segment"
	"mapcommons/spatial"
)

// Migrations are the embedded migrations, for the tests of migrating.
var Migrations = migrations

// MaxConns is the size of db's pool of connections.
func MaxConns(db *DB) int32 { return db.pool.Config().MaxConns }

// SetDropLockTimeout sets how long dropping a features table waits for
// its readers, for one test.
func SetDropLockTimeout(tb interface{ Cleanup(func()) }, d time.Duration) {
	old := dropLockTimeout
	dropLockTimeout = d
	tb.Cleanup(func() { dropLockTimeout = old })
}

// SetCopyChunk sets the bytes of rows a load puts in Hilbert order at
// once, for one test.
func SetCopyChunk(tb interface{ Cleanup(func()) }, n int) {
	old := copyChunk
	copyChunk = n
	tb.Cleanup(func() { copyChunk = old })
}

// Hilbert is the place of (x, y) on the loads' Hilbert curve.
func Hilbert(x, y float64) uint64 {
	return spatial.HilbertKey(wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}, world)
}

// HintedReads is the number of reads db answered in one round trip, with
// the dataset's row as an earlier read found it.
func HintedReads(db *DB) int64 { return db.hints.hinted.Load() }

// BuildApp is the application_name of the index builds' connections.
const BuildApp = buildApp

// IndexLock is the first key of the builds' advisory locks.
const IndexLock = indexLock

// QuerySQL is the SQL (and its parameters) that ScanFeatures runs for q
// on dataset id, as it stands.
func QuerySQL(ctx context.Context, db *DB, id int64, q *mapcommons.FeatureQuery) (string, []any, error) {
	ds, err := findDataset(ctx, db.pool, id, false)
	if err != nil {
		return "", nil, err
	}
	p, err := compile(ds, q)
	if err != nil {
		return "", nil, err
	}
	p.countPage = q.Count != nil && q.Selective() && p.canCountPage() // as ScanFeatures has it
	return p.query(p.selectAll(), p.exact()), p.args, nil
}

// GenericPlan reports whether a read runs sql on its generic plan.
func GenericPlan(sql string) bool { return strings.HasPrefix(sql, genericPlan) }

// Sweeps is how many sweeps db's builder has done.
func Sweeps(db *DB) int {
	db.indexer.mu.Lock()
	defer db.indexer.mu.Unlock()
	return db.indexer.sweeps
}

// SweepAgain asks db's builder for a sweep.
func SweepAgain(db *DB) { db.indexer.changed() }

// SetBusyRetry sets how soon a sweep that left a table to another
// builder runs again, for the test.
func SetBusyRetry(t *testing.T, d time.Duration) {
	old := busyRetry
	busyRetry = d
	t.Cleanup(func() { busyRetry = old })
}

// IndexesBuilt is how many indexes db's builder built.
// BuildBackend is the server process of the last build of index name (0:
// none).
func BuildBackend(db *DB, name string) uint32 {
	db.indexer.mu.Lock()
	defer db.indexer.mu.Unlock()
	return db.indexer.backends[name]
}

func IndexesBuilt(db *DB) int {
	db.indexer.mu.Lock()
	defer db.indexer.mu.Unlock()
	return db.indexer.built
}

// CancelBuild is cancelBuild (a write's taking of a table's build lock).
func CancelBuild(ctx context.Context, tx pgx.Tx, table string) error {
	return cancelBuild(ctx, tx, table)
}

// TableAndHoles are the features table dataset id's row points at and
// the holes of it (holes.go).
func TableAndHoles(ctx context.Context, db *DB, id int64) (string, []int64, error) {
	ds, err := findDataset(ctx, db.pool, id, false)
	if err != nil {
		return "", nil, err
	}
	return ds.table, ds.holes, nil
}

// SetMaxHoles sets the most holes a table keeps, for one test.
func SetMaxHoles(tb interface{ Cleanup(func()) }, n int) {
	old := maxHoles
	maxHoles = n
	tb.Cleanup(func() { maxHoles = old })
}

// SetExactSummaryMax sets the count up to which an edit in place
// summarizes exactly, for one test.
func SetExactSummaryMax(tb interface{ Cleanup(func()) }, n int64) {
	old := exactSummaryMax
	exactSummaryMax = n
	tb.Cleanup(func() { exactSummaryMax = old })
}

// Slot and Position are datasetRow.slot and datasetRow.position over
// holes.
func Slot(holes []int64, count, k int64) int64 {
	return (&datasetRow{Dataset: &mapcommons.Dataset{FeatureCount: count}, holes: holes}).slot(k)
}

func Position(holes []int64, pos int64) int64 {
	return (&datasetRow{Dataset: &mapcommons.Dataset{}, holes: holes}).position(pos)
}

// CatalogueHits is the number of FindDatasetByID calls db answered from
// its catalogue cache.
func CatalogueHits(db *DB) int64 { return db.catalogue.hits.Load() }

// CatalogueStamps is how many stamps db's catalogue cache read.
func CatalogueStamps(db *DB) int64 { return db.catalogue.stamps.Load() }

// CatalogueTrusted is the number of FindDatasetByID calls db answered
// from its catalogue cache without checking the row's stamp.
func CatalogueTrusted(db *DB) int64 { return db.catalogue.trusted.Load() }

// StallListener makes db's catalogue listener ignore what it hears (as a
// connection that hangs would), or hear again.
func StallListener(db *DB, stalled bool) { db.catalogue.listen.stalled.Store(stalled) }

// ReplicaReads counts db's reads of features: those a replica answered,
// those the primary answered, and of those, the ones a replica was behind
// for and the ones a replica failed.
func ReplicaReads(db *DB) (replica, primary, behind, failed int64) {
	rs := db.replicas
	return rs.replicaReads.Load(), rs.primaryReads.Load(), rs.behind.Load(), rs.failed.Load()
}

// ReplicaDown reports whether db's replica i is marked down.
func ReplicaDown(db *DB, i int) bool { return db.replicas.list[i].down.Load() }

// SeenVersion is the highest version of dataset id's row db saw on the
// primary (0: none).
func SeenVersion(db *DB, id int64) int64 { return db.replicas.versions.get(id) }

// LostReplica reports whether err fails a replica (lostReplica).
var LostReplica = lostReplica

// Resummarize summarizes again the datasets whose summaries edits
// extended, unchanged since before (the indexer's periodic sweep).
func Resummarize(ctx context.Context, db *DB, before time.Time) error {
	return db.resummarize(ctx, before)
}

// ResummarizeOne summarizes dataset id again if edits extended its
// summary, running beforeWrite between the read and the write; it
// reports whether it wrote.
func ResummarizeOne(ctx context.Context, db *DB, id int64, beforeWrite func()) (bool, error) {
	return db.resummarizeOne(ctx, id, beforeWrite)
}

// SummaryExtended reports whether dataset id's summary is marked as
// extended by edits.
func SummaryExtended(ctx context.Context, db *DB, id int64) (bool, error) {
	var ext bool
	err := db.pool.QueryRow(ctx, `SELECT summary_extended FROM datasets WHERE id = $1`, id).Scan(&ext)
	return ext, err
}

// RowVersion is dataset id's version as the database has it now.
func RowVersion(t interface {
	Helper()
	Fatal(...any)
}, db *DB, id int64) int64 {
	t.Helper()
	var v int64
	if err := db.pool.QueryRow(context.Background(), `SELECT version FROM datasets WHERE id = $1`, id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// OnResummaryScan calls fn once each resummary's scan has its first row,
// for one test.
func OnResummaryScan(tb interface{ Cleanup(func()) }, fn func()) {
	resummaryScanning = fn
	tb.Cleanup(func() { resummaryScanning = nil })
}

// WriteTx runs fn in a write's transaction (db.tx), and says how many
// round trips it made.
func WriteTx(ctx context.Context, db *DB, fn func(tx pgx.Tx) error) (sends int, err error) {
	var t *pipeTx
	err = db.tx(ctx, func(tx pgx.Tx) error {
		t = tx.(*pipeTx)
		return fn(tx)
	})
	return t.sends, err
}

// Later and LaterRow queue a statement of a write's transaction.
var Later, LaterRow = later, laterRow

// SetAfterEditRead sets a function an edit in place calls after its first
// round trip (the dataset's row read), for one test.
func SetAfterEditRead(tb interface{ Cleanup(func()) }, fn func()) {
	afterEditRead = fn
	tb.Cleanup(func() { afterEditRead = nil })
}

// SetMirrorEager keeps local copies in dir (mirror.go), of at most
// maxBytes, built in the read that wants one when it is due.
func SetMirrorEager(tb testing.TB, db *DB, dir string, maxBytes int64) {
	if err := db.SetMirror(dir, maxBytes, segment.Copies{}); err != nil {
		tb.Fatal(err)
	}
	db.mirror.eager = true
}

// SetMissedReads sets the reads that miss a copy before it is built
// again: n, whatever the dataset's size; for one test.
func SetMissedReads(tb interface{ Cleanup(func()) }, n int64) {
	oldMin, oldPer := minMissedReads, missedPerFeature
	minMissedReads, missedPerFeature = n, math.MaxInt64
	tb.Cleanup(func() { minMissedReads, missedPerFeature = oldMin, oldPer })
}

// SetCopyBusyRetry sets how long a copy whose table was busy waits, for
// one test.
func SetCopyBusyRetry(tb interface{ Cleanup(func()) }, d time.Duration) {
	old := copyBusyRetry
	copyBusyRetry = d
	tb.Cleanup(func() { copyBusyRetry = old })
}

// OnCopying calls fn in each build of a local copy once its first row is
// read (its query running), and beforeInstall before it is installed;
// set before the store is used.
func OnCopying(db *DB, copying, beforeInstall func(id int64)) {
	db.mirror.onCopying, db.mirror.beforeInstall = copying, beforeInstall
}

// CatalogueHas reports whether db's catalogue cache holds dataset id's row.
func CatalogueHas(db *DB, id int64) bool { return db.catalogue.get(id) != nil }

// MirrorReads counts the reads db's local copies answered, and the copies
// built.
func MirrorReads(db *DB) (served, built int64) {
	return db.mirror.served.Load(), db.mirror.built.Load()
}

// OnMirrorBuilt calls fn at the end of each build of a local copy; set
// before the store is used.
func OnMirrorBuilt(db *DB, fn func(id int64, err error)) { db.mirror.onBuilt = fn }

// MirrorBytes is what db's local copies take, and how many there are.
func MirrorBytes(db *DB) (int64, int) {
	db.mirror.mu.Lock()
	defer db.mirror.mu.Unlock()
	return db.mirror.bytes, len(db.mirror.entries)
}

// SetMinMissedReads sets how many reads miss a stale copy before it is
// built again, for one test.
func SetMinMissedReads(tb interface{ Cleanup(func()) }, n int64) {
	old := minMissedReads
	minMissedReads = n
	tb.Cleanup(func() { minMissedReads = old })
}

// OnMirrorChecked calls fn at the end of each look for a dataset whose
// change was heard; set before the store is used.
func OnMirrorChecked(db *DB, fn func(id int64)) { db.mirror.onChecked = fn }

// SetMinKNNRows sets the fewest rows a table has its box and position
// index for, for one test.
func SetMinKNNRows(tb interface{ Cleanup(func()) }, n int64) {
	old := minKNNRows
	minKNNRows = n
	tb.Cleanup(func() { minKNNRows = old })
}

// FastEdits are the edits db made in one round trip, and those it tried
// so that went the long way (editfast.go).
func FastEdits(db *DB) (fast, missed int64) {
	return db.tables.fast.Load(), db.tables.missed.Load()
}

// MirrorChecksPending are the datasets whose copies db's worker is to
// look for in the database, ascending.
func MirrorChecksPending(db *DB) []int64 {
	db.mirror.mu.Lock()
	defer db.mirror.mu.Unlock()
	var ids []int64
	for id := range db.mirror.checks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
