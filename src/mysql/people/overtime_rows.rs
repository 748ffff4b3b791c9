//! Decisions on days' overtime (`migrations/V26`): the latest of each day in a period, read by
//! the month sheet and payroll, and one added by `overtime approve|reject` with who decided,
//! as which accounts, and why.

use std::collections::HashMap;

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;

use crate::domain::day::overtime::Decision;
use crate::error::Error;
use crate::mysql::Tx;

/// The decision standing on each day (the latest) of the days and employees `filter` selects
/// (a condition on `employee_id` and `work_date`, with its `params`): what a slice of a streamed
/// report needs, so that memory follows the slice rather than the company.
pub(crate) fn standing(
    conn: &mut impl Queryable,
    filter: &str,
    params: Vec<mysql::Value>,
) -> Result<HashMap<(String, NaiveDate), Decision>> {
    let rows: Vec<(String, NaiveDate, String)> = conn.exec(
        format!(
            "SELECT employee_id, work_date, CAST(decision AS CHAR) FROM overtime_decisions \
             WHERE {filter} ORDER BY id"
        ),
        params,
    )?;
    decisions(rows)
}

fn decisions(rows: Vec<(String, NaiveDate, String)>) -> Result<HashMap<(String, NaiveDate), Decision>> {
    let mut out = HashMap::with_capacity(rows.len());
    for (e, date, d) in rows {
        let d = Decision::parse(&d)
            .ok_or_else(|| Error::internal(format!("overtime decision of {e} on {date}: unknown '{d}'")))?;
        out.insert((e, date), d);
    }
    Ok(out)
}

/// A decision to add.
pub(crate) struct NewDecision<'a> {
    pub employee_id: &'a str,
    pub date: NaiveDate,
    pub decision: Decision,
    pub reason: &'a str,
    pub by: &'a str,
    pub os_user: &'a str,
}

/// Add a decision in `tx`: its id and the MySQL account the server wrote.
pub(crate) fn add(tx: &mut Tx, d: &NewDecision) -> Result<(u64, String)> {
    crate::mysql::audit::insert(
        tx,
        "overtime_decisions",
        "INSERT INTO overtime_decisions (employee_id, work_date, decision, reason, by_employee, os_user, \
         db_user, decided_at) VALUES (?, ?, ?, ?, ?, ?, CURRENT_USER(), UTC_TIMESTAMP(6))",
        (d.employee_id, d.date, d.decision.as_str(), d.reason, d.by, d.os_user),
    )
}

/// The employees of `dept` with a settled row on `date`.
pub(crate) fn settled_in(conn: &mut impl Queryable, date: NaiveDate, dept: &str) -> Result<Vec<String>> {
    Ok(conn.exec(
        "SELECT employee_id FROM attendance WHERE work_date = ? AND department_id = ? ORDER BY employee_id",
        (date, dept),
    )?)
}
