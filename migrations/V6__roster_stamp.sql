-- The Redis roster cache is rebuilt only when the roster changed: a layout compares the number
-- of active employees and the latest change to any employee row with what the cache was built
-- from. Microseconds, so that a change in the same second as the last rebuild is still a
-- change; the index answers MAX(updated_at) without reading the table.
ALTER TABLE employees
    MODIFY updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    ADD KEY employees_updated (updated_at);
