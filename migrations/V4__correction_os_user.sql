-- Who really made a correction: `corrected_by` is only what `--by` claims. `os_user` is the
-- operating-system account that ran the command (from the process's real uid, not from an
-- environment variable), `db_user` the MySQL account it used (CURRENT_USER()). Rows from
-- before this migration have neither ('').
ALTER TABLE corrections
    ADD COLUMN os_user VARCHAR(64) NOT NULL DEFAULT '' AFTER corrected_by,
    ADD COLUMN db_user VARCHAR(300) NOT NULL DEFAULT '' AFTER os_user;
