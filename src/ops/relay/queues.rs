//! The namespace's department queues as a whole: the roster (MySQL) names the departments,
//! the broker declares, empties or deletes their queues.

use anyhow::Result;

use crate::amqp::inventory::{self as queues, PurgeReport};
pub(crate) use crate::amqp::limits::{self, Applied};
use crate::config::Config;

/// The departments of the roster, by id.
fn departments(cfg: &Config) -> Result<Vec<String>> {
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    crate::mysql::server::departments(&mut conn)
}

/// Bound the department queues (the policy of `amqp.queue_max_length` /
/// `amqp.queue_max_age_hours`, which also spreads quorum queues' leaders), then declare the
/// topology and every department's queue: the policy first, since a quorum queue's leader is
/// placed when it is declared. Returns how many department queues and how the policy reached
/// the broker.
pub(crate) fn declare(cfg: &Config) -> Result<(usize, Applied)> {
    let depts = departments(cfg)?;
    let applied = limits::apply(cfg)?;
    Ok((queues::declare(cfg, &depts)?, applied))
}

/// Queues declared ahead: how many were looked up on the broker first (0: declared without
/// looking), how many declared, in how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared {
    pub looked_up: usize,
    pub queues: usize,
    pub seconds: f64,
}

/// Declare the given departments' queues (and the common topology) ahead of their first
/// check-in: `org import` for the departments it brings. A broker away costs the caller a
/// warning, never its work: the error comes back as its one line.
pub(crate) fn declare_ahead(cfg: &Config, departments: &[String]) -> Result<Declared, String> {
    timed(departments, || {
        Ok(queues::Checked {
            looked_up: 0,
            declared: queues::declare(cfg, departments)?,
        })
    })
}

/// [`declare_ahead`] of only what the broker lacks (`init-day`: every day's departments, whose
/// queues are nearly always there already; one deleted by hand is declared again).
pub(crate) fn declare_missing(cfg: &Config, departments: &[String]) -> Result<Declared, String> {
    timed(departments, || queues::declare_missing(cfg, departments))
}

fn timed(departments: &[String], declare: impl FnOnce() -> Result<queues::Checked>) -> Result<Declared, String> {
    let started = std::time::Instant::now();
    let done = if departments.is_empty() {
        queues::Checked::default()
    } else {
        declare().map_err(|e| crate::ops::exit::one_line(&e))?
    };
    Ok(Declared {
        looked_up: done.looked_up,
        queues: done.declared,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Empty every department queue, the retry queue and the parking queue.
pub(crate) fn purge(cfg: &Config) -> Result<PurgeReport> {
    queues::purge(cfg, &departments(cfg)?)
}

/// Delete every queue and exchange of the namespace and the queues' policy; returns how many
/// queues (the roster's departments' and the three common ones: retry, parking, journal) and
/// how the policy went.
pub(crate) fn delete(cfg: &Config) -> Result<(usize, Applied)> {
    let depts = departments(cfg)?;
    crate::amqp::teardown(cfg, &depts)?;
    Ok((depts.len() + 3, limits::remove(cfg)?))
}
