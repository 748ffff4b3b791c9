//! Redis Cluster: the `redis+cluster://` URL, a cluster connection with the configured timeouts,
//! pipelines split per node, and key enumeration over every master.
//!
//! Every script and every command here touches the keys of one hash tag (one department, or one
//! roster bucket), so each lands whole on one slot. A pipeline may still hold commands of many
//! departments: redis-rs's cluster pipeline sends each command to the master of its slot (one
//! batch per node, never MULTI), so nothing ever asks one node for a slot it does not own.

use anyhow::Result;
use redis::cluster::{ClusterClientBuilder, ClusterConnection};
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, ConnectionLike, ErrorKind, RedisError, RedisResult, Value};

use crate::config::Config;
use crate::error::{redact, Error, Service};

// The URL's grammar belongs to the configuration, which validates `redis_url` without
// reaching into a store; the connection code keeps its short names for it.
use crate::config::REDIS_CLUSTER_TLS_SCHEME as TLS_SCHEME;
pub(crate) use crate::config::{redis_cluster_seeds as seed_urls, REDIS_CLUSTER_SCHEME as SCHEME};

/// Whether `url` names a cluster's seed nodes (`redis+cluster://`, or `rediss+cluster://` whose
/// nodes are reached over TLS).
pub(crate) fn is_cluster_url(url: &str) -> bool {
    [SCHEME, TLS_SCHEME]
        .iter()
        .any(|s| url.strip_prefix(s).is_some_and(|rest| rest.starts_with("://")))
}

/// A connection to a Redis Cluster: commands go to the master of their key's slot.
pub struct ClusterConn {
    con: ClusterConnection,
    read_timeout_ms: u32,
}

impl ClusterConn {
    /// Connect through the seed nodes of `redis_url` (exit 2 for a malformed list, exit 3 when
    /// no seed answers).
    pub fn open(cfg: &Config) -> Result<ClusterConn> {
        let seeds = seed_urls(&cfg.redis_url).ok_or_else(|| {
            Error::input(format!(
                "config: redis_url: '{}': a cluster URL lists its seed nodes as redis+cluster://host:port,host:port",
                redact(&cfg.redis_url)
            ))
        })?;
        let t = cfg.redis;
        let tls = seeds.iter().any(|s| s.starts_with("rediss://"));
        if tls {
            crate::config::ca_file()?;
        }
        let client = ClusterClientBuilder::new(seeds)
            .connection_timeout(t.connect())
            .response_timeout(t.read())
            // A master that went away is an error within a few round trips, not after the
            // client's default 16 retries with back-off.
            .retries(2)
            .max_retry_wait(200)
            .build()
            .map_err(|e| Error::input(format!("config: redis_url: {}", redact(&e.to_string()))))?;
        let con = client
            .get_connection()
            .map_err(|e| super::conn::connect_error(e, tls))?;
        con.set_read_timeout(Some(t.read()))
            .map_err(|e| Error::service(Service::Redis, e))?;
        con.set_write_timeout(Some(t.write()))
            .map_err(|e| Error::service(Service::Redis, e))?;
        Ok(ClusterConn {
            con,
            read_timeout_ms: t.read_timeout_ms,
        })
    }

    fn explain(&self, e: RedisError) -> RedisError {
        crate::redis::conn::explain_timeout(e, self.read_timeout_ms)
    }

    /// The address of every master, from `CLUSTER SLOTS`.
    pub fn masters(&mut self) -> RedisResult<Vec<(String, u16)>> {
        let slots: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query(&mut self.con)?;
        let mut masters = Vec::new();
        for range in slots {
            let Value::Array(parts) = range else { continue };
            let Some(Value::Array(master)) = parts.get(2) else {
                continue;
            };
            if let (Some(host), Some(Value::Int(port))) = (master.first(), master.get(1)) {
                let host: String = redis::from_redis_value_ref(host)?;
                let addr = (host, u16::try_from(*port).unwrap_or(0));
                if !masters.contains(&addr) {
                    masters.push(addr);
                }
            }
        }
        Ok(masters)
    }

    /// Every key matching `pattern`, SCANned on each master in turn (redis-rs leaves SCAN
    /// unrouted: on a cluster it would see one random node's keys only).
    pub fn scan_masters(&mut self, pattern: &str) -> RedisResult<Vec<String>> {
        let mut keys = Vec::new();
        for (host, port) in self.masters()? {
            let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: host.clone(),
                port,
            });
            let mut cursor = 0u64;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor)
                    .arg("MATCH")
                    .arg(pattern)
                    .arg("COUNT")
                    .arg(super::handle::SCAN_COUNT);
                let reply = self.con.route_command(&scan, route.clone())?;
                let (next, found): (u64, Vec<String>) = redis::from_redis_value(reply)?;
                keys.extend(found);
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
        }
        Ok(keys)
    }
}

/// The commands of a packed pipeline, back as commands (the cluster routes each one).
fn unpack(packed: &[u8], n: usize) -> RedisResult<Vec<Cmd>> {
    let mut parser = redis::Parser::new();
    let mut reader = packed;
    let mut cmds = Vec::with_capacity(n);
    for _ in 0..n {
        let Value::Array(args) = parser.parse_value(&mut reader)? else {
            return Err(RedisError::from((
                ErrorKind::Client,
                "a pipelined command is not an array",
            )));
        };
        let mut cmd = Cmd::new();
        for a in args {
            match a {
                Value::BulkString(b) => cmd.arg(b),
                _ => {
                    return Err(RedisError::from((
                        ErrorKind::Client,
                        "a pipelined argument is not a string",
                    )))
                }
            };
        }
        cmds.push(cmd);
    }
    Ok(cmds)
}

impl ConnectionLike for ClusterConn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.con.req_packed_command(cmd).map_err(|e| self.explain(e))
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        self.con.req_command(cmd).map_err(|e| self.explain(e))
    }

    /// A pipeline, split per master by redis-rs (its own `ConnectionLike` would send the whole
    /// pipeline to the node of the first command's slot). Transactions are refused: a cluster
    /// cannot run MULTI across slots, and nothing here needs one.
    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        if offset != 0 {
            return Err(RedisError::from((
                ErrorKind::Client,
                "MULTI/EXEC pipelines are not used on a Redis Cluster",
            )));
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for c in unpack(cmd, count)? {
            pipe.add_command(c);
        }
        pipe.query::<Vec<Value>>(&mut self.con).map_err(|e| self.explain(e))
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        self.con.check_connection()
    }

    fn is_open(&self) -> bool {
        self.con.is_open()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_pipeline_unpacks_into_its_commands() {
        let mut pipe = redis::pipe();
        pipe.hset("a{D1}", "f", "v").sadd("b{D2}", "x");
        let cmds = unpack(&pipe.get_packed_pipeline(), 2).unwrap();
        assert_eq!(cmds.len(), 2);
        assert_eq!(
            cmds[0].get_packed_command(),
            redis::cmd("HSET").arg("a{D1}").arg("f").arg("v").get_packed_command()
        );
        assert_eq!(
            cmds[1].get_packed_command(),
            redis::cmd("SADD").arg("b{D2}").arg("x").get_packed_command()
        );
    }
}
