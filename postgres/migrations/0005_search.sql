-- Search: one row per dataset and map in search_docs, as the embedded
-- store has it (sqlite migrations 0004 to 0010). Every row is computed
-- in Go (postgres/searchdocs.go, with mapcommons.SearchGrants and
-- mapcommons.MapSearchDocument) and written in the transaction of the
-- change it follows; no trigger computes any of it. The rows of the
-- datasets and maps that exist already are written by the Go pass that
-- runs after the migrations (fillSearchDocs).
CREATE TABLE search_docs (
	docid         bigint           PRIMARY KEY, -- 2*id for a dataset, 2*id+1 for a map
	kind          smallint         NOT NULL,    -- 0 dataset, 1 map
	obj_id        bigint           NOT NULL,
	owner_id      bigint,
	title         text             NOT NULL,
	description   text             NOT NULL,
	tags          text             NOT NULL,    -- "a, b"
	-- The words of title (weight A), tags (B) and description (C), as
	-- the embedded store's tokenizer splits them (computed in Go).
	words         tsvector         NOT NULL,
	shared        boolean          NOT NULL,    -- everyone has a right to it
	groups        bigint[]         NOT NULL DEFAULT '{}', -- the groups with a right to it
	feature_count bigint           NOT NULL,
	minx          double precision,             -- the extent (west, south, east, north), NULL when none
	miny          double precision,
	maxx          double precision,
	maxy          double precision,
	-- The extent for the index: one that crosses the antimeridian spans
	-- every longitude here and is checked exactly by the query.
	bounds        box GENERATED ALWAYS AS (CASE WHEN minx IS NOT NULL AND miny IS NOT NULL AND maxx IS NOT NULL AND maxy IS NOT NULL
		THEN box(point(CASE WHEN minx <= maxx THEN minx ELSE -180 END, miny), point(CASE WHEN minx <= maxx THEN maxx ELSE 180 END, maxy))
		END) STORED,
	created_at    timestamptz      NOT NULL,
	updated_at    timestamptz      NOT NULL
);
CREATE INDEX search_docs_words ON search_docs USING gin (words);
CREATE INDEX search_docs_bounds ON search_docs USING gist (bounds);
CREATE INDEX search_docs_groups ON search_docs USING gin (groups);
CREATE INDEX search_docs_owner ON search_docs (owner_id);
CREATE INDEX search_docs_title ON search_docs ((lower(title COLLATE "C")), docid);
CREATE INDEX search_docs_created ON search_docs (created_at, docid);
CREATE INDEX search_docs_updated ON search_docs (updated_at, docid);
CREATE INDEX search_docs_features ON search_docs (feature_count, docid);

-- The datasets each map's finder: layers name (whether they exist or
-- not), so that a change of a dataset finds the maps whose entries it
-- changes.
CREATE TABLE search_map_datasets (
	dataset_id bigint NOT NULL,
	map_id     bigint NOT NULL REFERENCES maps (id) ON DELETE CASCADE,
	PRIMARY KEY (dataset_id, map_id)
);
CREATE INDEX search_map_datasets_map ON search_map_datasets (map_id);
