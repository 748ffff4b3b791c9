//! The namespace's department queues as a whole: the roster (MySQL) names the departments,
//! the broker declares, empties or deletes their queues.

use anyhow::Result;

use crate::config::Config;
use crate::notify::queues::{self, PurgeReport};
use crate::{db, services};

/// The departments of the roster, by id.
fn departments(cfg: &Config) -> Result<Vec<String>> {
    let pool = services::mysql(cfg)?;
    let mut conn = pool.get_conn().map_err(|e| services::mysql_error(cfg, e))?;
    db::health::departments(&mut conn)
}

/// Declare the topology and every department's queue; returns how many department queues.
pub fn declare(cfg: &Config) -> Result<usize> {
    queues::declare(cfg, &departments(cfg)?)
}

/// Queues declared ahead: how many, in how long.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub queues: usize,
    pub seconds: f64,
}

/// Declare the given departments' queues (and the common topology) ahead of their first
/// check-in: `init-day` for the day's departments, `org import` for new ones. A broker away
/// costs the caller a warning, never its work: the error comes back as its one line.
pub fn declare_ahead(cfg: &Config, departments: &[String]) -> Result<Declared, String> {
    let started = std::time::Instant::now();
    let queues = if departments.is_empty() {
        0
    } else {
        queues::declare(cfg, departments).map_err(|e| crate::error::one_line(&e))?
    };
    Ok(Declared {
        queues,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Empty every department queue, the retry queue and the parking queue.
pub fn purge(cfg: &Config) -> Result<PurgeReport> {
    queues::purge(cfg, &departments(cfg)?)
}

/// Delete every queue and exchange of the namespace; returns how many queues (the roster's
/// departments' and the three common ones: retry, parking, journal).
pub fn delete(cfg: &Config) -> Result<usize> {
    let depts = departments(cfg)?;
    crate::notify::teardown(cfg, &depts)?;
    Ok(depts.len() + 3)
}
