package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/derrors"
)

// DatasetService implements mapcommons.DatasetService on the store.
type DatasetService struct {
	db *DB
}

// NewDatasetService returns the dataset service of db.
func NewDatasetService(db *DB) *DatasetService {
	return &DatasetService{db: db}
}

var _ mapcommons.DatasetService = (*DatasetService)(nil)

const datasetColumns = `d.id, coalesce(d.owner_id, 0), coalesce(u.login, ''), d.title, d.description, d.author, d.tags,
	d.metadata_url, d.citation_url, d.contact_name, d.contact_address, d.contact_phone, d.process_notes,
	d.type, d.data_type, d.state, d.feature_count, d.minx, d.miny, d.maxx, d.maxy, d.geometry_types, d.geometry_mask,
	d.attributes, d.stats, d.crs, d.prj, d.created_at, d.updated_at, d.version, d.url, d.url_type,
	d.last_fetch_error, d.fetched_at, d.permissions, d.feed_key, d.segment`

const datasetFrom = ` FROM datasets d LEFT JOIN users u ON u.id = d.owner_id`

func scanDataset(row interface{ Scan(...any) error }) (*mapcommons.Dataset, error) {
	ds, _, err := scanDatasetRow(row)
	return ds, err
}

// scanDatasetRow scans a dataset and the name of its segment.
func scanDatasetRow(row interface{ Scan(...any) error }) (*mapcommons.Dataset, string, error) {
	var ds mapcommons.Dataset
	var seg string
	var minx, miny, maxx, maxy sql.NullFloat64
	var gtypes, attrs, stats, created, updated, fetched, perms string
	m := &ds.Metadata
	if err := row.Scan(&ds.ID, &ds.OwnerID, &ds.Owner, &m.Title, &m.Description, &m.Author, &m.Tags,
		&m.MetadataURL, &m.CitationURL, &m.ContactName, &m.ContactAddress, &m.ContactPhone, &m.ProcessNotes,
		&ds.Type, &ds.DataType, &ds.State, &ds.FeatureCount, &minx, &miny, &maxx, &maxy, &gtypes, &ds.GeometryMask,
		&attrs, &stats, &ds.CRS, &ds.PRJ, &created, &updated, &ds.Version, &ds.URL, &ds.URLType,
		&ds.LastFetchError, &fetched, &perms, &ds.FeedKey, &seg); err != nil {
		return nil, "", err
	}
	if minx.Valid && miny.Valid && maxx.Valid && maxy.Valid {
		ds.Extent = &wkb.Rect{MinX: minx.Float64, MinY: miny.Float64, MaxX: maxx.Float64, MaxY: maxy.Float64}
	}
	ds.GeometryTypes = []string{}
	if gtypes != "" {
		ds.GeometryTypes = strings.Split(gtypes, ",")
	}
	if err := json.Unmarshal([]byte(attrs), &ds.Attributes); err != nil {
		return nil, "", fmt.Errorf("dataset %d attributes: %w", ds.ID, err)
	}
	if err := json.Unmarshal([]byte(stats), &ds.Stats); err != nil {
		return nil, "", fmt.Errorf("dataset %d stats: %w", ds.ID, err)
	}
	if err := json.Unmarshal([]byte(perms), &ds.Permissions); err != nil {
		return nil, "", fmt.Errorf("dataset %d permissions: %w", ds.ID, err)
	}
	if ds.Permissions == nil {
		ds.Permissions = []mapcommons.Permission{}
	}
	ds.CreatedAt, ds.UpdatedAt = parseTime(created), parseTime(updated)
	if fetched != "" {
		ds.FetchedAt = parseTime(fetched)
	}
	return &ds, seg, nil
}

func datasetNotFound(err error, id int64) error {
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %d not found", id)
	}
	return err
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func findDatasetRow(ctx context.Context, q queryer, id int64) (*mapcommons.Dataset, string, error) {
	ds, seg, err := scanDatasetRow(q.QueryRowContext(ctx, `SELECT `+datasetColumns+datasetFrom+` WHERE d.id = ?`, id))
	return ds, seg, datasetNotFound(formatError(err), id)
}

// FindDatasetByID implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasetByID(ctx context.Context, id int64) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.FindDatasetByID(%d)", id)
	ds, _, err := s.db.dataset(ctx, id)
	return ds, err
}

