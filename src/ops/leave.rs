//! Approved leave: add (refused when it overlaps another approved leave, a no-op when it
//! repeats one), list and cancel.

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::{roster, workdays};
use crate::error::Error;
use crate::mysql::leave_rows::{self as leave, Added};
pub(crate) use crate::mysql::leave_rows::{Leave, NewLeave};

/// The outcome of [`add`]: the leave's id, and whether it was already recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AddOutcome {
    pub id: u64,
    pub repeat: bool,
}

/// Record an approved leave. An unknown employee or an overlap with another approved leave is
/// refused (exit 1) and writes nothing; the very same leave again returns its id.
pub(crate) fn add(cfg: &Config, l: &NewLeave) -> Result<AddOutcome> {
    roster::check_id("employee id", l.employee_id)?;
    if l.to < l.from {
        return Err(Error::input(format!("leave ends ({}) before it starts ({})", l.to, l.from)).into());
    }
    workdays::check_note(l.note).map_err(Error::input)?;
    let db = crate::mysql::Db::open(cfg)?;
    match leave::add(&db, l)? {
        Added::New(id) => Ok(AddOutcome { id, repeat: false }),
        Added::Repeat(id) => Ok(AddOutcome { id, repeat: true }),
        Added::UnknownEmployee => Err(Error::refused(format!("unknown employee '{}'", l.employee_id)).into()),
        Added::Overlaps(o) => Err(Error::refused(format!(
            "{} already has leave {} from {} to {} ({}): cancel it first",
            l.employee_id, o.id, o.from, o.to, o.kind
        ))
        .into()),
    }
}

/// Leave, newest first: of one employee, and overlapping a range, when given.
pub(crate) fn list(
    cfg: &Config,
    employee: Option<&str>,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<Vec<Leave>> {
    let db = crate::mysql::Db::open(cfg)?;
    leave::list(&db, employee, from, to, false)
}

/// Cancel a leave (kept as `cancelled`): `true` if it was approved, `false` if it was already
/// cancelled; no such leave is refused.
pub(crate) fn cancel(cfg: &Config, id: u64) -> Result<bool> {
    let db = crate::mysql::Db::open(cfg)?;
    leave::cancel(&db, id)?.ok_or_else(|| Error::refused(format!("no leave with id {id}")).into())
}
