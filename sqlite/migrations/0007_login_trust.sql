-- Where users have logged in from (client addresses, device cookies by
-- hash), so that the limit on failed logins lets them in while someone
-- else guesses their password, also after a restart. until is Unix seconds.
CREATE TABLE login_trust (
	user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	key     TEXT    NOT NULL,
	until   INTEGER NOT NULL,
	PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
