-- The catalogue, as the embedded store has it after its migration 0010:
-- users, groups and their members, datasets, maps, where users have
-- logged in from, and sessions. Identity keys; times are timestamptz;
-- what SQLite keeps as JSON text is jsonb here. Names SQLite compares
-- with COLLATE NOCASE (ASCII case folding) are unique here on
-- lower(... COLLATE "C"), which folds ASCII only too, whatever the
-- database's locale: both stores call the same names equal.
CREATE EXTENSION IF NOT EXISTS postgis;

CREATE TABLE users (
	id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	login         text        NOT NULL,
	email         text        NOT NULL,
	fullname      text        NOT NULL DEFAULT '',
	password_hash text        NOT NULL,
	admin         boolean     NOT NULL DEFAULT false,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_login ON users ((lower(login COLLATE "C")));

CREATE TABLE user_groups (
	id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name       text        NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX user_groups_name ON user_groups ((lower(name COLLATE "C")));

CREATE TABLE group_members (
	group_id   bigint      NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
	user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user ON group_members (user_id, group_id);

-- The catalogue of datasets. Their features (a table per dataset) come
-- with a later migration; permissions is the sharing list,
-- [{"group_id": "everyone" or "<id>", "view": …, "download": …, "edit": …}].
CREATE TABLE datasets (
	id               bigint           GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	owner_id         bigint           REFERENCES users (id) ON DELETE SET NULL,
	title            text             NOT NULL DEFAULT '',
	description      text             NOT NULL DEFAULT '',
	author           text             NOT NULL DEFAULT '',
	tags             text             NOT NULL DEFAULT '',
	metadata_url     text             NOT NULL DEFAULT '',
	citation_url     text             NOT NULL DEFAULT '',
	contact_name     text             NOT NULL DEFAULT '',
	contact_address  text             NOT NULL DEFAULT '',
	contact_phone    text             NOT NULL DEFAULT '',
	process_notes    text             NOT NULL DEFAULT '',
	type             text             NOT NULL,
	data_type        text             NOT NULL,
	state            text             NOT NULL,
	feature_count    bigint           NOT NULL DEFAULT 0,
	minx             double precision,
	miny             double precision,
	maxx             double precision,
	maxy             double precision,
	geometry_types   text             NOT NULL DEFAULT '',
	geometry_mask    integer          NOT NULL DEFAULT 0,
	attributes       jsonb            NOT NULL DEFAULT '[]',
	stats            jsonb            NOT NULL DEFAULT '{}',
	crs              text             NOT NULL DEFAULT '',
	prj              text             NOT NULL DEFAULT '',
	version          bigint           NOT NULL DEFAULT 1,
	url              text             NOT NULL DEFAULT '',
	url_type         text             NOT NULL DEFAULT '',
	last_fetch_error text             NOT NULL DEFAULT '',
	fetched_at       timestamptz,
	permissions      jsonb            NOT NULL DEFAULT '[]',
	created_at       timestamptz      NOT NULL,
	updated_at       timestamptz      NOT NULL
);
CREATE INDEX datasets_owner ON datasets (owner_id);
CREATE UNIQUE INDEX datasets_url ON datasets (url) WHERE url <> '';

-- Maps: metadata, and their layers and sharing list as JSON (a map is
-- read and written whole). description and extent are NULL when unset.
CREATE TABLE maps (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	owner_id    bigint      REFERENCES users (id) ON DELETE SET NULL,
	title       text        NOT NULL,
	basemap     text        NOT NULL,
	description text,
	tags        jsonb       NOT NULL DEFAULT '[]',
	extent      jsonb,
	projection  text        NOT NULL,
	layers      jsonb       NOT NULL DEFAULT '[]',
	permissions jsonb       NOT NULL DEFAULT '[]',
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL
);
CREATE INDEX maps_owner ON maps (owner_id);

-- Where users have logged in from (mapcommons.LoginTrustService), so that
-- the limit on failed logins lets them in while someone else guesses
-- their password, whichever server they reach.
CREATE TABLE login_trust (
	user_id bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	key     text        NOT NULL,
	until   timestamptz NOT NULL,
	PRIMARY KEY (user_id, key)
);

-- Signed-in browsers (mapcommons.Session): token_hash is the hex SHA-256
-- of the cookie's token, never the token. A user's sessions go with them.
CREATE TABLE sessions (
	token_hash text        PRIMARY KEY,
	user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
