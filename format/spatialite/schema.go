package spatialite

import "strings"

// metadataSQL creates SpatiaLite's metadata tables in the layout of
// SpatiaLite 4 (which SpatiaLite 5 keeps), as InitSpatialMetadata() does,
// less what only the extension can create (its virtual tables: SpatialIndex,
// ElementaryGeometries, KNN) and less the checking triggers of the
// metadata tables themselves. GDAL's SQLite driver takes a database for
// SpatiaLite 4 when geometry_columns has the columns geometry_type and
// spatial_index_enabled (v3 and older had type and spatial_index_enabled),
// and SpatiaLite's CheckSpatialMetaData() answers 3 (the v4 layout) when
// spatial_ref_sys and geometry_columns have these columns.
var metadataSQL = geometryColumnsSQL +
	layerTables("_statistics", "_statistics", statisticsColumns, "") +
	layerTables("_field_infos", "fld_infos", fieldInfoColumns, ", ordinal, column_name") +
	timeSQL +
	layerTables("_auth", "_auth", "", "") +
	viewsSQL +
	layerView("vector_layers_statistics", "_statistics", statisticsSelect) +
	layerView("vector_layers_field_infos", "_field_infos", fieldInfoSelect)

// geometryColumnsSQL creates spatial_ref_sys with its _aux table,
// spatialite_history and the geometry_columns tables of the three families
// (see family).
const geometryColumnsSQL = `CREATE TABLE spatial_ref_sys (
srid INTEGER NOT NULL PRIMARY KEY,
auth_name TEXT NOT NULL,
auth_srid INTEGER NOT NULL,
ref_sys_name TEXT NOT NULL DEFAULT 'Unknown',
proj4text TEXT NOT NULL,
srtext TEXT NOT NULL DEFAULT 'Undefined');
CREATE UNIQUE INDEX idx_spatial_ref_sys
ON spatial_ref_sys (auth_srid, auth_name);
CREATE TABLE spatial_ref_sys_aux (
srid INTEGER NOT NULL PRIMARY KEY,
is_geographic INTEGER,
has_flipped_axes INTEGER,
spheroid TEXT,
prime_meridian TEXT,
datum TEXT,
projection TEXT,
unit TEXT,
axis_1_name TEXT,
axis_1_orientation TEXT,
axis_2_name TEXT,
axis_2_orientation TEXT,
CONSTRAINT fk_sprefsys FOREIGN KEY (srid) REFERENCES spatial_ref_sys (srid));
CREATE TABLE spatialite_history (
event_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
table_name TEXT NOT NULL,
geometry_column TEXT,
event TEXT NOT NULL,
timestamp TEXT NOT NULL,
ver_sqlite TEXT NOT NULL,
ver_splite TEXT NOT NULL);
CREATE TABLE geometry_columns (
f_table_name TEXT NOT NULL,
f_geometry_column TEXT NOT NULL,
geometry_type INTEGER NOT NULL,
coord_dimension INTEGER NOT NULL,
srid INTEGER NOT NULL,
spatial_index_enabled INTEGER NOT NULL,
CONSTRAINT pk_geom_cols PRIMARY KEY (f_table_name, f_geometry_column),
CONSTRAINT fk_gc_srs FOREIGN KEY (srid) REFERENCES spatial_ref_sys (srid),
CONSTRAINT ck_gc_rtree CHECK (spatial_index_enabled IN (0,1,2)));
CREATE INDEX idx_srid_geocols ON geometry_columns
(srid);
CREATE TABLE views_geometry_columns (
view_name TEXT NOT NULL,
view_geometry TEXT NOT NULL,
view_rowid TEXT NOT NULL,
f_table_name TEXT NOT NULL,
f_geometry_column TEXT NOT NULL,
read_only INTEGER NOT NULL,
CONSTRAINT pk_geom_cols_views PRIMARY KEY (view_name, view_geometry),
CONSTRAINT fk_views_geom_cols FOREIGN KEY (f_table_name, f_geometry_column) REFERENCES geometry_columns (f_table_name, f_geometry_column) ON DELETE CASCADE,
CONSTRAINT ck_vw_rdonly CHECK (read_only IN (0,1)));
CREATE INDEX idx_viewsjoin ON views_geometry_columns
(f_table_name, f_geometry_column);
CREATE TABLE virts_geometry_columns (
virt_name TEXT NOT NULL,
virt_geometry TEXT NOT NULL,
geometry_type INTEGER NOT NULL,
coord_dimension INTEGER NOT NULL,
srid INTEGER NOT NULL,
CONSTRAINT pk_geom_cols_virts PRIMARY KEY (virt_name, virt_geometry),
CONSTRAINT fk_vgc_srid FOREIGN KEY (srid) REFERENCES spatial_ref_sys (srid));
CREATE INDEX idx_virtssrid ON virts_geometry_columns
(srid);
`

