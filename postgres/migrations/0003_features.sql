-- The features of datasets: one table per dataset and generation, named
-- features_<dataset id>_<generation> (numbers only, never a user's
-- words), which datasets.features points to. Replacing or deleting
-- features fills a new generation and swaps the pointer in the
-- transaction that drops the old one (an append adds rows in place).
-- next_id is above every feature id the dataset ever gave (ids are never
-- given again). postgres/features.go describes the tables' columns.
ALTER TABLE datasets ADD COLUMN features text NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN next_id bigint NOT NULL DEFAULT 1;

-- The generations of feature tables, so that a new table never has the
-- name of one a reader may still be reading.
CREATE SEQUENCE feature_generations;
