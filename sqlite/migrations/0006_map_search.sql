-- Map search entries are computed in Go by the policy (mapcommons.
-- MapSearchDocument), in the transaction of every write they depend on,
-- no longer by the views and triggers of 0004 and 0005: those joined
-- every finder: layer with no rights check, so that a map's entry showed
-- the extent and feature count of any dataset, private or not, and told
-- whether an id existed. Datasets keep their triggers (their entries are
-- their own rows), without the part that rebuilt the maps that show them.
-- The rows of the maps are rebuilt by the Go code that applies this
-- migration, in its transaction (sqlite/mapsearch.go).

DROP TRIGGER maps_search_ai;
DROP TRIGGER maps_search_au;
DROP TRIGGER maps_search_ad;
DROP TRIGGER datasets_search_au;
DROP TRIGGER datasets_search_ad;
DROP VIEW search_map_rows;
DROP VIEW search_map_layers;

CREATE TRIGGER datasets_search_au AFTER UPDATE OF owner_id, title, description, tags, feature_count, minx, miny, maxx, maxy,
	created_at, updated_at, permissions ON datasets BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id;
	INSERT INTO search_docs SELECT * FROM search_dataset_rows WHERE obj_id = NEW.id;
END;

CREATE TRIGGER datasets_search_ad AFTER DELETE ON datasets BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id;
END;

-- The datasets each map's finder: layers name (whether they exist or
-- not), so that a change of a dataset finds the maps whose entries it
-- changes.
CREATE TABLE map_datasets (
	dataset_id INTEGER NOT NULL,
	map_id     INTEGER NOT NULL REFERENCES maps (id) ON DELETE CASCADE,
	PRIMARY KEY (dataset_id, map_id)
) WITHOUT ROWID;
CREATE INDEX map_datasets_map ON map_datasets (map_id);

-- A map's entry goes with the map.
CREATE TRIGGER maps_search_ad AFTER DELETE ON maps BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id + 1;
END;

DELETE FROM search_docs WHERE kind = 1;
