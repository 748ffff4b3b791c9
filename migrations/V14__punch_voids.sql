-- Punches voided before settle (`attendance punch void`): who voided which punch, when and why.
-- The punch itself left the board, so settle never sees it; the punch log keeps a row with
-- how = 'voided' at the punch's time, so `report punches` shows it was there and went.
-- Instants are UTC DATETIMEs; commands show them in the company's zone.
ALTER TABLE punch_log
    MODIFY how ENUM('live', 'bulk', 'recovered', 'corrected', 'approved', 'voided') NOT NULL;

CREATE TABLE IF NOT EXISTS punch_voids (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    work_date      DATE         NOT NULL,
    employee_id    VARCHAR(32)  NOT NULL,
    department_id  VARCHAR(32)  NOT NULL,
    punched_at     DATETIME     NOT NULL,
    kind           ENUM('in', 'out') NOT NULL,
    voided_by      VARCHAR(32)  NOT NULL,
    os_user        VARCHAR(128) NOT NULL,
    db_user        VARCHAR(300) NOT NULL,
    voided_at      DATETIME     NOT NULL,
    reason         VARCHAR(500) NOT NULL,
    KEY punch_voids_employee (employee_id, work_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
