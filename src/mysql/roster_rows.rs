//! Roster queries: upserting an imported roster, reading it for the day's boards, and the
//! employee an OS account acts as.

use std::collections::BTreeMap;

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{TxOpts, Value};

use super::placeholders;
use super::typed::Cols;
use super::Db;
use crate::domain::authority::Actor;
use crate::domain::roster::{Login, Role, RosterRow};

/// Rows per multi-row INSERT: well under 65,535 placeholders and max_allowed_packet.
const CHUNK: usize = 2_000;

/// What an import did.
#[derive(Debug, Default, serde::Serialize)]
pub struct ImportReport {
    pub employees: usize,
    pub departments: usize,
    pub supervisors: usize,
    /// Departments that still have no supervisor after the import.
    pub departments_without_supervisor: Vec<String>,
}

/// Upsert the whole roster in one transaction: all of it lands, or none of it.
pub fn upsert(pool: &Db, rows: &[RosterRow]) -> Result<ImportReport> {
    let mut depts: BTreeMap<&str, &str> = BTreeMap::new();
    for r in rows {
        depts.entry(&r.department_id).or_insert(&r.department_name);
    }
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let depts: Vec<(&str, &str)> = depts.into_iter().collect();
    for chunk in depts.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO departments (id, name) VALUES {} ON DUPLICATE KEY UPDATE name = VALUES(name)",
            placeholders(chunk.len(), 2)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|(id, n)| [Value::from(*id), Value::from(*n)])
            .collect();
        tx.exec_drop(sql, params)?;
    }
    // A login the file gives is taken from whoever held it (two employees may swap theirs):
    // freed first, as the unique key is checked row by row.
    let given: Vec<Value> = rows
        .iter()
        .filter_map(|r| match &r.login {
            Login::Set(l) => Some(Value::from(l)),
            _ => None,
        })
        .collect();
    for chunk in given.chunks(CHUNK) {
        let sql = format!(
            "UPDATE employees SET login = NULL WHERE login IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        tx.exec_drop(sql, chunk.to_vec())?;
    }
    let (kept, listed): (Vec<&RosterRow>, Vec<&RosterRow>) = rows.iter().partition(|r| r.login == Login::Keep);
    upsert_employees(&mut tx, &kept, false)?;
    upsert_employees(&mut tx, &listed, true)?;
    // Whom an imported employee supervises is whatever the file says: clear them all, then
    // insert the file's supervisors (a new supervisor replaces the department's old one).
    for chunk in rows.chunks(CHUNK) {
        let ids: Vec<Value> = chunk.iter().map(|r| Value::from(&r.employee_id)).collect();
        let sql = format!(
            "DELETE FROM supervisors WHERE employee_id IN ({})",
            vec!["?"; ids.len()].join(",")
        );
        tx.exec_drop(sql, ids)?;
    }
    let sups: Vec<&RosterRow> = rows.iter().filter(|r| r.role == Role::Supervisor).collect();
    for chunk in sups.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO supervisors (department_id, employee_id) VALUES {} \
             ON DUPLICATE KEY UPDATE employee_id = VALUES(employee_id)",
            placeholders(chunk.len(), 2)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|r| [Value::from(&r.department_id), Value::from(&r.employee_id)])
            .collect();
        tx.exec_drop(sql, params)?;
    }
    let without: Vec<String> = tx.query(
        "SELECT d.id FROM departments d LEFT JOIN supervisors s ON s.department_id = d.id \
         WHERE s.employee_id IS NULL ORDER BY d.id",
    )?;
    tx.commit()?;
    Ok(ImportReport {
        employees: rows.len(),
        departments: depts.len(),
        supervisors: sups.len(),
        departments_without_supervisor: without,
    })
}

/// Insert or update employees; `login`: the file has the column, so the record takes it
/// (without it, a new employee has no login and an existing one keeps theirs).
fn upsert_employees(tx: &mut mysql::Transaction, rows: &[&RosterRow], login: bool) -> Result<()> {
    for chunk in rows.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO employees (id, name, department_id, role, active, login) VALUES {} \
             ON DUPLICATE KEY UPDATE name = VALUES(name), department_id = VALUES(department_id), \
             role = VALUES(role), active = TRUE{}",
            placeholders(chunk.len(), 6),
            if login { ", login = VALUES(login)" } else { "" }
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|r| {
                [
                    Value::from(&r.employee_id),
                    Value::from(&r.name),
                    Value::from(&r.department_id),
                    Value::from(r.role.as_str()),
                    Value::from(true),
                    match &r.login {
                        Login::Set(l) => Value::from(l),
                        Login::Keep | Login::Clear => Value::NULL,
                    },
                ]
            })
            .collect();
        tx.exec_drop(sql, params)?;
    }
    Ok(())
}

