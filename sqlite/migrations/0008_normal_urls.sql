-- The URLs datasets were registered from, in their normal form
-- (mapcommons.NormalURL), as registrations now store them, so that a URL
-- registered before is found under any spelling. The work is Go's: the
-- hook of this migration (sqlite/feed.go, normalURLs) runs in its
-- transaction. A URL whose normal form another dataset has already keeps
-- its spelling (two datasets cannot be made one).
SELECT 1;
