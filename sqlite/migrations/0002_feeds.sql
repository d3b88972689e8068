-- Datasets registered from a URL: where they come from, what it serves,
-- and how the last fetch went. A URL is registered once.
ALTER TABLE datasets ADD COLUMN url TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN url_type TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN last_fetch_error TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN fetched_at TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX datasets_url ON datasets (url) WHERE url != '';
