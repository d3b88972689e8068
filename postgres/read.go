package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"mapcommons"
)

// A read of a dataset's features (ScanFeatures, GroupFeatures) runs in a
// read-only, repeatable-read transaction in which the dataset's row and
// the features table it points to agree. Its statements go in as few
// round trips as can be:
//
//   - With a hint (the row as the last read on this server found it),
//     one: BEGIN, the row's SELECT, the query compiled against the hint,
//     and COMMIT go together. The row read in the transaction is compared
//     with the hint before the query's rows are used: when they differ
//     (another write came, from any server), the answer is dropped and
//     the read runs again without the hint. The hint is only a guess,
//     never an answer.
//   - Without, two: BEGIN with the row's SELECT, then the query with
//     COMMIT.

// rowsQuerier is what a read's function queries through: it runs one
// query, and before it, at most one prelude (whose rows are read and
// closed before the query), in the same transaction.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Prelude(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	// QueryMore is Query with another query to follow it in the read's
	// transaction (FeatureQuery.Then), which ends after the last Query.
	QueryMore(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// preludeQuerier runs its one query as q's prelude.
type preludeQuerier struct{ q rowsQuerier }

func (p preludeQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.q.Prelude(ctx, sql, args...)
}

func (p preludeQuerier) Prelude(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("postgres: a prelude of a prelude")
}

func (p preludeQuerier) QueryMore(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("postgres: a prelude is one query")
}

// rowHints keeps the rows reads found, by dataset id (a bounded number).
type rowHints struct {
	mu     sync.Mutex
	rows   map[int64]*datasetRow
	hinted atomic.Int64 // reads answered with the hint (for the tests)
}

const maxRowHints = 4096

func (h *rowHints) get(id int64) *datasetRow {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rows[id]
}

func (h *rowHints) put(r *datasetRow) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rows = putBounded(h.rows, r.ID, r, maxRowHints)
}

func (h *rowHints) drop(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.rows, id)
}

// putBounded sets m[k] = v in m (made when nil), first dropping any one
// other entry when m holds max already: a cache of a bounded number of
// entries, of which those used again are read again.
func putBounded[K comparable, V any](m map[K]V, k K, v V, max int) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	if _, ok := m[k]; !ok && len(m) >= max {
		for old := range m { // any one goes
			delete(m, old)
			break
		}
	}
	m[k] = v
	return m
}

// errStaleHint is the answer of a hinted read whose hint no longer holds.
var errStaleHint = errors.New("postgres: the dataset changed since the hint")

const (
	beginRead     = `BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY`
	selectQueried = `SELECT feature_count, geometry_mask, attributes, features, next_id, ` + holesOf + `datasets.id` + holesEnd + `, version, xmin::text FROM datasets WHERE id = $1`
	// selectHinted is what a hinted read checks of the row: that it is
	// the hint's version of the row (PostgreSQL gives every new version of
	// a row a new xmin), and the version number (a replica behind, a
	// request authorized against another row).
	selectHinted = `SELECT version, xmin::text FROM datasets WHERE id = $1`
)

// scanQueried scans what a query of dataset id's features needs of its
// row (compile): its count, geometry kinds, attributes and table; and its
// version, which says whether a replica is behind (replica.go).
func scanQueried(row pgx.Row, id int64) (*datasetRow, error) {
	ds := &mapcommons.Dataset{ID: id}
	r := &datasetRow{Dataset: ds}
	var attrs []byte
	if err := row.Scan(&ds.FeatureCount, &ds.GeometryMask, &attrs, &r.table, &r.nextID, &r.holes, &ds.Version, &r.xmin); err != nil {
		return nil, err
	}
	var err error
	ds.Attributes, err = decoded.attributes(id, attrs)
	return r, err
}

// read calls fn with dataset id's row in the read's transaction (see
// above), on a replica when there are (replica.go), else on the primary.
func (db *DB) read(ctx context.Context, id int64, fn func(q rowsQuerier, ds *datasetRow) error) error {
	if db.replicas != nil {
		return db.readReplicated(ctx, id, fn)
	}
	return db.readOn(ctx, readSource{pool: db.pool}, id, fn)
}

