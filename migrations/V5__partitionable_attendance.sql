-- Make `attendance` partitionable by date (`attendance db partition`): MariaDB allows no
-- foreign key on a partitioned table, nor one that references it. The two keys that tied
-- attendance rows to employees and corrections to their row are dropped; the code now
-- checks what they guarded, in the writing transaction:
--   settle writes a row only for an id found in `employees` (locked in share mode),
--   a correction is written only for a row it has just locked (SELECT ... FOR UPDATE),
--   archive deletes a day's rows and their corrections in one transaction.
-- Their indexes stay: corrections_row still finds a row's corrections, and
-- attendance_employee serves the employee reports.
ALTER TABLE corrections DROP FOREIGN KEY corrections_row_fk;
ALTER TABLE attendance DROP FOREIGN KEY attendance_employee_fk;
