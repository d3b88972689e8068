// Package spatialite writes a dataset as a SpatiaLite 4 database (the
// "spatialite" download, served as .sqlite): a plain SQLite file, made with
// modernc.org/sqlite and no SpatiaLite extension, that GDAL, QGIS and
// SpatiaLite itself open as a SpatiaLite database with one spatial table.
//
// The file holds:
//
//   - SpatiaLite's metadata tables in the version 4 layout (which 5 keeps):
//     spatial_ref_sys with the undefined systems -1 and 0 and EPSG:4326 only;
//     geometry_columns with the one table; geometry_columns_statistics (the
//     feature count and extent, which GDAL reads instead of scanning),
//     geometry_columns_time and geometry_columns_auth; the views_ and virts_
//     tables, geometry_columns_field_infos and spatialite_history empty.
//   - The feature table, named Meta.Name lower-cased (TableName; SpatiaLite
//     keeps table and column names lower-case in geometry_columns, and GDAL
//     looks its statistics up by the table's own name, so they must agree):
//     "ogc_fid" INTEGER PRIMARY KEY (1, 2, … in scan order), one column per
//     attribute, then "geometry" in SpatiaLite's BLOB format (AppendGeometry),
//     declared with the geometry type's name as AddGeometryColumn() does.
//   - The R*Tree spatial index idx_<table>_geometry (pkid, xmin, xmax, ymin,
//     ymax), built after the load as a packed tree (sqlitebulk.RTree)
//     rather than by triggers row by row, and then the triggers SpatiaLite
//     puts on a spatial table, so that edits made with SpatiaLite loaded
//     keep index and statistics right.
//
// Attribute columns keep the attribute names (quoted, so any name is valid);
// a name equal to ogc_fid or geometry (ignoring case) or to an earlier
// column gets the first free suffix "_2", "_3", …; NUL bytes become "_".
// Types: integer BIGINT (GDAL reads INTEGER as a 32-bit field), float
// DOUBLE, boolean BOOLEAN (0 or 1), string and date TEXT (dates are
// free-form strings). NaN becomes NULL.
//
// The geometry type: when Meta.GeometryMask names a single WKB type, that
// type (1 point … 7 collection), otherwise 0, GEOMETRY, for mixed or no
// geometries. A feature of another type than a single declared one widens
// the registered type to GEOMETRY. Coordinates are 2-D, SRID 4326.
// Empty geometries are stored as NULL (SpatiaLite has none).
//
// The load is one transaction on a scratch connection (no journal, no
// syncs) with multi-row INSERTs; features stream from the scan, and memory
// stays bounded: SQLite's page cache (32 MiB), the R*Tree's sort runs
// (8 MiB, spilled to a temporary file beyond) and its row-to-leaf map (4
// bytes a feature). WriteFile checks ctx every 256 features and while
// building the index, and removes the file on any error.
package spatialite

import (
	"context"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
)

// Names of the fixed columns.
const (
	FIDColumn      = "ogc_fid"
	GeometryColumn = "geometry"
	SRID           = 4326
)

