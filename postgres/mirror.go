package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// Local mirrors (SetMirror). A server may keep, on its own disk, a copy
// of a dataset's features as one version of its row has them: a file
// made and read by the mapcommons.LocalCopies given to SetMirror (the
// embedded engine's segments, segment.Copies), built from the features
// table in one snapshot (the row and the table together), with the row's
// version. A read of
// the features (ScanFeatures, GroupFeatures) whose dataset is at that
// version is answered from the copy, by the embedded store's code: no
// statement, no row sent, no geometry decoded. Every other read goes to
// the database as before. Which version a read must see:
//
//   - A read that may see the catalogue a moment old (anonymous:
//     mapcommons.WithRecentCatalogue) was given the dataset's row from
//     the catalogue cache, trusted while its listener hears every change
//     (catalogue.go); it noted the row's version (RecentRow), and the
//     copy answers only at that version. Nothing is asked of the
//     database at all.
//   - Any other read asks the database for the row's version now (one
//     index lookup, in a snapshot taken after the request came) and is
//     answered from the copy only when it is at that version.
//
// So a read is answered with the features of the dataset's row it would
// have read anyway, from the copy or from the table: the answers are the
// same (the store's contract runs with every read answered from copies:
// TestMirrorContract).
//
// A copy is built by a goroutine of the DB, one at a time, after a read
// that found none for its dataset. An edit makes the copy stale: reads
// of the new version go to the database, and the copy is built again
// once as many reads as a 40th of the dataset's features (at least
// minMissedReads) have missed it (missedPerFeature), so that a dataset
// edited more often than it is read is not copied again and again. The copies take at most
// the budget given to SetMirror: the least recently used go first; a
// dataset whose copy alone would take more is not copied. A copy is
// removed when a notification says its dataset changed and the dataset
// is gone (deleted), when another replaces it, and at Close. The
// directory is the mirror's own: the files in it at SetMirror are a
// previous run's copies and spools, and removed.

// minMissedReads is the fewest reads that miss a stale copy before it is
// built again (variable for tests).
var minMissedReads int64 = 16

// missedPerFeature: a stale copy is built again once the reads that
// missed it number its features over this. The copy of the bench's
// million points took 2.4 s to build, 1.75 s of it the server's CPU
// while PostgreSQL read the table, and saves about 130 µs of CPU a read (170
// µs from the database, 40 from the copy): it pays for itself after some
// 25,000 reads, a 40th of its features. Building it again only after as
// many reads missed it bounds what a dataset edited between every few
// reads costs: at most about twice what the best moments to build would.
var missedPerFeature int64 = 40 // (variable for tests)

// mirrorExt ends the names of the copies' files.
const mirrorExt = ".mirror"

type mirror struct {
	db     *DB
	dir    string
	copies mapcommons.LocalCopies
	max    int64 // bytes the copies may take
	// eager, in tests, builds a missing or stale copy in the read that
	// wants it, and answers that read from it.
	eager bool

	mu      sync.Mutex
	entries map[int64]*mirrorEntry
	queued  map[int64]bool // datasets whose copy is to be built
	queue   []int64        // the same, in order
	checks  map[int64]bool // datasets to look for (a change was heard)
	bytes   int64
	tick    uint64
	// past are the datasets with no copy whose copy was tried or kept
	// before: one that failed, did not fit, or was evicted.
	past map[int64]*pastCopy
	// current is the dataset whose copy is being built (0: none).
	current int64
	wake    chan struct{}
	stop    context.CancelFunc
	stopped <-chan struct{}
	done    sync.WaitGroup
	// built counts the copies built, served the reads they answered (for
	// the tests); onBuilt, when set, hears each build's end (tests).
	built, served atomic.Int64
	onBuilt       func(id int64, err error)
	// onChecked, when set, hears each check's end; onCopying a build's
	// first row read, beforeInstall its end before the copy is installed
	// (tests).
	onChecked, onCopying, beforeInstall func(id int64)
}

// pastCopy is what is known of a dataset whose copy failed, did not fit
// or was evicted: it is built again once reads of it have missed
// (missed) as many times as for a stale copy; one that did not fit, not
// at the same version.
type pastCopy struct {
	version, count, missed int64
	tooBig                 bool
}

type mirrorEntry struct {
	id, version, count int64
	copy               mapcommons.LocalCopy
	path               string
	size               int64
	refs               int
	gone               bool   // replaced or evicted: closed at the last release
	used               uint64 // the mirror's tick at the last use
	missed             int64  // reads of a later version that went to the database
}

