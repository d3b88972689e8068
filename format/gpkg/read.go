package gpkg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// SRS is the spatial reference system of a feature table, as its
// gpkg_spatial_ref_sys row gives it.
type SRS struct {
	ID           int32  // srs_id: 4326 WGS 84, 0 undefined geographic, -1 undefined Cartesian, others by definition
	Name         string // srs_name
	Organization string // e.g. "EPSG"
	OrgID        int32  // the organization's code
	Definition   string // OGC WKT
}

// LonLat reports whether the SRS is WGS 84 longitude/latitude or an
// undefined geographic one, whose coordinates are taken as they are.
func (s SRS) LonLat() bool {
	return s.ID == 0 || s.ID == 4326 || strings.EqualFold(s.Organization, "EPSG") && s.OrgID == 4326 ||
		strings.EqualFold(s.Organization, "OGC") && s.OrgID == 84
}

// Reader reads the features of one feature table of a GeoPackage. It is a
// mapcommons.FeatureSource; Close it when done. Opening follows the
// GeoPackage's own catalogue (gpkg_contents, gpkg_geometry_columns,
// gpkg_spatial_ref_sys); the file is opened read-only with SQLite's
// defences for untrusted files on (no schema functions, cell checks).
type Reader struct {
	db     *sql.DB
	ctx    context.Context
	rows   *sql.Rows
	table  string
	ident  string // the table's identifier (or its name)
	srs    SRS
	attrs  []mapcommons.Attribute
	cols   []string // the attribute columns, then the geometry column
	gcol   string
	scan   []any
	vals   []any
	feat   mapcommons.Feature
	geom   []byte
	pos    int64
	sticky format.Sticky
	closed bool
}

var _ mapcommons.FeatureSource = (*Reader)(nil)

func invalid(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "gpkg: "+format, args...)
}

