package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// The catalogue cache keeps the dataset rows FindDatasetByID read, which
// every request on a dataset begins with (authorization, the version its
// answer is cached under). A row is forty columns with three JSON
// documents, and the owner's login from users; what the cache asks of
// the database instead is the row's stamp: the transaction ids (xmin)
// of the two rows it was read from, one index lookup. PostgreSQL gives
// every new version of a row the id of the transaction that wrote it, so
// a stamp that is the same says that no write, by any server, by any
// statement (whether or not it moved the dataset's version), changed the
// row since it was cached: the cached row is the row.
//
// The check is made on every use rather than trusting notifications
// (LISTEN/NOTIFY): a notification reaches the other servers after the
// writer's commit, so a writer whose next request a load balancer sends
// to another server could be answered from before its write. The check
// reads in a snapshot taken after the request came, as the row's read
// would.
//
// Reads that may see the catalogue as it was a moment ago (anonymous
// ones: mapcommons.WithRecentCatalogue) skip even the stamp. Every
// change of a dataset's row is announced when it commits (a trigger,
// migration 0011) and a listener drops the row it names. What bounds the
// lag is the listener's heartbeat: the server announces beats of its own
// every beatEvery, and notifications arrive in commit order, so a beat
// heard says that every change committed before it was sent has been
// heard too. A cached row is trusted without its stamp only while the
// last beat heard was sent less than mapcommons.MaxCatalogueLag ago: a
// listener whose connection broke, or hangs without a word, stops being
// trusted within that bound, and reads check stamps again.

// rowStamp is the stamp of a row of datasetColumns.
const rowStamp = `d.xmin::text || '/' || coalesce(u.xmin::text, '')`

const selectStamp = `SELECT ` + rowStamp + datasetFrom + ` WHERE d.id = $1`

// maxCatalogue bounds the rows the catalogue cache keeps.
const maxCatalogue = 4096

type catalogue struct {
	mu   sync.Mutex
	rows map[int64]*datasetRow
	// gen counts the notifications heard (and the listener's
	// reconnections): a row read while one came is not kept, since the
	// change it announced may have come after the read.
	gen     uint64
	hits    atomic.Int64 // finds answered from the cache (for the tests)
	stamps  atomic.Int64 // stamps read (for the tests)
	trusted atomic.Int64 // of them, without the stamp (for the tests)
	listen  listener
}

// find returns dataset id's row: the cached one when its stamp holds,
// else the row read whole (and cached). The dataset it returns is a copy
// the caller may change.
func (c *catalogue) find(ctx context.Context, db *DB, q querier, id int64) (*mapcommons.Dataset, error) {
	if mapcommons.RecentCatalogue(ctx) {
		c.listen.start(db)
		if r := c.get(id); r != nil && c.listen.fresh(db.now()) {
			c.hits.Add(1)
			c.trusted.Add(1)
			// The reads of the request check it in their snapshots.
			mapcommons.NoteRecentRow(ctx, id, r.Version)
			return copyDataset(r.Dataset), nil
		}
	}
	gen := c.generation()
	if r := c.get(id); r != nil {
		var stamp string
		c.stamps.Add(1)
		err := q.QueryRow(ctx, selectStamp, id).Scan(&stamp)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			c.drop(id)
			return nil, datasetNotFound(id)
		case err != nil:
			return nil, formatError(err)
		case stamp == r.stamp:
			c.hits.Add(1)
			return copyDataset(r.Dataset), nil
		}
	}
	r, err := findDataset(ctx, q, id, false)
	if err != nil {
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			c.drop(id)
		}
		return nil, err
	}
	c.put(gen, r)
	return copyDataset(r.Dataset), nil
}

// copyDataset is a copy of ds whose changes, even of its attributes,
// stats and sharing list, do not reach ds.
func copyDataset(ds *mapcommons.Dataset) *mapcommons.Dataset {
	cp := *ds
	cp.Attributes, cp.Stats, cp.Permissions = slices.Clone(ds.Attributes), maps.Clone(ds.Stats), slices.Clone(ds.Permissions)
	cp.GeometryTypes = slices.Clone(ds.GeometryTypes)
	if ds.Extent != nil {
		e := *ds.Extent
		cp.Extent = &e
	}
	return &cp
}

func (c *catalogue) get(id int64) *datasetRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rows[id]
}

func (c *catalogue) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put keeps r, read when the catalogue's generation was gen, unless a
// notification came since. The newest read of a row replaces an older
// one; a row read earlier than the one kept (two finds racing) only costs
// a full read at its next checked use, since its stamp is then not the
// database's, and the listener drops both at the next change.
func (c *catalogue) put(gen uint64, r *datasetRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	c.rows = putBounded(c.rows, r.ID, r, maxCatalogue)
}

func (c *catalogue) drop(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rows, id)
}

