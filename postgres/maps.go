package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// MapService implements mapcommons.MapService on the store.
type MapService struct{ db *DB }

var _ mapcommons.MapService = (*MapService)(nil)

const mapSelect = `SELECT m.id, coalesce(m.owner_id, 0), coalesce(u.login, ''), m.title, m.basemap, m.description,
	m.tags, m.extent, m.projection, m.layers, m.permissions, m.created_at, m.updated_at
	FROM maps m LEFT JOIN users u ON u.id = m.owner_id WHERE m.id = $1`

// findMap reads map id through q; forUpdate locks its row until the end
// of the transaction q is (so that two servers' updates do not lose one).
func findMap(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id int64, forUpdate bool) (*mapcommons.Map, error) {
	query := mapSelect
	if forUpdate {
		query += ` FOR UPDATE OF m`
	}
	var m mapcommons.Map
	var tags, extent, layers, perms []byte
	err := q.QueryRow(ctx, query, id).Scan(&m.ID, &m.OwnerID, &m.Owner, &m.Title, &m.Basemap, &m.Description,
		&tags, &extent, &m.Projection, &layers, &perms, &m.CreatedAt, &m.UpdatedAt)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d not found", id)
	} else if err != nil {
		return nil, err
	}
	if err := storekit.DecodeMap(&m, storekit.MapJSON{Extent: extent, Tags: tags, Layers: layers, Perms: perms}); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = utc(m.CreatedAt), utc(m.UpdatedAt)
	return &m, nil
}

// CreateMap implements mapcommons.MapService.
func (s *MapService) CreateMap(ctx context.Context, m *mapcommons.Map) (err error) {
	defer derrors.Wrap(&err, "MapService.CreateMap()")
	j, err := storekit.EncodeMap(m)
	if err != nil {
		return err
	}
	var owner *int64
	if m.OwnerID != 0 {
		owner = &m.OwnerID
	}
	now := s.db.now()
	var id int64
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO maps (owner_id, title, basemap, description, tags, extent, projection,
		layers, permissions, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
			owner, m.Title, m.Basemap, m.Description, j.Tags, j.Extent, m.Projection, j.Layers, j.Perms, now).Scan(&id)
		if err != nil {
			return formatError(err)
		}
		return writeMapDoc(ctx, tx, id)
	})
	if err != nil {
		return err
	}
	m.ID, m.CreatedAt, m.UpdatedAt = id, now, now
	return nil
}

// FindMapByID implements mapcommons.MapService.
func (s *MapService) FindMapByID(ctx context.Context, id int64) (_ *mapcommons.Map, err error) {
	defer derrors.Wrap(&err, "MapService.FindMapByID(%d)", id)
	return findMap(ctx, s.db.pool, id, false)
}

// UpdateMap implements mapcommons.MapService. The map's row is locked
// from its read to the commit: concurrent updates, from any server, apply
// one after the other.
func (s *MapService) UpdateMap(ctx context.Context, id int64, fn func(*mapcommons.Map) error) (_ *mapcommons.Map, err error) {
	var theirs error // fn's, the caller's own
	defer derrors.WrapExcept(&err, &theirs, "MapService.UpdateMap(%d)", id)
	fn = derrors.Through(&theirs, fn)
	var m *mapcommons.Map
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockMapDocs(ctx, tx); err != nil { // before the map's row
			return err
		}
		var err error
		if m, err = findMap(ctx, tx, id, true); err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
		j, err := storekit.EncodeMap(m)
		if err != nil {
			return err
		}
		m.UpdatedAt = s.db.now()
		_, err = tx.Exec(ctx, `UPDATE maps SET title = $1, basemap = $2, description = $3, tags = $4, extent = $5,
			projection = $6, layers = $7, permissions = $8, updated_at = $9 WHERE id = $10`,
			m.Title, m.Basemap, m.Description, j.Tags, j.Extent, m.Projection, j.Layers, j.Perms, m.UpdatedAt, id)
		if err != nil {
			return formatError(err)
		}
		return writeMapDoc(ctx, tx, id)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DeleteMap implements mapcommons.MapService.
func (s *MapService) DeleteMap(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "MapService.DeleteMap(%d)", id)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockMapDocs(ctx, tx); err != nil { // before the map's row
			return err
		}
		n, err := affected(tx.Exec(ctx, `DELETE FROM maps WHERE id = $1`, id))
		if err != nil {
			return err
		}
		if n == 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "map %d not found", id)
		}
		// Its entry goes with it.
		return writeMapDoc(ctx, tx, id)
	})
}

// MapsShowing implements mapcommons.MapService.
func (s *MapService) MapsShowing(ctx context.Context, datasetID int64, limit int) (_ []int64, err error) {
	defer derrors.Wrap(&err, "MapService.MapsShowing(%d)", datasetID)
	rows, err := s.db.pool.Query(ctx, `SELECT map_id FROM search_map_datasets WHERE dataset_id = $1 ORDER BY map_id LIMIT $2`, datasetID, max(limit, 0))
	if err != nil {
		return nil, formatError(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, formatError(err)
}