// SetMirror keeps local copies of the datasets' features in dir, of at
// most maxBytes in all (see above), made and read by copies. It must be
// called before the store is used, at most once; maxBytes <= 0 keeps none.
func (db *DB) SetMirror(dir string, maxBytes int64, copies mapcommons.LocalCopies) error {
	if maxBytes <= 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range old { // a previous run's copies, its writers' spools and last files
		if e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	m := &mirror{db: db, dir: dir, copies: copies, max: maxBytes, entries: map[int64]*mirrorEntry{},
		queued: map[int64]bool{}, checks: map[int64]bool{}, past: map[int64]*pastCopy{}, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop, m.stopped = cancel, ctx.Done()
	m.done.Add(1)
	go func() { defer m.done.Done(); m.run(ctx) }()
	db.mirror = m
	// The copies of deleted datasets go when their change is heard.
	db.catalogue.listen.start(db)
	return nil
}

// close stops the builds and removes every copy.
func (m *mirror) close() {
	if m == nil {
		return
	}
	m.stop()
	m.done.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, e := range m.entries {
		delete(m.entries, id)
		m.retire(e)
	}
}

// mirrorView returns the copy that answers dataset id's read in ctx, with its
// release, or nil: the read goes to the database.
func (db *DB) mirrorView(ctx context.Context, id int64) (mapcommons.LocalCopy, func()) {
	m := db.mirror
	if m == nil {
		return nil, nil
	}
	version, recent := mapcommons.RecentRow(ctx, id)
	if recent {
		// The copy answers as of the row the request was given only while
		// the catalogue still holds that row, within its bound: else the
		// database's read says whether the request must run again.
		if r := db.catalogue.get(id); r == nil || r.Version != version || !db.catalogue.listen.fresh(db.now()) {
			return nil, nil
		}
	} else {
		if !m.eager && !m.has(id) {
			m.missed(ctx, id, 0) // the first copy is wanted: no need to ask
			return nil, nil
		}
		if err := db.pool.QueryRow(ctx, `SELECT version FROM datasets WHERE id = $1`, id).Scan(&version); err != nil {
			return nil, nil // the database's read says what is wrong
		}
	}
	if v, release := m.acquire(id, version); v != nil {
		return v, release
	}
	m.missed(ctx, id, version)
	if m.eager {
		return m.acquire(id, version)
	}
	return nil, nil
}

func (m *mirror) has(id int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.entries[id] != nil
}

// acquire returns dataset id's copy at version, if there is one.
func (m *mirror) acquire(id, version int64) (mapcommons.LocalCopy, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[id]
	if e == nil || e.version != version {
		return nil, nil
	}
	e.refs++
	m.tick++
	e.used = m.tick
	m.served.Add(1)
	return e.copy, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if e.refs--; e.refs == 0 && e.gone {
			m.unmap(e)
		}
	}
}

// missed notes a read of dataset id at version (0: not known) that no
// copy answered, and asks for a copy when one is due (see above).
func (m *mirror) missed(ctx context.Context, id, version int64) {
	if !m.due(id, version) {
		return
	}
	if m.eager {
		err := m.build(ctx, id)
		m.mu.Lock()
		delete(m.queued, id)
		m.mu.Unlock()
		if m.onBuilt != nil {
			m.onBuilt(id, err)
		}
		return
	}
	m.signal()
}

// due notes a missed read, and reports whether a build of dataset id's
// copy is due, queueing it.
func (m *mirror) due(id, version int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.queued[id] {
		return false
	}
	if e := m.entries[id]; e != nil {
		if version <= e.version {
			return false
		}
		if e.missed++; e.missed < missedEnough(e.count) {
			return false
		}
	} else if p := m.past[id]; p != nil {
		if p.tooBig && (version == 0 || version == p.version) {
			return false
		}
		if p.missed++; !p.tooBig && p.missed < missedEnough(p.count) {
			return false
		}
		delete(m.past, id)
	}
	m.queued[id] = true
	if !m.eager {
		m.queue = append(m.queue, id)
	}
	return true
}

// copyBusyRetry is how long a copy whose table was being indexed waits to be
// tried again (variable for tests).
var copyBusyRetry = time.Second

// requeue asks for dataset id's copy again, unless the mirror stopped.
func (m *mirror) requeue(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.stopped:
		return
	default:
	}
	if !m.queued[id] {
		m.queued[id] = true
		m.queue = append(m.queue, id)
		m.signal()
	}
}

// missedEnough is how many reads of a dataset of count features miss its
// copy before it is built (again).
func missedEnough(count int64) int64 { return max(minMissedReads, count/missedPerFeature) }

// changed hears that dataset id's row changed (0: any): the worker looks
// whether it is still there, and drops its copy if not.
func (m *mirror) changed(id int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == 0 {
		for k := range m.entries {
			m.checks[k] = true
		}
	} else if m.entries[id] != nil || m.queued[id] || m.current == id {
		m.checks[id] = true // (a copy being built is looked for after it)
	}
	m.signal()
}

