-- Search: one row per dataset and map in search_docs, with a full-text
-- index (search_fts: FTS5 over title, description and tags, its content
-- read from search_docs) and a spatial index of extents (search_rtree).
-- Triggers on datasets and maps keep all three in the statement's own
-- transaction, so whatever writes a dataset or a map (create, metadata
-- update, refetch, feature edits, delete, a deleted owner) is visible to the
-- next search, and a rolled-back write leaves no trace in the index.

CREATE TABLE search_docs (
	docid         INTEGER PRIMARY KEY, -- 2*id for a dataset, 2*id+1 for a map
	kind          INTEGER NOT NULL,    -- 0 dataset, 1 map
	obj_id        INTEGER NOT NULL,
	owner_id      INTEGER,
	title         TEXT    NOT NULL,
	description   TEXT    NOT NULL,
	tags          TEXT    NOT NULL,    -- "a, b"
	shared        INTEGER NOT NULL,    -- 1 when everyone has a right to it
	feature_count INTEGER NOT NULL,
	minx          REAL,                -- the extent (west, south, east, north), NULL when none
	miny          REAL,
	maxx          REAL,
	maxy          REAL,
	created_at    TEXT    NOT NULL,
	updated_at    TEXT    NOT NULL
);
CREATE INDEX search_docs_owner ON search_docs (owner_id);
CREATE INDEX search_docs_title ON search_docs (title COLLATE NOCASE);
CREATE INDEX search_docs_created ON search_docs (created_at);
CREATE INDEX search_docs_updated ON search_docs (updated_at);
CREATE INDEX search_docs_features ON search_docs (feature_count);

CREATE VIRTUAL TABLE search_fts USING fts5 (title, description, tags,
	content = 'search_docs', content_rowid = 'docid', tokenize = 'unicode61 remove_diacritics 2');

-- The rtree holds west <= east boxes: an extent that crosses the
-- antimeridian spans every longitude here and is checked exactly later.
CREATE VIRTUAL TABLE search_rtree USING rtree (id, minx, maxx, miny, maxy);

CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
	INSERT INTO search_fts (rowid, title, description, tags) VALUES (NEW.docid, NEW.title, NEW.description, NEW.tags);
	INSERT INTO search_rtree (id, minx, maxx, miny, maxy)
		SELECT NEW.docid, iif(NEW.minx <= NEW.maxx, NEW.minx, -180), iif(NEW.minx <= NEW.maxx, NEW.maxx, 180),
			min(NEW.miny, NEW.maxy), max(NEW.miny, NEW.maxy)
		WHERE NEW.minx IS NOT NULL AND NEW.miny IS NOT NULL AND NEW.maxx IS NOT NULL AND NEW.maxy IS NOT NULL;
END;

CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
	INSERT INTO search_fts (search_fts, rowid, title, description, tags) VALUES ('delete', OLD.docid, OLD.title, OLD.description, OLD.tags);
	DELETE FROM search_rtree WHERE id = OLD.docid;
END;

-- What search_docs holds for each dataset.
CREATE VIEW search_dataset_rows AS
SELECT 2 * d.id AS docid, 0 AS kind, d.id AS obj_id, d.owner_id, d.title, d.description, d.tags, 0 AS shared,
	d.feature_count, d.minx, d.miny, d.maxx, d.maxy, d.created_at, d.updated_at
FROM datasets d;

-- The datasets the layers of each map show (finder:<id> sources).
CREATE VIEW search_map_layers AS
SELECT m.id AS map_id, d.id AS dataset_id, d.feature_count, d.minx, d.miny, d.maxx, d.maxy
FROM maps m, json_each(m.layers) l
JOIN datasets d ON d.id = CAST(substr(json_extract(l.value, '$.source'), 8) AS INTEGER)
WHERE substr(json_extract(l.value, '$.source'), 1, 7) = 'finder:';

