//! Redis Cluster: the `redis+cluster://` URL, a cluster connection with the configured timeouts,
//! pipelines split per node, and key enumeration over every master.
//!
//! Every script and every command here touches the keys of one hash tag (one department, or one
//! roster bucket), so each lands whole on one slot. A pipeline may still hold commands of many
//! departments: redis-rs's cluster pipeline sends each command to the master of its slot (one
//! batch per node, never MULTI), so nothing ever asks one node for a slot it does not own.

use std::time::{Duration, Instant};

use anyhow::Result;
use redis::cluster::{ClusterClient, ClusterClientBuilder, ClusterConnection};
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, ConnectionLike, ErrorKind, RedisError, RedisResult, Value};

use crate::config::Config;
use crate::error::{redact, Error};

// The URL's grammar belongs to the configuration, which validates `redis_url` without
// reaching into a store; the connection code keeps its short names for it.
use crate::config::REDIS_CLUSTER_TLS_SCHEME as TLS_SCHEME;

/// Keys SCAN looks at per call, on a single node and on each master of a cluster.
pub(crate) const SCAN_COUNT: usize = 1_000;
pub(crate) use crate::config::{redis_cluster_seeds as seed_urls, REDIS_CLUSTER_SCHEME as SCHEME};

/// Whether `url` names a cluster's seed nodes (`redis+cluster://`, or `rediss+cluster://` whose
/// nodes are reached over TLS).
pub(crate) fn is_cluster_url(url: &str) -> bool {
    [SCHEME, TLS_SCHEME]
        .iter()
        .any(|s| url.strip_prefix(s).is_some_and(|rest| rest.starts_with("://")))
}

/// How long a command waits, at most, for a slot that is moving between masters (a
/// `redis-cli --cluster reshard`, one slot at a time) before its error stands (exit 3).
pub(crate) const SLOT_MOVE_WAIT: Duration = Duration::from_secs(3);

/// A connection to a Redis Cluster: commands go to the master of their key's slot.
pub struct ClusterConn {
    con: ClusterConnection,
    client: ClusterClient,
    timeouts: crate::config::IoTimeouts,
    read_timeout_ms: u32,
}

