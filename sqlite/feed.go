package sqlite

import (
	"context"
	"database/sql"
	"net/url"
	"strings"

	"mapcommons"
	"mapcommons/internal/derrors"
)

// The part of the dataset service that serves datasets registered from a
// URL: finding one by its URL, and swapping in what a refetch read.

// FindDatasetByURL implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasetByURL(ctx context.Context, url string) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.FindDatasetByURL(%q)", url)
	var id int64
	err = s.db.read.QueryRowContext(ctx, `SELECT id FROM datasets WHERE url = ? AND url != ''`, url).Scan(&id)
	if err != nil {
		if mapcommons.ErrorCode(formatError(err)) == mapcommons.ENOTFOUND {
			return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no dataset is registered from %s", url)
		}
		return nil, formatError(err)
	}
	return s.FindDatasetByID(ctx, id)
}

// ReplaceFeatures implements mapcommons.DatasetService. The new features go
// to a new segment; one update of the row points the dataset at it (only if
// it still points at the segment this call replaced), so that readers see
// the old features or the new, and a failure leaves the old in place. New
// rows identical to old ones keep the old ids where ids allow it.
func (s *DatasetService) ReplaceFeatures(ctx context.Context, id int64, src mapcommons.FeatureSource) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.ReplaceFeatures(%d)", id)
	unlock := s.db.lockFeatures(id)
	defer unlock()
	ds, oldName, err := findDatasetRow(ctx, s.db.write, id)
	if err != nil {
		return nil, err
	}
	attrs := src.Attributes()
	if len(attrs) > mapcommons.MaxAttributes {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "too many attribute columns (%d, at most %d)", len(attrs), mapcommons.MaxAttributes)
	}
	// Rows identical to old ones keep their ids (see featureids.go); new
	// ids start above every id the dataset ever gave.
	next, match := int64(1), (*idMatcher)(nil)
	if v, release, err := s.db.segs.acquireView(oldName); err == nil {
		defer release()
		next = v.NextID()
		old := v.Base()
		if v.Pending() { // the rows to match are those of the view, merged
			name, err := s.db.writeBase(ctx, v)
			if err != nil {
				return nil, err
			}
			defer s.db.segs.retire(name)
			o, release, err := s.db.segs.acquire(name)
			if err != nil {
				return nil, err
			}
			defer release()
			old = o
		}
		match = newIDMatcher(ctx, old, attrs)
	} else if mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		return nil, err
	}
	seg, err := s.db.writeSegment(ctx, ds, attrs, src, next, match)
	if err != nil {
		return nil, err
	}
	defer seg.drop()
	now := s.db.now()
	if err := s.db.swap(ctx, id, func(tx *sql.Tx) (sql.Result, error) {
		if d := parseLayout(oldName).delta; d != "" { // the old delta goes with the old layout
			if _, err := tx.ExecContext(ctx, `DELETE FROM segment_deltas WHERE name = ?`, d); err != nil {
				return nil, err
			}
		}
		return tx.ExecContext(ctx, `UPDATE datasets SET attributes = ?, feature_count = ?, minx = ?, miny = ?,
		maxx = ?, maxy = ?, geometry_types = ?, geometry_mask = ?, stats = ?, segment = ?, state = ?, last_fetch_error = '',
		fetched_at = ?, updated_at = ?, version = version + 1 WHERE id = ? AND segment = ?`,
			seg.attrs, ds.FeatureCount, seg.ext[0], seg.ext[1], seg.ext[2], seg.ext[3], seg.types,
			ds.GeometryMask, seg.stats, seg.name, mapcommons.StateComplete, now, now, id, oldName)
	}); err != nil {
		return nil, err
	}
	seg.kept = true
	s.db.segs.retireLayout(oldName, seg.name)
	return s.FindDatasetByID(ctx, id)
}

// RecordFetchError implements mapcommons.DatasetService; an empty
// message records a successful refetch.
func (s *DatasetService) RecordFetchError(ctx context.Context, id int64, message string) (err error) {
	defer derrors.Wrap(&err, "DatasetService.RecordFetchError(%d)", id)
	if len(message) > 2000 {
		message = strings.ToValidUTF8(message[:2000], "")
	}
	defer s.db.forget(id)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	now := s.db.now()
	var res sql.Result
	if message == "" { // a refetch that succeeded
		res, err = tx.ExecContext(ctx, `UPDATE datasets SET state = ?, last_fetch_error = '', fetched_at = ?,
		updated_at = ?, version = version + 1 WHERE id = ?`, mapcommons.StateComplete, now, now, id)
	} else {
		res, err = tx.ExecContext(ctx, `UPDATE datasets SET state = ?, last_fetch_error = ?, updated_at = ?,
		version = version + 1 WHERE id = ?`, mapcommons.StateFetchFailed, message, now, id)
	}
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return datasetNotFound(formatError(sql.ErrNoRows), id)
	}
	// Its search entry shows the new time.
	if err := writeDatasetDoc(ctx, tx, id); err != nil {
		return err
	}
	return formatError(tx.Commit())
}

// normalURLs brings the URLs datasets were registered from to their normal
// form (migration 0008), where no other dataset has it already.
func normalURLs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, url FROM datasets WHERE url != '' ORDER BY id`)
	if err != nil {
		return err
	}
	type row struct {
		id  int64
		url string
	}
	var change []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.url); err != nil {
			rows.Close()
			return err
		}
		u, err := url.Parse(r.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue // not one a registration accepts now: left as it is
		}
		if n := mapcommons.NormalURL(u).String(); n != r.url {
			change = append(change, row{r.id, n})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range change {
		if _, err := tx.ExecContext(ctx, `UPDATE datasets SET url = ? WHERE id = ? AND NOT EXISTS (SELECT 1 FROM datasets WHERE url = ?)`,
			r.url, r.id, r.url); err != nil {
			return err
		}
	}
	return nil
}
