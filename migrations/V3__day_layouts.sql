-- The days init-day (or settle, for the next work day) laid out in Redis: settle of a day
-- laid out here that finds a department with no board at all refuses (the day looks lost in
-- Redis: `attendance recover` first). A later layout of the same day updates the counts.
CREATE TABLE IF NOT EXISTS day_layouts (
    work_date     DATE         NOT NULL PRIMARY KEY,
    departments   INT UNSIGNED NOT NULL,
    employees     INT UNSIGNED NOT NULL,
    laid_out_at   DATETIME(3)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
