-- The search entries of datasets, and the groups every entry is shared
-- with, are computed in Go (mapcommons.SearchGrants) and written in the
-- transaction of each change (sqlite/search.go: datasetChanged), as the
-- maps' have been since 0006: no store computes the rules of search in
-- its own SQL, so every store gives the same entries. What stays in SQL
-- is the indexing of a row once written: its full-text and spatial index
-- rows, and the removal of its grants with it.

DROP TRIGGER datasets_search_ai;
DROP TRIGGER datasets_search_au;
DROP TRIGGER datasets_search_ad;
DROP VIEW search_dataset_rows;
DROP VIEW search_grant_rows;

DROP TRIGGER search_docs_ai;
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
	INSERT INTO search_fts (rowid, title, description, tags) VALUES (NEW.docid, NEW.title, NEW.description, NEW.tags);
	INSERT INTO search_rtree (id, minx, maxx, miny, maxy)
		SELECT NEW.docid, iif(NEW.minx <= NEW.maxx, NEW.minx, -180), iif(NEW.minx <= NEW.maxx, NEW.maxx, 180),
			min(NEW.miny, NEW.maxy), max(NEW.miny, NEW.maxy)
		WHERE NEW.minx IS NOT NULL AND NEW.miny IS NOT NULL AND NEW.maxx IS NOT NULL AND NEW.maxy IS NOT NULL;
END;