// readOn is read on src. A reader that finds the table dropped (a
// replace swapped it out between the row and the query) tries once more.
func (db *DB) readOn(ctx context.Context, src readSource, id int64, fn func(q rowsQuerier, ds *datasetRow) error) error {
	if hint := db.hints.get(id); hint != nil {
		err := db.readHinted(ctx, src, hint, fn)
		if !errors.Is(err, errStaleHint) {
			db.hints.hinted.Add(1)
			return err
		}
		db.hints.drop(id)
	}
	for try := 0; ; try++ {
		err := db.readOnce(ctx, src, id, fn)
		var pe *pgconn.PgError
		if try == 0 && errors.As(err, &pe) && pe.Code == pgUndefinedTable {
			continue
		}
		return err
	}
}

// readQuerier runs a read's one query with the COMMIT of its transaction
// in one batch, after its rows. With a hint, the batch begins with BEGIN
// and the row's SELECT, and fn gets the query's rows only if the row is
// the hint; without, the transaction is begun already.
type readQuerier struct {
	conn *pgxpool.Conn
	hint *datasetRow
	min  int64 // the least version of the row that may answer (readSource)
	// want is the version of the row the request was given from memory
	// (mapcommons.NoteRecentRow; 0: none): another is ErrCatalogueMoved.
	want int64
	br   pgx.BatchResults // nil until the query
	// pre is the prelude's batch (with a hint: BEGIN, the row, the
	// prelude), closed when the query is sent; begun says the transaction
	// is begun and the hint checked already.
	pre   pgx.BatchResults
	begun bool
	// open says the batch br has no COMMIT (QueryMore), done that the
	// last query was sent; generic that a SET comes before its query
	// (genericPlan).
	open, done, generic bool
}

// Prelude runs a query before the read's one query, in its transaction:
// with a hint, in one batch with BEGIN and the row, checked against the
// hint as Query checks it.
func (q *readQuerier) Prelude(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if q.br != nil || q.pre != nil {
		return nil, errors.New("postgres: a read's prelude comes first, once")
	}
	q.generic = false
	if q.hint == nil {
		var b pgx.Batch
		b.Queue(sql, args...)
		q.pre = q.conn.SendBatch(ctx, &b)
		return q.pre.Query()
	}
	var b pgx.Batch
	b.Queue(beginRead)
	b.Queue(selectHinted, q.hint.ID)
	b.Queue(sql, args...)
	q.pre, q.begun = q.conn.SendBatch(ctx, &b), true
	return q.hinted(q.pre)
}

// hinted reads the results of a batch that begins with BEGIN and the
// row's SELECT, and returns the rows of the query after them only if the
// row is the hint (and its version not below q.min: a replica behind). Any failure before the query's rows (a missing row
// too) leaves the answer to the read without the hint.
func (q *readQuerier) hinted(br pgx.BatchResults) (pgx.Rows, error) {
	if _, err := br.Exec(); err != nil {
		return nil, errStaleHint
	}
	var version int64
	var xmin string
	err := br.QueryRow().Scan(&version, &xmin)
	if err == nil && q.want > 0 && version != q.want {
		return nil, mapcommons.ErrCatalogueMoved
	}
	if err != nil || xmin != q.hint.xmin || version != q.hint.Version || version < q.min {
		return nil, errStaleHint // any change of the row, even one no query reads
	}
	if err := q.setGeneric(br); err != nil {
		return nil, errStaleHint
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errStaleHint
	}
	return rows, nil
}

func (q *readQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return q.query(ctx, sql, args, true)
}

func (q *readQuerier) QueryMore(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return q.query(ctx, sql, args, false)
}

// query sends a query of the read, with the COMMIT when it is the last.
func (q *readQuerier) query(ctx context.Context, sql string, args []any, last bool) (pgx.Rows, error) {
	if q.done {
		return nil, errors.New("postgres: a read's last query was sent")
	}
	if q.br != nil { // QueryMore's, whose rows were read
		if err := q.br.Close(); err != nil {
			return nil, err
		}
		q.br = nil
	}
	if q.pre != nil {
		if err := q.pre.Close(); err != nil {
			return nil, err
		}
		q.pre = nil
	}
	var b pgx.Batch
	check := q.hint != nil && !q.begun
	if check {
		b.Queue(beginRead)
		b.Queue(selectHinted, q.hint.ID)
	}
	// (Not before a follow-up: SET LOCAL would hold for it too.)
	q.generic = last && strings.HasPrefix(sql, genericPlan)
	if q.generic {
		b.Queue(`SET LOCAL plan_cache_mode = force_generic_plan`)
	}
	b.Queue(sql, args...)
	if last {
		b.Queue(`COMMIT`)
	}
	q.open, q.done, q.begun = !last, last, true
	q.br = q.conn.SendBatch(ctx, &b)
	if !check {
		if err := q.setGeneric(q.br); err != nil {
			return nil, err
		}
		return q.br.Query()
	}
	return q.hinted(q.br)
}

