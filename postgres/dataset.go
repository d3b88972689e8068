package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/derrors"
)

// DatasetService implements mapcommons.DatasetService on the store: the
// catalogue row in datasets, the features in the table it points to
// (features.go).
type DatasetService struct{ db *DB }

var _ mapcommons.DatasetService = (*DatasetService)(nil)

const datasetColumns = `d.id, coalesce(d.owner_id, 0), coalesce(u.login, ''), d.title, d.description, d.author, d.tags,
	d.metadata_url, d.citation_url, d.contact_name, d.contact_address, d.contact_phone, d.process_notes,
	d.type, d.data_type, d.state, d.feature_count, d.minx, d.miny, d.maxx, d.maxy, d.geometry_types, d.geometry_mask,
	d.attributes, d.stats, d.crs, d.prj, d.created_at, d.updated_at, d.version, d.url, d.url_type,
	d.last_fetch_error, d.fetched_at, d.permissions, d.feed_key, d.features, d.next_id, ` + holesOf + `d.id` + holesEnd + `, ` + rowStamp

const datasetFrom = ` FROM datasets d LEFT JOIN users u ON u.id = d.owner_id`

// datasetRow is a dataset and where its features are.
type datasetRow struct {
	*mapcommons.Dataset
	table  string  // the features' table ("" never, once created)
	nextID int64   // above every id the dataset gave
	holes  []int64 // the pos of the rows deleted in place, ascending (holes.go)
	stamp  string  // which versions of its rows the dataset was read from (catalogue.go)
	xmin   string  // the version of its row a read's hint was read from (read.go)
	// noMaps says an edit in place saw no map show the dataset when it
	// locked the row, and checks so at its end (edits.go).
	noMaps bool
}

// scanDataset scans a row of datasetColumns.
func scanDataset(row pgx.Row) (*datasetRow, error) {
	var ds mapcommons.Dataset
	r := &datasetRow{Dataset: &ds}
	var minx, miny, maxx, maxy *float64
	var gtypes string
	var attrs, stats, perms []byte
	var fetched *time.Time
	m := &ds.Metadata
	if err := row.Scan(&ds.ID, &ds.OwnerID, &ds.Owner, &m.Title, &m.Description, &m.Author, &m.Tags,
		&m.MetadataURL, &m.CitationURL, &m.ContactName, &m.ContactAddress, &m.ContactPhone, &m.ProcessNotes,
		&ds.Type, &ds.DataType, &ds.State, &ds.FeatureCount, &minx, &miny, &maxx, &maxy, &gtypes, &ds.GeometryMask,
		&attrs, &stats, &ds.CRS, &ds.PRJ, &ds.CreatedAt, &ds.UpdatedAt, &ds.Version, &ds.URL, &ds.URLType,
		&ds.LastFetchError, &fetched, &perms, &ds.FeedKey, &r.table, &r.nextID, &r.holes, &r.stamp); err != nil {
		return nil, err
	}
	if minx != nil && miny != nil && maxx != nil && maxy != nil {
		ds.Extent = &wkb.Rect{MinX: *minx, MinY: *miny, MaxX: *maxx, MaxY: *maxy}
	}
	ds.GeometryTypes = []string{}
	if gtypes != "" {
		ds.GeometryTypes = strings.Split(gtypes, ",")
	}
	if err := decoded.get(&ds, attrs, stats, perms); err != nil {
		return nil, err
	}
	if ds.Permissions == nil {
		ds.Permissions = []mapcommons.Permission{}
	}
	ds.CreatedAt, ds.UpdatedAt = utc(ds.CreatedAt), utc(ds.UpdatedAt)
	if fetched != nil {
		ds.FetchedAt = utc(*fetched)
	}
	return r, nil
}

// jsonColumns is what a dataset row's JSON columns decode to.
type jsonColumns struct {
	attrs, stats, perms []byte // as read
	attributes          []mapcommons.Attribute
	statsMap            map[string]mapcommons.Stats
	permissions         []mapcommons.Permission
}

// jsonCache keeps the JSON columns of the rows read last, decoded, by
// dataset id. The catalogue is read fresh for every request, and
// decoding its JSON was a tenth of the CPU of a bbox page on this store
// (pprof); a row whose columns are byte for byte those of the entry
// gets copies of its values instead. The bytes decide, not the id, so
// a stale or foreign entry is only a miss.
type jsonCache struct {
	mu   sync.Mutex
	rows map[int64]*jsonColumns
}

// maxJSONCache bounds the entries of jsonCache.
const maxJSONCache = 1024

