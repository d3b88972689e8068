package sqlite

// The search entries of datasets and maps, and the groups each is shared
// with, computed in Go by the domain (mapcommons.SearchGrants,
// mapcommons.MapSearchDocument) and written in the transaction of the
// change they follow: a dataset or map created, changed or deleted, and
// every change to what a map's entry depends on, a dataset's extent,
// count, sharing list or existence, and its owner's administrator flag and
// groups (the owner of a private map must be able to see a dataset for the
// entry to show it). Search never sees an entry that is stale or that
// shows more than the policy allows.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"mapcommons"
	"mapcommons/internal/searchdoc"
)

// execQuerier is what the entries are written with: a transaction.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Queries of refreshMapDocs: the maps whose entries a change touches.
const (
	mapsShowingDataset = `SELECT map_id FROM map_datasets WHERE dataset_id = ?`
	mapsOwnedBy        = `SELECT id FROM maps WHERE owner_id = ?`
)

// datasetChanged rewrites what depends on dataset id after a change in
// tx: its own search entry, and those of the maps that show it.
func datasetChanged(ctx context.Context, tx execQuerier, id int64) error {
	if err := writeDatasetDoc(ctx, tx, id); err != nil {
		return err
	}
	return refreshMapDocs(ctx, tx, mapsShowingDataset, id)
}

// featuresChanged is datasetChanged after a change of dataset id's
// features only: its search entry's count, extent and time of update are
// set from its row (its spatial index row follows: migration 0014); the
// full-text index (of the title, description and tags, unchanged) is left
// alone.
func featuresChanged(ctx context.Context, tx execQuerier, id int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE search_docs SET (feature_count, minx, miny, maxx, maxy, updated_at) =
		(SELECT feature_count, minx, miny, maxx, maxy, updated_at FROM datasets WHERE id = ?) WHERE docid = ?`, id, searchdoc.DatasetDocID(id)); err != nil {
		return formatError(err)
	}
	return refreshMapDocs(ctx, tx, mapsShowingDataset, id)
}

// writeDatasetDoc rewrites the search entry of dataset id from its row as
// it is in tx (none when it is gone).
func writeDatasetDoc(ctx context.Context, tx execQuerier, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM search_docs WHERE docid = ?`, searchdoc.DatasetDocID(id)); err != nil {
		return formatError(err)
	}
	var (
		owner                               sql.NullInt64
		title, desc, tags, created, updated string
		perms                               string
		count                               int64
		minx, miny, maxx, maxy              sql.NullFloat64
	)
	err := tx.QueryRowContext(ctx, `SELECT owner_id, title, description, tags, feature_count, minx, miny, maxx, maxy,
		created_at, updated_at, permissions FROM datasets WHERE id = ?`, id).Scan(&owner, &title, &desc, &tags, &count,
		&minx, &miny, &maxx, &maxy, &created, &updated, &perms)
	if err == sql.ErrNoRows {
		return nil
	} else if err != nil {
		return formatError(err)
	}
	var list []mapcommons.Permission
	if err := json.Unmarshal([]byte(perms), &list); err != nil {
		return fmt.Errorf("dataset %d permissions: %w", id, err)
	}
	shared, groups := mapcommons.SearchGrants(list)
	if _, err := tx.ExecContext(ctx, `INSERT INTO search_docs (docid, kind, obj_id, owner_id, title, description, tags, shared,
		feature_count, minx, miny, maxx, maxy, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		searchdoc.DatasetDocID(id), searchdoc.KindDataset, id, owner, title, desc, tags, shared, count, minx, miny, maxx, maxy, created, updated); err != nil {
		return formatError(err)
	}
	return writeGrants(ctx, tx, searchdoc.DatasetDocID(id), groups)
}

// writeGrants lists the groups a search entry is shared with (its old
// list went with its old row).
func writeGrants(ctx context.Context, tx execQuerier, docid int64, groups []int64) error {
	for _, g := range groups {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO search_grants (group_id, docid) VALUES (?, ?)`, g, docid); err != nil {
			return formatError(err)
		}
	}
	return nil
}

// refreshMapDocs rewrites the search entries of the maps the query (with
// args) selects by id.
func refreshMapDocs(ctx context.Context, tx execQuerier, query string, args ...any) error {
	ids, err := mapIDs(ctx, tx, query, args...)
	if err != nil {
		return err
	}
	return writeMapDocs(ctx, tx, ids)
}

// mapIDs returns the ids the query (with args) selects (of maps, or of
// datasets).
func mapIDs(ctx context.Context, tx execQuerier, query string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, formatError(rows.Err())
}

// writeMapDocs rewrites the search entries of the maps with these ids.
func writeMapDocs(ctx context.Context, tx execQuerier, ids []int64) error {
	for _, id := range ids {
		if err := writeMapDoc(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// writeMapDoc rewrites the search entry of map id and the list of the
// datasets its layers name, from the rows as they are in tx.
func writeMapDoc(ctx context.Context, tx execQuerier, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM search_docs WHERE docid = ?`, searchdoc.MapDocID(id)); err != nil {
		return formatError(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM map_datasets WHERE map_id = ?`, id); err != nil {
		return formatError(err)
	}
	m, err := findMap(ctx, tx, id)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	doc, err := searchdoc.ReadMapEntry(m, func(uid int64) (*mapcommons.User, error) {
		u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, uid))
		if err == sql.ErrNoRows {
			return nil, nil
		}
		return u, formatError(err)
	}, func(dsID int64) (*mapcommons.Dataset, error) {
		ds, err := layerDataset(ctx, tx, dsID)
		if err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO map_datasets (dataset_id, map_id) VALUES (?, ?)`, dsID, id)
		return ds, formatError(err)
	})
	if err != nil {
		return err
	}
	e := doc.Extent
	_, err = tx.ExecContext(ctx, `INSERT INTO search_docs (docid, kind, obj_id, owner_id, title, description, tags, shared,
		feature_count, minx, miny, maxx, maxy, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		doc.DocID, searchdoc.KindMap, id, doc.Owner, m.Title, doc.Description, doc.Tags, doc.Shared, doc.FeatureCount,
		e.W, e.S, e.E, e.N, m.CreatedAt.UTC().Format(timeLayout), m.UpdatedAt.UTC().Format(timeLayout))
	if err != nil {
		return formatError(err)
	}
	return writeGrants(ctx, tx, doc.DocID, doc.Groups)
}

// layerDataset reads what a map's entry needs of dataset id: nil when
// there is none.
func layerDataset(ctx context.Context, tx execQuerier, id int64) (*mapcommons.Dataset, error) {
	ds := &mapcommons.Dataset{ID: id}
	var minx, miny, maxx, maxy *float64
	var perms []byte
	err := tx.QueryRowContext(ctx, `SELECT coalesce(owner_id, 0), permissions, feature_count, minx, miny, maxx, maxy
		FROM datasets WHERE id = ?`, id).Scan(&ds.OwnerID, &perms, &ds.FeatureCount, &minx, &miny, &maxx, &maxy)
	if err == sql.ErrNoRows {
		return nil, nil
	} else if err != nil {
		return nil, formatError(err)
	}
	return ds, searchdoc.LayerDataset(ds, perms, minx, miny, maxx, maxy)
}