// changed drops the row of a change heard (all rows for id 0).
func (c *catalogue) changed(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if id == 0 {
		c.rows = nil
		return
	}
	delete(c.rows, id)
}

// catalogueChannel is where the datasets' changes are announced
// (migration 0011), and the servers' beats.
const catalogueChannel = "mapcommons_catalogue"

// beatEvery is how often a server announces a beat.
const beatEvery = 250 * time.Millisecond

// listener hears the catalogue's changes on a connection of its own
// (outside the pool), started by the first read that may use it.
type listener struct {
	once  sync.Once
	nonce string // this server's beats are "beat <nonce> <seq>"
	mu    sync.Mutex
	live  bool                 // listening, since the cache was cleared
	seq   uint64               // the last beat sent
	sent  map[uint64]time.Time // beats sent, not yet heard, by seq
	heard time.Time            // when the last beat heard was sent
	// heardSeq is the seq of the last beat heard; needSeq the first beat
	// that must be heard before the rows are trusted again: the next one
	// after this server's last write, whose notification comes before it
	// (wrote).
	heardSeq, needSeq uint64
	// stalled, in tests, makes the listener ignore what it hears, as a
	// connection that hangs without a word would.
	stalled atomic.Bool
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// start starts the listener and the beats, once.
func (l *listener) start(db *DB) {
	l.once.Do(func() {
		var b [8]byte
		rand.Read(b[:])
		l.nonce = hex.EncodeToString(b[:])
		l.sent = map[uint64]time.Time{}
		ctx, cancel := context.WithCancel(context.Background())
		l.stop = cancel
		l.done.Add(2)
		go func() { defer l.done.Done(); l.run(ctx, db) }()
		go func() { defer l.done.Done(); l.beat(ctx, db) }()
	})
}

// close stops the listener and the beats, if they were started.
func (l *listener) close() {
	l.once.Do(func() {}) // none starts after
	if l.stop != nil {
		l.stop()
		l.done.Wait()
	}
}

// fresh reports whether the cached rows may be trusted at now: the
// listener hears, and its last beat heard was sent within the bound.
func (l *listener) fresh(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live && l.heardSeq >= l.needSeq && now.Sub(l.heard) < mapcommons.MaxCatalogueLag
}

// wrote says this server committed a write: until a beat sent after it
// is heard (and with it the write's notification), the cached rows are
// checked by their stamps, so that this server's anonymous reads see its
// own writes at once.
func (l *listener) wrote() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.needSeq = l.seq + 1
}

// run listens until ctx ends, connecting again after a failure (a
// second, doubling to thirty, between tries).
func (l *listener) run(ctx context.Context, db *DB) {
	wait := time.Second
	for ctx.Err() == nil {
		if l.listenOnce(ctx, db) {
			wait = time.Second
		}
		l.mu.Lock()
		l.live = false
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// listenOnce connects, listens and handles what it hears until the
// connection fails or ctx ends; it reports whether it listened.
func (l *listener) listenOnce(ctx context.Context, db *DB) bool {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+catalogueChannel); err != nil {
		return false
	}
	// What changed while no one listened was not heard: forget it all,
	// and look for the datasets of the local copies.
	db.catalogue.changed(0)
	db.mirror.changed(0)
	l.mu.Lock()
	l.live = true
	l.mu.Unlock()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if l.stalled.Load() {
			continue
		}
		l.heardNote(db, n.Payload)
	}
}

// heardNote handles one notification: a dataset's id, or a beat.
func (l *listener) heardNote(db *DB, payload string) {
	if rest, ok := strings.CutPrefix(payload, "beat "); ok {
		nonce, num, _ := strings.Cut(rest, " ")
		seq, err := strconv.ParseUint(num, 10, 64)
		if nonce != l.nonce || err != nil {
			return // another server's
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if at, ok := l.sent[seq]; ok && seq > l.heardSeq {
			l.heard, l.heardSeq = at, seq
		}
		for k := range l.sent {
			if k <= seq {
				delete(l.sent, k)
			}
		}
		return
	}
	num, gone := strings.CutSuffix(payload, " gone")
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		id, gone = 0, true // not ours to read: forget everything
	}
	db.catalogue.changed(id)
	db.hints.drop(id)
	if gone { // (migration 0017) a copy of another version answers no read
		db.mirror.changed(id)
	}
}

// beat announces a beat every beatEvery until ctx ends.
func (l *listener) beat(ctx context.Context, db *DB) {
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.mu.Lock()
		l.seq++
		seq := l.seq
		l.sent[seq] = db.now()
		for k := range l.sent { // beats lost with a connection
			if k+64 < seq {
				delete(l.sent, k)
			}
		}
		l.mu.Unlock()
		db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, catalogueChannel, "beat "+l.nonce+" "+strconv.FormatUint(seq, 10))
	}
}