func (m *mirror) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// run builds the copies asked for and makes the checks, until ctx ends.
func (m *mirror) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		for ctx.Err() == nil {
			m.mu.Lock()
			var checks []int64
			for id := range m.checks {
				checks = append(checks, id)
			}
			clear(m.checks)
			var id int64
			if len(m.queue) > 0 {
				id = m.queue[0]
				m.queue = m.queue[1:]
			}
			m.mu.Unlock()
			for _, c := range checks {
				m.check(ctx, c)
				if m.onChecked != nil {
					m.onChecked(c)
				}
			}
			if id == 0 {
				break
			}
			m.mu.Lock()
			m.current = id
			m.mu.Unlock()
			err := m.build(ctx, id)
			m.mu.Lock()
			m.current = 0
			m.mu.Unlock()
			if ctx.Err() != nil {
				return // stopped: the build is cut short, and no matter
			}
			if errors.Is(err, errBuildBusy) {
				// An index build has the table: again in a while.
				m.mu.Lock()
				delete(m.queued, id)
				m.mu.Unlock()
				time.AfterFunc(copyBusyRetry, func() { m.requeue(id) })
				continue
			}
			if err != nil {
				m.logger().Warn("local copy of a dataset", "dataset", id, "err", err)
			}
			m.mu.Lock()
			delete(m.queued, id)
			m.mu.Unlock()
			if m.onBuilt != nil {
				m.onBuilt(id, err)
			}
		}
	}
}

