// Package gpkg writes a dataset as an OGC GeoPackage 1.2 (.gpkg): an SQLite
// file made with modernc.org/sqlite with one features table, for GDAL (and
// so QGIS) and the other GeoPackage readers.
//
// The file holds:
//
//   - application_id 'GPKG' and user_version 10200 (GeoPackage 1.2: the
//     file uses nothing of 1.3, and 1.2 is what the most readers know).
//   - gpkg_spatial_ref_sys with the required rows -1, 0 and 4326.
//   - gpkg_contents: one 'features' row for the table, identifier
//     Meta.Title (the table name when blank), description
//     Meta.Description, last_change Meta.Updated (now when zero), the
//     extent of the features written and srs_id 4326.
//   - gpkg_geometry_columns: column "geom", the geometry type (below),
//     srs_id 4326, z 0, m 0.
//   - The features table, named Meta.Name (see TableName): "fid" INTEGER
//     PRIMARY KEY AUTOINCREMENT (the features' stable ids, Feature.ID, when
//     they have them; 1, 2, … in scan order when not), "geom" declared
//     with the geometry type name, then one column per attribute.
//   - The RTree Spatial Index extension: rtree_<table>_geom, built after the
//     load as a packed tree (sqlitebulk.RTree) rather than by the triggers
//     row by row, its gpkg_extensions row (scope write-only), and
//     its six triggers from the specification, created after the load
//     (they call ST_IsEmpty, ST_MinX …, which GeoPackage readers such as
//     GDAL provide; plain SQLite would fail in them at the first insert).
//   - GDAL's gpkg_ogr_contents with the feature count and its two
//     triggers, so GDAL need not count the rows.
//
// Geometries are GeoPackage binary (AppendGeometry) around 2-D little-endian
// WKB, srs_id 4326; a feature without geometry has NULL; an empty geometry
// is stored with the empty flag and left out of the index.
//
// Attribute columns keep the attribute names (quoted, so any name is valid);
// a name equal to fid or geom (ignoring case) or to an earlier column gets
// the first free suffix "_2", "_3", …; NUL bytes become "_". Types: integer
// INTEGER (64-bit in GeoPackage), float REAL, boolean BOOLEAN, string and
// date TEXT (dates are free-form strings, not the ISO dates of DATE).
//
// The geometry type: when Meta.GeometryMask names a single WKB type, that
// type's name (POINT … GEOMETRYCOLLECTION), otherwise GEOMETRY, for mixed
// or no geometries. A feature of another type than a single declared one
// widens the registered type in gpkg_geometry_columns to GEOMETRY (the
// column's declared type stays: it is fixed before the first row).
//
// The load is one transaction on a scratch connection (no journal, no
// syncs) with multi-row INSERTs; features stream from the scan, and memory
// stays bounded: SQLite's page cache (32 MiB), the R*Tree's sort runs
// (8 MiB, spilled to a temporary file beyond) and its row-to-leaf map (4
// bytes a feature, 16 when ids are sparse). WriteFile checks ctx every 256
// features and while building the index, and removes the file on any error.
package gpkg

import (
	"context"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
)

// Names of the fixed columns, the SRS and the GeoPackage version.
const (
	FIDColumn      = "fid"
	GeometryColumn = "geom"
	SRSID          = 4326
	ApplicationID  = 0x47504B47 // "GPKG"
	UserVersion    = 10200
)

// GeometryTypeName returns the geometry_type_name declared for a mask of
// WKB types (bit 1<<t for type t): the type's name when there is one type,
// GEOMETRY otherwise.
func GeometryTypeName(mask uint32) string {
	return sqlitebulk.TypeName(sqlitebulk.GeometryCode(mask))
}

// TableName returns the name of the features table WriteFile makes of a
// Meta.Name: the name itself, "layer" when blank, prefixed "layer_" when it
// starts with a prefix GeoPackage or SQLite reserves (gpkg_, rtree_,
// sqlite_).
func TableName(name string) string {
	t := strings.ReplaceAll(name, "\x00", "_")
	if strings.TrimSpace(t) == "" {
		return "layer"
	}
	l := sqlitebulk.ASCIILower(t)
	for _, p := range []string{"gpkg_", "rtree_", "sqlite_"} {
		if strings.HasPrefix(l, p) {
			return "layer_" + t
		}
	}
	return t
}

