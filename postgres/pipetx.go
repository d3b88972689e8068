package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipeTx is the transaction of a write (db.tx): a pgx.Tx that sends its
// statements in as few round trips as it can. Its BEGIN waits for its
// first statement and goes in one batch with it, and so do the
// statements queued with later and laterRow (those whose results the
// write needs only to know they worked, or reads after): they go with the
// next statement sent, or with the COMMIT. A write that reads once and
// then only writes makes two round trips: its reads with BEGIN, its
// writes with COMMIT.
//
// The first failure, of a statement or of what a queued one's result
// says, is kept: every later call returns it, and the transaction can
// only roll back (as PostgreSQL's own aborted transaction can).
type pipeTx struct {
	conn    *pgxpool.Conn
	begun   bool     // BEGIN was sent
	pending []queued // queued, not sent
	seen    []datasetVersion
	err     error
	closed  bool
	// committed says the COMMIT was answered COMMIT (a reader after it
	// may still fail the call: laterRowRead)
	committed bool
	// refused says PostgreSQL failed the transaction (a statement of it
	// was refused): nothing of it stays
	refused bool
	sends   int // round trips (for the tests)
}

// queued is a statement waiting to be sent, with what reads its result
// from the batch it goes in; checks says the reader may refuse the result
// (and so the transaction), so that it must read it before the COMMIT is
// sent.
type queued struct {
	sql    string
	args   []any
	read   func(br pgx.BatchResults) error
	checks bool
}

// later queues a statement of tx whose result only says whether it
// worked; fn, when not nil, is given its command tag (and what it
// returns fails the transaction). Outside a pipeTx it runs now.
func later(ctx context.Context, tx pgx.Tx, fn func(pgconn.CommandTag) error, sql string, args ...any) error {
	read := func(tag pgconn.CommandTag, err error) error {
		if err != nil || fn == nil {
			return formatError(err)
		}
		return fn(tag)
	}
	return enqueue(tx, queued{sql, args, func(br pgx.BatchResults) error { return read(br.Exec()) }, fn != nil},
		func() error { return read(tx.Exec(ctx, sql, args...)) })
}

// laterRow queues a query of tx for one row, which scan reads when its
// result comes (when tx is not a pipeTx: now); what scan returns fails
// the transaction.
func laterRow(ctx context.Context, tx pgx.Tx, scan func(pgx.Row) error, sql string, args ...any) error {
	return queueRow(ctx, tx, scan, true, sql, args)
}

// laterRowRead is laterRow for a row whose reading can refuse nothing
// that the write depends on (a row the transaction locked already): it
// may go with the COMMIT, read when the transaction has committed; a
// failure of scan is then the write's call's, but what it wrote stays.
func laterRowRead(ctx context.Context, tx pgx.Tx, scan func(pgx.Row) error, sql string, args ...any) error {
	return queueRow(ctx, tx, scan, false, sql, args)
}

func queueRow(ctx context.Context, tx pgx.Tx, scan func(pgx.Row) error, checks bool, sql string, args []any) error {
	return enqueue(tx, queued{sql, args, func(br pgx.BatchResults) error { return scan(br.QueryRow()) }, checks},
		func() error { return scan(tx.QueryRow(ctx, sql, args...)) })
}

// laterRows queues a query of tx, whose rows fn reads when they come
// (when tx is not a pipeTx: now); what fn returns fails the transaction.
func laterRows(ctx context.Context, tx pgx.Tx, fn func(pgx.Rows) error, sql string, args ...any) error {
	read := func(rows pgx.Rows, err error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := fn(rows); err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	}
	return enqueue(tx, queued{sql, args, func(br pgx.BatchResults) error { return read(br.Query()) }, true},
		func() error { return read(tx.Query(ctx, sql, args...)) })
}

// enqueue queues q in tx when it is a pipeTx (the transaction's failure,
// if it failed already), else runs now, the statement sent at once.
func enqueue(tx pgx.Tx, q queued, now func() error) error {
	t, ok := tx.(*pipeTx)
	if !ok {
		return now()
	}
	if t.err != nil {
		return t.err
	}
	t.pending = append(t.pending, q)
	return nil
}

// flush sends what tx has queued, if it is a pipeTx.
func flush(ctx context.Context, tx pgx.Tx) error {
	if t, ok := tx.(*pipeTx); ok {
		return t.send(ctx)
	}
	return nil
}

// waiting reports whether a statement sent now must take BEGIN or queued
// statements with it.
func (t *pipeTx) waiting() bool { return !t.begun || len(t.pending) > 0 }

func (t *pipeTx) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

