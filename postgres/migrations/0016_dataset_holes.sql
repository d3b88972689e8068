-- The holes of a dataset's current table (0009) as rows of their own
-- rather than an array in the dataset's row: a delete in place adds its
-- holes instead of writing them all again (with the row, in TOAST, once
-- there are a few hundred), so that an edit costs the change whatever
-- the holes before it. The readers take them with the row, ascending, in
-- the same statement (datasetColumns).
-- No edit of a server without this migration may write the array
-- between its copy and its drop.
LOCK TABLE datasets IN EXCLUSIVE MODE;
CREATE TABLE dataset_holes (
	dataset_id bigint NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
	pos bigint NOT NULL,
	PRIMARY KEY (dataset_id, pos)
);
INSERT INTO dataset_holes (dataset_id, pos) SELECT id, unnest(holes) FROM datasets;
ALTER TABLE datasets DROP COLUMN holes;
