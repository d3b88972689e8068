-- btree_gist (in PostgreSQL's contrib, a trusted extension) lets a GiST
-- index hold a bigint beside the box: a features table's index on
-- (box, pos) gives the features of a box in position order, best first,
-- so that a page of them reads about the page, not every match
-- (attrindex.go builds it, query.go orders by pos <-> 0 through it).
CREATE EXTENSION IF NOT EXISTS btree_gist;
