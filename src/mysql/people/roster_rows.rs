//! Roster queries: reading it for the day's boards, and the employee an OS account acts as
//! (an import's writes are in `roster_import`).

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::Value;

use crate::domain::people::authority::Actor;
use crate::domain::people::employment::Employment;
use crate::domain::people::roster::Role;
use crate::domain::people::roster_list::Entry;
use crate::mysql::typed::Cols;
use crate::mysql::Db;

/// The active employee the roster maps to an operating-system account, if any, with their
/// employment dates (authority lasts as long as they do).
pub(crate) fn actor_of_login(conn: &mut impl Queryable, login: &str) -> Result<Option<Actor>> {
    type Row = (String, String, Option<chrono::NaiveDate>, Option<chrono::NaiveDate>);
    let r: Option<Row> = conn.exec_first(
        "SELECT id, CAST(role AS CHAR), start_date, end_date FROM employees WHERE login = ? AND active",
        (login,),
    )?;
    r.map(|(employee_id, role, start, end)| {
        let role =
            Role::parse(&role).ok_or_else(|| anyhow::anyhow!("employee {employee_id} has an unknown role '{role}'"))?;
        Ok(Actor {
            employee_id,
            role,
            employment: Employment::new(start, end),
        })
    })
    .transpose()
}

/// An employee's name as the roster has it, active or not (a leaver's settled days keep it);
/// `None` for an id MySQL does not know.
pub(crate) fn name_of(conn: &mut impl Queryable, id: &str) -> Result<Option<String>> {
    Ok(conn.exec_first("SELECT name FROM employees WHERE id = ?", (id,))?)
}

pub use crate::domain::people::roster::Member;

/// The active employees among `ids` (unknown or inactive ones are left out).
pub(crate) fn active_by_ids(pool: &Db, ids: &[&str]) -> Result<Vec<Member>> {
    let mut conn = pool.get_conn()?;
    let mut found = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(1_000) {
        let sql = format!(
            "SELECT id, department_id, name, start_date, end_date FROM employees WHERE active AND id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        let rows: Vec<mysql::Row> = conn.exec(sql, chunk.to_vec())?;
        for r in rows {
            let mut c = Cols::new(r, "employees row");
            found.push(Member {
                employee_id: c.get(0)?,
                department_id: c.get(1)?,
                name: c.get(2)?,
                employment: Employment::new(c.get(3)?, c.get(4)?),
            });
        }
    }
    Ok(found)
}

/// Every active employee, ordered by department then id.
pub fn active_members(pool: &Db) -> Result<Vec<Member>> {
    let mut conn = pool.get_conn()?;
    members(
        &mut conn,
        "SELECT id, department_id, name, start_date, end_date FROM employees WHERE active ORDER BY department_id, id",
        &[] as &[&str],
    )
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
        // otherwise); for active employees that is the order by department, then id. The dates
        // are in that index too (V12), so the index alone still answers.
        "SELECT id, department_id, {}, start_date, end_date FROM employees WHERE active AND department_id IN ({}) \
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
        format!("SELECT id, department_id, name, start_date, end_date FROM employees WHERE active AND id > ? ORDER BY id LIMIT {limit}");
    members(conn, &sql, &[after])
}

fn members<P: AsRef<str>>(conn: &mut impl Queryable, sql: &str, params: &[P]) -> Result<Vec<Member>> {
    let params: Vec<Value> = params.iter().map(|p| Value::from(p.as_ref())).collect();
    Ok(
        conn.exec_map(sql, params, |(employee_id, department_id, name, start, end)| Member {
            employee_id,
            department_id,
            name,
            employment: Employment::new(start, end),
        })?,
    )
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

/// Every department id, and whether it has active members employed on `date` (only those get
/// a board of that day laid out). The department index answers (V12 put the dates in it).
pub(crate) fn department_ids_on(conn: &mut impl Queryable, date: chrono::NaiveDate) -> Result<Vec<(String, bool)>> {
    Ok(conn.exec(
        "SELECT d.id, EXISTS(SELECT 1 FROM employees e WHERE e.department_id = d.id AND e.active \
         AND (e.start_date IS NULL OR e.start_date <= ?) AND (e.end_date IS NULL OR e.end_date >= ?)) \
         FROM departments d ORDER BY d.id",
        (date, date),
    )?)
}

/// Every employee of the record (of one department with `dept`), with their department's name,
/// in id order: what `org list` and `org export` show.
pub(crate) fn entries(conn: &mut impl Queryable, dept: Option<&str>) -> Result<Vec<Entry>> {
    let sql = format!(
        "SELECT e.id, e.name, e.department_id, CAST(e.role AS CHAR), e.login, e.start_date, e.end_date, e.active, \
         d.name FROM employees e JOIN departments d ON d.id = e.department_id {} ORDER BY e.id",
        if dept.is_some() {
            "WHERE e.department_id = ?"
        } else {
            ""
        }
    );
    let rows: Vec<mysql::Row> = conn.exec(sql, dept.into_iter().collect::<Vec<_>>())?;
    rows.into_iter()
        .map(|r| {
            let mut c = Cols::new(r, "employees row");
            let held = crate::mysql::people::roster_import::held_from(&mut c)?;
            Ok(Entry::new(held, c.get(8)?))
        })
        .collect()
}
