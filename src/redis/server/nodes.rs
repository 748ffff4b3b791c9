//! Each Redis node's own health, for `doctor`: persistence, eviction and replication read from
//! every master of a cluster in turn (redis-rs would send `CONFIG GET` to one random node), or
//! from the single node.

use anyhow::{Context, Result};
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, ConnectionLike, RedisResult, Value};

use super::persistence::{self, Persistence};
use crate::redis::cluster::ClusterConn;
use crate::redis::handle::Redis;
use crate::redis::Board;

/// What one node says of itself.
#[derive(Debug, Clone)]
pub struct NodeHealth {
    /// `host:port` on a cluster; `None` for the single node of `redis_url`.
    pub node: Option<String>,
    pub persistence: Result<Persistence, String>,
    pub replication: Result<Replication, String>,
}

/// A master's replication, from `INFO replication` and `CONFIG GET min-replicas-to-write`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replication {
    /// `min-replicas-to-write` (0: the master takes writes with no replica in reach).
    pub min_replicas_to_write: Option<u32>,
    pub replicas: Vec<Replica>,
}

/// One replica as its master sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    pub addr: String,
    /// `online`, or `wait_bgsave`, `send_bulk`... (not yet serving).
    pub state: String,
    /// Seconds since its last acknowledgement.
    pub lag_secs: u64,
    /// Bytes of the master's stream it has not acknowledged.
    pub behind_bytes: u64,
}

/// Parse `INFO replication` (a master's: `slaveN:ip=..,port=..,state=..,offset=..,lag=..`).
pub(crate) fn replicas_in(info: &str) -> Vec<Replica> {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let master_offset: u64 = field("master_repl_offset").and_then(|v| v.parse().ok()).unwrap_or(0);
    info.lines()
        .filter(|l| l.starts_with("slave") && l.contains(":ip="))
        .filter_map(|l| {
            let (_, kv) = l.trim().split_once(':')?;
            let get = |k: &str| kv.split(',').find_map(|p| p.strip_prefix(k)?.strip_prefix('='));
            let offset: u64 = get("offset")?.parse().ok()?;
            Some(Replica {
                addr: format!("{}:{}", get("ip")?, get("port")?),
                state: get("state")?.to_string(),
                lag_secs: get("lag").and_then(|v| v.parse().ok()).unwrap_or(0),
                behind_bytes: master_offset.saturating_sub(offset),
            })
        })
        .collect()
}

fn replication(con: &mut impl ConnectionLike) -> Result<Replication> {
    let min: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("min-replicas-to-write")
        .query(con)
        .context("reading Redis's min-replicas-to-write setting")?;
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query(con)
        .context("reading Redis's INFO replication")?;
    Ok(Replication {
        min_replicas_to_write: min.get(1).and_then(|v| v.parse().ok()),
        replicas: replicas_in(&info),
    })
}

fn health(node: Option<String>, con: &mut impl ConnectionLike) -> NodeHealth {
    let text = |e: anyhow::Error| format!("{e:#}");
    NodeHealth {
        node,
        persistence: persistence::persistence(con).map_err(text),
        replication: replication(con).map_err(text),
    }
}

/// Every command sent to one node of a cluster, by its address.
struct OneNode<'a> {
    con: &'a mut ClusterConn,
    host: String,
    port: u16,
}

impl ConnectionLike for OneNode<'_> {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let cmd = crate::redis::cluster::unpack(cmd, 1)?.remove(0);
        self.req_command(&cmd)
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
            host: self.host.clone(),
            port: self.port,
        });
        self.con.route(cmd, route)
    }

    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        let cmds = crate::redis::cluster::unpack(cmd, offset + count)?;
        cmds.iter().skip(offset).map(|c| self.req_command(c)).collect()
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

/// `f` over every master of a cluster, each by its `host:port`.
fn each_master<T>(c: &mut ClusterConn, mut f: impl FnMut(String, &mut OneNode) -> T) -> Result<Vec<T>> {
    let masters = c.masters().context("reading the cluster's masters (CLUSTER SLOTS)")?;
    Ok(masters
        .into_iter()
        .map(|(host, port)| f(format!("{host}:{port}"), &mut OneNode { con: c, host, port }))
        .collect())
}

impl Board {
    /// The health of every master (a cluster), or of the one node.
    pub fn nodes_health(&mut self) -> Result<Vec<NodeHealth>> {
        match &mut self.con {
            Redis::Single(c) => Ok(vec![health(None, c)]),
            Redis::Cluster(c) => each_master(c, |node, con| health(Some(node), con)),
        }
    }

    /// The one-line persistence warning `init-day`, `settle` and `recover` print, if any: of
    /// the one node, or of every master of a cluster (each named; a random node's answer
    /// would hide a master with no append-only file or an evicting policy).
    pub fn persistence_warning(&mut self) -> Option<String> {
        let c = match &mut self.con {
            Redis::Single(c) => return persistence::warning(c),
            Redis::Cluster(c) => c,
        };
        let parts = each_master(c, |node, con| match persistence::persistence(con) {
            Ok(p) => p
                .problems()
                .into_iter()
                .map(|why| format!("master {node}: {why}"))
                .collect(),
            Err(e) => vec![format!("master {node}: could not be checked ({e:#})")],
        });
        match parts {
            Ok(parts) => persistence::warning_line(&parts.concat()),
            Err(e) => Some(format!(
                "warning: could not check Redis persistence ({e:#}); make sure every master runs with appendonly yes and maxmemory-policy noeviction"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_masters_info_lists_its_replicas_with_their_lag() {
        let info = "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n\
            slave0:ip=10.0.0.2,port=7004,state=online,offset=900,lag=0\r\n\
            slave1:ip=10.0.0.3,port=7005,state=wait_bgsave,offset=0,lag=12\r\n\
            master_failover_state:no-failover\r\nmaster_repl_offset:1000\r\n";
        assert_eq!(
            replicas_in(info),
            vec![
                Replica {
                    addr: "10.0.0.2:7004".into(),
                    state: "online".into(),
                    lag_secs: 0,
                    behind_bytes: 100
                },
                Replica {
                    addr: "10.0.0.3:7005".into(),
                    state: "wait_bgsave".into(),
                    lag_secs: 12,
                    behind_bytes: 1000
                },
            ]
        );
        assert!(replicas_in("role:master\r\nconnected_slaves:0\r\n").is_empty());
    }
}
