-- A settle run says how it ended when it did not end well: `failed` (stopped before every row
-- was committed: MySQL out of space, say; what was committed is in rows_written) and
-- `failed_after_commit` (every row committed, then deleting the boards, draining the outboxes
-- or laying out the next work day failed). `problem` is the error's one line (at most 300
-- characters, as printed), empty for a run that ended well.
ALTER TABLE settle_runs
    MODIFY outcome ENUM('running', 'ok', 'partial', 'interrupted', 'failed', 'failed_after_commit') NOT NULL,
    ADD COLUMN problem VARCHAR(300) NOT NULL DEFAULT '';
