package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
)

// TestPipeTx checks a write's transaction: its BEGIN and the statements
// queued go with the next statement sent and with the COMMIT (a lock, a
// read and three writes are two round trips, the COMMIT's with them); and
// a queued statement that fails, or whose result its reader refuses,
// leaves nothing of the transaction, wherever the failure comes.
func TestPipeTx(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	db := pgtest.OpenURL(t, url)
	conn := rawConn(t, url)
	if _, err := conn.Exec(ctx, `CREATE TABLE piped (k int PRIMARY KEY, v text)`); err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM piped`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sends, err := postgres.WriteTx(ctx, db, func(tx pgx.Tx) error {
		if err := postgres.Later(ctx, tx, nil, `SELECT pg_advisory_xact_lock(42)`); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM piped`).Scan(&n); err != nil || n != 0 {
			return errors.Join(err, errors.New("not empty"))
		}
		for k := range 3 {
			if err := postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES ($1, 'x')`, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || sends != 2 || rows() != 3 {
		t.Fatalf("lock, read, three writes: %d round trips, %d rows, %v", sends, rows(), err)
	}
	// A write whose result is checked goes before the COMMIT.
	sends, err = postgres.WriteTx(ctx, db, func(tx pgx.Tx) error {
		return postgres.Later(ctx, tx, func(tag pgconn.CommandTag) error {
			if tag.RowsAffected() != 1 {
				return errors.New("not inserted")
			}
			return nil
		}, `INSERT INTO piped VALUES (3, 'x')`)
	})
	if _, derr := conn.Exec(ctx, `DELETE FROM piped WHERE k = 3`); err != nil || derr != nil || sends != 2 {
		t.Fatalf("a checked write: %d round trips, %v %v", sends, err, derr)
	}
	refused := errors.New("refused")
	for name, fn := range map[string]func(tx pgx.Tx) error{
		"a queued statement fails at the COMMIT": func(tx pgx.Tx) error {
			postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES (10, 'y')`)
			return postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES (0, 'dup')`)
		},
		"a queued statement fails before a read": func(tx pgx.Tx) error {
			postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES (10, 'y')`)
			postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES (0, 'dup')`)
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM piped`).Scan(&n); err == nil {
				return errors.New("the read after a failure worked")
			}
			return nil // the transaction remembers the failure
		},
		"a reader refuses its row": func(tx pgx.Tx) error {
			postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES (10, 'y')`)
			return postgres.LaterRow(ctx, tx, func(row pgx.Row) error {
				var k int
				if err := row.Scan(&k); err != nil {
					return err
				}
				return refused
			}, `UPDATE piped SET v = 'z' WHERE k = 1 RETURNING k`)
		},
	} {
		if _, err := postgres.WriteTx(ctx, db, fn); err == nil {
			t.Errorf("%s: committed", name)
		}
		var v string
		if err := conn.QueryRow(ctx, `SELECT v FROM piped WHERE k = 1`).Scan(&v); err != nil || v != "x" || rows() != 3 {
			t.Errorf("%s: %d rows, v %q, %v: something of it stayed", name, rows(), v, err)
		}
	}
	// A statement sent on the connection itself (as a COPY is) after a
	// queued one that failed fails for that: the write's error is the
	// first failure's (here a conflict), not the aborted transaction's.
	_, err = postgres.WriteTx(ctx, db, func(tx pgx.Tx) error {
		postgres.Later(ctx, tx, nil, `INSERT INTO piped VALUES (0, 'dup')`)
		_, err := tx.Conn().Exec(ctx, `SELECT 1`)
		return err
	})
	if mapcommons.ErrorCode(err) != mapcommons.ECONFLICT {
		t.Errorf("a statement on the connection after a failed one: %v, want the conflict", err)
	}
	// A transaction that sent nothing commits nothing, in no round trip.
	if sends, err := postgres.WriteTx(ctx, db, func(pgx.Tx) error { return nil }); err != nil || sends != 0 {
		t.Errorf("an empty transaction: %d round trips, %v", sends, err)
	}
}
