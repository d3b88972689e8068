-- What an edit of one feature writes besides its row, made cheaper
-- (editfast.go):
--
-- The search entry of a dataset changes at every edit only in its count
-- and its time of change; its extent seldom. With those two columns
-- indexed, each edit made a new version of the entry in all nine of its
-- indexes, its words' GIN among them (40-70 us and 1 KB of WAL an edit,
-- a third of a delete's time). Without those indexes an edit that leaves
-- the extent as it was is a heap-only (HOT) update of the entry, which no
-- index sees. The searches sorted by those columns sort the entries they
-- match, as the count every search makes reads them all already.
DROP INDEX IF EXISTS search_docs_updated;
DROP INDEX IF EXISTS search_docs_features;
ALTER TABLE search_docs SET (fillfactor = 80);

-- A hole's row (0016) checked its dataset's row by its foreign key at
-- every delete (a trigger's query, and a lock of the row the delete
-- writes next anyway). The rows of holes are written only in the
-- transactions that write their dataset's row, under its lock, and go
-- with it: by this trigger, as by the cascade it replaces.
CREATE OR REPLACE FUNCTION mapcommons_dataset_holes_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM dataset_holes WHERE dataset_id = OLD.id;
	RETURN NULL;
END
$$;
CREATE TRIGGER datasets_holes_gone AFTER DELETE ON datasets
	FOR EACH ROW EXECUTE FUNCTION mapcommons_dataset_holes_gone();
ALTER TABLE dataset_holes DROP CONSTRAINT IF EXISTS dataset_holes_dataset_id_fkey;
