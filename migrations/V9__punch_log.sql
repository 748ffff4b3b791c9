-- The punch log: every punch of a settled day, with where it came from, so that HR can answer
-- "who recorded this punch, from where, when" for as long as the attendance rows are kept.
-- Settle writes it from Redis's per-department log of the day (see src/redis/punch.lua);
-- `correct` writes its new times as rows with how = 'corrected'.
-- Instants are UTC DATETIMEs; commands show them in the company's zone.
-- The key is (event_id, work_date), not event_id alone, so that the table can be partitioned by
-- work_date like `attendance` (MariaDB wants every unique key to hold the partitioning column);
-- an event's work date is part of the event, so an event id is still written once.
CREATE TABLE IF NOT EXISTS punch_log (
    event_id       VARCHAR(64)  NOT NULL,
    work_date      DATE         NOT NULL,
    employee_id    VARCHAR(32)  NOT NULL,
    department_id  VARCHAR(32)  NOT NULL,
    punched_at     DATETIME     NOT NULL,
    kind           ENUM('in', 'out') NOT NULL,
    source         VARCHAR(128) NOT NULL,
    key_id         VARCHAR(64)  NULL,
    recorded_at    DATETIME(3)  NOT NULL,
    how            ENUM('live', 'bulk', 'recovered', 'corrected') NOT NULL,
    PRIMARY KEY (event_id, work_date),
    KEY punch_log_employee (employee_id, work_date),
    KEY punch_log_department (department_id, work_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
