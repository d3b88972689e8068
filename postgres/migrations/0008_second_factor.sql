-- Two-factor sign-in: a user's TOTP secret (pending until a first code
-- confirms it), the last time step whose code was used (a code counts
-- once), the user's recovery codes by their SHA-256, and the one-time
-- sign-in links an administrator issues, by their token's SHA-256.
CREATE TABLE user_totp (
	user_id    bigint      PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	secret     bytea       NOT NULL,
	confirmed  boolean     NOT NULL DEFAULT false,
	last_step  bigint      NOT NULL DEFAULT 0,
	created_at timestamptz NOT NULL
);
CREATE TABLE user_recovery_codes (
	user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	hash    text   NOT NULL,
	PRIMARY KEY (user_id, hash)
);
CREATE TABLE sign_in_links (
	token_hash text        PRIMARY KEY,
	user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	expires_at timestamptz NOT NULL
);
CREATE INDEX sign_in_links_user ON sign_in_links (user_id);
