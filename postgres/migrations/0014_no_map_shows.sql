-- An edit in place looks, unlocked, at the start of its transaction for
-- maps that show its dataset; when it finds none it ends with this check,
-- under the lock that orders the search entries of maps and datasets
-- (searchdocs.go), instead of a query whose answer it would wait for: a
-- map that came to show the dataset meanwhile fails the transaction with
-- SQLSTATE MCM01 before its COMMIT, and the edit is made again, looking
-- for the maps under the lock (edits.go).
CREATE OR REPLACE FUNCTION mapcommons_no_map_shows(dataset bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM search_map_datasets WHERE dataset_id = dataset) THEN
		RAISE EXCEPTION 'a map came to show dataset %', dataset USING ERRCODE = 'MCM01';
	END IF;
END
$$;