var decoded jsonCache

// get sets ds's attributes, stats and permissions from their columns.
func (c *jsonCache) get(ds *mapcommons.Dataset, attrs, stats, perms []byte) error {
	c.mu.Lock()
	e := c.rows[ds.ID]
	c.mu.Unlock()
	if e == nil || !bytes.Equal(e.attrs, attrs) || !bytes.Equal(e.stats, stats) || !bytes.Equal(e.perms, perms) {
		e = &jsonColumns{attrs: attrs, stats: stats, perms: perms}
		for _, f := range []struct {
			name string
			raw  []byte
			dst  any
		}{{"attributes", attrs, &e.attributes}, {"stats", stats, &e.statsMap}, {"permissions", perms, &e.permissions}} {
			if err := json.Unmarshal(f.raw, f.dst); err != nil {
				return fmt.Errorf("dataset %d %s: %w", ds.ID, f.name, err)
			}
		}
		c.mu.Lock()
		if c.rows == nil || len(c.rows) >= maxJSONCache {
			c.rows = map[int64]*jsonColumns{}
		}
		c.rows[ds.ID] = e
		c.mu.Unlock()
	}
	// Copies: callers may change what they get.
	ds.Attributes, ds.Stats, ds.Permissions = slices.Clone(e.attributes), maps.Clone(e.statsMap), slices.Clone(e.permissions)
	return nil
}

// attributes decodes a row's attributes column (a read's, scanQueried).
func (c *jsonCache) attributes(id int64, attrs []byte) ([]mapcommons.Attribute, error) {
	c.mu.Lock()
	e := c.rows[id]
	c.mu.Unlock()
	if e != nil && bytes.Equal(e.attrs, attrs) {
		return slices.Clone(e.attributes), nil
	}
	var out []mapcommons.Attribute
	if err := json.Unmarshal(attrs, &out); err != nil {
		return nil, fmt.Errorf("dataset %d attributes: %w", id, err)
	}
	return out, nil
}

// datasetNotFound is the error for a dataset id that has no row.
func datasetNotFound(id int64) error {
	return mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %d not found", id)
}

// querier is a pool, a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// findDataset reads dataset id through q; forUpdate locks its row until
// the end of the transaction q is.
func findDataset(ctx context.Context, q querier, id int64, forUpdate bool) (*datasetRow, error) {
	query := `SELECT ` + datasetColumns + datasetFrom + ` WHERE d.id = $1`
	if forUpdate {
		query += ` FOR UPDATE OF d`
	}
	r, err := scanDataset(q.QueryRow(ctx, query, id))
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, datasetNotFound(id)
	} else if err == nil {
		noteVersion(q, r.ID, r.Version) // in a write's transaction: recorded when it commits
	}
	return r, err
}

// FindDatasetByID implements mapcommons.DatasetService.
// The row comes from the catalogue cache when the database says it has
// not changed since (catalogue.go).
func (s *DatasetService) FindDatasetByID(ctx context.Context, id int64) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.FindDatasetByID(%d)", id)
	ds, err := s.db.catalogue.find(ctx, s.db, s.db.pool, id)
	if err != nil {
		return nil, err
	}
	s.db.replicas.saw(datasetVersion{ds.ID, ds.Version}) // the least version the reads after may see
	return ds, nil
}

