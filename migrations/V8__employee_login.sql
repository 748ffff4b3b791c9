-- Who acts is the operating-system account, not a flag: an employee may be mapped to the
-- account they log in with (the roster's optional `login` column), at most one employee per
-- account. `correct` acts as the employee mapped to the account running it. The `hr` role may
-- correct anyone's day but their own (a supervisor's included); see docs/security.md.
ALTER TABLE employees
    MODIFY role ENUM('employee', 'supervisor', 'hr') NOT NULL DEFAULT 'employee',
    ADD COLUMN login VARCHAR(32) NULL,
    ADD UNIQUE KEY employees_login (login);
