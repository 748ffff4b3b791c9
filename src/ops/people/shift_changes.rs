//! A shift or an assignment changed for days already settled: the change and the re-settle of
//! the settled days it reaches (`ops::settle::resettle`), in one transaction, so that either both land
//! or neither does (running the same file again is then all a failure needs). A dry run
//! computes the same re-settle and rolls it back.

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::day::shift_changes::last_day;
use crate::domain::day::shifts::{Assignment, Scope, ShiftTable};
use crate::error::Error;
use crate::mysql::people::shift_rows;
use crate::mysql::{resettle_rows, Db, Tx};
use crate::ops::settle::resettle::{self, Ground, Resettled, Whose};

/// The settled days one assignment governs that a change reaches: `target`'s rows from `from`
/// to `to`, with the reason their audit rows give.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub scope: Scope,
    pub target: String,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub reason: String,
}

impl Span {
    /// The days of `a` up to the day before its target's next assignment, and at most up to
    /// `today` (no later day is settled); `None` when it starts after that (in the future).
    pub(crate) fn of(table: &ShiftTable, a: &Assignment, today: NaiveDate, reason: String) -> Option<Span> {
        let to = last_day(table, a.scope, &a.target, a.from).map_or(today, |d| d.min(today));
        (a.from <= to).then(|| Span {
            scope: a.scope,
            target: a.target.clone(),
            from: a.from,
            to,
            reason,
        })
    }

    pub(crate) fn whose(&self) -> Whose<'_> {
        match self.scope {
            Scope::Department => Whose::Department(&self.target),
            Scope::Employee => Whose::Employee(&self.target),
        }
    }

    /// `department D042 from 2026-11-02`.
    pub(crate) fn words(&self) -> String {
        format!("{} {} from {}", self.scope.as_str(), self.target, self.from)
    }
}

/// Make `change` (skipped in a dry run, whose table is `dry_table`: the table as the change
/// would leave it), then re-settle the spans `plan` finds in that table for the server's
/// today, all in one transaction: committed, or rolled back in a dry run. `plan` may refuse
/// (nothing is then written). The caller holds settle's lock unless it is a dry run.
pub(crate) fn apply(
    cfg: &Config,
    db: &Db,
    dry_table: Option<ShiftTable>,
    reason: String,
    change: impl FnOnce(&mut Tx) -> Result<()>,
    plan: impl FnOnce(&mut Tx, &ShiftTable, NaiveDate) -> Result<Vec<Span>>,
) -> Result<Resettled> {
    let mut conn = db.conn()?;
    let mut tx = crate::mysql::begin(&mut conn)?;
    let dry_run = dry_table.is_some();
    let table = match dry_table {
        Some(t) => t,
        None => {
            change(&mut tx)?;
            shift_rows::table(&mut tx)?
        }
    };
    let ground = Ground::read(cfg, &mut tx, table)?;
    let spans = plan(&mut tx, ground.shifts(), ground.today)?;
    let mut out = Resettled {
        reason,
        ..Resettled::default()
    };
    for s in &spans {
        let scope = resettle::Scope {
            from: s.from,
            to: s.to,
            whose: s.whose(),
        };
        out.add(resettle::within(cfg, &mut tx, &ground, scope, &s.reason, !dry_run)?);
    }
    if dry_run {
        tx.rollback()?;
    } else {
        tx.commit()?;
    }
    Ok(out)
}

/// Refuse (exit 1) a change of the shift `name` when `span`, which it governs, holds a settled
/// row: changing it would re-judge settled days, which takes `--resettle`. A shift's values
/// have no dates of their own, so "from now on" is a new shift assigned from a date.
pub(crate) fn refuse_if_settled(tx: &mut Tx, name: &str, span: &Span) -> Result<()> {
    let Some(day) = resettle_rows::first_day(tx, span.from, span.to, span.whose())? else {
        return Ok(());
    };
    Err(Error::refused(format!(
        "shift {name} judged settled days ({}; settled from {day}): to change it from a date on, import \
         it under a new name and assign that from the date; to re-judge those days too (re-settled, \
         audited), pass --resettle; nothing written",
        span.words()
    ))
    .into())
}
