//! `doctor`'s Redis node checks: persistence, eviction and replication of every master of a
//! cluster (each named in its line), or of the single node.

use super::verdict::{check, Check, Level};
use crate::config::Config;
use crate::redis::server::nodes::{NodeHealth, Replication};
use crate::redis::server::persistence as health;

/// A replica this many seconds without acknowledging its master is lagging: a fail-over now
/// would lose what it has not acknowledged.
const LAG_WARN_SECS: u64 = 2;

/// The three checks (`redis persistence`, `redis eviction`, `redis replication`) over the
/// nodes.
pub(super) fn node_verdicts(cfg: &Config, nodes: &[NodeHealth]) -> Vec<Check> {
    let mut durability = Vec::new();
    let mut eviction = Vec::new();
    let mut replication = Vec::new();
    for n in nodes {
        let [d, e] = match &n.persistence {
            Ok(p) => persistence_verdicts(p),
            Err(why) => {
                let why = format!("cannot read CONFIG ({why}): make sure of appendonly yes and noeviction");
                [
                    check("redis persistence", Level::Warn, why.clone()),
                    check("redis eviction", Level::Warn, why),
                ]
            }
        };
        durability.push((n.node.as_deref(), d));
        eviction.push((n.node.as_deref(), e));
        let r = match &n.replication {
            Ok(r) => replication_verdict(cfg, r, n.node.is_none(), n.persistence.as_ref().ok()),
            Err(why) => check("redis replication", Level::Warn, format!("cannot read it ({why})")),
        };
        replication.push((n.node.as_deref(), r));
    }
    [durability, eviction, replication]
        .into_iter()
        .filter_map(combined)
        .collect()
}

/// One node's check as it is; several nodes' as one check, at the worst of them, that names
/// the nodes short of ok first, with their reasons, then the nodes that are ok.
fn combined(per_node: Vec<(Option<&str>, Check)>) -> Option<Check> {
    let first = per_node.first()?.1.clone();
    if per_node.len() == 1 && per_node[0].0.is_none() {
        return Some(first);
    }
    let worst = per_node.iter().map(|(_, c)| c.status).max().unwrap_or(Level::Ok);
    let node = |n: Option<&str>| n.unwrap_or("redis").to_string();
    let mut parts: Vec<String> = per_node
        .iter()
        .filter(|(_, c)| c.status != Level::Ok)
        .map(|(n, c)| format!("master {}: {}", node(*n), c.detail))
        .collect();
    let ok: Vec<&(Option<&str>, Check)> = per_node.iter().filter(|(_, c)| c.status == Level::Ok).collect();
    if !ok.is_empty() {
        let names: Vec<String> = ok.iter().map(|(n, _)| node(*n)).collect();
        let what = if parts.is_empty() {
            ok[0].1.detail.as_str()
        } else {
            "ok"
        };
        parts.push(format!("{what} on master {}", names.join(", ")));
    }
    Some(check(first.name, worst, parts.join("; ")))
}

