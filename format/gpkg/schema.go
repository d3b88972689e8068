package gpkg

// metadataSQL creates the tables a GeoPackage with features needs (the
// table definitions of the specification's Annex C) and GDAL's
// gpkg_ogr_contents, and fills gpkg_spatial_ref_sys with the three rows
// every GeoPackage has.
const metadataSQL = `CREATE TABLE gpkg_spatial_ref_sys (
srs_name TEXT NOT NULL,
srs_id INTEGER NOT NULL PRIMARY KEY,
organization TEXT NOT NULL,
organization_coordsys_id INTEGER NOT NULL,
definition TEXT NOT NULL,
description TEXT);
CREATE TABLE gpkg_contents (
table_name TEXT NOT NULL PRIMARY KEY,
data_type TEXT NOT NULL,
identifier TEXT UNIQUE,
description TEXT DEFAULT '',
last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
min_x DOUBLE,
min_y DOUBLE,
max_x DOUBLE,
max_y DOUBLE,
srs_id INTEGER,
CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
CREATE TABLE gpkg_geometry_columns (
table_name TEXT NOT NULL,
column_name TEXT NOT NULL,
geometry_type_name TEXT NOT NULL,
srs_id INTEGER NOT NULL,
z TINYINT NOT NULL,
m TINYINT NOT NULL,
CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
CONSTRAINT uk_gc_table_name UNIQUE (table_name),
CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
CREATE TABLE gpkg_extensions (
table_name TEXT,
column_name TEXT,
extension_name TEXT NOT NULL,
definition TEXT NOT NULL,
scope TEXT NOT NULL,
CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));
CREATE TABLE gpkg_ogr_contents (
table_name TEXT NOT NULL PRIMARY KEY,
feature_count INTEGER DEFAULT NULL);
INSERT INTO gpkg_spatial_ref_sys (srs_name, srs_id, organization, organization_coordsys_id, definition, description) VALUES
('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system'),
('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system'),
('WGS 84 geodetic', 4326, 'EPSG', 4326, '` + wkt4326 + `', 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
`

const wkt4326 = `GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]`

// triggersSQL returns the triggers of the RTree Spatial Index extension
// (GeoPackage 1.2, F.3) for table t, geometry column c, id column i and
// R*Tree rtree, and the two of GDAL's gpkg_ogr_contents.
func triggersSQL(t, c, i, rtree string) string {
	qt, qc, qi, qr := quote(t), quote(c), quote(i), quote(rtree)
	name := func(suffix string) string { return quote(rtree + "_" + suffix) }
	values := `VALUES (NEW.` + qi + `, ST_MinX(NEW.` + qc + `), ST_MaxX(NEW.` + qc + `), ST_MinY(NEW.` + qc + `), ST_MaxY(NEW.` + qc + `))`
	return `CREATE TRIGGER ` + name("insert") + ` AFTER INSERT ON ` + qt + `
WHEN (new.` + qc + ` NOT NULL AND NOT ST_IsEmpty(NEW.` + qc + `))
BEGIN
INSERT OR REPLACE INTO ` + qr + ` ` + values + `;
END;
CREATE TRIGGER ` + name("update1") + ` AFTER UPDATE OF ` + qc + ` ON ` + qt + `
WHEN OLD.` + qi + ` = NEW.` + qi + ` AND (NEW.` + qc + ` NOTNULL AND NOT ST_IsEmpty(NEW.` + qc + `))
BEGIN
INSERT OR REPLACE INTO ` + qr + ` ` + values + `;
END;
CREATE TRIGGER ` + name("update2") + ` AFTER UPDATE OF ` + qc + ` ON ` + qt + `
WHEN OLD.` + qi + ` = NEW.` + qi + ` AND (NEW.` + qc + ` ISNULL OR ST_IsEmpty(NEW.` + qc + `))
BEGIN
DELETE FROM ` + qr + ` WHERE id = OLD.` + qi + `;
END;
CREATE TRIGGER ` + name("update3") + ` AFTER UPDATE ON ` + qt + `
WHEN OLD.` + qi + ` != NEW.` + qi + ` AND (NEW.` + qc + ` NOTNULL AND NOT ST_IsEmpty(NEW.` + qc + `))
BEGIN
DELETE FROM ` + qr + ` WHERE id = OLD.` + qi + `;
INSERT OR REPLACE INTO ` + qr + ` ` + values + `;
END;
CREATE TRIGGER ` + name("update4") + ` AFTER UPDATE ON ` + qt + `
WHEN OLD.` + qi + ` != NEW.` + qi + ` AND (NEW.` + qc + ` ISNULL OR ST_IsEmpty(NEW.` + qc + `))
BEGIN
DELETE FROM ` + qr + ` WHERE id IN (OLD.` + qi + `, NEW.` + qi + `);
END;
CREATE TRIGGER ` + name("delete") + ` AFTER DELETE ON ` + qt + `
WHEN old.` + qc + ` NOT NULL
BEGIN
DELETE FROM ` + qr + ` WHERE id = OLD.` + qi + `;
END;
CREATE TRIGGER ` + quote("trigger_insert_feature_count_"+t) + ` AFTER INSERT ON ` + qt + `
BEGIN UPDATE gpkg_ogr_contents SET feature_count = feature_count + 1 WHERE lower(table_name) = lower(` + literal(t) + `); END;
CREATE TRIGGER ` + quote("trigger_delete_feature_count_"+t) + ` AFTER DELETE ON ` + qt + `
BEGIN UPDATE gpkg_ogr_contents SET feature_count = feature_count - 1 WHERE lower(table_name) = lower(` + literal(t) + `); END;
`
}
