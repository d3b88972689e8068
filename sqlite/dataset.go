package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
)

// DatasetService implements mapcommons.DatasetService on the store.
type DatasetService struct {
	db *DB
	// MedianBudget is how many numeric values an ingest may hold in memory
	// to compute exact medians; beyond it the medians come from SQL.
	MedianBudget int
}

// NewDatasetService returns the dataset service of db.
func NewDatasetService(db *DB) *DatasetService {
	return &DatasetService{db: db, MedianBudget: 16 << 20}
}

var _ mapcommons.DatasetService = (*DatasetService)(nil)

// featureTable names the table of a dataset's features. Only ever built from
// the numeric id, never from user input.
func featureTable(id int64) string { return "features_" + itoa(id) }

// attrColumn names the column of attribute i.
func attrColumn(i int) string { return "c" + itoa(int64(i)) }

func columnType(t mapcommons.AttrType) string {
	switch t {
	case mapcommons.AttrInteger, mapcommons.AttrBoolean:
		return "INTEGER"
	case mapcommons.AttrFloat:
		return "REAL"
	}
	return "TEXT"
}

const datasetColumns = `d.id, coalesce(d.owner_id, 0), coalesce(u.login, ''), d.title, d.description, d.author, d.tags,
	d.metadata_url, d.citation_url, d.contact_name, d.contact_address, d.contact_phone, d.process_notes,
	d.type, d.data_type, d.state, d.feature_count, d.minx, d.miny, d.maxx, d.maxy, d.geometry_types, d.geometry_mask,
	d.attributes, d.stats, d.crs, d.prj, d.created_at, d.updated_at`

const datasetFrom = ` FROM datasets d LEFT JOIN users u ON u.id = d.owner_id`

func scanDataset(row interface{ Scan(...any) error }) (*mapcommons.Dataset, error) {
	var ds mapcommons.Dataset
	var minx, miny, maxx, maxy sql.NullFloat64
	var gtypes, attrs, stats, created, updated string
	m := &ds.Metadata
	if err := row.Scan(&ds.ID, &ds.OwnerID, &ds.Owner, &m.Title, &m.Description, &m.Author, &m.Tags,
		&m.MetadataURL, &m.CitationURL, &m.ContactName, &m.ContactAddress, &m.ContactPhone, &m.ProcessNotes,
		&ds.Type, &ds.DataType, &ds.State, &ds.FeatureCount, &minx, &miny, &maxx, &maxy, &gtypes, &ds.GeometryMask,
		&attrs, &stats, &ds.CRS, &ds.PRJ, &created, &updated); err != nil {
		return nil, err
	}
	if minx.Valid && miny.Valid && maxx.Valid && maxy.Valid {
		ds.Extent = &wkb.Rect{MinX: minx.Float64, MinY: miny.Float64, MaxX: maxx.Float64, MaxY: maxy.Float64}
	}
	ds.GeometryTypes = []string{}
	if gtypes != "" {
		ds.GeometryTypes = strings.Split(gtypes, ",")
	}
	if err := json.Unmarshal([]byte(attrs), &ds.Attributes); err != nil {
		return nil, fmt.Errorf("dataset %d attributes: %w", ds.ID, err)
	}
	if err := json.Unmarshal([]byte(stats), &ds.Stats); err != nil {
		return nil, fmt.Errorf("dataset %d stats: %w", ds.ID, err)
	}
	ds.CreatedAt, ds.UpdatedAt = parseTime(created), parseTime(updated)
	return &ds, nil
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

func findDataset(ctx context.Context, q queryer, id int64) (*mapcommons.Dataset, error) {
	ds, err := scanDataset(q.QueryRowContext(ctx, `SELECT `+datasetColumns+datasetFrom+` WHERE d.id = ?`, id))
	return ds, datasetNotFound(formatError(err), id)
}

// FindDatasetByID implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasetByID(ctx context.Context, id int64) (*mapcommons.Dataset, error) {
	return findDataset(ctx, s.db.read, id)
}

