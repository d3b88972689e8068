package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// An edit in place of a dataset of more than exactSummaryMax features
// extends its summary rather than reading every feature again
// (mapcommons.ExtendSummary): minima, maxima and the extent may still
// cover features that are gone, means, deviations and medians are the
// old ones. Such a dataset is marked (datasets.summary_extended, set by
// generation.point) and summarized exactly again by the indexer's
// periodic sweep (every sweepEvery) once nobody has changed it for
// resummaryIdle (by the store's clock, which wrote updated_at): every
// feature read in a snapshot of its own, outside any write, and the
// summary written only if the dataset's row is still the version it was
// read from (a change meanwhile leaves the mark for a later sweep). A
// rewrite (a replace, a deletion by position, an edit past maxHoles)
// summarizes exactly and clears the mark by itself.

// resummaryIdle is how long a dataset is left alone before it is
// summarized again (variable for tests).
var resummaryIdle = time.Minute

// resummarize summarizes again every marked dataset unchanged since
// before; errors of one dataset do not stop the others.
func (db *DB) resummarize(ctx context.Context, before time.Time) error {
	rows, err := db.pool.Query(ctx, `SELECT id FROM datasets WHERE summary_extended AND updated_at <= $1 ORDER BY id`,
		before.UTC())
	if err != nil {
		return formatError(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return formatError(err)
	}
	var errs []error
	for _, id := range ids {
		if _, err := db.resummarizeOne(ctx, id, nil); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resummarizeOne summarizes dataset id exactly, if it is marked, and
// writes the summary if the row has not changed since it was read; it
// reports whether it wrote. beforeWrite, when set, runs between the read
// and the write (for the tests).
func (db *DB) resummarizeOne(ctx context.Context, id int64, beforeWrite func()) (bool, error) {
	var table string
	var version int64
	var sum *mapcommons.Summary
	// The scan runs as an index build does (attrindex.go): on a
	// connection of its own named buildApp, holding the table's build
	// lock, so that a write dropping the table (a replace, a deletion)
	// cancels it rather than waiting for it, and so that two servers never
	// summarize the same table at once.
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = buildApp
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, formatError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	skip := errors.New("skip")
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var attrs []mapcommons.Attribute
		err := tx.QueryRow(ctx, `SELECT features, attributes, version FROM datasets WHERE id = $1 AND summary_extended`, id).
			Scan(&table, &attrs, &version)
		if err != nil {
			return err
		}
		var got bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, indexLock, table).Scan(&got); err != nil {
			return err
		}
		if !got {
			return skip // built, dropped or summarized by another: a later sweep
		}
		if resummaryScanning != nil {
			tx = scanningTx{tx}
		}
		g := &generation{tx: tx, id: id, attrs: attrs, table: table,
			sum: mapcommons.NewSummaryBuilder(attrs, false), spool: newMedianSpool(attrs)}
		defer g.spool.close()
		if err := g.summarize(ctx); err != nil {
			return err
		}
		sum, err = g.sum.Summary(g.spool.median)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, skip) {
		return false, nil // not marked (any more), gone, or another's
	} else if err != nil {
		return false, formatError(err)
	}
	if beforeWrite != nil {
		beforeWrite()
	}
	statsJSON, err := json.Marshal(sum.Stats)
	if err != nil {
		return false, err
	}
	var ext [4]any
	if e := sum.Extent; e != nil {
		ext = [4]any{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	wrote := false
	err = db.tx(ctx, func(tx pgx.Tx) error {
		// A new version: the answers cached under the old one held the
		// extended summary.
		var v int64
		err := tx.QueryRow(ctx, `UPDATE datasets SET minx = $1, miny = $2, maxx = $3, maxy = $4, geometry_types = $5,
			geometry_mask = $6, stats = $7, summary_extended = false, version = version + 1
			WHERE id = $8 AND version = $9 AND features = $10 AND summary_extended RETURNING version`,
			ext[0], ext[1], ext[2], ext[3], strings.Join(sum.GeometryTypes, ","), sum.GeometryMask, statsJSON,
			id, version, table).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // changed since the read: a later sweep
		} else if err != nil {
			return formatError(err)
		}
		wrote = true
		noteVersion(tx, id, v)
		return datasetChanged(ctx, tx, id)
	})
	return wrote, err
}

// resummaryScanning, when set (by tests), is called once the resummary's
// scan has its first row: the scan is under way, holding its table.
var resummaryScanning func()

// scanningTx calls resummaryScanning at the first row of its queries.
type scanningTx struct{ pgx.Tx }

func (t scanningTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.Tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return &scanningRows{Rows: rows}, nil
}

type scanningRows struct {
	pgx.Rows
	told bool
}

func (r *scanningRows) Next() bool {
	ok := r.Rows.Next()
	if ok && !r.told {
		r.told = true
		resummaryScanning()
	}
	return ok
}
