package sqlitebulk

import (
	"context"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// The page cache of a file WriteFile writes, and the rows of one INSERT of
// LoadFeatures.
const (
	cacheKiB    = 32 << 10
	rowsPerStmt = 64
)

// CheckRows is how many features LoadFeatures inserts between looks at
// its context.
const CheckRows = 256

// WriteFile creates (or truncates) the database file at path for a bulk
// load (see Create) and calls load with it. Errors, but for ctx's, are
// wrapped in "<prefix>: …"; on any error the file is removed. An ended ctx
// stops WriteFile before it creates the file.
func WriteFile(ctx context.Context, path, prefix string, load func(db *File) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	db, err := Create(path, cacheKiB)
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("%s: %w", prefix, err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", prefix, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if err := load(db); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return nil
}

// Layer is the one table of features, with its R*Tree, that WriteLayer
// writes into a new file. Its FeatureTable's Columns are made by WriteLayer
// (AttributeColumns of Attributes, reserving FID and Geometry); FID must be
// set.
type Layer struct {
	FeatureTable
	Attributes   []mapcommons.Attribute
	ColumnType   func(mapcommons.AttrType) string // the declared type of an attribute's column
	FIDType      string                           // the declaration of the FID column: "INTEGER PRIMARY KEY …"
	GeometryType string                           // the declared type of the geometry column
	IndexColumns string                           // the R*Tree's: id, then min x, max x, min y, max y

	// Schema is the SQL run first: the format's own tables and pragmas.
	Schema string
	// Finish fills the format's metadata once the features are in.
	Finish func(db *File, loaded Loaded) error
}

// WriteLayer writes a new database at path (see WriteFile, whose prefix
// names the errors) holding l, in one transaction: l.Schema, then the
// table l.Table (the FID column first, then the attribute columns with the
// geometry column among them at GeometryAt) and its R*Tree l.Index, the
// features of scan (LoadFeatures), then l.Finish.
func WriteLayer(ctx context.Context, path, prefix string, l Layer, scan format.Scan) error {
	return WriteFile(ctx, path, prefix, func(db *File) error {
		l.Columns = AttributeColumns(l.Attributes, l.FID, l.Geometry)
		defs := make([]string, 0, len(l.Columns)+2)
		defs = append(defs, Quote(l.FID)+" "+l.FIDType)
		for i, a := range l.Attributes {
			defs = append(defs, Quote(l.Columns[i])+" "+l.ColumnType(a.Type))
		}
		defs = slices.Insert(defs, 1+l.GeometryAt, Quote(l.Geometry)+" "+l.GeometryType)
		if err := db.Exec("BEGIN"); err != nil {
			return err
		}
		if err := db.Exec(l.Schema +
			"CREATE TABLE " + Quote(l.Table) + " (\n" + strings.Join(defs, ",\n") + ");\n" +
			"CREATE VIRTUAL TABLE " + Quote(l.Index) + " USING rtree(" + l.IndexColumns + ");\n"); err != nil {
			return err
		}
		loaded, err := db.LoadFeatures(ctx, l.FeatureTable, scan)
		if err != nil {
			return err
		}
		if err := l.Finish(db, loaded); err != nil {
			return err
		}
		return db.Exec("COMMIT")
	})
}

// AttributeColumns returns the column names of attributes: ColumnNames of
// their names.
func AttributeColumns(attrs []mapcommons.Attribute, reserved ...string) []string {
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = a.Name
	}
	return ColumnNames(names, reserved...)
}

// GeometryCode returns the geometry type code (1 Point … 7
// GeometryCollection) that a mask of WKB types (bit 1<<t for type t)
// declares: the type when there is one, 0 (any geometry) otherwise.
func GeometryCode(mask uint32) int {
	mask &= 0xFE // types 1..7
	if bits.OnesCount32(mask) == 1 {
		return bits.TrailingZeros32(mask)
	}
	return 0
}

var typeNames = [...]string{"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}

// TypeName returns the SQL name of a geometry type code (0 GEOMETRY, 1
// POINT … 7 GEOMETRYCOLLECTION), as both GeoPackage and SpatiaLite declare
// geometry columns; "" for another code.
func TypeName(code int) string {
	if code < 0 || code >= len(typeNames) {
		return ""
	}
	return typeNames[code]
}

// FeatureTable is a table of features to fill with LoadFeatures: one row
// per feature, the attribute values and the geometry, and one R*Tree entry
// per indexed geometry. Both tables exist and are empty.
type FeatureTable struct {
	Table      string
	Columns    []string // the attribute columns, in the order of the values
	Geometry   string   // the geometry column
	GeometryAt int      // its place among the columns: 0 first, len(Columns) last
	Index      string   // the R*Tree (see RTree)
	Extent     *wkb.Rect
	// FID, when not empty, is the table's INTEGER PRIMARY KEY column,
	// filled with the features' row ids (see LoadFeatures); empty leaves
	// the rowids to SQLite.
	FID string

	// Encode appends the stored form of a feature's geometry, the WKB g
	// (empty when the feature has none), to buf. A nil blob stores NULL;
	// otherwise typ is its type code (1 … 7) and, when indexed, env goes
	// into the index and the extent.
	Encode func(buf, g []byte) (blob []byte, typ uint32, env wkb.Rect, indexed bool, err error)
}

// Loaded is what LoadFeatures wrote.
type Loaded struct {
	Count  int64
	Mask   uint32   // bit 1<<t for each type code t stored
	Extent wkb.Rect // of the indexed geometries; empty when none is
}

// TypeCode returns declared (a type code, 0 for any) when every geometry
// stored was of that type, 0 otherwise.
func (l Loaded) TypeCode(declared int) int {
	if declared != 0 && l.Mask&^(1<<declared) != 0 {
		return 0
	}
	return declared
}

// Bounds returns the coordinates of the extent as values to bind, NULLs
// when the extent is empty.
func (l Loaded) Bounds() (minX, minY, maxX, maxY any) {
	if l.Extent.IsEmpty() {
		return nil, nil, nil, nil
	}
	return l.Extent.MinX, l.Extent.MinY, l.Extent.MaxX, l.Extent.MaxY
}

// LoadFeatures inserts the features of scan into t.Table in order, with
// multi-row INSERTs, and builds the packed R*Tree t.Index of their
// geometries, keyed by the features' row ids. With t.FID a feature's row id
// is its Feature.ID (a store's stable id) when that is above the row id
// before, and that plus one otherwise (features without ids: 1, 2, …);
// without, the row ids are the features' numbers 1, 2, … (as the rowids of
// a table new to an INTEGER PRIMARY KEY make them). It checks ctx every
// CheckRows features and while building the index.
func (db *File) LoadFeatures(ctx context.Context, t FeatureTable, scan format.Scan) (Loaded, error) {
	l := Loaded{Extent: wkb.EmptyRect}
	cols := make([]string, 0, len(t.Columns)+1)
	for _, c := range t.Columns {
		cols = append(cols, Quote(c))
	}
	cols = slices.Insert(cols, t.GeometryAt, Quote(t.Geometry))
	first := 0 // the argument of the first attribute or geometry
	if t.FID != "" {
		cols, first = slices.Insert(cols, 0, Quote(t.FID)), 1
	}
	rows, err := db.NewBatch("INSERT INTO "+Quote(t.Table)+" ("+strings.Join(cols, ", ")+") VALUES ", len(cols), rowsPerStmt)
	if err != nil {
		return l, err
	}
	defer rows.Close()
	var extentHint wkb.Rect
	if t.Extent != nil {
		extentHint = *t.Extent
	}
	tree := NewRTree(db, t.Index, extentHint, "")
	defer tree.Close()

	blobs := NewBlobs(rows.PerStmt) // a buffer per row of a batch
	rowid := int64(0)
	err = scan(func(f *mapcommons.Feature) error {
		if l.Count%CheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		l.Count++
		rowid = max(f.ID, rowid+1)
		if t.FID == "" {
			rowid = l.Count
		}
		row := rows.Row()
		args := row[first:]
		if t.FID != "" {
			row[0].Value = rowid
		}
		for i := range t.Columns {
			var v any
			if i < len(f.Values) {
				v = f.Values[i]
			}
			j := i
			if i >= t.GeometryAt {
				j++
			}
			args[j].Value = Value(v)
		}
		slot := rows.Slot()
		blob, typ, env, indexed, err := t.Encode(blobs.Buf(slot), f.Geometry)
		if err != nil {
			return fmt.Errorf("feature %d: %w", f.Position, err)
		}
		if blob == nil {
			args[t.GeometryAt].Value = nil
		} else {
			args[t.GeometryAt].Value = blobs.Set(slot, blob)
			l.Mask |= 1 << (typ & 31)
			if indexed {
				l.Extent = l.Extent.Extend(env)
			}
		}
		if err := rows.Add(); err != nil { // may insert the rows before too
			return fmt.Errorf("features up to %d: %w", f.Position, err)
		}
		if blob != nil && indexed {
			if err := tree.Add(rowid, env); err != nil {
				return fmt.Errorf("feature %d: spatial index: %w", f.Position, err)
			}
		}
		return nil
	})
	if err != nil {
		return l, err
	}
	if err := rows.Flush(); err != nil {
		return l, err
	}
	if err := ctx.Err(); err != nil {
		return l, err
	}
	if err := tree.Build(ctx); err != nil {
		return l, fmt.Errorf("spatial index: %w", err)
	}
	return l, nil
}