// flush sends what is waiting, with the statement sql after it when tail
// is true; it reads the results of what was waiting, and returns the
// batch at the tail's result, which the caller reads and closes (nil
// without a tail).
func (t *pipeTx) flush(ctx context.Context, tail bool, sql string, args []any) (pgx.BatchResults, error) {
	if t.err != nil {
		return nil, t.err
	}
	var b pgx.Batch
	if !t.begun {
		b.Queue(`BEGIN`)
	}
	for _, q := range t.pending {
		b.Queue(q.sql, q.args...)
	}
	if tail {
		b.Queue(sql, args...)
	}
	if len(b.QueuedQueries) == 0 {
		return nil, nil
	}
	pending, begin := t.pending, !t.begun
	t.pending, t.begun = nil, true
	t.sends++
	br := t.conn.SendBatch(ctx, &b)
	err := func() error {
		if begin {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		for _, q := range pending {
			if err := q.read(br); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil || !tail {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		// PostgreSQL failed the transaction; or the batch that was to
		// begin it failed, the transaction not begun (a statement's
		// Parse, before the batch ran) or rolled back (its COMMIT).
		var pe *pgconn.PgError
		if st := t.conn.Conn().PgConn().TxStatus(); err != nil && (st == 'E' || begin && st == 'I' && errors.As(err, &pe)) {
			t.refused = true
		}
		if err != nil {
			return nil, t.fail(err)
		}
		return nil, nil
	}
	return br, nil
}

// send sends what is waiting, if anything is.
func (t *pipeTx) send(ctx context.Context) error {
	if t.err != nil {
		return t.err
	}
	if !t.waiting() {
		return nil
	}
	_, err := t.flush(ctx, false, "", nil)
	return err
}

// simple reports whether args ask for a mode of their own (a batch takes
// none): the statement goes alone, after what is waiting.
func simple(args []any) bool {
	if len(args) == 0 {
		return false
	}
	_, ok := args[0].(pgx.QueryExecMode)
	return ok
}

func (t *pipeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.err != nil {
		return pgconn.CommandTag{}, t.err
	}
	if !t.waiting() || simple(args) {
		if err := t.send(ctx); err != nil {
			return pgconn.CommandTag{}, err
		}
		t.sends++
		tag, err := t.conn.Exec(ctx, sql, args...)
		if err != nil {
			t.fail(err)
		}
		return tag, err
	}
	br, err := t.flush(ctx, true, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.fail(err)
	}
	return tag, err
}

func (t *pipeTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.err != nil {
		return nil, t.err
	}
	if !t.waiting() || simple(args) {
		if err := t.send(ctx); err != nil {
			return nil, err
		}
		t.sends++
		return t.conn.Query(ctx, sql, args...)
	}
	br, err := t.flush(ctx, true, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, t.fail(err)
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *pipeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if !t.waiting() && t.err == nil {
		t.sends++
		return t.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	return &oneRow{rows: rows, err: err}
}

func (t *pipeTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := t.send(ctx); err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	t.sends++
	return t.conn.SendBatch(ctx, b)
}

func (t *pipeTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.send(ctx); err != nil {
		return 0, err
	}
	t.sends++
	n, err := t.conn.CopyFrom(ctx, table, cols, src)
	if err != nil {
		t.fail(err)
	}
	return n, err
}

func (t *pipeTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := t.send(ctx); err != nil {
		return nil, err
	}
	return t.conn.Conn().Prepare(ctx, name, sql)
}

// Conn is the transaction's connection, with what was waiting sent (a
// failure then is the transaction's, returned by its next call and by
// Commit; callers send it first with flush, to see it).
func (t *pipeTx) Conn() *pgx.Conn {
	t.send(context.Background())
	return t.conn.Conn()
}

func (t *pipeTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *pipeTx) Begin(ctx context.Context) (pgx.Tx, error) {
	return nil, errors.New("postgres: a write's transaction has no nested transactions")
}

// Commit sends what is waiting with the COMMIT (first, when a reader of
// it checks its result); a transaction that sent nothing has nothing to
// commit.
func (t *pipeTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	if t.err != nil {
		t.Rollback(ctx)
		return t.err
	}
	if slices.ContainsFunc(t.pending, func(q queued) bool { return q.checks }) {
		if err := t.send(ctx); err != nil {
			t.Rollback(ctx)
			return err
		}
	}
	if !t.begun && len(t.pending) == 0 {
		t.committed = true // nothing to commit
	} else {
		t.pending = append(t.pending, queued{`COMMIT`, nil, func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err == nil && tag.String() == "ROLLBACK" {
				err = pgx.ErrTxCommitRollback
			}
			t.committed = err == nil
			return err
		}, false})
		if err := t.send(ctx); err != nil {
			t.Rollback(ctx)
			return err
		}
	}
	t.closed = true
	t.conn.Release()
	return nil
}

// Rollback ends the transaction (PostgreSQL's, if it is still open) and
// gives the connection back: the pool closes one that is not idle.
func (t *pipeTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	var err error
	if c := t.conn.Conn(); !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
		_, err = c.Exec(ctx, `ROLLBACK`)
	}
	t.conn.Release()
	return err
}

// batchRows are the rows of a batch's last statement; closing them closes
// the batch.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error // the batch's, when it closed
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.err = r.br.Close()
		r.br = nil
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

// oneRow is the row of a query: the first of its rows, or ErrNoRows.
type oneRow struct {
	rows pgx.Rows
	err  error
}

func (r *oneRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
