-- Feeds claimed for a refresh (mapcommons.FeedClaimService): until when
-- the claim holds; NULL when the feed was never claimed.
ALTER TABLE datasets ADD COLUMN claimed_until timestamptz;
CREATE INDEX datasets_feeds_due ON datasets (data_type, fetched_at);