// check drops dataset id's copy if the dataset is gone.
func (m *mirror) check(ctx context.Context, id int64) {
	var there bool
	if err := m.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM datasets WHERE id = $1)`, id).Scan(&there); err != nil || there {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[id]; e != nil {
		delete(m.entries, id)
		m.retire(e)
	}
}

// errBuildBusy says that a copy was not built because its table's build
// lock was held (an index build), or the table was replaced meanwhile.
var errBuildBusy = errors.New("postgres: the table is being indexed or replaced")

// mirrorApp is the application_name of the builds' connections: a write
// that drops a table cancels a build of its copy as it cancels an index
// build (cancelBuild).
const mirrorApp = "mapcommons local copy"

// build copies dataset id's features as its row is now, and installs the
// copy in place of the one before. A build that fails, or whose copy does
// not fit, is remembered (m.past), so that reads do not ask for it again
// at once.
func (m *mirror) build(ctx context.Context, id int64) error {
	start := time.Now()
	w, ds, err := m.copyTable(ctx, id)
	if errors.Is(err, errBuildBusy) {
		return err // tried again soon (run)
	} else if err != nil || w == nil {
		if ds != nil {
			m.remember(ds, false)
		}
		return err
	}
	var b [8]byte
	rand.Read(b[:])
	path := filepath.Join(m.dir, fmt.Sprintf("ds-%d-%d-%s%s", ds.ID, ds.Version, hex.EncodeToString(b[:]), mirrorExt))
	if err := w.Finish(path); err != nil {
		m.remember(ds, false)
		return err
	}
	c, err := m.copies.OpenCopy(path)
	if err != nil {
		os.Remove(path)
		m.remember(ds, false)
		return err
	}
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	e := &mirrorEntry{id: id, version: ds.Version, count: ds.FeatureCount, copy: c, path: path, size: size}
	if m.beforeInstall != nil {
		m.beforeInstall(id)
	}
	if !m.install(e) {
		return fmt.Errorf("a copy of %d bytes, over the %d local copies may take", size, m.max)
	}
	m.built.Add(1)
	m.logger().Info("dataset copied locally", "dataset", id, "version", ds.Version, "features", ds.FeatureCount, "bytes", size,
		"ms", time.Since(start).Milliseconds())
	return nil
}

// remember notes that ds's copy at its version failed, or did not fit.
func (m *mirror) remember(ds *datasetRow, tooBig bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[ds.ID]; e != nil {
		e.missed = 0 // the stale copy stays; tried again after as many misses
	} else {
		m.past[ds.ID] = &pastCopy{version: ds.Version, count: ds.FeatureCount, tooBig: tooBig}
	}
}

// copyTable reads dataset id's row and features in one snapshot into a
// copy's writer, to be finished; nil when there is nothing to copy (the
// dataset is gone, or its copy is current). The transaction holds the
// table's build lock, shared, so that a write dropping the table cancels
// it rather than waiting for it; it ends before the writer is finished.
func (m *mirror) copyTable(ctx context.Context, id int64) (mapcommons.CopyWriter, *datasetRow, error) {
	// A connection of its own: a copy takes seconds, which the pool's
	// connections are for requests.
	cfg := m.db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = mirrorApp
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, nil, formatError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// The table's build lock, shared, on the connection, before the
	// snapshot: an index build (CREATE INDEX CONCURRENTLY) waits for the
	// transactions older than it, so one waiting for the lock it holds
	// would deadlock with it. Held by another, the copy waits for reads to
	// ask for it again.
	var table string
	if err := conn.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, id).Scan(&table); errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, nil // gone: nothing to copy
	} else if err != nil {
		return nil, nil, formatError(err)
	}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock_shared($1, hashtext($2))`, indexLock, table).Scan(&got); err != nil {
		return nil, nil, formatError(err)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, formatError(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	ds, err := scanQueried(tx.QueryRow(ctx, selectQueried, id), id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, formatError(err)
	}
	if !got || ds.table != table { // (replaced since: the next read asks again)
		return nil, ds, errBuildBusy
	}
	m.mu.Lock()
	e, p := m.entries[id], m.past[id]
	m.mu.Unlock()
	if e != nil && e.version == ds.Version || p != nil && p.tooBig && p.version == ds.Version {
		return nil, nil, nil
	}
	w, err := m.copies.NewCopy(m.dir, ds.Attributes, ds.nextID)
	if err != nil {
		return nil, ds, err
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()
	sel := attrColumns("pos, fid, geom", len(ds.Attributes))
	// The ids rise with the positions, as the copy needs them: the
	// unique index on fid gives the order.
	rows, err := tx.Query(ctx, `SELECT `+sel+` FROM `+ident(ds.table)+` ORDER BY fid`)
	if err != nil {
		return nil, ds, formatError(err)
	}
	defer rows.Close()
	rr := newRowReader(rows)
	var f mapcommons.Feature
	lastPos, n, bytes := int64(-1), int64(0), int64(0)
	for rows.Next() {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, ds, err
			}
		}
		vals, err := rr.values()
		if err != nil {
			return nil, ds, err
		}
		pos := vals[0].(int64)
		if pos <= lastPos {
			return nil, ds, fmt.Errorf("the ids of table %s do not rise with its positions", ds.table)
		}
		lastPos = pos
		if n == 0 && m.onCopying != nil {
			m.onCopying(id)
		}
		f.ID = vals[1].(int64)
		f.Geometry, _ = vals[2].([]byte)
		f.Values = featureValues(vals[3:], f.Values)
		// What the copy will take, at least: past the budget, no copy.
		bytes += int64(len(f.Geometry)) + 8*int64(len(f.Values)+2)
		for _, v := range f.Values {
			if s, ok := v.(string); ok {
				bytes += int64(len(s))
			}
		}
		if bytes > m.max {
			rows.Close()
			m.remember(ds, true)
			return nil, nil, fmt.Errorf("more than the %d bytes local copies may take", m.max)
		}
		if err := w.Add(&f); err != nil {
			return nil, ds, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, ds, formatError(err)
	}
	if n != ds.FeatureCount {
		return nil, ds, fmt.Errorf("%d rows for %d features", n, ds.FeatureCount)
	}
	ok = true
	return w, ds, nil
}

// install makes e its dataset's copy, evicting the least recently used
// others while the copies take more than the budget; it reports whether
// e fits at all.
func (m *mirror) install(e *mirrorEntry) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.entries[e.id]; old != nil {
		m.retire(old)
	}
	if e.size > m.max {
		m.past[e.id] = &pastCopy{version: e.version, count: e.count, tooBig: true}
		m.retire(e)
		return false
	}
	delete(m.past, e.id)
	for m.bytes+e.size > m.max {
		var lru *mirrorEntry
		for _, o := range m.entries {
			if o.id != e.id && (lru == nil || o.used < lru.used) {
				lru = o
			}
		}
		if lru == nil {
			break
		}
		delete(m.entries, lru.id)
		// evicted: built again only after reads miss it, as a stale copy
		m.past[lru.id] = &pastCopy{version: lru.version, count: lru.count}
		m.retire(lru)
	}
	m.tick++
	e.used = m.tick
	m.entries[e.id] = e
	m.bytes += e.size
	return true
}

// retire takes e out of the budget and closes it once no read has it
// (m.mu held). It must not be in m.entries any more, unless replaced.
func (m *mirror) retire(e *mirrorEntry) {
	if e.gone {
		return
	}
	e.gone = true
	if m.entries[e.id] == e {
		delete(m.entries, e.id)
	}
	if e.size <= m.max {
		m.bytes -= e.size
	}
	if e.refs == 0 {
		m.unmap(e)
	}
}

// unmap closes a retired copy and removes its file.
func (m *mirror) unmap(e *mirrorEntry) {
	e.copy.Close()
	os.Remove(e.path)
}

// logger is for the builds' warnings.
func (m *mirror) logger() *slog.Logger { return m.db.indexer.logger() }
