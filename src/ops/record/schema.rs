//! The database itself: its schema (`attendance migrate`) and the monthly partitions of the
//! `attendance` table (`attendance db partition`).

use anyhow::Result;
use chrono::{Datelike, NaiveDate};

use crate::config::Config;
use crate::mysql::partitions::{self as partition, Partition};

pub(crate) use crate::mysql::MigrateReport;

/// Create the database if missing, then apply every pending migration. Idempotent.
pub fn migrate(cfg: &Config) -> Result<MigrateReport> {
    crate::mysql::migrate(cfg)
}

/// The policy values a host's file or environment gave, imported once as the rulebook's first
/// version (from the earliest date MySQL keeps: every day so far was judged by them), with
/// Redis's copy rewritten. Refused (exit 2, nothing written) once the rulebook has versions:
/// from then on `policy set` changes the rules. Returns the keys imported and their sources.
pub(crate) fn import_policy(cfg: &Config) -> Result<Vec<(&'static str, String)>> {
    let given = cfg.sources.policy_given();
    if given.is_empty() {
        return Ok(given);
    }
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let mut tx = crate::mysql::begin(&mut conn)?;
    if !crate::mysql::people::policy_rows::locked(&mut tx)?.versions.is_empty() {
        let (key, source) = &given[0];
        return Err(crate::config::rulebook::refusal(key, source).into());
    }
    let os_user = crate::ops::lookup::os_user();
    let employee = crate::mysql::people::roster_rows::actor_of_login(&mut tx, &os_user)?.map(|a| a.employee_id);
    let defaults = crate::config::Policy::default();
    for (key, source) in &given {
        let value = crate::config::rulebook::value_of(key, &cfg.policy);
        let before = crate::config::rulebook::value_of(key, &defaults);
        let reason = format!("imported by migrate from {source}");
        crate::mysql::people::policy_rows::add(
            &mut tx,
            &crate::mysql::people::policy_rows::NewRow {
                key,
                value: &value,
                from: SINCE_EVER,
                reason: &reason,
                os_user: &os_user,
                employee_id: employee.as_deref(),
                before: Some(&before),
            },
        )?;
    }
    tx.commit()?;
    crate::ops::lookup::refresh_copy(&db, &mut crate::redis::board::Board::open(cfg)?).map_err(|e| {
        e.context(
            "the policy is imported into MySQL, but Redis's copy of it could not be rewritten: run init-day to copy it",
        )
    })?;
    Ok(given)
}

/// The first version's date: MySQL's earliest `DATE`, before any day the company has.
const SINCE_EVER: NaiveDate = NaiveDate::from_ymd_opt(1000, 1, 1).expect("a valid date");

/// Give `attendance` a partition for each of `months` months from `from` (a first of the
/// month); returns the table's partitions after.
pub(crate) fn partition(cfg: &Config, from: NaiveDate, months: u32) -> Result<Vec<Partition>> {
    // Each month's partition holds the days before the next month's first: the last bound
    // must be a date too, so the months end by 9999-11 (checked before MySQL is asked).
    let last_bound = from.checked_add_months(chrono::Months::new(months));
    if last_bound.is_none_or(|d| !crate::domain::dates::YEARS.contains(&d.year())) {
        return Err(crate::error::Error::input(format!(
            "--from {} with --months {months} goes past 9999-11: the last month's partition needs the next month's first day as its bound",
            from.format("%Y-%m")
        ))
        .into());
    }
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    partition::partition(&mut conn, from, months)
}
