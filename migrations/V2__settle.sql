-- The record of each day: the work calendar, leave, one attendance row per employee and day,
-- corrections with their audit, and the settle runs with their failures.
-- Instants are UTC DATETIMEs; commands show them in the company's zone.

-- Overrides of the policy's week: a holiday on a week day, a work day on a weekend.
CREATE TABLE IF NOT EXISTS calendar_days (
    day         DATE         NOT NULL PRIMARY KEY,
    kind        ENUM('workday', 'holiday') NOT NULL,
    note        VARCHAR(200) NOT NULL DEFAULT '',
    updated_at  TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Approved leave, both ends included. Cancelled leave stays, for the history.
CREATE TABLE IF NOT EXISTS leaves (
    id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    employee_id   VARCHAR(32)  NOT NULL,
    from_date     DATE         NOT NULL,
    to_date       DATE         NOT NULL,
    kind          VARCHAR(32)  NOT NULL,
    note          VARCHAR(200) NOT NULL DEFAULT '',
    status        ENUM('approved', 'cancelled') NOT NULL DEFAULT 'approved',
    created_at    DATETIME     NOT NULL,
    cancelled_at  DATETIME     NULL,
    KEY leaves_range (from_date, to_date),
    KEY leaves_employee (employee_id, from_date),
    CONSTRAINT leaves_employee_fk FOREIGN KEY (employee_id) REFERENCES employees (id),
    CONSTRAINT leaves_order CHECK (from_date <= to_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per employee and day, written by settle (upsert on the primary key, so a rerun
-- rewrites the same rows). `punches` is the day's punch history, oldest first, as
-- "in@2026-11-27T07:55:00Z,out@..." (UTC): kept on the row rather than in a table of its own
-- so that settle writes one row per employee, and so that a rerun after the boards were
-- deleted recomputes the very same row from it. A corrected row keeps its corrected times,
-- status and minutes across reruns of settle.
CREATE TABLE IF NOT EXISTS attendance (
    work_date      DATE        NOT NULL,
    employee_id    VARCHAR(32) NOT NULL,
    department_id  VARCHAR(32) NOT NULL,
    status         ENUM('present', 'late', 'early_leave', 'late_and_early', 'missing_checkout',
                        'missing_checkin', 'absent', 'on_leave', 'rest_day') NOT NULL,
    first_in       DATETIME    NULL,
    last_out       DATETIME    NULL,
    late_minutes   SMALLINT UNSIGNED NOT NULL DEFAULT 0,
    early_minutes  SMALLINT UNSIGNED NOT NULL DEFAULT 0,
    punches        VARCHAR(2000) NOT NULL DEFAULT '',
    corrected      BOOLEAN     NOT NULL DEFAULT FALSE,
    PRIMARY KEY (work_date, employee_id),
    KEY attendance_day_dept (work_date, department_id, status),
    KEY attendance_employee (employee_id, work_date),
    CONSTRAINT attendance_employee_fk FOREIGN KEY (employee_id) REFERENCES employees (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every correction: who, when, the row before and after, and why.
CREATE TABLE IF NOT EXISTS corrections (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    work_date      DATE        NOT NULL,
    employee_id    VARCHAR(32) NOT NULL,
    corrected_by   VARCHAR(32) NOT NULL,
    corrected_at   DATETIME    NOT NULL,
    reason         VARCHAR(500) NOT NULL,
    old_status     VARCHAR(20) NOT NULL,
    new_status     VARCHAR(20) NOT NULL,
    old_first_in   DATETIME    NULL,
    new_first_in   DATETIME    NULL,
    old_last_out   DATETIME    NULL,
    new_last_out   DATETIME    NULL,
    KEY corrections_row (work_date, employee_id),
    CONSTRAINT corrections_row_fk FOREIGN KEY (work_date, employee_id)
        REFERENCES attendance (work_date, employee_id),
    CONSTRAINT corrections_by_fk FOREIGN KEY (corrected_by) REFERENCES employees (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per settle run. A run still 'running' when a later one starts was killed: the later
-- run marks it 'interrupted'. `counts` is a JSON object: status -> rows.
CREATE TABLE IF NOT EXISTS settle_runs (
    id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    work_date       DATE        NOT NULL,
    started_at      DATETIME(3) NOT NULL,
    finished_at     DATETIME(3) NULL,
    outcome         ENUM('running', 'ok', 'partial', 'interrupted') NOT NULL,
    employees       INT UNSIGNED NOT NULL DEFAULT 0,
    rows_written    INT UNSIGNED NOT NULL DEFAULT 0,
    failed          INT UNSIGNED NOT NULL DEFAULT 0,
    boards_deleted  INT UNSIGNED NOT NULL DEFAULT 0,
    counts          VARCHAR(1000) NOT NULL DEFAULT '{}',
    KEY settle_runs_day (work_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Rows a run could not write, with the reason.
CREATE TABLE IF NOT EXISTS settle_failures (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id         BIGINT UNSIGNED NOT NULL,
    work_date      DATE        NOT NULL,
    employee_id    VARCHAR(64) NOT NULL,
    department_id  VARCHAR(64) NOT NULL,
    reason         VARCHAR(1000) NOT NULL,
    KEY settle_failures_run (run_id),
    CONSTRAINT settle_failures_run_fk FOREIGN KEY (run_id) REFERENCES settle_runs (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
