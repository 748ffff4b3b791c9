//! `attendance policy show|set|history`: the company's rulebook (docs/policy.md). A value is set
//! from a date on, checked by the key table's bounds and against every later version (no day
//! may be left with rules that clash), by the owner's account alone (the grants refuse the
//! others), audited in its own row; a version from a settled day re-settles the settled days it
//! reaches, in the same transaction (as a shift assignment does). Redis's copy is rewritten
//! after every change, so that check-ins read the new rules without MySQL.

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use crate::config::rulebook;
use crate::config::Config;
use crate::domain::day::rulebook::{Rulebook, Version};
use crate::error::Error;
use crate::mysql::people::policy_rows::{self, NewRow, Row};
use crate::mysql::Db;
use crate::ops::lookup::Rules;
use crate::ops::settle::resettle::{self, Ground, Resettled, Whose};
use crate::redis::board::Board;

/// One key's value in force on a date, and since when (`None`: the built-in default).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InForce {
    pub key: &'static str,
    pub value: String,
    pub since: Option<NaiveDate>,
}

/// The policy in force on a date.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Shown {
    pub date: NaiveDate,
    pub keys: Vec<InForce>,
}

/// The policy in force on `date` (`None`: today, by MySQL's clock).
pub(crate) fn show(cfg: &Config, date: Option<NaiveDate>) -> Result<Shown> {
    let db = Db::open(cfg)?;
    let date = match date {
        Some(d) => d,
        None => crate::ops::lookup::server_today(&mut db.conn()?, cfg.timezone)?,
    };
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    let policy = rules.on(date)?;
    let since = |key: &str| {
        rules
            .book()
            .versions
            .iter()
            .filter(|v| v.key == key && v.from <= date)
            .map(|v| v.from)
            .max()
    };
    Ok(Shown {
        date,
        keys: rulebook::keys()
            .map(|key| InForce {
                key,
                value: rulebook::value_of(key, &policy),
                since: since(key),
            })
            .collect(),
    })
}

/// What `policy set` is asked.
pub(crate) struct SetRequest<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub from: NaiveDate,
    pub reason: &'a str,
}

/// The version added, and what it re-settled.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Set {
    pub version: Row,
    pub resettled: Resettled,
}

/// Add a version. Refused (exit 2) for an unknown key, a value out of its bounds, an empty
/// reason, or rules that would clash between keys on some day from `from` on; refused (exit 1)
/// for an account that may not write the rulebook.
pub(crate) fn set(cfg: &Config, req: &SetRequest) -> Result<Set> {
    let value = rulebook::check(req.key, req.value)?;
    let reason = req.reason.trim();
    if reason.is_empty() {
        return Err(Error::input("policy set: --reason must say why (it is kept in the rulebook's history)").into());
    }
    crate::domain::text::check("--reason", reason).map_err(Error::input)?;
    if reason.chars().count() > 400 {
        return Err(Error::input("policy set: --reason is longer than 400 characters").into());
    }
    let db = Db::open(cfg)?;
    let os_user = crate::ops::lookup::os_user();
    let lock = resettle::lock(&db)?;
    let mut conn = db.conn()?;
    let mut tx = crate::mysql::begin(&mut conn)?;
    let book = policy_rows::locked(&mut tx)?;
    let before = Rules::new(cfg, book.clone()).on(req.from)?;
    let mut after = book.clone();
    after.versions.push(Version {
        key: req.key.to_string(),
        value: value.clone(),
        from: req.from,
    });
    check_every_day(cfg, &after, req.from)?;
    let employee = crate::mysql::people::roster_rows::actor_of_login(&mut tx, &os_user)?.map(|a| a.employee_id);
    let before_value = rulebook::value_of(req.key, &before);
    let version = policy_rows::add(
        &mut tx,
        &NewRow {
            key: req.key,
            value: &value,
            from: req.from,
            reason,
            os_user: &os_user,
            employee_id: employee.as_deref(),
            before: Some(&before_value),
        },
    )?;
    // The settled days from `from` on are judged again by the rules now in force on each
    // (read after the version is added): a closed pay period among them refuses the change, as
    // it refuses any other, and the transaction rolls back (nothing written).
    let shifts = crate::mysql::people::shift_rows::table(&mut tx)?;
    let ground = Ground::read(cfg, &mut tx, shifts)?;
    if req.from <= ground.today {
        crate::mysql::people::periods::refuse_closed(&mut tx, req.from, ground.today, "rulebook change")?;
    }
    let words = format!("policy {} = {} from {}: {}", req.key, value, req.from, reason);
    let resettled = if req.from <= ground.today {
        let scope = resettle::Scope {
            from: req.from,
            to: ground.today,
            whose: Whose::Everyone,
        };
        resettle::within(
            cfg,
            &mut tx,
            &ground,
            scope,
            &words.chars().take(500).collect::<String>(),
            true,
        )?
    } else {
        Resettled {
            reason: words,
            ..Resettled::default()
        }
    };
    tx.commit()?;
    drop(lock);
    crate::ops::lookup::refresh_copy(&db, &mut Board::open(cfg)?).map_err(|e| {
        e.context(
            "the rulebook is changed in MySQL, but Redis's copy of it could not be rewritten: run init-day to copy it",
        )
    })?;
    Ok(Set { version, resettled })
}

/// Refuse (exit 2) a rulebook that would give some day from `from` on rules that clash.
fn check_every_day(cfg: &Config, book: &Rulebook, from: NaiveDate) -> Result<()> {
    let rules = Rules::new(cfg, book.clone());
    for day in book.changes_from(from) {
        rules
            .on(day)
            .map_err(|e| Error::input(format!("{e:#} (from {day}); nothing written")))?;
    }
    Ok(())
}

/// Every version ever set, oldest first.
pub(crate) fn history(cfg: &Config) -> Result<Vec<Row>> {
    policy_rows::history(&mut Db::open(cfg)?.conn()?)
}
