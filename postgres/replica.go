package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"mapcommons"
)

// Read replicas (OpenWithReplicas) are hot standbys of the primary's
// database, fed by PostgreSQL's streaming replication. They answer the
// heavy reads: the reads of features (db.read: ScanFeatures and
// GroupFeatures, so pages, counts, tiles and downloads), one replica
// after the other among those that answer. Everything else stays on the
// primary: every write and what a write's transaction reads, and the
// catalogue (FindDatasetByID, users, sessions, search), which is small
// and decides what a request may do.
//
// A standby replays the primary's WAL some time after the primary
// committed it, so a replica may answer with an older state of a dataset.
// It may not answer with a state older than one this server has seen: the
// server keeps, per dataset, the highest datasets.version it saw on the
// primary (seenVersions: in the catalogue's reads of the dataset's row,
// and after each write that changes one). A read's transaction on the
// replica reads the dataset's row anyway (selectQueried); when its
// version is lower than the one seen, the answer is dropped and the read
// runs on the primary. Every request of the API reads the dataset's row
// on the primary before its features (to authorize it), so a request
// sees at least the dataset it was authorized against: a writer's next
// request sees its write, whichever server behind a load balancer it
// reaches, with no cookie nor anything else carried between requests.
//
// A replica whose read fails with a connection-level error (lostReplica)
// is marked down and the read runs again on the primary, unless rows of
// it reached the caller already (then only that read fails). A replica
// down is pinged again after a backoff (minBackoff, doubling up to
// maxBackoff, by the store's clock), from the reads that pass it over.

// datasetVersion is a version of a dataset's row.
type datasetVersion struct{ id, version int64 }

// noteVersion notes that the transaction q holds dataset id's row at
// version, when q is a write's transaction (a pipeTx: recorded once it
// commits); else it does nothing.
func noteVersion(q any, id, version int64) {
	if t, ok := q.(*pipeTx); ok {
		t.seen = append(t.seen, datasetVersion{id, version})
	}
}

// seenVersions is the highest version of each dataset's row this server
// saw on the primary, for a bounded number of datasets: a dataset with no
// entry has no constraint. An entry is dropped only when the map is full,
// for a dataset whose row was read longer ago than maxSeenVersions others
// (a request reads the row just before the features).
type seenVersions struct {
	mu sync.Mutex
	m  map[int64]int64
}

const maxSeenVersions = 1 << 14

func (s *seenVersions) see(id, version int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[id]
	if ok && cur >= version {
		return
	}
	s.m = putBounded(s.m, id, version, maxSeenVersions)
}

func (s *seenVersions) get(id int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// The backoff of the pings of a replica down.
const (
	minBackoff  = time.Second
	maxBackoff  = 30 * time.Second
	pingTimeout = 5 * time.Second
)

// replica is a read replica's pool and whether it answers.
type replica struct {
	pool *pgxpool.Pool
	name string // host and database, for the log (never a password)
	down atomic.Bool
	// Under mu, while down: when to ping it next, the backoff that
	// follows, and whether a ping is under way.
	mu      sync.Mutex
	retryAt time.Time
	backoff time.Duration
	pinging bool
}

// replicaSet are the replicas of a DB and what their reads counted.
type replicaSet struct {
	db       *DB
	list     []*replica
	next     atomic.Uint64 // the round-robin
	versions seenVersions
	// closing ends the pings under way when the DB closes; pings counts
	// them, closed (under closeMu) says no more may start.
	closing context.Context
	cancel  context.CancelFunc
	pings   sync.WaitGroup
	closeMu sync.Mutex
	closed  bool
	// For the tests: reads answered by a replica (a query error too),
	// reads answered by the primary, and of those, the ones a replica
	// was behind for (or did not have the dataset) and the ones a replica
	// failed.
	replicaReads, primaryReads, behind, failed atomic.Int64
}

// openReplicas opens a pool on each replica and pings them all at once: a
// replica that does not answer starts down.
func openReplicas(ctx context.Context, db *DB, cfgs []*pgxpool.Config) (*replicaSet, error) {
	rs := &replicaSet{db: db}
	rs.closing, rs.cancel = context.WithCancel(context.Background())
	for _, cfg := range cfgs {
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			rs.close()
			return nil, err
		}
		rs.list = append(rs.list, &replica{pool: pool, name: replicaName(cfg)})
	}
	errs := make([]error, len(rs.list))
	var wg sync.WaitGroup
	for i, r := range rs.list {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, pingTimeout)
			defer cancel()
			errs[i] = r.pool.Ping(pctx)
		})
	}
	wg.Wait()
	for i, r := range rs.list {
		if errs[i] != nil {
			rs.markDown(r, errs[i])
		}
	}
	return rs, nil
}

// replicaName names a replica in the log.
func replicaName(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("host=%s port=%d database=%s", c.Host, c.Port, c.Database)
}

// close stops the pings under way and closes the replicas' pools.
func (rs *replicaSet) close() {
	if rs == nil {
		return
	}
	rs.closeMu.Lock()
	rs.closed = true
	rs.closeMu.Unlock()
	rs.cancel()
	rs.pings.Wait()
	for _, r := range rs.list {
		r.pool.Close()
	}
}