// FindDatasets implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasets(ctx context.Context, f mapcommons.DatasetFilter) (_ []*mapcommons.Dataset, _ int, err error) {
	defer derrors.Wrap(&err, "DatasetService.FindDatasets()")
	where, args := "true", []any{}
	if f.OwnerID != nil {
		where, args = "d.owner_id = $1", append(args, *f.OwnerID)
	}
	if f.Feeds {
		args = append(args, mapcommons.DataTypeFeed)
		where += fmt.Sprintf(" AND d.data_type = $%d", len(args))
	}
	var total int
	if err := s.db.pool.QueryRow(ctx, `SELECT count(*) FROM datasets d WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, formatError(err)
	}
	var limit *int
	if f.Limit > 0 {
		limit = &f.Limit
	}
	args = append(args, limit, max(f.Offset, 0))
	rows, err := s.db.pool.Query(ctx, `SELECT `+datasetColumns+datasetFrom+` WHERE `+where+
		fmt.Sprintf(` ORDER BY d.id LIMIT $%d OFFSET $%d`, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, formatError(err)
	}
	defer rows.Close()
	var out []*mapcommons.Dataset
	for rows.Next() {
		r, err := scanDataset(rows)
		if err != nil {
			return nil, 0, err
		}
		s.db.replicas.saw(datasetVersion{r.ID, r.Version})
		out = append(out, r.Dataset)
	}
	return out, total, formatError(rows.Err())
}

// UpdateDataset implements mapcommons.DatasetService.
func (s *DatasetService) UpdateDataset(ctx context.Context, id int64, upd mapcommons.MetadataUpdate) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.UpdateDataset(%d)", id)
	var sets []string
	var args []any
	set := func(column string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", column, len(args))) // column names are the fixed parameter names
	}
	for _, f := range upd.Fields() {
		if *f.Ptr != nil {
			set(f.Name, **f.Ptr)
		}
	}
	if upd.Permissions != nil {
		perms, err := permissionsJSON(*upd.Permissions)
		if err != nil {
			return nil, err
		}
		set("permissions", perms)
	}
	if upd.URLType != nil {
		set("url_type", *upd.URLType)
	}
	if upd.FeedKey != nil {
		set("feed_key", *upd.FeedKey)
	}
	set("updated_at", s.db.now())
	args = append(args, id)
	var out *mapcommons.Dataset
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		n, err := affected(tx.Exec(ctx, `UPDATE datasets SET `+strings.Join(sets, ", ")+
			fmt.Sprintf(`, version = version + 1 WHERE id = $%d`, len(args)), args...))
		if err != nil {
			return err
		} else if n == 0 {
			return datasetNotFound(id)
		}
		// The maps that show it follow its sharing list.
		if err := datasetChanged(ctx, tx, id); err != nil {
			return err
		}
		r, err := findDataset(ctx, tx, id, false)
		if err != nil {
			return err
		}
		out = r.Dataset
		return nil
	})
	return out, err
}

// DeleteDataset implements mapcommons.DatasetService: the row and the
// features' table go in one transaction, under the dataset's write lock
// (the DROP waits for the readers of the table to finish).
func (s *DatasetService) DeleteDataset(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "DatasetService.DeleteDataset(%d)", id)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockFeatures(ctx, tx, id); err != nil {
			return err
		}
		// The table first: the DROP waits for its readers without
		// holding the row's lock.
		var table string
		if err := tx.QueryRow(ctx, `SELECT features FROM datasets WHERE id = $1`, id).Scan(&table); err != nil {
			if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
				return datasetNotFound(id)
			}
			return err
		}
		if err := dropTable(ctx, tx, table); err != nil {
			return err
		}
		if n, err := affected(tx.Exec(ctx, `DELETE FROM datasets WHERE id = $1`, id)); err != nil {
			return err
		} else if n == 0 {
			return datasetNotFound(id)
		}
		// The maps that showed it show it no more.
		return datasetChanged(ctx, tx, id)
	})
}

// CreateDataset implements mapcommons.DatasetService: the row, the
// features' table and its rows (binary COPY) in one transaction, so that
// a failure at any point leaves nothing behind.
func (s *DatasetService) CreateDataset(ctx context.Context, ds *mapcommons.Dataset, src mapcommons.FeatureSource) (err error) {
	defer derrors.Wrap(&err, "DatasetService.CreateDataset()")
	attrs := src.Attributes()
	if err := ds.PrepareCreate(attrs); err != nil {
		return err
	}
	if ds.Permissions == nil {
		ds.Permissions = []mapcommons.Permission{}
	}
	perms, err := permissionsJSON(ds.Permissions)
	if err != nil {
		return err
	}
	attrJSON, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	now := s.db.now()
	var owner, fetchedAt any
	if ds.OwnerID != 0 {
		owner = ds.OwnerID
	}
	if ds.URL != "" {
		fetchedAt = now
	}
	m := &ds.Metadata
	var id int64
	var sum *mapcommons.Summary
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO datasets (owner_id, title, description, author, tags, metadata_url,
		citation_url, contact_name, contact_address, contact_phone, process_notes, type, data_type, state, crs,
		prj, attributes, created_at, updated_at, url, url_type, fetched_at, permissions, feed_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18, $19, $20, $21, $22, $23)
		RETURNING id`,
			owner, m.Title, m.Description, m.Author, m.Tags, m.MetadataURL, m.CitationURL, m.ContactName,
			m.ContactAddress, m.ContactPhone, m.ProcessNotes, ds.Type, ds.DataType, ds.State, ds.CRS, ds.PRJ,
			attrJSON, now, ds.URL, ds.URLType, fetchedAt, perms, ds.FeedKey).Scan(&id)
		if err != nil {
			if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT && ds.URL != "" {
				return mapcommons.Errorf(mapcommons.ECONFLICT, "url: %s is registered already", ds.URL)
			}
			return err
		}
		var g *generation
		if g, sum, err = loadNew(ctx, tx, id, attrs, 1, src, nil); err != nil {
			return err
		}
		return g.point(ctx, sum, "", now)
	})
	if err != nil {
		return err
	}
	s.db.indexer.changed() // the new table's indexes
	ds.ID = id
	ds.Attributes = attrs
	sum.Apply(ds)
	ds.CreatedAt, ds.UpdatedAt, ds.Version = now, now, 1
	if fetchedAt != nil {
		ds.FetchedAt = now
	}
	if ds.OwnerID != 0 && ds.Owner == "" {
		var login string
		if err := s.db.pool.QueryRow(ctx, `SELECT login FROM users WHERE id = $1`, ds.OwnerID).Scan(&login); err == nil {
			ds.Owner = login
		}
	}
	return nil
}