// GeometryTypeName is the SQL type name of a SpatiaLite geometry type code
// (0 GEOMETRY, 1 POINT … 7 GEOMETRYCOLLECTION).
func GeometryTypeName(code int) string {
	names := [...]string{"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}
	if code < 0 || code >= len(names) {
		return ""
	}
	return names[code]
}

// TableName returns the name of the feature table WriteFile makes of a
// Meta.Name: lower-cased, "layer" when empty, prefixed "layer_" when it
// would clash with SpatiaLite's or SQLite's own tables.
func TableName(name string) string {
	t := sqlitebulk.ASCIILower(strings.ReplaceAll(name, "\x00", "_"))
	if strings.TrimSpace(t) == "" {
		return "layer"
	}
	switch t {
	case "spatialindex", "elementarygeometries", "knn", "knn2", "data_licenses", "sql_statements_log", "layer_statistics", "geom_cols_ref_sys":
		return "layer_" + t // SpatiaLite's own tables
	}
	// SQLite's, SpatiaLite's metadata and spatial indexes (which readers hide).
	for _, p := range []string{"sqlite_", "spatial_ref_sys", "spatialite_", "geometry_columns", "views_geometry_columns", "virts_geometry_columns", "vector_layers", "idx_"} {
		if strings.HasPrefix(t, p) {
			return "layer_" + t
		}
	}
	return t
}

// typeCode returns the geometry type code declared for a mask of WKB types.
func typeCode(mask uint32) int {
	mask &= 0xFE // types 1..7
	if bits.OnesCount32(mask) == 1 {
		return bits.TrailingZeros32(mask)
	}
	return 0
}

func columnType(t mapcommons.AttrType) string {
	switch t {
	case mapcommons.AttrInteger:
		return "BIGINT" // INTEGER would read as 32-bit Integer in GDAL
	case mapcommons.AttrFloat:
		return "DOUBLE"
	case mapcommons.AttrBoolean:
		return "BOOLEAN"
	}
	return "TEXT"
}

// timeLayout is SpatiaLite's timestamp form.
const timeLayout = "2006-01-02T15:04:05.000Z"

// checkEvery is how many rows pass between looks at the context.
const checkEvery = 256

// WriteFile writes the features of scan, described by m, as a new
// SpatiaLite database at path (created, or truncated when it exists). It
// stops with ctx's error when ctx ends. On any error the file is removed.
func WriteFile(ctx context.Context, path string, m format.Meta, scan format.Scan) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	db, err := sqlitebulk.Create(path, cacheKiB)
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("spatialite: %w", err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("spatialite: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if err := write(ctx, db, m, scan); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("spatialite: %w", err)
	}
	return nil
}

// cacheKiB is the page cache of the file being written; rowsPerStmt the
// rows of one INSERT.
const (
	cacheKiB    = 32 << 10
	rowsPerStmt = 64
)

func write(ctx context.Context, db *sqlitebulk.File, m format.Meta, scan format.Scan) (err error) {
	table := TableName(m.Name)
	idx := "idx_" + table + "_" + GeometryColumn
	names := make([]string, len(m.Attributes))
	for i, a := range m.Attributes {
		names[i] = a.Name
	}
	cols := sqlitebulk.ColumnNames(names, FIDColumn, GeometryColumn)
	declared := typeCode(m.GeometryMask)

	var ddl strings.Builder
	ddl.WriteString(metadataSQL)
	ddl.WriteString(srsSQL)
	ddl.WriteString("CREATE TABLE " + quote(table) + " (\n" + quote(FIDColumn) + " INTEGER PRIMARY KEY")
	for i, a := range m.Attributes {
		ddl.WriteString(",\n" + quote(cols[i]) + " " + columnType(a.Type))
	}
	ddl.WriteString(",\n" + quote(GeometryColumn) + " " + GeometryTypeName(declared) + ");\n")
	ddl.WriteString("CREATE VIRTUAL TABLE " + quote(idx) + " USING rtree(pkid, xmin, xmax, ymin, ymax);\n")
	if err := db.Exec("BEGIN"); err != nil {
		return err
	}
	if err := db.Exec(ddl.String()); err != nil {
		return err
	}

	// ogc_fid is left to SQLite: the next rowid of an INTEGER PRIMARY KEY
	// is the largest plus one, so the rows get 1, 2, … in order.
	var ins strings.Builder
	ins.WriteString("INSERT INTO " + quote(table) + " (")
	for _, c := range cols {
		ins.WriteString(quote(c) + ", ")
	}
	ins.WriteString(quote(GeometryColumn) + ") VALUES ")
	rows, err := db.NewBatch(ins.String(), len(cols)+1, rowsPerStmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	var extentHint wkb.Rect
	if m.Extent != nil {
		extentHint = *m.Extent
	}
	tree := sqlitebulk.NewRTree(db, idx, extentHint, "")
	defer tree.Close()

	var (
		n      int64
		mask   uint32
		extent = wkb.EmptyRect
		blobs  = sqlitebulk.NewBlobs(rows.PerStmt) // a buffer per row of a batch
		geomAt = len(cols)
	)
	err = scan(func(f *mapcommons.Feature) error {
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n++
		args := rows.Row()
		for i := range cols {
			var v any
			if i < len(f.Values) {
				v = f.Values[i]
			}
			args[i].Value = sqlitebulk.Value(v)
		}
		slot := rows.Slot()
		blob, mbr, ok, err := AppendGeometry(blobs.Buf(slot), f.Geometry, SRID)
		if err != nil {
			return fmt.Errorf("feature %d: %w", f.Position, err)
		}
		if ok {
			args[geomAt].Value = blobs.Set(slot, blob)
			mask |= 1 << (blob[39] & 7) // the class, 1..7
			extent = extent.Extend(mbr)
		} else {
			args[geomAt].Value = nil
		}
		if err := rows.Add(); err != nil { // may insert the rows before too
			return fmt.Errorf("features up to %d: %w", f.Position, err)
		}
		if ok {
			if err := tree.Add(n, mbr); err != nil {
				return fmt.Errorf("feature %d: spatial index: %w", f.Position, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := rows.Flush(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := tree.Build(ctx); err != nil {
		return fmt.Errorf("spatial index: %w", err)
	}

	code := declared
	if code != 0 && mask&^(1<<code) != 0 {
		code = 0
	}
	now := time.Now().UTC()
	inserted := now.Format(timeLayout)
	verified := now.Add(time.Millisecond).Format(timeLayout) // GDAL trusts statistics newer than the last change
	var minX, minY, maxX, maxY any
	if !extent.IsEmpty() {
		minX, minY, maxX, maxY = extent.MinX, extent.MinY, extent.MaxX, extent.MaxY
	}
	if err := db.Exec(`INSERT INTO geometry_columns (f_table_name, f_geometry_column, geometry_type, coord_dimension, srid, spatial_index_enabled) VALUES (?1, ?2, ?3, 2, ?4, 1);
INSERT INTO geometry_columns_auth (f_table_name, f_geometry_column, read_only, hidden) VALUES (?1, ?2, 0, 0);
INSERT INTO geometry_columns_time (f_table_name, f_geometry_column, last_insert) VALUES (?1, ?2, ?5);
INSERT INTO geometry_columns_statistics (f_table_name, f_geometry_column, last_verified, row_count, extent_min_x, extent_min_y, extent_max_x, extent_max_y) VALUES (?1, ?2, ?6, ?7, ?8, ?9, ?10, ?11);`,
		table, GeometryColumn, int64(code), int64(SRID), inserted, verified, n, minX, minY, maxX, maxY); err != nil {
		return err
	}
	if err := db.Exec(triggersSQL(table, GeometryColumn, idx)); err != nil {
		return err
	}
	return db.Exec("COMMIT")
}

var (
	quote   = sqlitebulk.Quote
	literal = sqlitebulk.Literal
)
