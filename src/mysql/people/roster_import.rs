//! An import's transaction: the record of the employees it lists (and with `--full` of
//! everyone) read and locked, the plan worked out from it, then written and committed, or
//! rolled back for `--dry-run`. All of it lands, or none of it.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{TxOpts, Value};

use crate::domain::people::employment::Employment;
use crate::domain::people::roster::{Role, RosterRow};
use crate::domain::people::roster_plan::{Held, Plan};
use crate::mysql::placeholders;
use crate::mysql::typed::Cols;
use crate::mysql::Db;

/// Rows per multi-row statement: well under 65,535 placeholders and max_allowed_packet.
const CHUNK: usize = 2_000;

/// The record's side of an import.
#[derive(Debug, Default, serde::Serialize)]
pub struct ImportReport {
    pub employees: usize,
    pub departments: usize,
    pub supervisors: usize,
    /// Departments that still have no supervisor after the import.
    pub departments_without_supervisor: Vec<String>,
}

/// Whether the import is written or only shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    Commit,
    /// `--dry-run`: every statement runs, then the transaction is rolled back.
    RollBack,
}

/// Read the record (every employee when `all`, else those `rows` list) and the departments,
/// locked until the end; `work_out` makes the plan from them; `before_write` gets the record
/// and the plan before anything is written (for the Redis move journal); then the plan is
/// written and the transaction finished as asked.
pub(crate) fn import(
    pool: &Db,
    rows: &[RosterRow],
    all: bool,
    work_out: impl FnOnce(&HashMap<String, Held>, &HashMap<String, String>) -> Result<Plan>,
    before_write: impl FnOnce(&HashMap<String, Held>, &Plan) -> Result<()>,
    finish: Finish,
) -> Result<(Plan, ImportReport)> {
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let held = if all {
        held_where(&mut tx, "", Vec::new())?
    } else {
        let mut held = HashMap::with_capacity(rows.len());
        for chunk in rows.chunks(CHUNK) {
            let ids: Vec<Value> = chunk.iter().map(|r| Value::from(&r.employee_id)).collect();
            let cond = format!("WHERE id IN ({})", vec!["?"; ids.len()].join(","));
            held.extend(held_where(&mut tx, &cond, ids)?);
        }
        held
    };
    let departments: HashMap<String, String> = tx
        .query::<(String, String), _>("SELECT id, name FROM departments FOR UPDATE")?
        .into_iter()
        .collect();
    let plan = work_out(&held, &departments)?;
    before_write(&held, &plan)?;
    let report = write(&mut tx, rows, &plan)?;
    match finish {
        Finish::Commit => tx.commit()?,
        Finish::RollBack => tx.rollback()?,
    }
    Ok((plan, report))
}

/// A plain import, committed, that touches no other store (the benchmarks' set-up).
pub fn upsert(pool: &Db, rows: &[RosterRow]) -> Result<ImportReport> {
    let today = chrono::Utc::now().date_naive();
    let work_out = |held: &HashMap<String, Held>, depts: &HashMap<String, String>| {
        crate::domain::people::roster_plan::plan(rows, held, depts, None, today).map_err(anyhow::Error::msg)
    };
    Ok(import(pool, rows, false, work_out, |_, _| Ok(()), Finish::Commit)?.1)
}

fn held_where(tx: &mut mysql::Transaction, cond: &str, params: Vec<Value>) -> Result<HashMap<String, Held>> {
    let sql = format!(
        "SELECT id, name, department_id, CAST(role AS CHAR), login, start_date, end_date, active \
         FROM employees {cond} FOR UPDATE"
    );
    let rows: Vec<mysql::Row> = tx.exec(sql, params)?;
    let mut held = HashMap::with_capacity(rows.len());
    for r in rows {
        let h = held_from(&mut Cols::new(r, "employees row"))?;
        held.insert(h.employee_id.clone(), h);
    }
    Ok(held)
}

/// The columns `id, name, department_id, CAST(role AS CHAR), login, start_date, end_date,
/// active`, in that order from the first.
pub(crate) fn held_from(c: &mut Cols) -> Result<Held> {
    Ok(Held {
        employee_id: c.get(0)?,
        name: c.get(1)?,
        department_id: c.get(2)?,
        role: c.parse(3, Role::parse)?,
        login: c.get(4)?,
        employment: Employment::new(c.get(5)?, c.get(6)?),
        active: c.get(7)?,
    })
}

fn write(tx: &mut mysql::Transaction, rows: &[RosterRow], plan: &Plan) -> Result<ImportReport> {
    let mut depts: BTreeMap<&str, &str> = BTreeMap::new();
    for r in rows {
        depts.entry(&r.department_id).or_insert(&r.department_name);
    }
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
    // A login a written employee holds is taken from whoever held it (two employees may swap
    // theirs): freed first, as the unique key is checked row by row.
    let logins: Vec<Value> = plan
        .write
        .iter()
        .filter_map(|h| h.login.as_ref())
        .map(Value::from)
        .collect();
    for chunk in logins.chunks(CHUNK) {
        let sql = format!(
            "UPDATE employees SET login = NULL WHERE login IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        tx.exec_drop(sql, chunk.to_vec())?;
    }
    for chunk in plan.write.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO employees (id, name, department_id, role, active, login, start_date, end_date) VALUES {} \
             ON DUPLICATE KEY UPDATE name = VALUES(name), department_id = VALUES(department_id), \
             role = VALUES(role), active = VALUES(active), login = VALUES(login), \
             start_date = VALUES(start_date), end_date = VALUES(end_date)",
            placeholders(chunk.len(), 8),
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|h| {
                [
                    Value::from(&h.employee_id),
                    Value::from(&h.name),
                    Value::from(&h.department_id),
                    Value::from(h.role.as_str()),
                    Value::from(h.active),
                    Value::from(h.login.as_ref()),
                    Value::from(h.employment.start),
                    Value::from(h.employment.end),
                ]
            })
            .collect();
        tx.exec_drop(sql, params)?;
    }
    let mut leave: BTreeMap<Option<chrono::NaiveDate>, Vec<Value>> = BTreeMap::new();
    for h in &plan.leave {
        leave
            .entry(h.employment.end)
            .or_default()
            .push(Value::from(&h.employee_id));
    }
    for (end, ids) in leave {
        for chunk in ids.chunks(CHUNK) {
            let mut params = vec![Value::from(end)];
            params.extend(chunk.iter().cloned());
            let sql = format!(
                "UPDATE employees SET end_date = ? WHERE id IN ({})",
                vec!["?"; chunk.len()].join(",")
            );
            tx.exec_drop(sql, params)?;
        }
    }
    for chunk in plan.drop.chunks(CHUNK) {
        let sql = format!(
            "UPDATE employees SET active = FALSE WHERE id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        tx.exec_drop(sql, chunk.iter().map(Value::from).collect::<Vec<_>>())?;
    }
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
    Ok(ImportReport {
        employees: rows.len(),
        departments: depts.len(),
        supervisors: sups.len(),
        departments_without_supervisor: without,
    })
}
