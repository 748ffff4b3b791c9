-- A leave or calendar change for a day already settled re-settles the rows it changes, audited
-- in `corrections` like a correction (who, when, before, after, why). `resettled` tells those
-- audit rows from a supervisor's correction: the row they describe is not marked `corrected`
-- (a later settle computes it the same way). Anyone who may change leave or the calendar
-- re-settles, mapped to an employee or not: `corrected_by` is then NULL, and `os_user` (with
-- `db_user`) says who it was.
ALTER TABLE corrections
    MODIFY corrected_by VARCHAR(32) NULL,
    ADD COLUMN resettled BOOLEAN NOT NULL DEFAULT FALSE AFTER reason;
