-- Maps: their metadata, and their layers and sharing entries as JSON
-- (a map is read and written whole).
CREATE TABLE maps (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id    INTEGER REFERENCES users (id) ON DELETE SET NULL,
	title       TEXT    NOT NULL,
	basemap     TEXT    NOT NULL,
	description TEXT,
	tags        TEXT    NOT NULL DEFAULT '[]',
	extent      TEXT,
	projection  TEXT    NOT NULL,
	layers      TEXT    NOT NULL DEFAULT '[]',
	permissions TEXT    NOT NULL DEFAULT '[]',
	created_at  TEXT    NOT NULL,
	updated_at  TEXT    NOT NULL
);
CREATE INDEX maps_owner ON maps (owner_id);
