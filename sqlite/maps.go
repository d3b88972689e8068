package sqlite

import (
	"context"
	"database/sql"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// MapService implements mapcommons.MapService on the store.
type MapService struct {
	db *DB
}

// NewMapService returns the map service of db.
func NewMapService(db *DB) *MapService { return &MapService{db: db} }

var _ mapcommons.MapService = (*MapService)(nil)

const mapSelect = `SELECT m.id, coalesce(m.owner_id, 0), coalesce(u.login, ''), m.title, m.basemap, m.description,
	m.tags, m.extent, m.projection, m.layers, m.permissions, m.created_at, m.updated_at
	FROM maps m LEFT JOIN users u ON u.id = m.owner_id WHERE m.id = ?`

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func findMap(ctx context.Context, q querier, id int64) (*mapcommons.Map, error) {
	var m mapcommons.Map
	var desc sql.NullString
	var created, updated string
	var extent, tags, layers, perms []byte
	err := q.QueryRowContext(ctx, mapSelect, id).Scan(&m.ID, &m.OwnerID, &m.Owner, &m.Title, &m.Basemap, &desc,
		&tags, &extent, &m.Projection, &layers, &perms, &created, &updated)
	if err != nil {
		if err == sql.ErrNoRows {
			return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d not found", id)
		}
		return nil, formatError(err)
	}
	if desc.Valid {
		m.Description = &desc.String
	}
	if err := storekit.DecodeMap(&m, storekit.MapJSON{Extent: extent, Tags: tags, Layers: layers, Perms: perms}); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = parseTime(created), parseTime(updated)
	return &m, nil
}

// mapColumns encodes the stored form of m's changeable columns.
func mapColumns(m *mapcommons.Map) (desc, extent any, tags, layers, perms string, err error) {
	if m.Description != nil {
		desc = *m.Description
	}
	j, err := storekit.EncodeMap(m)
	if j.Extent != nil {
		extent = string(j.Extent) // text, as the column's JSON is
	}
	return desc, extent, string(j.Tags), string(j.Layers), string(j.Perms), err
}

// CreateMap implements mapcommons.MapService.
func (s *MapService) CreateMap(ctx context.Context, m *mapcommons.Map) (err error) {
	defer derrors.Wrap(&err, "MapService.CreateMap()")
	desc, extent, tags, layers, perms, err := mapColumns(m)
	if err != nil {
		return err
	}
	var owner any
	if m.OwnerID != 0 {
		owner = m.OwnerID
	}
	now := s.db.now()
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `INSERT INTO maps (owner_id, title, basemap, description, tags, extent, projection,
		layers, permissions, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		owner, m.Title, m.Basemap, desc, tags, extent, m.Projection, layers, perms, now, now).Scan(&m.ID)
	if err != nil {
		return formatError(err)
	}
	if err := writeMapDoc(ctx, tx, m.ID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return formatError(err)
	}
	m.CreatedAt, m.UpdatedAt = parseTime(now), parseTime(now)
	return nil
}

// FindMapByID implements mapcommons.MapService.
func (s *MapService) FindMapByID(ctx context.Context, id int64) (_ *mapcommons.Map, err error) {
	defer derrors.Wrap(&err, "MapService.FindMapByID(%d)", id)
	return findMap(ctx, s.db.read, id)
}

// UpdateMap implements mapcommons.MapService.
func (s *MapService) UpdateMap(ctx context.Context, id int64, fn func(*mapcommons.Map) error) (_ *mapcommons.Map, err error) {
	var theirs error // fn's, the caller's own
	defer derrors.WrapExcept(&err, &theirs, "MapService.UpdateMap(%d)", id)
	fn = derrors.Through(&theirs, fn)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, formatError(err)
	}
	defer tx.Rollback()
	m, err := findMap(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := fn(m); err != nil {
		return nil, err
	}
	desc, extent, tags, layers, perms, err := mapColumns(m)
	if err != nil {
		return nil, err
	}
	now := s.db.now()
	if _, err := tx.ExecContext(ctx, `UPDATE maps SET title = ?, basemap = ?, description = ?, tags = ?, extent = ?,
		projection = ?, layers = ?, permissions = ?, updated_at = ? WHERE id = ?`,
		m.Title, m.Basemap, desc, tags, extent, m.Projection, layers, perms, now, id); err != nil {
		return nil, formatError(err)
	}
	if err := writeMapDoc(ctx, tx, id); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, formatError(err)
	}
	m.UpdatedAt = parseTime(now)
	return m, nil
}

// DeleteMap implements mapcommons.MapService.
func (s *MapService) DeleteMap(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "MapService.DeleteMap(%d)", id)
	res, err := s.db.write.ExecContext(ctx, `DELETE FROM maps WHERE id = ?`, id)
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d not found", id)
	}
	return nil
}

// MapsShowing implements mapcommons.MapService.
func (s *MapService) MapsShowing(ctx context.Context, datasetID int64, limit int) (_ []int64, err error) {
	defer derrors.Wrap(&err, "MapService.MapsShowing(%d)", datasetID)
	rows, err := s.db.read.QueryContext(ctx, `SELECT map_id FROM map_datasets WHERE dataset_id = ? ORDER BY map_id LIMIT ?`, datasetID, max(limit, 0))
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, formatError(err)
		}
		ids = append(ids, id)
	}
	return ids, formatError(rows.Err())
}