impl ClusterConn {
    /// Connect through the seed nodes of `redis_url` (exit 2 for a malformed list, exit 3 when
    /// no seed answers).
    pub fn open(cfg: &Config) -> Result<ClusterConn> {
        let seeds = seed_urls(&cfg.redis_url).ok_or_else(|| {
            Error::input(format!(
                "config: {}: '{}': a cluster URL lists its seed nodes as redis+cluster://host:port,host:port",
                cfg.named("redis_url"),
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
            // Its default least wait, 1,280 ms, is above this most: every retry waited 1.28 s.
            .min_retry_wait(10)
            .max_retry_wait(200)
            .build()
            .map_err(|e| {
                Error::input(format!(
                    "config: {}: {}",
                    cfg.named("redis_url"),
                    redact(&e.to_string())
                ))
            })?;
        let con = connect(&client, t).map_err(|e| super::conn::connect_error(e, tls))?;
        Ok(ClusterConn {
            con,
            client,
            timeouts: t,
            read_timeout_ms: t.read_timeout_ms,
        })
    }

    /// A fresh connection in place of this one, with a fresh slot map: after a pipeline failed
    /// part-way (redis-rs then leaves the replies of the nodes it had written to unread, and the
    /// next command would read one of them), or a node refused the connection (a map that
    /// still names a master lost before its replica took over). If the cluster cannot be
    /// reached now, the old connection stays and the caller's error stands.
    fn reopen(&mut self) {
        if let Ok(con) = connect(&self.client, self.timeouts) {
            self.con = con;
        }
    }

    /// A command, sent again while its slot moves: a node that refused the connection (nothing
    /// was sent to it) once, on a fresh slot map; `TRYAGAIN`, `ASK`, `MOVED` or `CLUSTERDOWN`
    /// left after redis-rs's own redirections for up to [`SLOT_MOVE_WAIT`], with a growing
    /// pause. Each of those says the command did not run, so sending it again is safe for any
    /// command, the punch script included. A script's keys that are split between the two
    /// nodes of a slot being migrated (a board moved, its outbox not yet, or not existing at
    /// all) answer TRYAGAIN until the migration of the slot ends.
    fn sent(&mut self, send: impl Fn(&mut ClusterConnection) -> RedisResult<Value>) -> RedisResult<Value> {
        let until = Instant::now() + SLOT_MOVE_WAIT;
        let mut pause = Duration::from_millis(10);
        let mut reopened = false;
        loop {
            match send(&mut self.con) {
                Err(e) if e.is_connection_refusal() && !reopened => {
                    self.reopen();
                    reopened = true;
                }
                Err(e) if e.is_cluster_error() && Instant::now() + pause < until => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(200));
                }
                r => return r.map_err(|e| self.explain(e)),
            }
        }
    }

    fn explain(&self, e: RedisError) -> RedisError {
        crate::redis::conn::explain_timeout(e, self.read_timeout_ms)
    }

    /// The address of every master, from `CLUSTER SLOTS`.
    pub fn masters(&mut self) -> RedisResult<Vec<(String, u16)>> {
        self.slot_nodes(false)
    }

    /// The address of every node that serves slots (with `replicas`, their replicas too), from
    /// `CLUSTER SLOTS` (during a fail-over, a lost master is still listed).
    fn slot_nodes(&mut self, replicas: bool) -> RedisResult<Vec<(String, u16)>> {
        let slots: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query(&mut self.con)?;
        let mut nodes = Vec::new();
        for range in slots {
            let Value::Array(parts) = range else { continue };
            let served_by = parts.iter().skip(2).take(if replicas { usize::MAX } else { 1 });
            for node in served_by {
                let Value::Array(node) = node else { continue };
                if let (Some(host), Some(Value::Int(port))) = (node.first(), node.get(1)) {
                    let host: String = redis::from_redis_value_ref(host)?;
                    let addr = (host, u16::try_from(*port).unwrap_or(0));
                    if !nodes.contains(&addr) {
                        nodes.push(addr);
                    }
                }
            }
        }
        Ok(nodes)
    }

    /// The master serving each slot range, from `CLUSTER SLOTS`: (first slot, last slot,
    /// master's `host:port`).
    pub(crate) fn slot_masters(&mut self) -> RedisResult<Vec<(u16, u16, String)>> {
        let slots: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query(&mut self.con)?;
        let mut ranges = Vec::new();
        for range in slots {
            let Value::Array(parts) = range else { continue };
            let (Some(Value::Int(first)), Some(Value::Int(last)), Some(Value::Array(node))) =
                (parts.first(), parts.get(1), parts.get(2))
            else {
                continue;
            };
            if let (Some(host), Some(Value::Int(port))) = (node.first(), node.get(1)) {
                let host: String = redis::from_redis_value_ref(host)?;
                let slot = |n: &i64| u16::try_from(*n).unwrap_or(0);
                ranges.push((slot(first), slot(last), format!("{host}:{port}")));
            }
        }
        Ok(ranges)
    }

    /// One command to the node `route` names.
    pub(super) fn route(&mut self, cmd: &Cmd, route: RoutingInfo) -> RedisResult<Value> {
        self.con.route_command(cmd, route).map_err(|e| self.explain(e))
    }

    /// `SCRIPT LOAD` on every node that answers, masters and replicas (a replica promoted later
    /// then has the script already). redis-rs sends it to every node and fails if one fails: a
    /// master lost (until its replica takes over) would fail every script of every department,
    /// healthy masters included. The script's hash, if any node loaded it; a node that missed
    /// it answers NOSCRIPT later, and the script is loaded again then.
    fn load_script(&mut self, load: &Cmd) -> RedisResult<Value> {
        let mut loaded = None;
        let mut failed = None;
        for (host, port) in self.slot_nodes(true)? {
            let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host, port });
            match self.con.route_command(load, route).and_then(Value::extract_error) {
                Ok(sha) => loaded = Some(sha),
                Err(e) => failed = Some(e),
            }
        }
        match (loaded, failed) {
            (Some(sha), _) => Ok(sha),
            (None, Some(e)) => Err(self.explain(e)),
            (None, None) => Err(RedisError::from((ErrorKind::Client, "no node serves slots"))),
        }
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
                scan.arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(SCAN_COUNT);
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
pub(super) fn unpack(packed: &[u8], n: usize) -> RedisResult<Vec<Cmd>> {
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

/// The slot of a key, as Redis Cluster computes it: CRC16 (XMODEM) of its hash tag (the text
/// between the first `{` and the next `}`, if not empty) or of the whole key, mod 16384.
pub(crate) fn slot_of(key: &str) -> u16 {
    let k = key.as_bytes();
    let tagged = k.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &k[open + 1..];
        rest.iter()
            .position(|&b| b == b'}')
            .filter(|&n| n > 0)
            .map(|n| &rest[..n])
    });
    let mut crc: u16 = 0;
    for &b in tagged.unwrap_or(k) {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16_384
}

impl ClusterConn {
    /// `WAIT n timeout_ms` on the master of `key`'s slot, on the connection that wrote there
    /// (redis-rs would send WAIT to every master and answer the least count).
    pub(crate) fn wait_replicas(&mut self, key: &str, n: u32, timeout_ms: u32) -> RedisResult<u32> {
        let mut wait = redis::cmd("WAIT");
        wait.arg(n).arg(timeout_ms);
        let route = redis::cluster_routing::Route::new(slot_of(key), redis::cluster_routing::SlotAddr::Master);
        let reply = self
            .con
            .route_command(
                &wait,
                RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
            )
            .map_err(|e| self.explain(e))?;
        Ok(redis::from_redis_value(reply)?)
    }
}

/// A cluster connection with the configured timeouts on every node's socket.
fn connect(client: &ClusterClient, t: crate::config::IoTimeouts) -> RedisResult<ClusterConnection> {
    let con = client.get_connection()?;
    con.set_read_timeout(Some(t.read()))?;
    con.set_write_timeout(Some(t.write()))?;
    Ok(con)
}

/// Whether a command is `SCRIPT LOAD` (what redis-rs's `Script` sends on NOSCRIPT).
fn is_script_load(cmd: &Cmd) -> bool {
    let mut args = cmd.args_iter().map(|a| match a {
        redis::Arg::Simple(b) => b,
        _ => b"",
    });
    args.next().is_some_and(|a| a.eq_ignore_ascii_case(b"SCRIPT"))
        && args.next().is_some_and(|a| a.eq_ignore_ascii_case(b"LOAD"))
}

impl ConnectionLike for ClusterConn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        const LOAD: &[u8] = b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n";
        if cmd.get(..LOAD.len()).is_some_and(|p| p.eq_ignore_ascii_case(LOAD)) {
            let load = unpack(cmd, 1)?.remove(0);
            return self.load_script(&load);
        }
        self.sent(|con| con.req_packed_command(cmd))
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        if is_script_load(cmd) {
            return self.load_script(cmd);
        }
        self.sent(|con| con.req_command(cmd))
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
        // Not sent again: part of it may have run.
        pipe.query::<Vec<Value>>(&mut self.con).map_err(|e| {
            self.reopen();
            self.explain(e)
        })
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
    fn a_key_slot_is_the_one_redis_cluster_computes() {
        // Values from Redis's CLUSTER KEYSLOT.
        assert_eq!(slot_of("foo"), 12182);
        assert_eq!(slot_of("123456789"), 12739);
        assert_eq!(slot_of("att:board:{D001}:2026-11-02"), slot_of("D001"));
        // An empty tag hashes the whole key; the tag ends at the first `}` after the `{`.
        assert_eq!(slot_of("foo{}{bar}"), 8363);
        assert_eq!(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    }

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