-- What search_docs holds for each map. Its extent is its own, else the
-- union of its layers' datasets' extents, else the world (as the map's
-- JSON says); shared when the sharing list gives everyone any right.
CREATE VIEW search_map_rows AS
SELECT 2 * m.id + 1 AS docid, 1 AS kind, m.id AS obj_id, m.owner_id, m.title, coalesce(m.description, '') AS description,
	coalesce((SELECT group_concat(t.value, ', ') FROM json_each(m.tags) t), '') AS tags,
	EXISTS (SELECT 1 FROM json_each(m.permissions) p WHERE json_extract(p.value, '$.group_id') = 'everyone'
		AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'))) AS shared,
	coalesce((SELECT sum(feature_count) FROM search_map_layers WHERE map_id = m.id), 0) AS feature_count,
	CASE WHEN m.extent IS NOT NULL THEN json_extract(m.extent, '$[0]')
		ELSE coalesce((SELECT min(minx) FROM search_map_layers WHERE map_id = m.id AND minx IS NOT NULL), -180) END AS minx,
	CASE WHEN m.extent IS NOT NULL THEN json_extract(m.extent, '$[1]')
		ELSE coalesce((SELECT min(miny) FROM search_map_layers WHERE map_id = m.id AND minx IS NOT NULL),
			iif(m.projection = 'EPSG:4326', -90, -85)) END AS miny,
	CASE WHEN m.extent IS NOT NULL THEN json_extract(m.extent, '$[2]')
		ELSE coalesce((SELECT max(maxx) FROM search_map_layers WHERE map_id = m.id AND minx IS NOT NULL), 180) END AS maxx,
	CASE WHEN m.extent IS NOT NULL THEN json_extract(m.extent, '$[3]')
		ELSE coalesce((SELECT max(maxy) FROM search_map_layers WHERE map_id = m.id AND minx IS NOT NULL),
			iif(m.projection = 'EPSG:4326', 90, 85)) END AS maxy,
	m.created_at, m.updated_at
FROM maps m;

CREATE TRIGGER datasets_search_ai AFTER INSERT ON datasets BEGIN
	INSERT INTO search_docs SELECT * FROM search_dataset_rows WHERE obj_id = NEW.id;
END;

CREATE TRIGGER datasets_search_au AFTER UPDATE OF owner_id, title, description, tags, feature_count, minx, miny, maxx, maxy,
	created_at, updated_at ON datasets BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id;
	INSERT INTO search_docs SELECT * FROM search_dataset_rows WHERE obj_id = NEW.id;
	-- The maps that show it take its new extent and count.
	DELETE FROM search_docs WHERE docid IN (SELECT 2 * id + 1 FROM maps WHERE layers LIKE '%"finder:' || NEW.id || '"%');
	INSERT INTO search_docs SELECT * FROM search_map_rows
		WHERE obj_id IN (SELECT id FROM maps WHERE layers LIKE '%"finder:' || NEW.id || '"%');
END;

CREATE TRIGGER datasets_search_ad AFTER DELETE ON datasets BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id;
	DELETE FROM search_docs WHERE docid IN (SELECT 2 * id + 1 FROM maps WHERE layers LIKE '%"finder:' || OLD.id || '"%');
	INSERT INTO search_docs SELECT * FROM search_map_rows
		WHERE obj_id IN (SELECT id FROM maps WHERE layers LIKE '%"finder:' || OLD.id || '"%');
END;

CREATE TRIGGER maps_search_ai AFTER INSERT ON maps BEGIN
	INSERT INTO search_docs SELECT * FROM search_map_rows WHERE obj_id = NEW.id;
END;

CREATE TRIGGER maps_search_au AFTER UPDATE ON maps BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id + 1;
	INSERT INTO search_docs SELECT * FROM search_map_rows WHERE obj_id = NEW.id;
END;

CREATE TRIGGER maps_search_ad AFTER DELETE ON maps BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id + 1;
END;

-- What existed before this migration.
INSERT INTO search_docs SELECT * FROM search_dataset_rows;
INSERT INTO search_docs SELECT * FROM search_map_rows;
