//! Approved leave: add (refused when it overlaps another approved leave, a no-op when it
//! repeats one), list and cancel. Adding or cancelling re-settles the days of it already
//! settled (`ops::settle::resettle`); a repeat re-settles too, so running it again repairs a re-settle
//! that failed.

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::{day::workdays, people::roster};
use crate::error::Error;
use crate::mysql::people::leave_rows::{self as leave, Added};
pub(crate) use crate::mysql::people::leave_rows::{Leave, NewLeave};
use crate::mysql::people::periods;
use crate::ops::settle::resettle::{self, Resettled, Scope, Whose};

/// The outcome of [`add`]: the leave's id, whether it was already recorded, and what its
/// settled days became.
#[derive(Debug, Clone)]
pub(crate) struct AddOutcome {
    pub id: u64,
    pub repeat: bool,
    pub resettled: Resettled,
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
    let lock = resettle::lock(&db)?;
    periods::refuse_closed(&mut db.conn()?, l.from, l.to, "leave")?;
    let (id, repeat) = match leave::add(&db, l)? {
        Added::New(id) => (id, false),
        Added::Repeat(id) => (id, true),
        Added::UnknownEmployee => return Err(Error::refused(format!("unknown employee '{}'", l.employee_id)).into()),
        Added::Overlaps(o) => {
            return Err(Error::refused(format!(
                "{} already has leave {} from {} to {} ({}): cancel it first",
                l.employee_id, o.id, o.from, o.to, o.kind
            ))
            .into())
        }
    };
    let scope = Scope {
        from: l.from,
        to: l.to,
        whose: Whose::Employee(l.employee_id),
    };
    let reason = format!("leave {id} added ({})", l.kind);
    let resettled = resettle::resettle(cfg, &db, &lock, scope, &reason)?;
    Ok(AddOutcome { id, repeat, resettled })
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
/// cancelled; no such leave is refused. Its settled days are re-settled either way. Returns
/// that, the leave's employee and the re-settle.
pub(crate) fn cancel(cfg: &Config, id: u64) -> Result<(bool, String, Resettled)> {
    let db = crate::mysql::Db::open(cfg)?;
    let lock = resettle::lock(&db)?;
    let gone = || Error::refused(format!("no leave with id {id}"));
    let l = leave::get(&db, id)?.ok_or_else(gone)?;
    periods::refuse_closed(&mut db.conn()?, l.from, l.to, "leave")?;
    let cancelled = leave::cancel(&db, id)?.ok_or_else(gone)?;
    let scope = Scope {
        from: l.from,
        to: l.to,
        whose: Whose::Employee(&l.employee_id),
    };
    let reason = format!("leave {id} cancelled ({})", l.kind);
    let resettled = resettle::resettle(cfg, &db, &lock, scope, &reason)?;
    Ok((cancelled, l.employee_id, resettled))
}