func columnType(t mapcommons.AttrType) string {
	switch t {
	case mapcommons.AttrInteger:
		return "INTEGER"
	case mapcommons.AttrFloat:
		return "REAL"
	case mapcommons.AttrBoolean:
		return "BOOLEAN"
	}
	return "TEXT"
}

// WriteFile writes the features of scan, described by m, as a new
// GeoPackage at path (created, or truncated when it exists). It stops with
// ctx's error when ctx ends. On any error the file is removed.
func WriteFile(ctx context.Context, path string, m format.Meta, scan format.Scan) error {
	table := TableName(m.Name)
	rtree := "rtree_" + table + "_" + GeometryColumn
	declared := sqlitebulk.GeometryCode(m.GeometryMask)
	// fid is the feature's id (Feature.ID, from a store), or 1, 2, … in
	// order for features without one (see sqlitebulk.LoadFeatures).
	return sqlitebulk.WriteLayer(ctx, path, "gpkg", sqlitebulk.Layer{
		FeatureTable: sqlitebulk.FeatureTable{
			Table: table, Geometry: GeometryColumn, GeometryAt: 0,
			Index: rtree, Extent: m.Extent, Encode: encode, FID: FIDColumn,
		},
		Attributes: m.Attributes, ColumnType: columnType,
		FIDType:      "INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL",
		GeometryType: sqlitebulk.TypeName(declared),
		IndexColumns: "id, minx, maxx, miny, maxy",
		Schema: "PRAGMA application_id = " + strconv.Itoa(ApplicationID) + ";\n" +
			"PRAGMA user_version = " + strconv.Itoa(UserVersion) + ";\n" + metadataSQL,
		Finish: func(db *sqlitebulk.File, loaded sqlitebulk.Loaded) error {
			return finish(db, m, table, rtree, declared, loaded)
		},
	}, scan)
}

// finish fills the GeoPackage's tables of contents, geometry columns and
// extensions for the features loaded, and creates the index's triggers.
func finish(db *sqlitebulk.File, m format.Meta, table, rtree string, declared int, loaded sqlitebulk.Loaded) error {
	updated := m.Updated
	if updated.IsZero() {
		updated = time.Now()
	}
	ident := m.Title
	if strings.TrimSpace(ident) == "" {
		ident = table
	}
	minX, minY, maxX, maxY := loaded.Bounds()
	if err := db.Exec(`INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change, min_x, min_y, max_x, max_y, srs_id) VALUES (?1, 'features', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);
INSERT INTO gpkg_geometry_columns (table_name, column_name, geometry_type_name, srs_id, z, m) VALUES (?1, ?10, ?11, ?9, 0, 0);
INSERT INTO gpkg_extensions (table_name, column_name, extension_name, definition, scope) VALUES (?1, ?10, 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only');
INSERT INTO gpkg_ogr_contents (table_name, feature_count) VALUES (?1, ?12);`,
		table, ident, m.Description, updated.UTC().Format(sqlitebulk.TimeLayout), minX, minY, maxX, maxY, int64(SRSID),
		GeometryColumn, sqlitebulk.TypeName(loaded.TypeCode(declared)), loaded.Count); err != nil {
		return err
	}
	return db.Exec(triggersSQL(table, GeometryColumn, FIDColumn, rtree))
}

// encode is the FeatureTable.Encode of a GeoPackage: NULL for no geometry,
// an empty one stored but not indexed.
func encode(buf, g []byte) (blob []byte, typ uint32, env wkb.Rect, indexed bool, err error) {
	if len(g) == 0 {
		return nil, 0, env, false, nil
	}
	blob, env, empty, err := AppendGeometry(buf, g, SRSID)
	if err != nil {
		return nil, 0, env, false, err
	}
	return blob, wkbType(blob), env, !empty, nil
}

var (
	quote   = sqlitebulk.Quote
	literal = sqlitebulk.Literal
)
