//! Decisions on overtime: with `policy.overtime_needs_approval` on, a day's overtime counts in
//! payroll only once the employee's supervisor or HR approves it (`overtime approve`); rejected,
//! it counts 0. Who may decide is `correct`'s rule (`domain::people::authority`); a closed pay
//! period refuses it; each decision is a row of `overtime_decisions`, its own audit.

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use crate::config::Config;
use crate::domain::day::overtime::Decision;
use crate::domain::people::authority;
use crate::error::Error;
use crate::mysql::corrections;
use crate::mysql::people::overtime_rows::{self, NewDecision};
use crate::ops::lookup;

/// Whose days a decision is on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Whose<'a> {
    Employee(&'a str),
    /// Every member of the department with a settled row on the day, but the one deciding.
    Department(&'a str),
}

/// A decision as asked.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub whose: Whose<'a>,
    pub date: NaiveDate,
    pub decision: Decision,
    pub reason: Option<&'a str>,
    /// The operating-system account running the command: who acts (`lookup::os_user`).
    pub os_user: &'a str,
}

/// What was decided: one audit row per employee.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Decided {
    pub work_date: NaiveDate,
    pub decision: &'static str,
    /// The employee who decided: the one the roster maps to `os_user`.
    pub by: String,
    pub os_user: String,
    pub db_user: String,
    pub reason: Option<String>,
    /// One audit row per employee.
    pub decisions: Vec<Row>,
}

/// One employee's decision as recorded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub employee_id: String,
    /// Its row in `overtime_decisions`.
    pub decision_id: u64,
}

/// Record a decision on the overtime of a day: refused (exit 1, nothing written) when the
/// rulebook does not ask for approval that day, the day is not settled, the caller may not
/// decide on one of the employees, or the day is in a closed pay period.
pub(crate) fn decide(cfg: &Config, req: &Request) -> Result<Decided> {
    crate::domain::day::review::check_reason(req.reason, false).map_err(Error::input)?;
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let policy = lookup::rules_from(cfg, &db)?.on(req.date)?;
    if !policy.overtime.needs_approval {
        return Err(Error::refused(format!(
            "policy.overtime_needs_approval is off on {}: that day's overtime counts without a decision",
            req.date
        ))
        .into());
    }
    let actor = lookup::actor(&mut conn, req.os_user, None)?;
    let employees: Vec<String> = match req.whose {
        Whose::Employee(e) => {
            if crate::mysql::attendance::row(&mut conn, req.date, e)?.is_none() {
                return Err(
                    Error::refused(format!("{e} has no settled row on {}: settle the day first", req.date)).into(),
                );
            }
            vec![e.to_string()]
        }
        Whose::Department(d) => overtime_rows::settled_in(&mut conn, req.date, d)?
            .into_iter()
            .filter(|e| *e != actor.employee_id)
            .collect(),
    };
    if employees.is_empty() {
        return Err(Error::refused(format!("no settled row on {} to decide on", req.date)).into());
    }
    let ids: Vec<&str> = employees.iter().map(String::as_str).collect();
    let mut known = corrections::supervisors_of(&mut conn, &ids)?;
    let today = lookup::server_today(&mut conn, cfg.timezone)?;
    for e in &ids {
        let target = (*e, known.remove(*e));
        lookup::may_act(&actor, target, today, req.date, authority::may_decide_overtime)?;
    }
    crate::mysql::people::periods::refuse_closed(&mut conn, req.date, req.date, "overtime decision")?;
    let mut tx = crate::mysql::begin(&mut conn)?;
    let mut decisions = Vec::with_capacity(ids.len());
    let mut db_user = String::new();
    for e in ids {
        let row = NewDecision {
            employee_id: e,
            date: req.date,
            decision: req.decision,
            reason: req.reason.unwrap_or_default(),
            by: &actor.employee_id,
            os_user: req.os_user,
        };
        let (id, user) = overtime_rows::add(&mut tx, &row)?;
        decisions.push(Row {
            employee_id: e.to_string(),
            decision_id: id,
        });
        db_user = user;
    }
    tx.commit()?;
    Ok(Decided {
        work_date: req.date,
        decision: req.decision.as_str(),
        by: actor.employee_id,
        os_user: req.os_user.to_string(),
        db_user,
        reason: req.reason.map(str::to_string),
        decisions,
    })
}
