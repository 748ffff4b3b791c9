-- The company's rulebook (docs/policy.md): each row sets one policy key to a value from a date
-- on, until a later row of the same key takes over. A day is judged by the rows in force on it;
-- of two rows of one key from the same date, the later one (higher id) stands. Rows are never
-- updated or deleted: the table is its own audit (who set it, when, why, what it replaced).
-- Only the owner's account may write it (docs/security.md); every other role reads it.
CREATE TABLE IF NOT EXISTS policy_versions (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    policy_key   VARCHAR(64)  NOT NULL,
    -- As `policy show` prints it (a list comma-separated).
    value        VARCHAR(200) NOT NULL,
    from_date    DATE         NOT NULL,
    reason       VARCHAR(500) NOT NULL,
    -- The operating-system account that ran `policy set` (its real uid), the employee the roster
    -- maps it to (NULL: none), and the MySQL account it used.
    os_user      VARCHAR(64)  NOT NULL,
    employee_id  VARCHAR(32)  NULL,
    db_user      VARCHAR(300) NOT NULL,
    set_at       DATETIME(6)  NOT NULL,  -- UTC
    -- The value in force on from_date before this row (NULL: the built-in default).
    before_value VARCHAR(200) NULL,
    KEY policy_versions_key (policy_key, from_date, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
