-- Two-factor sign-in: a user's TOTP secret (pending until a first code
-- confirms it), the last time step whose code was used (a code counts
-- once), the user's recovery codes by their SHA-256, and the one-time
-- sign-in links an administrator issues, by their token's SHA-256. Times
-- are Unix seconds.
CREATE TABLE user_totp (
	user_id    INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	secret     BLOB    NOT NULL,
	confirmed  INTEGER NOT NULL DEFAULT 0,
	last_step  INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE TABLE user_recovery_codes (
	user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	hash    TEXT    NOT NULL,
	PRIMARY KEY (user_id, hash)
) WITHOUT ROWID;
CREATE TABLE sign_in_links (
	token_hash TEXT    PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sign_in_links_user ON sign_in_links (user_id);