// timeSQL creates geometry_columns_time, which only tables have.
const timeSQL = `CREATE TABLE geometry_columns_time (
f_table_name TEXT NOT NULL,
f_geometry_column TEXT NOT NULL,
last_insert TIMESTAMP NOT NULL DEFAULT '0000-01-01T00:00:00.000Z',
last_update TIMESTAMP NOT NULL DEFAULT '0000-01-01T00:00:00.000Z',
last_delete TIMESTAMP NOT NULL DEFAULT '0000-01-01T00:00:00.000Z',
CONSTRAINT pk_gc_time PRIMARY KEY (f_table_name, f_geometry_column),
CONSTRAINT fk_gc_time FOREIGN KEY (f_table_name, f_geometry_column) REFERENCES geometry_columns (f_table_name, f_geometry_column) ON DELETE CASCADE);
`

// viewsSQL creates the views of SpatiaLite's metadata but the two
// layerView makes.
const viewsSQL = `CREATE VIEW geom_cols_ref_sys AS
SELECT f_table_name, f_geometry_column, geometry_type,
coord_dimension, spatial_ref_sys.srid AS srid,
auth_name, auth_srid, ref_sys_name, proj4text, srtext
FROM geometry_columns, spatial_ref_sys
WHERE geometry_columns.srid = spatial_ref_sys.srid;
CREATE VIEW spatial_ref_sys_all AS
SELECT a.srid AS srid, a.auth_name AS auth_name, a.auth_srid AS auth_srid, a.ref_sys_name AS ref_sys_name,
b.is_geographic AS is_geographic, b.has_flipped_axes AS has_flipped_axes, b.spheroid AS spheroid, b.prime_meridian AS prime_meridian, b.datum AS datum, b.projection AS projection, b.unit AS unit,
b.axis_1_name AS axis_1_name, b.axis_1_orientation AS axis_1_orientation,
b.axis_2_name AS axis_2_name, b.axis_2_orientation AS axis_2_orientation,
a.proj4text AS proj4text, a.srtext AS srtext
FROM spatial_ref_sys AS a
LEFT JOIN spatial_ref_sys_aux AS b ON (a.srid = b.srid);
CREATE VIEW vector_layers AS
SELECT 'SpatialTable' AS layer_type, f_table_name AS table_name, f_geometry_column AS geometry_column, geometry_type AS geometry_type, coord_dimension AS coord_dimension, srid AS srid, spatial_index_enabled AS spatial_index_enabled
FROM geometry_columns
UNION
SELECT 'SpatialView' AS layer_type, a.view_name AS table_name, a.view_geometry AS geometry_column, b.geometry_type AS geometry_type, b.coord_dimension AS coord_dimension, b.srid AS srid, b.spatial_index_enabled AS spatial_index_enabled
FROM views_geometry_columns AS a
LEFT JOIN geometry_columns AS b ON (Upper(a.f_table_name) = Upper(b.f_table_name) AND Upper(a.f_geometry_column) = Upper(b.f_geometry_column))
UNION
SELECT 'VirtualShape' AS layer_type, virt_name AS table_name, virt_geometry AS geometry_column, geometry_type AS geometry_type, coord_dimension AS coord_dimension, srid AS srid, 0 AS spatial_index_enabled
FROM virts_geometry_columns;
CREATE VIEW vector_layers_auth AS
SELECT 'SpatialTable' AS layer_type, f_table_name AS table_name, f_geometry_column AS geometry_column, read_only AS read_only, hidden AS hidden
FROM geometry_columns_auth
UNION
SELECT 'SpatialView' AS layer_type, a.view_name AS table_name, a.view_geometry AS geometry_column, b.read_only AS read_only, a.hidden AS hidden
FROM views_geometry_columns_auth AS a
JOIN views_geometry_columns AS b ON (Upper(a.view_name) = Upper(b.view_name) AND Upper(a.view_geometry) = Upper(b.view_geometry))
UNION
SELECT 'VirtualShape' AS layer_type, virt_name AS table_name, virt_geometry AS geometry_column, 1 AS read_only, hidden AS hidden
FROM virts_geometry_columns_auth;
`

