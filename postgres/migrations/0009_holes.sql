-- Edits in place: the positions (pos) of the features deleted from a
-- dataset's current table since it was written, ascending. A feature's
-- position in the dataset is its pos less the holes below it; a new
-- table (a rewrite) has none.
ALTER TABLE datasets ADD COLUMN holes bigint[] NOT NULL DEFAULT '{}';
