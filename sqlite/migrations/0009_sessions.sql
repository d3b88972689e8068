-- Signed-in browsers (mapcommons.Session). token_hash is the hex SHA-256
-- of the cookie's token: the token itself is never stored. A user's
-- sessions go with the user. created_at is the store's time layout;
-- expires_at is Unix seconds, indexed for the sweep of expired sessions.
CREATE TABLE sessions (
	token_hash TEXT    PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at TEXT    NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
