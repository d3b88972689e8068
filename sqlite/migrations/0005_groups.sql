-- Groups of users, and sharing lists on datasets (maps have had theirs
-- since 0003). A sharing list is JSON, [{"group_id": "everyone" or "<id>",
-- "view": …, "download": …, "edit": …}], read and written whole with its
-- object. Search learns who may find what: search_docs.shared is 1 when
-- everyone has a right to the object, and search_grants lists the groups
-- that have one; both are kept by the triggers of 0004, changed here so
-- that a dataset's sharing list counts and every search_docs row carries
-- its grants.

CREATE TABLE user_groups (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
	created_at TEXT    NOT NULL
);

CREATE TABLE group_members (
	group_id   INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at TEXT    NOT NULL,
	PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX group_members_user ON group_members (user_id, group_id);

ALTER TABLE datasets ADD COLUMN permissions TEXT NOT NULL DEFAULT '[]';

-- The groups each search_docs row is shared with (any right).
CREATE TABLE search_grants (
	group_id INTEGER NOT NULL,
	docid    INTEGER NOT NULL,
	PRIMARY KEY (group_id, docid)
) WITHOUT ROWID;
CREATE INDEX search_grants_doc ON search_grants (docid);

-- What search_docs holds for each dataset: now with its real "shared".
DROP VIEW search_dataset_rows;
CREATE VIEW search_dataset_rows AS
SELECT 2 * d.id AS docid, 0 AS kind, d.id AS obj_id, d.owner_id, d.title, d.description, d.tags,
	EXISTS (SELECT 1 FROM json_each(d.permissions) p WHERE json_extract(p.value, '$.group_id') = 'everyone'
		AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'))) AS shared,
	d.feature_count, d.minx, d.miny, d.maxx, d.maxy, d.created_at, d.updated_at
FROM datasets d;

-- The groups each dataset and map is shared with, by docid.
CREATE VIEW search_grant_rows AS
SELECT DISTINCT 2 * d.id AS docid, CAST(json_extract(p.value, '$.group_id') AS INTEGER) AS group_id
FROM datasets d, json_each(d.permissions) p
WHERE json_extract(p.value, '$.group_id') != 'everyone'
	AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'))
UNION
SELECT DISTINCT 2 * m.id + 1 AS docid, CAST(json_extract(p.value, '$.group_id') AS INTEGER) AS group_id
FROM maps m, json_each(m.permissions) p
WHERE json_extract(p.value, '$.group_id') != 'everyone'
	AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'));

-- Every row of search_docs brings its grants, and takes them when it goes.
DROP TRIGGER search_docs_ai;
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
	INSERT INTO search_fts (rowid, title, description, tags) VALUES (NEW.docid, NEW.title, NEW.description, NEW.tags);
	INSERT INTO search_rtree (id, minx, maxx, miny, maxy)
		SELECT NEW.docid, iif(NEW.minx <= NEW.maxx, NEW.minx, -180), iif(NEW.minx <= NEW.maxx, NEW.maxx, 180),
			min(NEW.miny, NEW.maxy), max(NEW.miny, NEW.maxy)
		WHERE NEW.minx IS NOT NULL AND NEW.miny IS NOT NULL AND NEW.maxx IS NOT NULL AND NEW.maxy IS NOT NULL;
	INSERT OR IGNORE INTO search_grants (group_id, docid)
		SELECT CAST(json_extract(p.value, '$.group_id') AS INTEGER), NEW.docid
		FROM (SELECT permissions FROM datasets WHERE NEW.kind = 0 AND id = NEW.obj_id
			UNION ALL SELECT permissions FROM maps WHERE NEW.kind = 1 AND id = NEW.obj_id) o, json_each(o.permissions) p
		WHERE json_extract(p.value, '$.group_id') != 'everyone'
			AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'));
END;

DROP TRIGGER search_docs_ad;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
	INSERT INTO search_fts (search_fts, rowid, title, description, tags) VALUES ('delete', OLD.docid, OLD.title, OLD.description, OLD.tags);
	DELETE FROM search_rtree WHERE id = OLD.docid;
	DELETE FROM search_grants WHERE docid = OLD.docid;
END;

-- A dataset's row is rebuilt when its sharing list changes too.
DROP TRIGGER datasets_search_au;
CREATE TRIGGER datasets_search_au AFTER UPDATE OF owner_id, title, description, tags, feature_count, minx, miny, maxx, maxy,
	created_at, updated_at, permissions ON datasets BEGIN
	DELETE FROM search_docs WHERE docid = 2 * OLD.id;
	INSERT INTO search_docs SELECT * FROM search_dataset_rows WHERE obj_id = NEW.id;
	-- The maps that show it take its new extent and count.
	DELETE FROM search_docs WHERE docid IN (SELECT 2 * id + 1 FROM maps WHERE layers LIKE '%"finder:' || NEW.id || '"%');
	INSERT INTO search_docs SELECT * FROM search_map_rows
		WHERE obj_id IN (SELECT id FROM maps WHERE layers LIKE '%"finder:' || NEW.id || '"%');
END;

-- What existed before this migration: the maps' grants (their rows stay),
-- and the datasets' rows, rebuilt.
INSERT OR IGNORE INTO search_grants (group_id, docid) SELECT group_id, docid FROM search_grant_rows;
DELETE FROM search_docs WHERE kind = 0;
INSERT INTO search_docs SELECT * FROM search_dataset_rows;