// saw records versions of datasets' rows as read on the primary, or
// written there.
func (rs *replicaSet) saw(vs ...datasetVersion) {
	if rs == nil {
		return
	}
	for _, v := range vs {
		rs.versions.see(v.id, v.version)
	}
}

// pick is the next replica up (nil when none is); it pings, in the
// background, the replicas down it passes whose backoff is over.
func (rs *replicaSet) pick() *replica {
	n := uint64(len(rs.list))
	start := rs.next.Add(1)
	for i := range n {
		r := rs.list[(start+i)%n]
		if !r.down.Load() {
			return r
		}
		rs.retry(r)
	}
	return nil
}

// markDown takes r out of the reads until a ping says it answers.
func (rs *replicaSet) markDown(r *replica, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down.Load() {
		return
	}
	r.down.Store(true)
	r.backoff = minBackoff
	r.retryAt = rs.db.Now().Add(r.backoff)
	// Its idle connections are to a server that went: the ping after
	// must open a new one.
	r.pool.Reset()
	rs.logger().Warn("read replica down: its reads go to the primary", "replica", r.name, "err", err)
}

// retry pings r in the background when its backoff is over and no ping is
// under way: r is up again if it answers, else it waits twice as long.
func (rs *replicaSet) retry(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down.Load() || r.pinging || rs.db.Now().Before(r.retryAt) {
		return
	}
	rs.closeMu.Lock()
	defer rs.closeMu.Unlock()
	if rs.closed {
		return
	}
	r.pinging = true
	rs.pings.Go(func() {
		ctx, cancel := context.WithTimeout(rs.closing, pingTimeout)
		err := r.pool.Ping(ctx)
		cancel()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.pinging = false
		if err == nil {
			r.down.Store(false)
			rs.logger().Info("read replica up again", "replica", r.name)
			return
		}
		r.backoff = min(2*r.backoff, maxBackoff)
		r.retryAt = rs.db.Now().Add(r.backoff)
	})
}

// logger is the store's (SetLogger), slog's default before Open ends.
func (rs *replicaSet) logger() *slog.Logger {
	if l := rs.db.indexer.logger(); l != nil {
		return l
	}
	return slog.Default()
}

// errBehind is the answer of a read on a replica whose row of the dataset
// is older than one this server saw.
var errBehind = errors.New("postgres: the replica is behind the dataset's version")

// readSource is where a read runs: the primary's pool (min 0), or a
// replica's, where the dataset's row must be at version min at least.
type readSource struct {
	pool *pgxpool.Pool
	min  int64
}

// readReplicated is read with replicas: on the next replica up, else, or
// when it is behind or fails, on the primary.
func (db *DB) readReplicated(ctx context.Context, id int64, fn func(q rowsQuerier, ds *datasetRow) error) error {
	rs := db.replicas
	primary := readSource{pool: db.pool}
	r := rs.pick()
	if r == nil {
		rs.primaryReads.Add(1)
		return db.readOn(ctx, primary, id, fn)
	}
	var given bool
	err := db.readOn(ctx, readSource{pool: r.pool, min: rs.versions.get(id)}, id, func(q rowsQuerier, ds *datasetRow) error {
		return fn(givingQuerier{q, &given}, ds)
	})
	switch {
	case err == nil:
		rs.replicaReads.Add(1)
		return nil
	case errors.Is(err, errBehind) || mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND && !given:
		// Behind, or without the dataset yet: the primary knows.
		rs.behind.Add(1)
	case ctx.Err() == nil && lostReplica(err):
		rs.markDown(r, err)
		if given {
			return err // the caller has rows of it: it cannot start again
		}
		rs.failed.Add(1)
	default:
		rs.replicaReads.Add(1) // a query error: the primary's would be the same
		return err
	}
	rs.primaryReads.Add(1)
	return db.readOn(ctx, primary, id, fn)
}

// givingQuerier notes in given when a row of the read's query is read,
// which may reach the caller (the prelude's rows do not).
type givingQuerier struct {
	q     rowsQuerier
	given *bool
}

func (g givingQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := g.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return givingRows{rows, g.given}, nil
}

func (g givingQuerier) QueryMore(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := g.q.QueryMore(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return givingRows{rows, g.given}, nil
}

func (g givingQuerier) Prelude(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return g.q.Prelude(ctx, sql, args...)
}

type givingRows struct {
	pgx.Rows
	given *bool
}

func (r givingRows) Next() bool {
	if r.Rows.Next() {
		*r.given = true
		return true
	}
	return false
}

// PostgreSQL's errors of a server going or unable to answer: admin,
// crash or cannot-connect-now shutdowns, and a standby's recovery
// conflicts (serialization_failure on a read-only transaction).
const (
	pgAdminShutdown      = "57P01"
	pgCrashShutdown      = "57P02"
	pgCannotConnectNow   = "57P03"
	pgSerializationError = "40001"
)

// lostReplica reports whether err is a replica's connection failing, not
// the read's (a bad filter, say, would fail on the primary as well).
func lostReplica(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgAdminShutdown, pgCrashShutdown, pgCannotConnectNow, pgSerializationError:
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return pgconn.SafeToRetry(err) || errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
