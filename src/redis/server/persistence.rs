//! Redis's persistence and eviction settings, read from the server, and the one-line warning
//! `init-day` and `settle` print when the day's boards could be lost by a restart or evicted.

use anyhow::{Context, Result};
use redis::ConnectionLike;

/// What the Redis we talk to does to survive a restart and under memory pressure.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Persistence {
    /// `appendonly yes`: every write goes to the append-only file.
    pub aof: bool,
    /// The `save` schedule (RDB snapshots); empty when none.
    pub save: String,
    /// `maxmemory-policy`: anything but `noeviction` may drop a board to make room.
    pub maxmemory_policy: String,
    /// `INFO persistence`'s `aof_last_write_status` (`ok`, or `err` when the disk refused a
    /// write: Redis then refuses writes itself until it can write again).
    pub aof_write_status: Option<String>,
}

impl Persistence {
    /// Whether snapshots are scheduled at all.
    pub fn snapshots(&self) -> bool {
        !self.save.trim().is_empty()
    }

    /// One line for stderr, or `None` when the day's boards are safe enough: AOF on and no
    /// eviction. Snapshots alone still lose every punch since the last snapshot, so they warn
    /// too (more mildly).
    pub fn warning(&self) -> Option<String> {
        warning_line(&self.problems())
    }

    /// What puts the day at risk, one phrase each (empty when nothing does).
    pub fn problems(&self) -> Vec<String> {
        let durability = if self.aof {
            self.aof_write_status
                .as_deref()
                .filter(|s| *s != "ok")
                .map(|s| format!("Redis's last append-only file write failed ({s}): is its disk full?"))
        } else if self.snapshots() {
            Some(format!(
                "Redis has no append-only file (only snapshots, save '{}'): a restart loses the punches since the last snapshot",
                self.save.trim()
            ))
        } else {
            Some(
                "Redis has no persistence (appendonly no, no save schedule): a restart loses the day's punches"
                    .to_string(),
            )
        };
        let eviction = (self.maxmemory_policy != "noeviction").then(|| {
            format!(
                "maxmemory-policy is '{}': under memory pressure Redis may silently drop a board",
                self.maxmemory_policy
            )
        });
        durability.into_iter().chain(eviction).collect()
    }
}

/// The one warning line for these problems, or `None` when there are none.
pub(crate) fn warning_line(parts: &[String]) -> Option<String> {
    (!parts.is_empty()).then(|| {
        format!(
            "warning: {} (see docs/durability.md; `attendance recover --date D` rebuilds a day from the journal)",
            parts.join("; ")
        )
    })
}

/// One `CONFIG GET` value; a server that hides the key (a managed Redis with CONFIG renamed)
/// answers an empty list, which reads as "unknown" here.
fn config_get(con: &mut impl ConnectionLike, key: &str) -> Result<Option<String>> {
    let kv: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(key)
        .query(con)
        .with_context(|| format!("reading Redis's {key} setting"))?;
    Ok(kv.into_iter().nth(1))
}

/// Read the settings from the server.
pub(crate) fn persistence(con: &mut impl ConnectionLike) -> Result<Persistence> {
    Ok(Persistence {
        aof: config_get(con, "appendonly")?.is_some_and(|v| v.eq_ignore_ascii_case("yes")),
        save: config_get(con, "save")?.unwrap_or_default(),
        maxmemory_policy: config_get(con, "maxmemory-policy")?.unwrap_or_else(|| "unknown".into()),
        aof_write_status: info_field(con, "persistence", "aof_last_write_status")?,
    })
}

/// The text of an `INFO` section from every node that answered: one on a single node; one per
/// master on a cluster (redis-rs sends INFO to every master and answers a map by node).
pub fn info_texts(con: &mut impl ConnectionLike, section: &str) -> Result<Vec<String>> {
    let what = || format!("reading Redis's INFO {section}");
    let v: redis::Value = redis::cmd("INFO").arg(section).query(con).with_context(what)?;
    match v {
        redis::Value::Map(nodes) => nodes
            .into_iter()
            .map(|(_, text)| redis::from_redis_value::<String>(text).with_context(what))
            .collect(),
        v => Ok(vec![redis::from_redis_value::<String>(v).with_context(what)?]),
    }
}

/// One `field:value` line of an `INFO` section; on a cluster, the first node's value that is
/// not `ok` if any (one master whose disk is full is enough to warn), else the first.
fn info_field(con: &mut impl ConnectionLike, section: &str, field: &str) -> Result<Option<String>> {
    let values: Vec<String> = info_texts(con, section)?
        .iter()
        .filter_map(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .map(|v| v.trim().to_string())
        })
        .collect();
    Ok(values.iter().find(|v| *v != "ok").or(values.first()).cloned())
}

/// The same warning for the Redis `cfg` names (every master of a cluster); nothing when Redis
/// cannot be reached (the caller's own work reports that, with its retries).
pub(crate) fn warning_for(cfg: &crate::config::Config) -> Option<String> {
    crate::redis::Board::open(cfg)
        .ok()
        .and_then(|mut board| board.persistence_warning())
}

impl crate::redis::Board {
    /// This board's Redis's persistence and eviction settings.
    pub fn persistence(&mut self) -> Result<Persistence> {
        persistence(&mut self.con)
    }
}

/// The warning for this connection's Redis, if any. A Redis that refuses `CONFIG` (renamed
/// or forbidden by an ACL) cannot be checked: say so rather than fail the command.
pub(crate) fn warning(con: &mut impl ConnectionLike) -> Option<String> {
    match persistence(con) {
        Ok(p) => p.warning(),
        Err(e) => Some(format!(
            "warning: could not check Redis persistence ({e:#}); make sure it runs with appendonly yes and maxmemory-policy noeviction"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(aof: bool, save: &str, policy: &str) -> Persistence {
        Persistence {
            aof,
            save: save.into(),
            maxmemory_policy: policy.into(),
            aof_write_status: Some("ok".into()),
        }
    }

    #[test]
    fn aof_without_eviction_is_quiet() {
        assert_eq!(p(true, "", "noeviction").warning(), None);
        assert_eq!(p(true, "3600 1", "noeviction").warning(), None);
    }

    #[test]
    fn a_failing_aof_write_warns() {
        let mut failing = p(true, "", "noeviction");
        failing.aof_write_status = Some("err".into());
        assert!(failing.warning().unwrap().contains("disk full"));
    }

    #[test]
    fn no_persistence_warns_that_a_restart_loses_the_day() {
        let w = p(false, "", "noeviction").warning().unwrap();
        assert!(w.starts_with("warning: Redis has no persistence"), "{w}");
        assert!(!w.contains('\n'));
    }

    #[test]
    fn snapshots_only_and_eviction_both_warn_on_one_line() {
        let w = p(false, "3600 1", "allkeys-lru").warning().unwrap();
        assert!(w.contains("only snapshots"), "{w}");
        assert!(w.contains("allkeys-lru"), "{w}");
        assert!(!w.contains('\n'));
    }
}
