//! The parking queue: notifications that failed too often, listed, replayed to their
//! department's queue or purged. The broker's side is `amqp::parking`; a command reaches it
//! through here, and gets the plain values it returns.

use anyhow::Result;

use crate::amqp::parking;
use crate::config::Config;

pub(crate) use crate::amqp::parking::{DlqReport, Parked, Select};

/// Up to `limit` parked notifications, oldest first; the queue is left as it was.
pub(crate) fn list(cfg: &Config, limit: usize) -> Result<Vec<Parked>> {
    parking::list(cfg, limit)
}

/// Put the selected parked notifications back on their department's queue, each confirmed
/// before it leaves the parking queue.
pub(crate) fn replay(cfg: &Config, select: &Select) -> Result<DlqReport> {
    parking::replay(cfg, select)
}

/// Drop the selected parked notifications.
pub(crate) fn purge(cfg: &Config, select: &Select) -> Result<DlqReport> {
    parking::purge(cfg, select)
}
