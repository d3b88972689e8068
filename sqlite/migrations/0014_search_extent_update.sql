-- An entry whose extent changes in place (a dataset's features edited:
-- sqlite/mapsearch.go featuresChanged, which leaves the full-text index
-- alone) has its spatial index row follow, as the insert trigger makes it.
CREATE TRIGGER search_docs_au_extent AFTER UPDATE OF minx, miny, maxx, maxy ON search_docs BEGIN
	DELETE FROM search_rtree WHERE id = OLD.docid;
	INSERT INTO search_rtree (id, minx, maxx, miny, maxy)
		SELECT NEW.docid, iif(NEW.minx <= NEW.maxx, NEW.minx, -180), iif(NEW.minx <= NEW.maxx, NEW.maxx, 180),
			min(NEW.miny, NEW.maxy), max(NEW.miny, NEW.maxy)
		WHERE NEW.minx IS NOT NULL AND NEW.miny IS NOT NULL AND NEW.maxx IS NOT NULL AND NEW.maxy IS NOT NULL;
END;
