-- Which Redis servers (their masters' run_ids) held a day's boards when it was laid out with no
-- punch yet recorded. Settle reads the journal back for a day only when the servers it finds are
-- not these: a restart or a fail-over is what loses acknowledged punches. NULL: not known (laid
-- out after its first punch, laid out again on other servers, or before this column existed),
-- and the day is checked.
ALTER TABLE day_layouts
    ADD COLUMN redis_identity VARCHAR(1024) NULL AFTER laid_out_at;
