-- Decisions on a day's overtime (docs/policy.md#overtime): with policy.overtime_needs_approval
-- on, a day's overtime counts in payroll only once its employee's supervisor or HR approved it.
-- Rows are never updated or deleted: the latest row of a day (the highest id) stands, and the
-- table is its own audit (who, as which accounts, when, why).
CREATE TABLE IF NOT EXISTS overtime_decisions (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    employee_id  VARCHAR(32)  NOT NULL,
    work_date    DATE         NOT NULL,
    decision     ENUM('approved', 'rejected') NOT NULL,
    reason       VARCHAR(500) NOT NULL DEFAULT '',
    -- The employee the roster maps the deciding account to, that operating-system account
    -- (its real uid) and the MySQL account.
    by_employee  VARCHAR(32)  NOT NULL,
    os_user      VARCHAR(64)  NOT NULL,
    db_user      VARCHAR(300) NOT NULL,
    decided_at   DATETIME(6)  NOT NULL,  -- UTC
    KEY overtime_decisions_day (work_date, employee_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
