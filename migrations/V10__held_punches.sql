-- Back-dating needs authority: a punch more than policy.replay_window_minutes before the server
-- time at which it is recorded, from a process whose key may not replay offline punches, is
-- held here for review instead of reaching the board. `record` is the event's outbox record as
-- the recording process made it (signed with its key, if it had one): approving a held punch
-- puts exactly that punch on the board, so its signature and provenance stand.
-- The decision is audited on the row itself, as corrections are: who (the employee the roster
-- maps to the OS account that decided), that account, the MySQL account, when and why.
-- A punch sent again (a kiosk script retrying) is the same held punch: one row per employee,
-- instant and kind.
CREATE TABLE IF NOT EXISTS held_punches (
    id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    event_id       VARCHAR(64)  NOT NULL,
    work_date      DATE         NOT NULL,
    employee_id    VARCHAR(32)  NOT NULL,
    department_id  VARCHAR(32)  NOT NULL,
    punched_at     DATETIME     NOT NULL,
    kind           ENUM('in', 'out') NOT NULL,
    source         VARCHAR(128) NOT NULL,
    key_id         VARCHAR(64)  NULL,
    recorded_at    DATETIME(3)  NOT NULL,
    record         TEXT         NOT NULL,
    status         ENUM('pending', 'approved', 'rejected') NOT NULL DEFAULT 'pending',
    decided_by     VARCHAR(32)  NULL,
    os_user        VARCHAR(64)  NULL,
    db_user        VARCHAR(300) NULL,
    decided_at     DATETIME(3)  NULL,
    reason         VARCHAR(500) NULL,
    PRIMARY KEY (id),
    UNIQUE KEY held_punches_punch (employee_id, punched_at, kind),
    KEY held_punches_day (work_date, status, department_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- An approved punch reaches the board like any other and is logged as such.
ALTER TABLE punch_log
    MODIFY how ENUM('live', 'bulk', 'recovered', 'corrected', 'approved') NOT NULL;
