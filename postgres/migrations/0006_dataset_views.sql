-- Each dataset's features as other tools read them (QGIS, ogr2ogr): the
-- view dataset_<id>, made by the store with each generation of its
-- features (postgres/views.go): fid, geom (geometry, SRID 4326), then one
-- column per attribute under its name. Strings and dates are text through
-- mapcommons_text, which shows bytes that are not UTF-8 (which the store
-- keeps as they came) escaped rather than failing the whole read.
CREATE FUNCTION mapcommons_text(b bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	RETURN convert_from(b, 'UTF8');
EXCEPTION WHEN others THEN
	RETURN encode(b, 'escape');
END
$$;
