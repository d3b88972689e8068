-- Feeds claimed for a refresh (mapcommons.FeedClaimService): until when
-- the claim holds, '' when the feed was never claimed.
ALTER TABLE datasets ADD COLUMN claimed_until TEXT NOT NULL DEFAULT '';
