-- Users, and the catalogue of datasets. Each dataset's features live in a
-- segment file of their own (features/<segment>), named by the row.
CREATE TABLE users (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	login         TEXT    NOT NULL UNIQUE COLLATE NOCASE,
	email         TEXT    NOT NULL,
	fullname      TEXT    NOT NULL DEFAULT '',
	password_hash TEXT    NOT NULL,
	admin         INTEGER NOT NULL DEFAULT 0,
	created_at    TEXT    NOT NULL,
	updated_at    TEXT    NOT NULL
);

CREATE TABLE datasets (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id        INTEGER REFERENCES users (id) ON DELETE SET NULL,
	title           TEXT    NOT NULL DEFAULT '',
	description     TEXT    NOT NULL DEFAULT '',
	author          TEXT    NOT NULL DEFAULT '',
	tags            TEXT    NOT NULL DEFAULT '',
	metadata_url    TEXT    NOT NULL DEFAULT '',
	citation_url    TEXT    NOT NULL DEFAULT '',
	contact_name    TEXT    NOT NULL DEFAULT '',
	contact_address TEXT    NOT NULL DEFAULT '',
	contact_phone   TEXT    NOT NULL DEFAULT '',
	process_notes   TEXT    NOT NULL DEFAULT '',
	type            TEXT    NOT NULL,
	data_type       TEXT    NOT NULL,
	state           TEXT    NOT NULL,
	feature_count   INTEGER NOT NULL DEFAULT 0,
	minx            REAL,
	miny            REAL,
	maxx            REAL,
	maxy            REAL,
	geometry_types  TEXT    NOT NULL DEFAULT '',
	geometry_mask   INTEGER NOT NULL DEFAULT 0,
	attributes      TEXT    NOT NULL DEFAULT '[]',
	stats           TEXT    NOT NULL DEFAULT '{}',
	crs             TEXT    NOT NULL DEFAULT '',
	prj             TEXT    NOT NULL DEFAULT '',
	segment         TEXT    NOT NULL DEFAULT '',
	version         INTEGER NOT NULL DEFAULT 1,
	created_at      TEXT    NOT NULL,
	updated_at      TEXT    NOT NULL
);

CREATE INDEX datasets_owner ON datasets (owner_id);