// FindDatasets implements mapcommons.DatasetService.
func (s *DatasetService) FindDatasets(ctx context.Context, f mapcommons.DatasetFilter) ([]*mapcommons.Dataset, int, error) {
	where, args := "1", []any{}
	if f.OwnerID != nil {
		where, args = "d.owner_id = ?", append(args, *f.OwnerID)
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
func (s *DatasetService) UpdateDataset(ctx context.Context, id int64, upd mapcommons.MetadataUpdate) (*mapcommons.Dataset, error) {
	var sets []string
	var args []any
	for _, f := range upd.Fields() {
		if *f.Ptr != nil {
			sets = append(sets, f.Name+" = ?") // column names are the fixed parameter names
			args = append(args, **f.Ptr)
		}
	}
	sets = append(sets, "updated_at = ?")
	args = append(args, s.db.now(), id)
	res, err := s.db.write.ExecContext(ctx, `UPDATE datasets SET `+strings.Join(sets, ", ")+` WHERE id = ?`, args...)
	if err != nil {
		return nil, formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, datasetNotFound(formatError(sql.ErrNoRows), id)
	}
	return findDataset(ctx, s.db.write, id)
}

// DeleteDataset implements mapcommons.DatasetService.
func (s *DatasetService) DeleteDataset(ctx context.Context, id int64) error {
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM datasets WHERE id = ?`, id)
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return datasetNotFound(formatError(sql.ErrNoRows), id)
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+featureTable(id)); err != nil {
		return formatError(err)
	}
	if err := tx.Commit(); err != nil {
		return formatError(err)
	}
	// Give the freed pages back to the file system; failure here loses nothing.
	_, _ = s.db.write.ExecContext(ctx, `PRAGMA incremental_vacuum`)
	return nil
}

// CreateDataset implements mapcommons.DatasetService. The catalogue row, the
// feature table and every feature are written in one transaction: a failure
// or a crash at any point leaves nothing behind.
func (s *DatasetService) CreateDataset(ctx context.Context, ds *mapcommons.Dataset, src mapcommons.FeatureSource) error {
	attrs := src.Attributes()
	if len(attrs) > mapcommons.MaxAttributes {
		return mapcommons.Errorf(mapcommons.EINVALID, "too many attribute columns (%d, at most %d)", len(attrs), mapcommons.MaxAttributes)
	}
	if ds.State == "" {
		ds.State = mapcommons.StateComplete
	}
	if ds.DataType == "" {
		ds.DataType = "Dataset"
	}
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()

	now := s.db.now()
	var owner any
	if ds.OwnerID != 0 {
		owner = ds.OwnerID
	}
	m := &ds.Metadata
	res, err := tx.ExecContext(ctx, `INSERT INTO datasets (owner_id, title, description, author, tags, metadata_url,
		citation_url, contact_name, contact_address, contact_phone, process_notes, type, data_type, state, crs,
		prj, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		owner, m.Title, m.Description, m.Author, m.Tags, m.MetadataURL, m.CitationURL, m.ContactName,
		m.ContactAddress, m.ContactPhone, m.ProcessNotes, ds.Type, ds.DataType, ds.State, ds.CRS, ds.PRJ, now, now)
	if err != nil {
		return formatError(err)
	}
	if ds.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	table := featureTable(ds.ID)
	cols := []string{"pos INTEGER PRIMARY KEY", "geom BLOB", "minx REAL", "miny REAL", "maxx REAL", "maxy REAL"}
	for i, a := range attrs {
		cols = append(cols, attrColumn(i)+" "+columnType(a.Type))
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE `+table+` (`+strings.Join(cols, ", ")+`)`); err != nil {
		return formatError(err)
	}

	sum, err := s.ingest(ctx, tx, table, attrs, src)
	if err != nil {
		return err
	}
	if err := sum.medians(ctx, tx, table, attrs); err != nil {
		return err
	}
	ds.FeatureCount = sum.count
	ds.Attributes = attrs
	ds.GeometryTypes = sum.geometryTypes()
	ds.GeometryMask = sum.mask
	ds.Stats = sum.stats(attrs)
	ds.Extent = nil
	var ext [4]any
	if !sum.extent.IsEmpty() {
		e := sum.extent
		ds.Extent = &e
		ext = [4]any{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	attrJSON, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	statsJSON, err := json.Marshal(ds.Stats)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE datasets SET feature_count = ?, minx = ?, miny = ?, maxx = ?, maxy = ?,
		geometry_types = ?, geometry_mask = ?, attributes = ?, stats = ? WHERE id = ?`,
		ds.FeatureCount, ext[0], ext[1], ext[2], ext[3], strings.Join(ds.GeometryTypes, ","), ds.GeometryMask,
		string(attrJSON), string(statsJSON), ds.ID); err != nil {
		return formatError(err)
	}
	if err := tx.Commit(); err != nil {
		return formatError(err)
	}
	ds.CreatedAt, ds.UpdatedAt = parseTime(now), parseTime(now)
	if ds.OwnerID != 0 && ds.Owner == "" {
		var login string
		if err := s.db.read.QueryRowContext(ctx, `SELECT login FROM users WHERE id = ?`, ds.OwnerID).Scan(&login); err == nil {
			ds.Owner = login
		}
	}
	return nil
}

// summary is what an ingest learns about the features on the way in.
type summary struct {
	count  int64
	extent wkb.Rect
	kinds  [3]bool // point, line, area
	mask   uint32  // 1<<t for each top-level WKB type t
	acc    []*mapcommons.StatsAccumulator
}

func (s *summary) geometryTypes() []string {
	out := []string{}
	for i, name := range []string{"point", "line", "area"} {
		if s.kinds[i] {
			out = append(out, name)
		}
	}
	return out
}

func (s *summary) addKinds(g wkb.Geom) {
	switch g.Type {
	case wkb.Point, wkb.MultiPoint:
		s.kinds[0] = true
	case wkb.LineString, wkb.MultiLineString:
		s.kinds[1] = true
	case wkb.Polygon, wkb.MultiPolygon:
		s.kinds[2] = true
	case wkb.GeometryCollection:
		for _, p := range g.Parts {
			s.addKinds(p)
		}
	}
}

func (s *summary) stats(attrs []mapcommons.Attribute) map[string]mapcommons.Stats {
	out := map[string]mapcommons.Stats{}
	for i, a := range s.acc {
		if a == nil {
			continue
		}
		if st, ok := a.Result(); ok {
			for _, v := range []*float64{&st.Min, &st.Max, &st.Mean, &st.Median, &st.Stdev, &st.Variance} {
				if math.IsNaN(*v) || math.IsInf(*v, 0) {
					*v = 0 // JSON has no such numbers; only reachable near the float limits
				}
			}
			out[attrs[i].Name] = st
		}
	}
	return out
}

// medians fills in from SQL the medians an ingest could not keep in memory.
func (s *summary) medians(ctx context.Context, tx *sql.Tx, table string, attrs []mapcommons.Attribute) error {
	for i, a := range s.acc {
		if a == nil || a.Keep || a.Count() == 0 {
			continue
		}
		col := attrColumn(i)
		n := a.Count()
		rows, err := tx.QueryContext(ctx, `SELECT `+col+` FROM `+table+` WHERE `+col+` IS NOT NULL ORDER BY `+col+` LIMIT 2 OFFSET ?`, (n-1)/2)
		if err != nil {
			return formatError(err)
		}
		var vals []float64
		for rows.Next() {
			var v float64
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
			vals = append(vals, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return formatError(err)
		}
		med := math.NaN()
		switch {
		case len(vals) == 0:
		case n%2 == 1 || len(vals) == 1:
			med = vals[0]
		default:
			med = (vals[0] + vals[1]) / 2
		}
		a.SetMedian(med)
	}
	return nil
}

// batch is a run of rows ready for one multi-row INSERT.
type batch struct {
	args []any
	rows int
}

const maxBatchRows = 128

// ingest streams src into table: one goroutine reads and encodes features
// while this one inserts them, so parsing and SQLite use both cores.
func (s *DatasetService) ingest(ctx context.Context, tx *sql.Tx, table string, attrs []mapcommons.Attribute, src mapcommons.FeatureSource) (*summary, error) {
	ncol := 6 + len(attrs)
	per := maxBatchRows
	if per*ncol > 30000 { // SQLite's limit on bound parameters is 32766
		per = 30000 / ncol
	}
	sum := &summary{extent: wkb.EmptyRect, acc: make([]*mapcommons.StatsAccumulator, len(attrs))}
	for i, a := range attrs {
		if a.Type.Numeric() {
			sum.acc[i] = mapcommons.NewStatsAccumulator()
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan *batch, 4)
	free := make(chan *batch, 6)
	errc := make(chan error, 1)
	go func() {
		defer close(batches)
		errc <- s.produce(ctx, src, attrs, per, sum, batches, free)
	}()

	placeholders := func(rows int) string {
		one := "(" + strings.TrimSuffix(strings.Repeat("?,", ncol), ",") + ")"
		return `INSERT INTO ` + table + ` VALUES ` + strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
	}
	full, err := tx.PrepareContext(ctx, placeholders(per))
	if err != nil {
		return nil, formatError(err)
	}
	defer full.Close()
	var insertErr error
	for b := range batches {
		if insertErr == nil {
			if b.rows == per {
				_, insertErr = full.ExecContext(ctx, b.args...)
			} else {
				_, insertErr = tx.ExecContext(ctx, placeholders(b.rows), b.args...)
			}
			if insertErr != nil {
				cancel() // stop the producer; drain what it already sent
			}
		}
		select {
		case free <- b:
		default:
		}
	}
	if err := <-errc; err != nil && insertErr == nil {
		return nil, err
	}
	if insertErr != nil {
		return nil, formatError(insertErr)
	}
	return sum, nil
}

// produce reads src into batches, accumulating the summary.
func (s *DatasetService) produce(ctx context.Context, src mapcommons.FeatureSource, attrs []mapcommons.Attribute,
	per int, sum *summary, out chan<- *batch, free chan *batch) error {
	ncol := 6 + len(attrs)
	kept := 0
	var b *batch
	for {
		f, err := src.Next()
		if errors.Is(err, mapcommons.EOF) {
			break
		} else if err != nil {
			return err
		}
		if len(f.Values) != len(attrs) {
			return fmt.Errorf("feature %d has %d values for %d attributes", sum.count, len(f.Values), len(attrs))
		}
		if b == nil {
			select {
			case b = <-free:
				b.args, b.rows = b.args[:0], 0
			default:
				b = &batch{args: make([]any, 0, per*ncol)}
			}
		}
		var geom any
		var minx, miny, maxx, maxy any
		if x, y, ok := wkb.StoredPoint(f.Geometry); ok {
			minx, miny, maxx, maxy = x, y, x, y
			sum.extent = sum.extent.Extend(wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y})
			sum.kinds[0] = true
			sum.mask |= 1 << wkb.Point
			geom = append([]byte(nil), f.Geometry...)
		} else if len(f.Geometry) > 0 {
			g, err := wkb.Decode(f.Geometry)
			if err != nil {
				return mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", sum.count, err)
			}
			if r, ok := g.Bounds(); ok {
				minx, miny, maxx, maxy = r.MinX, r.MinY, r.MaxX, r.MaxY
				sum.extent = sum.extent.Extend(r)
			}
			sum.addKinds(g)
			sum.mask |= 1 << g.Type
			geom = append([]byte(nil), f.Geometry...)
		}
		b.args = append(b.args, sum.count, geom, minx, miny, maxx, maxy)
		for i, v := range f.Values {
			if a := sum.acc[i]; a != nil {
				switch n := v.(type) {
				case int64:
					a.Add(float64(n))
				case float64:
					a.Add(n)
				}
				if a.Keep {
					kept++
				}
			}
			if bv, ok := v.(bool); ok {
				if bv {
					v = int64(1)
				} else {
					v = int64(0)
				}
			}
			b.args = append(b.args, v)
		}
		if kept > s.MedianBudget {
			for _, a := range sum.acc {
				if a != nil {
					a.Drop()
				}
			}
		}
		sum.count++
		b.rows++
		if b.rows == per {
			select {
			case out <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			b = nil
		}
	}
	if b != nil && b.rows > 0 {
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
