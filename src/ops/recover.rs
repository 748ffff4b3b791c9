//! `recover`: rebuild a day's boards from the broker's journal, after Redis lost them.

use std::time::Duration;

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::error::Error;
use crate::recover::{self, Options, RecoverReport};
use crate::{board, db, services};

/// What `recover` did, and the warnings for the operator.
#[derive(Debug)]
pub struct Outcome {
    pub report: RecoverReport,
    /// Redis keeps nothing on disk or may evict keys: the one-line warning.
    pub persistence: Option<String>,
    /// The day is older than the journal keeps: some of its punches may be gone.
    pub too_old: Option<String>,
}

/// Recover `date` (`today` is the company's today); `idle` without a delivery ends the read.
pub fn recover(cfg: &Config, date: NaiveDate, today: NaiveDate, idle: Duration) -> Result<Outcome> {
    if date > today {
        return Err(Error::refused(format!("{date} has not begun: there is nothing to recover")).into());
    }
    if !cfg.journal.enabled {
        return Err(Error::refused(
            "the journal is turned off (journal.enabled = false): there is nothing to recover from",
        )
        .into());
    }
    let age = (today - date).num_days();
    let too_old = (age > i64::from(cfg.journal.max_age_days)).then(|| {
        format!(
            "warning: {date} is {age} days old and the journal keeps {} days: some of its punches may be gone",
            cfg.journal.max_age_days
        )
    });
    let members = db::roster::active_members(&services::mysql(cfg)?)?;
    let mut con = services::redis(cfg)?;
    let persistence = board::health::warning(&mut con);
    let report = recover::recover(cfg, &mut con, &members, Options { date, idle })?;
    Ok(Outcome {
        report,
        persistence,
        too_old,
    })
}
