//! The parking queue: notifications that failed too often, listed, replayed to their
//! department's queue or purged. The broker's side is `amqp::parking`; a command reaches it
//! through here, and gets the plain values it returns.

use anyhow::Result;

use crate::amqp::parking;
use crate::amqp::parse_message;
use crate::config::Config;
use crate::redis::board::Board;

pub(crate) use crate::amqp::parking::{DlqReport, Parked, Select};

/// Up to `limit` parked notifications, oldest first; the queue is left as it was.
pub(crate) fn list(cfg: &Config, limit: usize) -> Result<Vec<Parked>> {
    parking::list(cfg, limit)
}

/// Put the selected parked notifications back on their department's queue, each confirmed
/// before it leaves the parking queue. With keys to check against (the registry's, a keyring
/// file's: `ops::keys::verifiers`), a message whose
/// signature or roster check fails (an event, an absence alert or a void notice, checked as
/// `watch-dept` checks them), or a body that is none of them, is never replayed: it stays parked.
pub(crate) fn replay(cfg: &Config, select: &Select) -> Result<DlqReport> {
    let mut board = Board::open(cfg)?;
    let Some(ring) = crate::ops::keys::verifiers(cfg, &mut board)? else {
        return parking::replay(cfg, select, &mut |_, _| Ok(None));
    };
    let today = crate::domain::day::policy::work_date(cfg.timezone, board.read_clock()?.server);
    // The queue it goes back to is the parked department's: the message must be of it.
    let mut refuse = |p: &Parked, body: &[u8]| -> Result<Option<String>> {
        let message = match parse_message(body) {
            Ok(m) => m,
            Err(why) => return Ok(Some(format!("not replayed: {why}"))),
        };
        let Some(dept) = p.department.as_deref() else {
            // No department to go back to: parking::replay lists it as not routed.
            return Ok(None);
        };
        let (roster, shifts) = match message.employee() {
            Some((emp, home)) => (
                board.membership(emp, home)?,
                Some(crate::ops::lookup::shifts_on(cfg, &mut board, &[emp], today)?),
            ),
            None => (None, None),
        };
        Ok(message
            .check(&ring, cfg.timezone, roster.as_ref(), shifts.as_ref(), dept)
            .err()
            .map(|r| format!("not replayed: {r}")))
    };
    parking::replay(cfg, select, &mut refuse)
}

/// Drop the selected parked notifications.
pub(crate) fn purge(cfg: &Config, select: &Select) -> Result<DlqReport> {
    parking::purge(cfg, select)
}