/// A master's replicas against `redis.min_replicas_acked`, and its `min-replicas-to-write`.
/// A single node without replicas is ok only as far as its own persistence (`persistence`, when
/// read) keeps the day: what it says of that agrees with `redis persistence`'s line.
fn replication_verdict(
    cfg: &Config,
    r: &Replication,
    single: bool,
    persistence: Option<&health::Persistence>,
) -> Check {
    let name = "redis replication";
    let want = cfg.replication.min_replicas_acked;
    let online = r.replicas.iter().filter(|x| x.state == "online").count() as u32;
    if online < want {
        return check(
            name,
            Level::Fail,
            format!(
                "{online} replica(s) online, redis.min_replicas_acked is {want}: every check-in says not yet replicated"
            ),
        );
    }
    if r.replicas.is_empty() {
        return if single {
            let keeps = match persistence {
                Some(p) if p.aof => "its append-only file keeps the day across a restart",
                Some(p) if p.snapshots() => "only its snapshots keep the day across a restart (see redis persistence)",
                Some(_) => "nothing keeps the day across a restart (see redis persistence)",
                None => "what keeps the day across a restart is not known (see redis persistence)",
            };
            check(name, Level::Ok, format!("no replicas (one node: {keeps})"))
        } else {
            check(
                name,
                Level::Warn,
                "no replica: its departments stop until it is back, and a lost disk loses their day",
            )
        };
    }
    let mut issues = Vec::new();
    for x in &r.replicas {
        if x.state != "online" {
            issues.push(format!("replica {} is {}", x.addr, x.state));
        } else if x.lag_secs >= LAG_WARN_SECS {
            issues.push(format!(
                "replica {} lags: {} s since its last acknowledgement, {} bytes behind",
                x.addr, x.lag_secs, x.behind_bytes
            ));
        }
    }
    if r.min_replicas_to_write == Some(0) {
        issues.push(
            "min-replicas-to-write 0: cut off from its replicas it goes on acknowledging punches that a fail-over then loses; set min-replicas-to-write 1"
                .to_string(),
        );
    }
    if issues.is_empty() {
        let lag = r.replicas.iter().map(|x| x.lag_secs).max().unwrap_or(0);
        check(
            name,
            Level::Ok,
            format!(
                "{} replica(s) online (lag {lag} s), min-replicas-to-write {}",
                r.replicas.len(),
                r.min_replicas_to_write.map_or("unknown".into(), |n| n.to_string())
            ),
        )
    } else {
        check(name, Level::Warn, issues.join("; "))
    }
}

/// AOF on, or a warning that a restart loses the day; any evicting policy is a failure,
/// since Redis would drop a board without a word.
pub(crate) fn persistence_verdicts(p: &health::Persistence) -> [Check; 2] {
    let durability = if p.aof {
        check("redis persistence", Level::Ok, "appendonly yes")
    } else if p.snapshots() {
        check(
            "redis persistence",
            Level::Warn,
            format!(
                "appendonly no, only snapshots (save '{}'): a restart loses the punches since the last snapshot; set appendonly yes",
                p.save.trim()
            ),
        )
    } else {
        check(
            "redis persistence",
            Level::Warn,
            "appendonly no and no snapshots: a restart of Redis loses the day's punches; set appendonly yes",
        )
    };
    let eviction = if p.maxmemory_policy == "noeviction" {
        check("redis eviction", Level::Ok, "maxmemory-policy noeviction")
    } else {
        check(
            "redis eviction",
            Level::Fail,
            format!(
                "maxmemory-policy {}: under memory pressure Redis may silently drop a board; set noeviction",
                p.maxmemory_policy
            ),
        )
    };
    [durability, eviction]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(aof: bool, save: &str, policy: &str) -> health::Persistence {
        health::Persistence {
            aof,
            save: save.into(),
            maxmemory_policy: policy.into(),
            aof_write_status: None,
        }
    }

    #[test]
    fn persistence_warns_and_eviction_fails() {
        let [d, e] = persistence_verdicts(&p(true, "", "noeviction"));
        assert_eq!((d.status, e.status), (Level::Ok, Level::Ok));
        let [d, e] = persistence_verdicts(&p(false, "", "allkeys-lru"));
        assert_eq!((d.status, e.status), (Level::Warn, Level::Fail));
        assert!(d.detail.contains("restart"), "{}", d.detail);
        let [d, e] = persistence_verdicts(&p(false, "3600 1", "volatile-lru"));
        assert!(d.detail.contains("snapshots"), "{}", d.detail);
        assert_eq!(e.status, Level::Fail);
    }

    #[test]
    fn a_single_node_without_replicas_says_what_its_persistence_says() {
        // Regression: `appendonly no`, then "its append-only file keeps the day".
        let none = Replication {
            min_replicas_to_write: None,
            replicas: Vec::new(),
        };
        let cfg = Config::default();
        let said = |aof, save| replication_verdict(&cfg, &none, true, Some(&p(aof, save, "noeviction"))).detail;
        assert!(
            said(true, "").contains("its append-only file keeps the day"),
            "{}",
            said(true, "")
        );
        for (aof, save) in [(false, ""), (false, "3600 1")] {
            let d = said(aof, save);
            assert!(!d.contains("append-only file keeps"), "{d}");
            assert!(d.contains("see redis persistence"), "{d}");
        }
        let d = replication_verdict(&cfg, &none, true, None).detail;
        assert!(!d.contains("append-only file keeps"), "{d}");
    }
}
