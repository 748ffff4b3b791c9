-- The roster: departments, employees and each department's supervisor.
CREATE TABLE IF NOT EXISTS departments (
    id          VARCHAR(32)  NOT NULL PRIMARY KEY,
    name        VARCHAR(200) NOT NULL,
    created_at  TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at  TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS employees (
    id             VARCHAR(32)  NOT NULL PRIMARY KEY,
    name           VARCHAR(200) NOT NULL,
    department_id  VARCHAR(32)  NOT NULL,
    role           ENUM('employee', 'supervisor') NOT NULL DEFAULT 'employee',
    active         BOOLEAN      NOT NULL DEFAULT TRUE,
    created_at     TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at     TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    KEY employees_department (department_id, active),
    CONSTRAINT employees_department_fk FOREIGN KEY (department_id) REFERENCES departments (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One supervisor per department; an employee supervises at most one department.
CREATE TABLE IF NOT EXISTS supervisors (
    department_id  VARCHAR(32) NOT NULL PRIMARY KEY,
    employee_id    VARCHAR(32) NOT NULL,
    UNIQUE KEY supervisors_employee (employee_id),
    CONSTRAINT supervisors_department_fk FOREIGN KEY (department_id) REFERENCES departments (id),
    CONSTRAINT supervisors_employee_fk FOREIGN KEY (employee_id) REFERENCES employees (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
