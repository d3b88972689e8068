-- A dataset's summary is extended rather than exact after edits in place
-- of more than mapcommons.ExactSummaryMax features (mapcommons.ExtendSummary):
-- its minima, maxima and extent may still cover features that are gone,
-- its means and medians are older. The servers summarize such a dataset
-- exactly again once it has been left alone a while (resummary.go).
ALTER TABLE datasets ADD COLUMN summary_extended boolean NOT NULL DEFAULT false;
