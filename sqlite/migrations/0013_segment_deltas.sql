-- The delta segments of datasets between compactions (sqlite/edit.go):
-- small, rewritten by every edit, so kept here and committed with the row
-- that names them in its layout (datasets.segment), in one synced commit,
-- rather than as files each needing its own syncs.
CREATE TABLE segment_deltas (
	name TEXT PRIMARY KEY,
	data BLOB NOT NULL
);
