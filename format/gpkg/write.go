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
//     PRIMARY KEY AUTOINCREMENT (1, 2, … in scan order), "geom" declared
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
// bytes a feature). WriteFile checks ctx every 256 features and while
// building the index, and removes the file on any error.
package gpkg

import (
	"context"
	"fmt"
	"math/bits"
	"os"
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

var typeNames = [...]string{"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}

// GeometryTypeName returns the geometry_type_name declared for a mask of
// WKB types (bit 1<<t for type t): the type's name when there is one type,
// GEOMETRY otherwise.
func GeometryTypeName(mask uint32) string {
	return typeNames[typeCode(mask)]
}

func typeCode(mask uint32) int {
	mask &= 0xFE
	if bits.OnesCount32(mask) == 1 {
		return bits.TrailingZeros32(mask)
	}
	return 0
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

// timeLayout is the GeoPackage timestamp form.
const timeLayout = "2006-01-02T15:04:05.000Z"

const checkEvery = 256

// WriteFile writes the features of scan, described by m, as a new
// GeoPackage at path (created, or truncated when it exists). It stops with
// ctx's error when ctx ends. On any error the file is removed.
func WriteFile(ctx context.Context, path string, m format.Meta, scan format.Scan) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	db, err := sqlitebulk.Create(path, cacheKiB)
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("gpkg: %w", err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("gpkg: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if err := write(ctx, db, m, scan); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("gpkg: %w", err)
	}
	return nil
}

// cacheKiB is the page cache of the file being written; rowsPerStmt the
// rows of one INSERT.
const (
	cacheKiB    = 32 << 10
	rowsPerStmt = 64
)

func write(ctx context.Context, db *sqlitebulk.File, m format.Meta, scan format.Scan) error {
	table := TableName(m.Name)
	rtree := "rtree_" + table + "_" + GeometryColumn
	names := make([]string, len(m.Attributes))
	for i, a := range m.Attributes {
		names[i] = a.Name
	}
	cols := sqlitebulk.ColumnNames(names, FIDColumn, GeometryColumn)
	declared := typeCode(m.GeometryMask)

	var ddl strings.Builder
	ddl.WriteString("PRAGMA application_id = " + strconv.Itoa(ApplicationID) + ";\n")
	ddl.WriteString("PRAGMA user_version = " + strconv.Itoa(UserVersion) + ";\n")
	ddl.WriteString(metadataSQL)
	ddl.WriteString("CREATE TABLE " + quote(table) + " (\n" + quote(FIDColumn) + " INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,\n" + quote(GeometryColumn) + " " + typeNames[declared])
	for i, a := range m.Attributes {
		ddl.WriteString(",\n" + quote(cols[i]) + " " + columnType(a.Type))
	}
	ddl.WriteString(");\n")
	ddl.WriteString("CREATE VIRTUAL TABLE " + quote(rtree) + " USING rtree(id, minx, maxx, miny, maxy);\n")
	if err := db.Exec("BEGIN"); err != nil {
		return err
	}
	if err := db.Exec(ddl.String()); err != nil {
		return err
	}

	// fid is left to SQLite: AUTOINCREMENT numbers the rows 1, 2, … in order.
	var ins strings.Builder
	ins.WriteString("INSERT INTO " + quote(table) + " (" + quote(GeometryColumn))
	for _, c := range cols {
		ins.WriteString(", " + quote(c))
	}
	ins.WriteString(") VALUES ")
	rows, err := db.NewBatch(ins.String(), len(cols)+1, rowsPerStmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	var extentHint wkb.Rect
	if m.Extent != nil {
		extentHint = *m.Extent
	}
	tree := sqlitebulk.NewRTree(db, rtree, extentHint, "")
	defer tree.Close()

	var (
		n      int64
		mask   uint32
		extent = wkb.EmptyRect
		blobs  = sqlitebulk.NewBlobs(rows.PerStmt) // a buffer per row of a batch
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
			args[i+1].Value = sqlitebulk.Value(v)
		}
		indexed := false
		var env wkb.Rect
		if len(f.Geometry) == 0 {
			args[0].Value = nil
		} else {
			slot := rows.Slot()
			g, e, empty, err := AppendGeometry(blobs.Buf(slot), f.Geometry, SRSID)
			if err != nil {
				return fmt.Errorf("feature %d: %w", f.Position, err)
			}
			env, indexed = e, !empty
			args[0].Value = blobs.Set(slot, g)
			mask |= 1 << (wkbType(g) & 31)
			if indexed {
				extent = extent.Extend(env)
			}
		}
		if err := rows.Add(); err != nil { // may insert the rows before too
			return fmt.Errorf("features up to %d: %w", f.Position, err)
		}
		if indexed {
			if err := tree.Add(n, env); err != nil {
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
	updated := m.Updated
	if updated.IsZero() {
		updated = time.Now()
	}
	ident := m.Title
	if strings.TrimSpace(ident) == "" {
		ident = table
	}
	var minX, minY, maxX, maxY any
	if !extent.IsEmpty() {
		minX, minY, maxX, maxY = extent.MinX, extent.MinY, extent.MaxX, extent.MaxY
	}
	if err := db.Exec(`INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change, min_x, min_y, max_x, max_y, srs_id) VALUES (?1, 'features', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);
INSERT INTO gpkg_geometry_columns (table_name, column_name, geometry_type_name, srs_id, z, m) VALUES (?1, ?10, ?11, ?9, 0, 0);
INSERT INTO gpkg_extensions (table_name, column_name, extension_name, definition, scope) VALUES (?1, ?10, 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only');
INSERT INTO gpkg_ogr_contents (table_name, feature_count) VALUES (?1, ?12);`,
		table, ident, m.Description, updated.UTC().Format(timeLayout), minX, minY, maxX, maxY, int64(SRSID),
		GeometryColumn, typeNames[code], n); err != nil {
		return err
	}
	if err := db.Exec(triggersSQL(table, GeometryColumn, FIDColumn, rtree)); err != nil {
		return err
	}
	return db.Exec("COMMIT")
}

var (
	quote   = sqlitebulk.Quote
	literal = sqlitebulk.Literal
)
