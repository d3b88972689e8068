-- The attribute that identifies the rows of a feed (Dataset.FeedKey): a
-- refetch then changes only the rows that changed; '' when none.
ALTER TABLE datasets ADD COLUMN feed_key text NOT NULL DEFAULT '';