// permissionsJSON is the stored form of a sharing list.
func permissionsJSON(perms []mapcommons.Permission) ([]byte, error) {
	if perms == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(perms)
}

// FindDatasetByURL implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasetByURL(ctx context.Context, url string) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.FindDatasetByURL(%q)", url)
	var id int64
	err = s.db.pool.QueryRow(ctx, `SELECT id FROM datasets WHERE url = $1 AND url <> ''`, url).Scan(&id)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no dataset is registered from %s", url)
	} else if err != nil {
		return nil, err
	}
	return s.FindDatasetByID(ctx, id)
}

// RecordFetchError implements mapcommons.DatasetService; an empty
// message records a successful refetch.
func (s *DatasetService) RecordFetchError(ctx context.Context, id int64, message string) (err error) {
	defer derrors.Wrap(&err, "DatasetService.RecordFetchError(%d)", id)
	if len(message) > 2000 {
		message = strings.ToValidUTF8(message[:2000], "")
	}
	message = strings.ToValidUTF8(strings.ReplaceAll(message, "\x00", ""), "")
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		query := `UPDATE datasets SET state = $1, last_fetch_error = $2, updated_at = $3, version = version + 1 WHERE id = $4
			RETURNING version`
		state := mapcommons.StateFetchFailed
		if message == "" { // a refetch that succeeded
			query = `UPDATE datasets SET state = $1, last_fetch_error = $2, updated_at = $3, fetched_at = $3,
			version = version + 1 WHERE id = $4 RETURNING version`
			state = mapcommons.StateComplete
		}
		var version int64
		if err := tx.QueryRow(ctx, query, state, message, s.db.now(), id).Scan(&version); err != nil {
			if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
				return datasetNotFound(id)
			}
			return err
		}
		noteVersion(tx, id, version)
		// Its search entry shows the new time.
		return writeDatasetDoc(ctx, tx, id)
	})
}

// ReplaceFeatures implements mapcommons.DatasetService: a new generation
// of the features' table is filled from src and swapped in, under the
// dataset's write lock, in one transaction that drops the old one. New
// rows identical to old ones keep the old ids where ids allow it
// (featureids.go).
func (s *DatasetService) ReplaceFeatures(ctx context.Context, id int64, src mapcommons.FeatureSource) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.ReplaceFeatures(%d)", id)
	attrs := src.Attributes()
	if len(attrs) > mapcommons.MaxAttributes {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "too many attribute columns (%d, at most %d)", len(attrs), mapcommons.MaxAttributes)
	}
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockFeatures(ctx, tx, id); err != nil {
			return err
		}
		old, err := findDataset(ctx, tx, id, false) // the lock keeps its features as they are
		if err != nil {
			return err
		}
		match, err := newIDMatcher(ctx, tx, old, attrs)
		if err != nil {
			return err
		}
		g, sum, err := loadNew(ctx, tx, id, attrs, old.nextID, src, match)
		if err != nil {
			return err
		}
		attrJSON, err := json.Marshal(attrs)
		if err != nil {
			return err
		}
		now := s.db.now()
		if err := g.point(ctx, sum, old.table, now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE datasets SET attributes = $1, state = $2, last_fetch_error = '',
			fetched_at = $3 WHERE id = $4`, attrJSON, mapcommons.StateComplete, now, id)
		return formatError(err)
	})
	if err != nil {
		return nil, err
	}
	s.db.indexer.changed() // the new table's indexes
	return s.FindDatasetByID(ctx, id)
}
