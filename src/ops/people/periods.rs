//! Pay periods: HR closes a month, after which nothing changes its days (corrections, leave,
//! calendar and shift changes, settle are refused naming it), and reopens it with a reason;
//! both audited in `pay_period_audit`.

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use crate::config::Config;
use crate::domain::people::roster::Role;
use crate::error::Error;
use crate::ops::settle::resettle;

/// What a close or reopen did.
#[derive(Debug, Serialize)]
pub(crate) struct Changed {
    /// `YYYY-MM`.
    pub period: String,
    pub closed: bool,
    /// `false`: it already was so (nothing written).
    pub changed: bool,
    /// The employee the account running the command maps to.
    pub by: String,
}

/// Close (`close`) or reopen `month` (its first day); a reopen needs a `reason`.
pub(crate) fn set(cfg: &Config, month: NaiveDate, close: bool, reason: &str) -> Result<Changed> {
    if !close {
        crate::domain::text::check("--reason", reason).map_err(Error::input)?;
        if reason.trim().is_empty() || reason.chars().count() > 500 {
            return Err(Error::input("--reason must say why, in at most 500 characters").into());
        }
    }
    let db = crate::mysql::Db::open(cfg)?;
    // No change and no settle between reading the state and writing it.
    let _lock = resettle::lock(&db)?;
    let mut conn = db.conn()?;
    let os_user = crate::ops::lookup::os_user();
    let actor = crate::mysql::people::roster_rows::actor_of_login(&mut conn, &os_user)?.ok_or_else(|| {
        Error::refused(format!(
            "the account '{os_user}' is no active employee's login: only HR closes or reopens a pay period"
        ))
    })?;
    if actor.role != Role::Hr {
        return Err(Error::refused(format!(
            "{} is not HR: only HR closes or reopens a pay period",
            actor.employee_id
        ))
        .into());
    }
    let mut tx = crate::mysql::begin(&mut conn)?;
    let changed = crate::mysql::people::periods::set(&mut tx, month, close, &actor.employee_id, &os_user, reason)?;
    tx.commit()?;
    Ok(Changed {
        period: month.format("%Y-%m").to_string(),
        closed: close,
        changed,
        by: actor.employee_id,
    })
}
