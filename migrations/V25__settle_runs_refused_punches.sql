-- Punches a settle run refused because no good signed record backs them: board tokens with no
-- punch log record of the same employee, work date, time and kind whose signature verifies, and
-- punch log entries whose signature fails (docs/settle.md, "Only signed punches settle").
-- `doctor` shows the last runs' counts.
ALTER TABLE settle_runs
    ADD COLUMN refused_punches INT UNSIGNED NOT NULL DEFAULT 0 AFTER boards_deleted;
