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
//     "ogc_fid" INTEGER PRIMARY KEY (the features' stable ids, Feature.ID,
//     when they have them; 1, 2, … in scan order when not), one column per
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
// bytes a feature, 16 when ids are sparse). WriteFile checks ctx every 256
// features and while building the index, and removes the file on any error.
package spatialite

import (
	"context"
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
func GeometryTypeName(code int) string { return sqlitebulk.TypeName(code) }

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

// WriteFile writes the features of scan, described by m, as a new
// SpatiaLite database at path (created, or truncated when it exists). It
// stops with ctx's error when ctx ends. On any error the file is removed.
func WriteFile(ctx context.Context, path string, m format.Meta, scan format.Scan) error {
	table := TableName(m.Name)
	idx := "idx_" + table + "_" + GeometryColumn
	declared := sqlitebulk.GeometryCode(m.GeometryMask)
	// ogc_fid is the feature's id (Feature.ID, from a store), or 1, 2, …
	// in order for features without one (see sqlitebulk.LoadFeatures).
	return sqlitebulk.WriteLayer(ctx, path, "spatialite", sqlitebulk.Layer{
		FeatureTable: sqlitebulk.FeatureTable{
			Table: table, Geometry: GeometryColumn, GeometryAt: len(m.Attributes),
			Index: idx, Extent: m.Extent, Encode: encode, FID: FIDColumn,
		},
		Attributes: m.Attributes, ColumnType: columnType,
		FIDType:      "INTEGER PRIMARY KEY",
		GeometryType: GeometryTypeName(declared),
		IndexColumns: "pkid, xmin, xmax, ymin, ymax",
		Schema:       metadataSQL + srsSQL,
		Finish: func(db *sqlitebulk.File, loaded sqlitebulk.Loaded) error {
			return finish(db, table, idx, declared, loaded)
		},
	}, scan)
}

// finish registers the table loaded in SpatiaLite's geometry_columns and
// the tables beside it, with its statistics, and creates its triggers.
func finish(db *sqlitebulk.File, table, idx string, declared int, loaded sqlitebulk.Loaded) error {
	now := time.Now().UTC()
	inserted := now.Format(sqlitebulk.TimeLayout)
	verified := now.Add(time.Millisecond).Format(sqlitebulk.TimeLayout) // GDAL trusts statistics newer than the last change
	minX, minY, maxX, maxY := loaded.Bounds()
	if err := db.Exec(`INSERT INTO geometry_columns (f_table_name, f_geometry_column, geometry_type, coord_dimension, srid, spatial_index_enabled) VALUES (?1, ?2, ?3, 2, ?4, 1);
INSERT INTO geometry_columns_auth (f_table_name, f_geometry_column, read_only, hidden) VALUES (?1, ?2, 0, 0);
INSERT INTO geometry_columns_time (f_table_name, f_geometry_column, last_insert) VALUES (?1, ?2, ?5);
INSERT INTO geometry_columns_statistics (f_table_name, f_geometry_column, last_verified, row_count, extent_min_x, extent_min_y, extent_max_x, extent_max_y) VALUES (?1, ?2, ?6, ?7, ?8, ?9, ?10, ?11);`,
		table, GeometryColumn, int64(loaded.TypeCode(declared)), int64(SRID), inserted, verified, loaded.Count, minX, minY, maxX, maxY); err != nil {
		return err
	}
	return db.Exec(triggersSQL(table, GeometryColumn, idx))
}

// encode is the FeatureTable.Encode of SpatiaLite: NULL for no geometry
// and for an empty one, every other indexed.
func encode(buf, g []byte) (blob []byte, typ uint32, env wkb.Rect, indexed bool, err error) {
	blob, mbr, ok, err := AppendGeometry(buf, g, SRID)
	if err != nil || !ok {
		return nil, 0, mbr, false, err
	}
	return blob, uint32(blob[39] & 7), mbr, true, nil // the class, 1..7
}

var (
	quote   = sqlitebulk.Quote
	literal = sqlitebulk.Literal
)
