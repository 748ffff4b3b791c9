//! The parking queue: notifications that failed too often, listed, replayed to their
//! department's queue or purged. The broker's side is `amqp::parking`; a command reaches it
//! through here, and gets the plain values it returns.

use anyhow::Result;

use crate::amqp::parking;
use crate::config::Config;
use crate::domain::event::Event;
use crate::domain::signing;
use crate::redis::board::Board;

pub(crate) use crate::amqp::parking::{DlqReport, Parked, Select};

/// Up to `limit` parked notifications, oldest first; the queue is left as it was.
pub(crate) fn list(cfg: &Config, limit: usize) -> Result<Vec<Parked>> {
    parking::list(cfg, limit)
}

/// Put the selected parked notifications back on their department's queue, each confirmed
/// before it leaves the parking queue. With a keyring (`signing.keyring_file`), an event whose
/// signature fails, or a body that is no event, is never replayed: it stays parked.
pub(crate) fn replay(cfg: &Config, select: &Select) -> Result<DlqReport> {
    let Some(ring) = cfg.signing.keyring()? else {
        return parking::replay(cfg, select, &mut |_, _| Ok(None));
    };
    let mut board = Board::open(cfg)?;
    // The queue it goes back to is the parked department's: the event must be of it.
    let mut refuse = |p: &Parked, body: &[u8]| -> Result<Option<String>> {
        let ev: Event = match serde_json::from_slice(body) {
            Ok(ev) => ev,
            Err(e) => return Ok(Some(format!("not replayed: not an event ({e})"))),
        };
        let roster = board.membership(&ev.employee_id, &ev.department_id)?;
        Ok(
            signing::check(&ring, &ev, cfg.timezone, roster.as_ref(), p.department.as_deref())
                .err()
                .map(|r| format!("not replayed: {r}")),
        )
    };
    parking::replay(cfg, select, &mut refuse)
}

/// Drop the selected parked notifications.
pub(crate) fn purge(cfg: &Config, select: &Select) -> Result<DlqReport> {
    parking::purge(cfg, select)
}
