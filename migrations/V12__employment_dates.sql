-- Employment dates: an employee is expected (laid out on the boards, marked absent by settle)
-- only from `start_date` to `end_date`, both included; NULL is open on that side. A leaver
-- keeps their row, `active` and their history: `end_date` says they left (`org import --full`
-- sets it for everyone the file no longer lists). `active = FALSE` still means off the roster
-- altogether (a row removed by hand, or a joiner dropped by `--full` before their first day).
-- The department index now carries the id and both dates, so that the per-department reads
-- of init-day and settle still answer from the index alone, in its (department, id) order.
ALTER TABLE employees
    ADD COLUMN start_date DATE NULL AFTER login,
    ADD COLUMN end_date DATE NULL AFTER start_date,
    DROP KEY employees_department,
    ADD KEY employees_department (department_id, active, id, start_date, end_date);