// Open opens the GeoPackage at path and the feature table named layer
// (its table_name; "" for the first feature table, by name). ctx bounds
// every query the Reader makes. Not a GeoPackage, no feature table, no
// such layer: EINVALID saying which layers there are.
func Open(ctx context.Context, path, layer string) (*Reader, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	r := &Reader{db: db, ctx: ctx}
	if err := r.open(layer); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) open(layer string) error {
	ctx := r.ctx
	for _, p := range []string{"PRAGMA trusted_schema=OFF", "PRAGMA cell_size_check=ON", "PRAGMA query_only=ON", "PRAGMA mmap_size=0"} {
		if _, err := r.db.ExecContext(ctx, p); err != nil {
			return notGPKG(err)
		}
	}
	var magic int
	if err := r.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&magic); err != nil {
		return notGPKG(err)
	}
	var n int
	if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('gpkg_contents', 'gpkg_geometry_columns', 'gpkg_spatial_ref_sys')`).Scan(&n); err != nil {
		return notGPKG(err)
	}
	if n != 3 {
		return invalid("not a GeoPackage: it lacks the gpkg_contents, gpkg_geometry_columns and gpkg_spatial_ref_sys tables")
	}
	rows, err := r.db.QueryContext(ctx, `SELECT c.table_name, coalesce(c.identifier, ''), g.column_name, g.srs_id
		FROM gpkg_contents c JOIN gpkg_geometry_columns g ON g.table_name = c.table_name
		WHERE c.data_type = 'features' ORDER BY c.table_name LIMIT 1000`)
	if err != nil {
		return notGPKG(err)
	}
	defer rows.Close()
	var names []string
	found := false
	for rows.Next() {
		var table, ident, gcol string
		var srsID int32
		if err := rows.Scan(&table, &ident, &gcol, &srsID); err != nil {
			return notGPKG(err)
		}
		names = append(names, table)
		if !found && (layer == "" || strings.EqualFold(layer, table)) {
			r.table, r.ident, r.gcol, r.srs.ID = table, ident, gcol, srsID
			found = true
		}
	}
	if err := rows.Err(); err != nil {
		return notGPKG(err)
	}
	rows.Close()
	switch {
	case len(names) == 0:
		return invalid("the GeoPackage holds no feature table")
	case !found:
		return invalid("layer %q: no such feature table; the GeoPackage has %s", layer, strings.Join(names, ", "))
	}
	if r.ident == "" {
		r.ident = r.table
	}
	if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, r.table).Scan(&n); err != nil || n != 1 {
		return invalid("layer %q: not a table of the file", r.table)
	}
	err = r.db.QueryRowContext(ctx, `SELECT srs_name, organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?`,
		r.srs.ID).Scan(&r.srs.Name, &r.srs.Organization, &r.srs.OrgID, &r.srs.Definition)
	if errors.Is(err, sql.ErrNoRows) {
		return invalid("layer %q: its srs_id %d is not in gpkg_spatial_ref_sys", r.table, r.srs.ID)
	} else if err != nil {
		return notGPKG(err)
	}
	if err := r.columns(); err != nil {
		return err
	}
	q := make([]string, len(r.cols))
	for i, c := range r.cols {
		q[i] = quote(c)
	}
	if r.rows, err = r.db.QueryContext(ctx, `SELECT `+strings.Join(q, ", ")+` FROM `+quote(r.table)+` ORDER BY _rowid_`); err != nil {
		return notGPKG(err)
	}
	r.scan = make([]any, len(r.cols))
	r.vals = make([]any, len(r.cols))
	for i := range r.scan {
		r.scan[i] = &r.vals[i]
	}
	r.feat.Values = make([]any, len(r.attrs))
	return nil
}

// columns reads the table's columns: each but the integer primary key,
// the geometry and BLOBs is an attribute, typed by its declared type.
func (r *Reader) columns() error {
	rows, err := r.db.QueryContext(r.ctx, `SELECT name, type, pk FROM pragma_table_info(?)`, r.table)
	if err != nil {
		return notGPKG(err)
	}
	defer rows.Close()
	hasGeom := false
	for rows.Next() {
		var name, typ string
		var pk int
		if err := rows.Scan(&name, &typ, &pk); err != nil {
			return notGPKG(err)
		}
		if strings.EqualFold(name, r.gcol) {
			hasGeom = true
			continue
		}
		t, ok := attrType(typ)
		if !ok || pk > 0 && t == mapcommons.AttrInteger {
			continue
		}
		if len(r.attrs) >= mapcommons.MaxAttributes {
			return invalid("layer %q: more than %d columns", r.table, mapcommons.MaxAttributes)
		}
		r.attrs = append(r.attrs, mapcommons.Attribute{Name: name, Type: t})
		r.cols = append(r.cols, name)
	}
	if err := rows.Err(); err != nil {
		return notGPKG(err)
	}
	if !hasGeom {
		return invalid("layer %q: no geometry column %q", r.table, r.gcol)
	}
	r.cols = append(r.cols, r.gcol)
	return mapcommons.NormalizeAttributes(r.attrs)
}

// attrType maps a declared column type (GeoPackage's, or SQLite's affinity
// rules for others) to an attribute type; false for BLOBs and geometries.
func attrType(decl string) (mapcommons.AttrType, bool) {
	t := strings.ToUpper(strings.TrimSpace(decl))
	switch {
	case t == "BOOLEAN":
		return mapcommons.AttrBoolean, true
	case t == "DATE" || t == "DATETIME" || t == "TIMESTAMP":
		return mapcommons.AttrDate, true
	case strings.Contains(t, "INT"):
		return mapcommons.AttrInteger, true
	case strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT"):
		return mapcommons.AttrString, true
	case t == "" || strings.Contains(t, "BLOB") || geometryTypes[t]:
		return "", false
	}
	return mapcommons.AttrFloat, true // REAL, FLOAT, DOUBLE, NUMERIC …
}

var geometryTypes = map[string]bool{"GEOMETRY": true, "POINT": true, "LINESTRING": true, "POLYGON": true, "MULTIPOINT": true,
	"MULTILINESTRING": true, "MULTIPOLYGON": true, "GEOMETRYCOLLECTION": true, "CURVEPOLYGON": true, "MULTICURVE": true, "MULTISURFACE": true,
	"CIRCULARSTRING": true, "COMPOUNDCURVE": true, "CURVE": true, "SURFACE": true}

func notGPKG(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return invalid("not a readable GeoPackage: %v", err)
}

// Table is the feature table read; Identifier its human name (the table
// name when it has none).
func (r *Reader) Table() string      { return r.table }
func (r *Reader) Identifier() string { return r.ident }

// SRS is the spatial reference system of the table's geometries.
func (r *Reader) SRS() SRS { return r.srs }

// Attributes returns the attribute columns, normalised by
// mapcommons.NormalizeAttributes.
func (r *Reader) Attributes() []mapcommons.Attribute { return r.attrs }

// Next returns the next feature (rows in rowid order), Geometry as 2-D WKB
// in the table's SRS (nil for NULL or an empty geometry), or io.EOF after
// the last. The feature is reused by the following call.
func (r *Reader) Next() (*mapcommons.Feature, error) { return r.sticky.Next(r.next) }

func (r *Reader) next() (*mapcommons.Feature, error) {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return nil, notGPKG(err)
		}
		return nil, mapcommons.EOF
	}
	if err := r.rows.Scan(r.scan...); err != nil {
		return nil, notGPKG(err)
	}
	r.pos++
	for i, a := range r.attrs {
		v, err := convert(a.Type, r.vals[i])
		if err != nil {
			return nil, invalid("layer %q: row %d: %s: %v", r.table, r.pos, a.OriginalName, err)
		}
		r.feat.Values[i] = v
	}
	r.feat.Geometry = nil
	switch g := r.vals[len(r.vals)-1].(type) {
	case nil:
	case []byte:
		h, geom, err := Decode(g)
		if err != nil {
			return nil, invalid("layer %q: row %d: %v", r.table, r.pos, err)
		}
		if h.SRSID != r.srs.ID && h.SRSID != 0 && !geom.IsEmpty() {
			return nil, invalid("layer %q: row %d: geometry in srs_id %d, the table's is %d", r.table, r.pos, h.SRSID, r.srs.ID)
		}
		if !geom.IsEmpty() {
			r.geom = geom.AppendWKB(r.geom[:0])
			if _, err := wkb.Normalize(r.geom); err != nil {
				return nil, invalid("layer %q: row %d: %v", r.table, r.pos, err)
			}
			r.feat.Geometry = r.geom
		}
	default:
		return nil, invalid("layer %q: row %d: the geometry is not a GeoPackage geometry BLOB", r.table, r.pos)
	}
	r.feat.Position = r.pos - 1
	return &r.feat, nil
}

// convert types one value of an attribute of type t.
func convert(t mapcommons.AttrType, v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		v = string(x)
	case time.Time:
		if t == mapcommons.AttrDate || t == mapcommons.AttrString {
			if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
				return x.Format("2006-01-02"), nil
			}
			return x.UTC().Format(time.RFC3339Nano), nil
		}
		return nil, fmt.Errorf("a time in a %s column", t)
	case bool:
		if x {
			v = int64(1)
		} else {
			v = int64(0)
		}
	}
	switch t {
	case mapcommons.AttrString, mapcommons.AttrDate:
		switch x := v.(type) {
		case string:
			return x, nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
	case mapcommons.AttrInteger:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return n, nil
			}
			if strings.TrimSpace(x) == "" {
				return nil, nil
			}
		}
	case mapcommons.AttrFloat:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil
			}
			return x, nil
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f, nil
			}
			if strings.TrimSpace(x) == "" {
				return nil, nil
			}
		}
	case mapcommons.AttrBoolean:
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		}
	}
	return nil, fmt.Errorf("%v is not a %s", v, t)
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.rows != nil {
		r.rows.Close()
	}
	return r.db.Close()
}
