-- The login limiter's buckets (mapcommons.LoginLimitService), shared by
-- every server: when each bucket is full again. Rows whose time has
-- passed count as full and are swept.
CREATE TABLE login_limits (
	key     text        PRIMARY KEY,
	full_at timestamptz NOT NULL
);
CREATE INDEX login_limits_full_at ON login_limits (full_at);
