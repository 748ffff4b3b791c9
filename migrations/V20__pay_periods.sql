-- Pay periods (docs/commands.md#period): a closed month is read-only to corrections, leave,
-- calendar and shift changes and to settle, so that what payroll paid stays as it was paid.
-- A month with no row is open.
CREATE TABLE IF NOT EXISTS pay_periods (
    month       DATE        NOT NULL PRIMARY KEY,  -- its first day
    closed      BOOLEAN     NOT NULL,
    changed_by  VARCHAR(32) NOT NULL,
    changed_at  TIMESTAMP   NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every close and reopen: who (the employee the OS account maps to, the account, the MySQL
-- account), when, and for a reopen why.
CREATE TABLE IF NOT EXISTS pay_period_audit (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    month       DATE         NOT NULL,
    action      ENUM('close', 'reopen') NOT NULL,
    by_employee VARCHAR(32)  NOT NULL,
    os_user     VARCHAR(64)  NOT NULL,
    db_user     VARCHAR(255) NOT NULL,
    reason      VARCHAR(500) NOT NULL DEFAULT '',
    at          TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    KEY pay_period_audit_month (month)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