// family is one of the three kinds of layer SpatiaLite's metadata
// describes, each with its own geometry_columns table and its own
// _statistics, _field_infos and _auth tables beside it, alike but for these
// names.
type family struct {
	layer      string // the layer_type of the vector_layers views
	table      string // its geometry_columns table
	name, geom string // the columns naming a layer and its geometry
	key        string // its abbreviation in constraint names
}

var families = [...]family{
	{"SpatialTable", "geometry_columns", "f_table_name", "f_geometry_column", "gc"},
	{"SpatialView", "views_geometry_columns", "view_name", "view_geometry", "vwgc"},
	{"VirtualShape", "virts_geometry_columns", "virt_name", "virt_geometry", "vrtgc"},
}

// The columns of the _statistics and _field_infos tables after the layer's
// two, and what the vector_layers_ views select of them.
const (
	statisticsColumns = `last_verified TIMESTAMP,
row_count INTEGER,
extent_min_x DOUBLE,
extent_min_y DOUBLE,
extent_max_x DOUBLE,
extent_max_y DOUBLE,
`
	fieldInfoColumns = `ordinal INTEGER NOT NULL,
column_name TEXT NOT NULL,
null_values INTEGER NOT NULL,
integer_values INTEGER NOT NULL,
double_values INTEGER NOT NULL,
text_values INTEGER NOT NULL,
blob_values INTEGER NOT NULL,
max_size INTEGER,
integer_min INTEGER,
integer_max INTEGER,
double_min DOUBLE,
double_max DOUBLE,
`
	statisticsSelect = `last_verified AS last_verified, row_count AS row_count, extent_min_x AS extent_min_x, extent_min_y AS extent_min_y, extent_max_x AS extent_max_x, extent_max_y AS extent_max_y`
	fieldInfoSelect  = `ordinal AS ordinal, column_name AS column_name, null_values AS null_values, integer_values AS integer_values, double_values AS double_values, text_values AS text_values, blob_values AS blob_values, max_size AS max_size, integer_min AS integer_min, integer_max AS integer_max, double_min AS double_min, double_max double_max`
)

// layerTables returns the CREATE TABLE of the table <family>suffix of each
// family: the layer's two columns, then cols, its primary key (the two and
// pkMore) and its foreign key to the family's geometry_columns, both named
// <pk|fk>_<key>constraint. The _auth tables (no cols given) have a hidden
// flag, and geometry_columns_auth a read_only one before it.
func layerTables(suffix, constraint, cols, pkMore string) string {
	var b strings.Builder
	for _, f := range families {
		layer := f.name + ", " + f.geom
		c, checks := cols, ""
		if suffix == "_auth" {
			c, checks = "hidden INTEGER NOT NULL,\n", ",\nCONSTRAINT ck_"+f.key+"_hidden CHECK (hidden IN (0,1))"
			if f.key == "gc" {
				c, checks = "read_only INTEGER NOT NULL,\n"+c, ",\nCONSTRAINT ck_gc_ronly CHECK (read_only IN (0,1))"+checks
			}
		}
		b.WriteString("CREATE TABLE " + f.table + suffix + " (\n" +
			f.name + " TEXT NOT NULL,\n" + f.geom + " TEXT NOT NULL,\n" + c +
			"CONSTRAINT pk_" + f.key + constraint + " PRIMARY KEY (" + layer + pkMore + "),\n" +
			"CONSTRAINT fk_" + f.key + constraint + " FOREIGN KEY (" + layer + ") REFERENCES " + f.table + " (" + layer + ") ON DELETE CASCADE" + checks + ");\n")
	}
	return b.String()
}

