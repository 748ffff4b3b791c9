-- Work patterns: named shifts and who follows which from when (docs/shifts.md). A company with
-- no shift and no assignment behaves exactly as before: everyone follows the shift `default`,
-- which is the company policy of the day (policy.checkin_deadline, checkout_from, grace,
-- work_days, break_minutes) and is never stored here.
-- A shift whose end is not after its start crosses midnight: its punches belong to the date on
-- which it starts (domain::shifts).
CREATE TABLE IF NOT EXISTS shifts (
    name                 VARCHAR(32)       NOT NULL PRIMARY KEY,
    start_time           TIME              NOT NULL,
    end_time             TIME              NOT NULL,
    late_grace_minutes   SMALLINT UNSIGNED NOT NULL DEFAULT 0,
    early_grace_minutes  SMALLINT UNSIGNED NOT NULL DEFAULT 0,
    -- e.g. 'mon,tue,wed,thu,fri'
    work_days            VARCHAR(40)       NOT NULL,
    break_minutes        SMALLINT UNSIGNED NOT NULL DEFAULT 0,
    part_time            BOOLEAN           NOT NULL DEFAULT FALSE,
    updated_at           TIMESTAMP         NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Who follows a shift from when: the latest assignment on or before a date applies; an
-- employee's own beats their department's; none at all is the shift `default`. The shift
-- `default` may be assigned too (back to the policy from that date).
CREATE TABLE IF NOT EXISTS shift_assignments (
    scope       ENUM('department', 'employee') NOT NULL,
    target      VARCHAR(32) NOT NULL,
    from_date   DATE        NOT NULL,
    shift       VARCHAR(32) NOT NULL,
    assigned_at TIMESTAMP   NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    PRIMARY KEY (scope, target, from_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Half-day leave: NULL is a whole day (every row before this migration), else the half off.
ALTER TABLE leaves
    ADD COLUMN half ENUM('morning', 'afternoon') NULL AFTER kind;

ALTER TABLE attendance
    MODIFY status ENUM('present', 'late', 'early_leave', 'late_and_early', 'missing_checkout',
                       'missing_checkin', 'absent', 'on_leave', 'rest_day',
                       'half_day_leave', 'part_time') NOT NULL;
