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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/segment"
)

// Local mirrors (SetMirror). A server may keep, on its own disk, a copy
// of a dataset's features as one version of its row has them: a segment
// of the embedded engine, built from the features table in one snapshot
// (the row and the table together), with the row's version. A read of
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
// is gone (deleted), when another replaces it, and at Close. Files in the
// directory at SetMirror are a previous run's, and removed.

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
const missedPerFeature = 40

// mirrorExt ends the names of the copies' files.
const mirrorExt = ".mirror"

type mirror struct {
	db  *DB
	dir string
	max int64 // bytes the copies may take
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
	// tooBig are datasets, by id, whose copy did not fit, with their
	// version then: not tried again at that version.
	tooBig map[int64]int64
	wake   chan struct{}
	stop   context.CancelFunc
	done   sync.WaitGroup
	// built counts the copies built, served the reads they answered (for
	// the tests); onBuilt, when set, hears each build's end (tests).
	built, served atomic.Int64
	onBuilt       func(id int64, err error)
	// onChecked, when set, hears each check's end (tests).
	onChecked func(id int64)
}

type mirrorEntry struct {
	id, version, count int64
	seg                *segment.Segment
	view               *segment.View
	path               string
	size               int64
	refs               int
	gone               bool   // replaced or evicted: closed at the last release
	used               uint64 // the mirror's tick at the last use
	missed             int64  // reads of a later version that went to the database
}