/// The active employee the roster maps to an operating-system account, if any.
pub(crate) fn actor_of_login(conn: &mut impl Queryable, login: &str) -> Result<Option<Actor>> {
    let r: Option<(String, String)> = conn.exec_first(
        "SELECT id, CAST(role AS CHAR) FROM employees WHERE login = ? AND active",
        (login,),
    )?;
    r.map(|(employee_id, role)| {
        let role =
            Role::parse(&role).ok_or_else(|| anyhow::anyhow!("employee {employee_id} has an unknown role '{role}'"))?;
        Ok(Actor { employee_id, role })
    })
    .transpose()
}

pub use crate::domain::roster::Member;

/// The active employees among `ids` (unknown or inactive ones are left out).
pub(crate) fn active_by_ids(pool: &Db, ids: &[&str]) -> Result<Vec<Member>> {
    let mut conn = pool.get_conn()?;
    let mut found = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(1_000) {
        let sql = format!(
            "SELECT id, department_id, name FROM employees WHERE active AND id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        let rows: Vec<mysql::Row> = conn.exec(sql, chunk.to_vec())?;
        for r in rows {
            let mut c = Cols::new(r, "employees row");
            found.push(Member {
                employee_id: c.get(0)?,
                department_id: c.get(1)?,
                name: c.get(2)?,
            });
        }
    }
    Ok(found)
}

/// Every active employee, ordered by department then id.
pub fn active_members(pool: &Db) -> Result<Vec<Member>> {
    let mut conn = pool.get_conn()?;
    Ok(conn.query_map(
        "SELECT id, department_id, name FROM employees WHERE active ORDER BY department_id, id",
        |(employee_id, department_id, name)| Member {
            employee_id,
            department_id,
            name,
        },
    )?)
}

/// The active members of some departments, ordered by department then id: settle and the
/// next day's layout go through the roster a slice of departments at a time. Without `names`
/// the names are left empty (settle needs none), and the department index alone answers.
pub(crate) fn active_members_of(conn: &mut impl Queryable, depts: &[String], names: bool) -> Result<Vec<Member>> {
    if depts.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        // `active` between the two keeps the index's own order (department_id, active, id), so
        // MySQL reads each slice in order instead of sorting it (a filesort of every slice
        // otherwise); for active employees that is the order by department, then id.
        "SELECT id, department_id, {} FROM employees WHERE active AND department_id IN ({}) \
         ORDER BY department_id, active, id",
        if names { "name" } else { "''" },
        vec!["?"; depts.len()].join(",")
    );
    members(conn, &sql, depts)
}

/// Up to `limit` active employees with ids after `after` (`""`: from the first), in id order:
/// the whole roster a chunk at a time, read along the primary key (no lookup from a secondary
/// index to the row for each name, which reading by department costs).
pub(crate) fn active_members_after(conn: &mut impl Queryable, after: &str, limit: usize) -> Result<Vec<Member>> {
    let sql =
        format!("SELECT id, department_id, name FROM employees WHERE active AND id > ? ORDER BY id LIMIT {limit}");
    members(conn, &sql, &[after])
}

fn members<P: AsRef<str>>(conn: &mut impl Queryable, sql: &str, params: &[P]) -> Result<Vec<Member>> {
    let params: Vec<Value> = params.iter().map(|p| Value::from(p.as_ref())).collect();
    Ok(conn.exec_map(sql, params, |(employee_id, department_id, name)| Member {
        employee_id,
        department_id,
        name,
    })?)
}

/// Every department id with its number of active employees, in the order of its first active
/// employee's id (those with none first): settle writes the rows of a slice of departments at
/// a time, and in a roster numbered by department, as most are, this order hands MySQL its rows
/// in primary-key order. The counts save settle a second pass over the roster for its total.
pub(crate) fn departments_by_first_employee(conn: &mut impl Queryable) -> Result<Vec<(String, u64)>> {
    Ok(conn.query(
        "SELECT d.id, COUNT(e.id) FROM departments d LEFT JOIN employees e ON e.department_id = d.id AND e.active \
         GROUP BY d.id ORDER BY MIN(e.id), d.id",
    )?)
}

/// When any employee row last changed (an insert, or an update that changed a value), to the
/// microsecond; empty for an empty table. One read of the `updated_at` index.
pub(crate) fn last_change(conn: &mut impl Queryable) -> Result<String> {
    let changed: Option<Option<String>> =
        conn.query_first("SELECT DATE_FORMAT(MAX(updated_at), '%Y-%m-%d %H:%i:%s.%f') FROM employees")?;
    Ok(changed.flatten().unwrap_or_default())
}

/// Every department id, and whether it has active members (only those get a board laid out).
/// Settle looks for boards of every department: an employee who moved away or left may have
/// punched on a department that has nobody left.
pub(crate) fn department_ids(conn: &mut impl Queryable) -> Result<Vec<(String, bool)>> {
    Ok(conn.query(
        "SELECT d.id, EXISTS(SELECT 1 FROM employees e WHERE e.department_id = d.id AND e.active) \
         FROM departments d ORDER BY d.id",
    )?)
}