// FindDatasets implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasets(ctx context.Context, f mapcommons.DatasetFilter) (_ []*mapcommons.Dataset, _ int, err error) {
	defer derrors.Wrap(&err, "DatasetService.FindDatasets()")
	where, args := "1", []any{}
	if f.OwnerID != nil {
		where, args = "d.owner_id = ?", append(args, *f.OwnerID)
	}
	if f.Feeds {
		where += " AND d.data_type = '" + mapcommons.DataTypeFeed + "'"
	}
	var total int
	if err := s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM datasets d WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, formatError(err)
	}
	limit := int64(f.Limit)
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+datasetColumns+datasetFrom+` WHERE `+where+` ORDER BY d.id LIMIT ? OFFSET ?`,
		append(args, limit, f.Offset)...)
	if err != nil {
		return nil, 0, formatError(err)
	}
	defer rows.Close()
	var out []*mapcommons.Dataset
	for rows.Next() {
		ds, err := scanDataset(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, ds)
	}
	return out, total, formatError(rows.Err())
}

// UpdateDataset implements mapcommons.DatasetService.
func (s *DatasetService) UpdateDataset(ctx context.Context, id int64, upd mapcommons.MetadataUpdate) (_ *mapcommons.Dataset, err error) {
	defer derrors.Wrap(&err, "DatasetService.UpdateDataset(%d)", id)
	var sets []string
	var args []any
	for _, f := range upd.Fields() {
		if *f.Ptr != nil {
			sets = append(sets, f.Name+" = ?") // column names are the fixed parameter names
			args = append(args, **f.Ptr)
		}
	}
	if upd.Permissions != nil {
		perms, err := permissionsJSON(*upd.Permissions)
		if err != nil {
			return nil, err
		}
		sets, args = append(sets, "permissions = ?"), append(args, perms)
	}
	if upd.URLType != nil {
		sets, args = append(sets, "url_type = ?"), append(args, *upd.URLType)
	}
	if upd.FeedKey != nil {
		sets, args = append(sets, "feed_key = ?"), append(args, *upd.FeedKey)
	}
	sets = append(sets, "updated_at = ?", "version = version + 1")
	args = append(args, s.db.now(), id)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, formatError(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE datasets SET `+strings.Join(sets, ", ")+` WHERE id = ?`, args...)
	defer s.db.forget(id)
	if err != nil {
		return nil, formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, datasetNotFound(formatError(sql.ErrNoRows), id)
	}
	// The maps that show it follow its sharing list.
	if err := datasetChanged(ctx, tx, id); err != nil {
		return nil, err
	}
	ds, _, err := findDatasetRow(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	return ds, formatError(tx.Commit())
}

// DeleteDataset implements mapcommons.DatasetService.
func (s *DatasetService) DeleteDataset(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "DatasetService.DeleteDataset(%d)", id)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	var seg string
	if err := tx.QueryRowContext(ctx, `DELETE FROM datasets WHERE id = ? RETURNING segment`, id).Scan(&seg); err != nil {
		return datasetNotFound(formatError(err), id)
	}
	if d := parseLayout(seg).delta; d != "" {
		if _, err := tx.ExecContext(ctx, `DELETE FROM segment_deltas WHERE name = ?`, d); err != nil {
			return formatError(err)
		}
	}
	// The maps that showed it show it no more.
	if err := datasetChanged(ctx, tx, id); err != nil {
		return err
	}
	err = tx.Commit()
	s.db.forget(id)
	if err != nil {
		return formatError(err)
	}
	s.db.segs.retireLayout(seg, "")
	return nil
}

// CreateDataset implements mapcommons.DatasetService. The features are
// written to a new segment file first; the catalogue row that points to it
// is committed last, so a failure or a crash at any point leaves no dataset
// behind (an unreferenced segment is removed at the next start).
func (s *DatasetService) CreateDataset(ctx context.Context, ds *mapcommons.Dataset, src mapcommons.FeatureSource) (err error) {
	defer derrors.Wrap(&err, "DatasetService.CreateDataset()")
	attrs := src.Attributes()
	if err := ds.PrepareCreate(attrs); err != nil {
		return err
	}
	seg, err := s.db.writeSegment(ctx, ds, attrs, src, 1, nil)
	if err != nil {
		return err
	}
	defer seg.drop()

	now := s.db.now()
	var owner any
	if ds.OwnerID != 0 {
		owner = ds.OwnerID
	}
	fetchedAt := ""
	if ds.URL != "" {
		fetchedAt = now
	}
	if ds.Permissions == nil {
		ds.Permissions = []mapcommons.Permission{}
	}
	perms, err := permissionsJSON(ds.Permissions)
	if err != nil {
		return err
	}
	m := &ds.Metadata
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO datasets (owner_id, title, description, author, tags, metadata_url,
		citation_url, contact_name, contact_address, contact_phone, process_notes, type, data_type, state, crs,
		prj, feature_count, minx, miny, maxx, maxy, geometry_types, geometry_mask, attributes, stats, segment,
		created_at, updated_at, url, url_type, fetched_at, permissions, feed_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		owner, m.Title, m.Description, m.Author, m.Tags, m.MetadataURL, m.CitationURL, m.ContactName,
		m.ContactAddress, m.ContactPhone, m.ProcessNotes, ds.Type, ds.DataType, ds.State, ds.CRS, ds.PRJ,
		ds.FeatureCount, seg.ext[0], seg.ext[1], seg.ext[2], seg.ext[3], seg.types, ds.GeometryMask,
		seg.attrs, seg.stats, seg.name, now, now, ds.URL, ds.URLType, fetchedAt, perms, ds.FeedKey)
	if err != nil {
		if mapcommons.ErrorCode(formatError(err)) == mapcommons.ECONFLICT && ds.URL != "" {
			return mapcommons.Errorf(mapcommons.ECONFLICT, "url: %s is registered already", ds.URL)
		}
		return formatError(err)
	}
	if ds.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	// Maps may name an id before its dataset exists.
	if err := datasetChanged(ctx, tx, ds.ID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return formatError(err)
	}
	seg.kept = true
	ds.CreatedAt, ds.UpdatedAt, ds.Version = parseTime(now), parseTime(now), 1
	if fetchedAt != "" {
		ds.FetchedAt = ds.CreatedAt
	}
	if ds.OwnerID != 0 && ds.Owner == "" {
		var login string
		if err := s.db.read.QueryRowContext(ctx, `SELECT login FROM users WHERE id = ?`, ds.OwnerID).Scan(&login); err == nil {
			ds.Owner = login
		}
	}
	return nil
}

// freshSegment is a segment written by writeSegment and the columns of its
// dataset's row that its features set.
type freshSegment struct {
	db                  *DB
	name                string
	attrs, stats, types string // the attributes and stats (JSON), the geometry types
	ext                 [4]any // the extent's bounds; NULL for none
	kept                bool   // the row that points to it was committed
}

// writeSegment writes the features of src to a new segment (ids from next
// on, matched by match, as segments.write) and applies their summary to
// ds, its attributes attrs. Unless kept is set (once the row that points
// to it is committed), its deferred drop retires the segment.
func (db *DB) writeSegment(ctx context.Context, ds *mapcommons.Dataset, attrs []mapcommons.Attribute, src mapcommons.FeatureSource, next int64, match *idMatcher) (*freshSegment, error) {
	name, sum, err := db.segs.write(ctx, attrs, src, next, match)
	if err != nil {
		return nil, err
	}
	seg := &freshSegment{db: db, name: name}
	ds.Attributes = attrs
	sum.Apply(ds)
	attrJSON, err := json.Marshal(attrs)
	if err == nil {
		var statsJSON []byte
		statsJSON, err = json.Marshal(ds.Stats)
		seg.attrs, seg.stats = string(attrJSON), string(statsJSON)
	}
	if err != nil {
		seg.drop()
		return nil, err
	}
	if e := ds.Extent; e != nil {
		seg.ext = [4]any{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	seg.types = strings.Join(ds.GeometryTypes, ",")
	return seg, nil
}

// drop retires the segment unless it was kept.
func (seg *freshSegment) drop() {
	if !seg.kept {
		seg.db.segs.retire(seg.name)
	}
}

// permissionsJSON is the stored form of a sharing list (as maps store
// theirs; the search triggers read it).
func permissionsJSON(perms []mapcommons.Permission) (string, error) {
	if perms == nil {
		return "[]", nil
	}
	b, err := json.Marshal(perms)
	return string(b), err
}