// layerView returns the CREATE VIEW of view, the union over the families
// of the rows of their tables <family>suffix: the layer's type, table name
// and geometry column, then selected.
func layerView(view, suffix, selected string) string {
	var b strings.Builder
	b.WriteString("CREATE VIEW " + view + " AS\n")
	for i, f := range families {
		if i > 0 {
			b.WriteString("\nUNION\n")
		}
		b.WriteString("SELECT '" + f.layer + "' AS layer_type, " + f.name + " AS table_name, " + f.geom + " AS geometry_column, " + selected + "\nFROM " + f.table + suffix)
	}
	b.WriteString(";\n")
	return b.String()
}

// srsSQL fills spatial_ref_sys with the two undefined systems SpatiaLite
// always has and EPSG:4326, the one our features are in (not the whole
// EPSG table InitSpatialMetadata() copies in: some 6,000 rows and 5 MB).
// The rows are those SpatiaLite writes.
const srsSQL = `INSERT INTO spatial_ref_sys (srid, auth_name, auth_srid, ref_sys_name, proj4text, srtext) VALUES
(-1, 'NONE', -1, 'Undefined - Cartesian', '', 'Undefined'),
(0, 'NONE', 0, 'Undefined - Geographic Long/Lat', '', 'Undefined'),
(4326, 'epsg', 4326, 'WGS 84', '+proj=longlat +datum=WGS84 +no_defs', ` + "'" + wkt4326 + "'" + `);
INSERT INTO spatial_ref_sys_aux (srid, is_geographic, has_flipped_axes, spheroid, prime_meridian, datum, projection, unit, axis_1_name, axis_1_orientation, axis_2_name, axis_2_orientation) VALUES
(4326, 1, 1, 'WGS 84', 'Greenwich', 'WGS_1984', 'none', 'degree', 'Geodetic latitude', 'North', 'Geodetic longitude', 'East');
`

const wkt4326 = `GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]`

// triggersSQL returns the triggers SpatiaLite's AddGeometryColumn() and
// CreateSpatialIndex() put on a feature table t with geometry column g and
// R*Tree idx: the geometry constraint checks (ggi, ggu), the change times
// (tmi, tmu, tmd) and the index maintenance (gii, giu, gid). They call
// SpatiaLite's functions, so they only run where SpatiaLite is loaded, as
// in any SpatiaLite database; the writer creates them after the bulk load.
func triggersSQL(t, g, idx string) string {
	qt, qg, qidx := quote(t), quote(g), quote(idx)
	lt, lg, lidx := literal(t), literal(g), literal(idx)
	name := func(prefix string) string { return quote(prefix + "_" + t + "_" + g) }
	check := `SELECT RAISE(ROLLBACK, ` + literal(t+"."+g+" violates Geometry constraint [geom-type or SRID not allowed]") + `)
WHERE (SELECT geometry_type FROM geometry_columns
WHERE Lower(f_table_name) = Lower(` + lt + `) AND Lower(f_geometry_column) = Lower(` + lg + `)
AND GeometryConstraints(NEW.` + qg + `, geometry_type, srid) = 1) IS NULL;`
	stamp := func(col string) string {
		return `UPDATE geometry_columns_time SET ` + col + ` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE Lower(f_table_name) = Lower(` + lt + `) AND Lower(f_geometry_column) = Lower(` + lg + `);`
	}
	align := `DELETE FROM ` + qidx + ` WHERE pkid=NEW.ROWID;
SELECT RTreeAlign(` + lidx + `, NEW.ROWID, NEW.` + qg + `);`
	trigger := func(prefix, when, body string) string {
		return "CREATE TRIGGER " + name(prefix) + " " + when + " ON " + qt + "\nFOR EACH ROW BEGIN\n" + body + "\nEND;\n"
	}
	return trigger("ggi", "BEFORE INSERT", check) +
		trigger("ggu", "BEFORE UPDATE OF "+qg, check) +
		trigger("tmi", "AFTER INSERT", stamp("last_insert")) +
		trigger("tmu", "AFTER UPDATE", stamp("last_update")) +
		trigger("tmd", "AFTER DELETE", stamp("last_delete")) +
		trigger("gii", "AFTER INSERT", align) +
		trigger("giu", "AFTER UPDATE OF "+qg, align) +
		trigger("gid", "AFTER DELETE", "DELETE FROM "+qidx+" WHERE pkid=OLD.ROWID;")
}