// genericPlan begins the SQL of a query whose prepared statement is to
// run on its generic plan (the sorted pages of plan.go without a
// condition: PostgreSQL
// planned them again at every execution, 0.2 ms, three times the time to
// run one), which the read sets for its transaction before it.
const genericPlan = "/* generic plan */ "

// setGeneric reads the result of the SET that comes before a query of
// genericPlan.
func (q *readQuerier) setGeneric(br pgx.BatchResults) error {
	if !q.generic {
		return nil
	}
	_, err := br.Exec()
	return err
}

// commit ends the transaction: the COMMIT's result, read after the
// query's rows (or sent now, when fn ran no query).
func (q *readQuerier) commit(ctx context.Context) error {
	if q.pre != nil {
		if err := q.pre.Close(); err != nil {
			return err
		}
		q.pre = nil
	}
	if q.br == nil {
		_, err := q.conn.Exec(ctx, `COMMIT`)
		return err
	}
	if q.open { // the follow-up did not come
		if err := q.br.Close(); err != nil {
			return err
		}
		_, err := q.conn.Exec(ctx, `COMMIT`)
		return err
	}
	_, err := q.br.Exec()
	if cerr := q.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// readHinted is a read in one round trip, with the hint's row; it fails
// with errStaleHint when the hint does not hold (or fn ran no query, so
// that nothing was checked), and nothing fn did then counts.
func (db *DB) readHinted(ctx context.Context, src readSource, hint *datasetRow, fn func(q rowsQuerier, ds *datasetRow) error) error {
	conn, err := src.pool.Acquire(ctx)
	if err != nil {
		return formatError(err)
	}
	defer conn.Release() // a connection left in a transaction is closed, not reused
	want, _ := mapcommons.RecentRow(ctx, hint.ID)
	q := &readQuerier{conn: conn, hint: hint, min: src.min, want: want}
	err = fn(q, hint)
	if q.br == nil {
		if q.pre != nil {
			q.pre.Close()
		}
		endRead(conn)
		return errStaleHint
	}
	if errors.Is(err, errStaleHint) {
		q.br.Close()
		endRead(conn)
		return errStaleHint
	}
	if cerr := q.commit(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		endRead(conn)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == pgUndefinedTable {
			return errStaleHint // the hint's table went before the snapshot: no row came
		}
	}
	return formatError(err)
}

// endRead rolls back what is left of a read's transaction, so that the
// connection goes back to the pool idle (else Release closes it).
func endRead(conn *pgxpool.Conn) {
	if !conn.Conn().IsClosed() && conn.Conn().PgConn().TxStatus() != 'I' {
		conn.Exec(context.Background(), `ROLLBACK`)
	}
}

// readOnce is a read in two round trips; the row it finds becomes the
// dataset's hint. A row older than src.min is errBehind.
func (db *DB) readOnce(ctx context.Context, src readSource, id int64, fn func(q rowsQuerier, ds *datasetRow) error) error {
	conn, err := src.pool.Acquire(ctx)
	if err != nil {
		return formatError(err)
	}
	defer conn.Release() // a connection left in a transaction is closed, not reused
	var b pgx.Batch
	b.Queue(beginRead)
	b.Queue(selectQueried, id)
	br := conn.SendBatch(ctx, &b)
	_, err = br.Exec()
	var ds *datasetRow
	if err == nil {
		ds, err = scanQueried(br.QueryRow(), id)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && ds.Version < src.min {
		err = errBehind
	}
	if want, ok := mapcommons.RecentRow(ctx, id); err == nil && ok && ds.Version != want {
		err = mapcommons.ErrCatalogueMoved // the request was authorized against another row
	}
	if err == nil {
		q := &readQuerier{conn: conn}
		err = fn(q, ds)
		if cerr := q.commit(ctx); err == nil {
			err = cerr
		}
		if err == nil {
			db.hints.put(ds)
			return nil
		}
	}
	endRead(conn)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND && ds == nil {
		db.hints.drop(id)
		return datasetNotFound(id)
	}
	return err
}