// SetMirror keeps local copies of the datasets' features in dir, of at
// most maxBytes in all (see above). It must be called before the store
// is used, at most once; maxBytes <= 0 keeps none.
func (db *DB) SetMirror(dir string, maxBytes int64) error {
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
	for _, e := range old { // a previous run's copies, and its writers' spools
		if n := e.Name(); strings.HasSuffix(n, mirrorExt) || strings.HasSuffix(n, ".part") {
			os.Remove(filepath.Join(dir, n))
		}
	}
	m := &mirror{db: db, dir: dir, max: maxBytes, entries: map[int64]*mirrorEntry{},
		queued: map[int64]bool{}, checks: map[int64]bool{}, tooBig: map[int64]int64{}, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
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
func (db *DB) mirrorView(ctx context.Context, id int64) (*segment.View, func()) {
	m := db.mirror
	if m == nil {
		return nil, nil
	}
	version, recent := mapcommons.RecentRow(ctx, id)
	if !recent {
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
func (m *mirror) acquire(id, version int64) (*segment.View, func()) {
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
	return e.view, func() {
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
	if m.eager {
		err := m.build(ctx, id)
		if m.onBuilt != nil {
			m.onBuilt(id, err)
		}
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.tooBig[id]; m.queued[id] || ok && (version == 0 || version == v) {
		return
	}
	if e := m.entries[id]; e != nil {
		if version <= e.version {
			return
		}
		if e.missed++; e.missed < max(minMissedReads, e.count/missedPerFeature) {
			return
		}
	}
	m.queued[id] = true
	m.queue = append(m.queue, id)
	m.signal()
}

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
	} else if m.entries[id] != nil {
		m.checks[id] = true
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
			err := m.build(ctx, id)
			if ctx.Err() != nil {
				return // stopped: the build is cut short, and no matter
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

// errOutOfOrder says that a table's ids do not rise with its positions.
var errOutOfOrder = errors.New("postgres: ids out of position order")

// build copies dataset id's features as its row is now, and installs the
// copy in place of the one before.
func (m *mirror) build(ctx context.Context, id int64) error {
	start := time.Now()
	// A connection of its own: a copy takes seconds, which the pool's
	// connections are for requests.
	conn, err := pgx.ConnectConfig(ctx, m.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return formatError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	ds, err := scanQueried(tx.QueryRow(ctx, selectQueried, id), id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // gone: nothing to copy
	} else if err != nil {
		return formatError(err)
	}
	m.mu.Lock()
	e := m.entries[id]
	current := e != nil && e.version == ds.Version
	v, tried := m.tooBig[id]
	m.mu.Unlock()
	if current || tried && v == ds.Version {
		return nil
	}
	// The ids rise with the positions (as the embedded engine needs
	// them), so the unique index on fid gives the order; a table where
	// they do not is read in pos order, sorted.
	seg, path, err := m.copyTable(ctx, tx, ds, "fid")
	if errors.Is(err, errOutOfOrder) {
		seg, path, err = m.copyTable(ctx, tx, ds, "pos")
	}
	if err != nil {
		return err
	}
	view, err := segment.NewView(seg, nil, nil)
	if err != nil {
		seg.Close()
		os.Remove(path)
		return err
	}
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	m.install(&mirrorEntry{id: id, version: ds.Version, count: ds.FeatureCount, seg: seg, view: view, path: path, size: size})
	m.built.Add(1)
	m.logger().Info("dataset copied locally", "dataset", id, "version", ds.Version, "features", ds.FeatureCount, "bytes", size,
		"ms", time.Since(start).Milliseconds())
	return nil
}

// copyTable writes the features of ds's table, read in order of column
// by, into a new segment file.
func (m *mirror) copyTable(ctx context.Context, tx pgx.Tx, ds *datasetRow, by string) (*segment.Segment, string, error) {
	w, err := segment.NewWriter(m.dir, ds.Attributes)
	if err != nil {
		return nil, "", err
	}
	defer w.Abort() // after Finish, nothing left to remove
	w.SetNextID(ds.nextID)
	sel := "pos, fid, geom"
	for i := range ds.Attributes {
		sel += ", " + attrColumn(i)
	}
	rows, err := tx.Query(ctx, `SELECT `+sel+` FROM `+ident(ds.table)+` ORDER BY `+by)
	if err != nil {
		return nil, "", formatError(err)
	}
	defer rows.Close()
	rr := newRowReader(rows)
	var f mapcommons.Feature
	lastPos, n, bytes := int64(-1), int64(0), int64(0)
	for rows.Next() {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, "", err
			}
		}
		vals, err := rr.values()
		if err != nil {
			return nil, "", err
		}
		pos := vals[0].(int64)
		if pos <= lastPos {
			return nil, "", errOutOfOrder
		}
		lastPos = pos
		f.ID = vals[1].(int64)
		f.Geometry, _ = vals[2].([]byte)
		f.Values = featureValues(vals[3:], f.Values)
		if bytes += int64(len(f.Geometry)) + 8*int64(len(f.Values)+2); bytes > m.max {
			m.mu.Lock()
			m.tooBig[ds.ID] = ds.Version
			m.mu.Unlock()
			return nil, "", fmt.Errorf("more than the %d bytes local copies may take", m.max)
		}
		if err := w.Add(&f); err != nil {
			return nil, "", err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, "", formatError(err)
	}
	if n != ds.FeatureCount {
		return nil, "", fmt.Errorf("%d rows for %d features", n, ds.FeatureCount)
	}
	var b [8]byte
	rand.Read(b[:])
	path := filepath.Join(m.dir, fmt.Sprintf("ds-%d-%d-%s%s", ds.ID, ds.Version, hex.EncodeToString(b[:]), mirrorExt))
	if _, err := w.Finish(path); err != nil {
		return nil, "", err
	}
	seg, err := segment.Open(path)
	if err != nil {
		os.Remove(path)
		return nil, "", err
	}
	return seg, path, nil
}

// install makes e its dataset's copy, evicting the least recently used
// others while the copies take more than the budget.
func (m *mirror) install(e *mirrorEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.entries[e.id]; old != nil {
		m.retire(old)
	}
	if e.size > m.max {
		m.tooBig[e.id] = e.version
		m.retire(e)
		return
	}
	delete(m.tooBig, e.id)
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
		m.retire(lru)
	}
	m.tick++
	e.used = m.tick
	m.entries[e.id] = e
	m.bytes += e.size
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
	e.seg.Close()
	os.Remove(e.path)
}

// logger is for the builds' warnings.
func (m *mirror) logger() *slog.Logger { return m.db.indexer.logger() }
