//! The one Redis handle the rest of the program holds, [`Board`]: a connection (a single node
//! or a Redis Cluster, chosen by `redis_url`) with the key names of its namespace. Code outside
//! `redis/` calls its methods and never sends a command itself, so single node and cluster
//! share every code path above this one.

use anyhow::Result;
use redis::{Cmd, ConnectionLike, RedisResult, Value};

use super::cluster::{self, ClusterConn, SCAN_COUNT};
use crate::config::Config;
use crate::redis::conn::RedisConn;
use crate::redis::keys::Keys;

/// The day's boards, outboxes, roster cache and hand-offs of one namespace: the connection and
/// the key names travel together, so a caller holds one value and never builds a key itself.
/// Its methods live beside what they touch (`board`, `cutover`, `handoff`, `roster_cache`, ...).
pub struct Board {
    pub(super) con: Redis,
    pub(super) keys: Keys,
    /// The key the events this board records are signed with (`signing.key_file`).
    pub(super) signer: Option<std::sync::Arc<crate::domain::event::signer::Signer>>,
    /// The shift copy's fields for one employee, read in the roster lookup's own round trip
    /// (a single check-in), taken by the next `read_shifts` of that employee.
    pub(super) shift_prefetch: Option<Prefetch>,
    /// The rulebook's copy (`rules` of the shift copy), read in the same round trip; taken by
    /// the next `read_rules`.
    pub(super) rules_prefetch: Option<Option<String>>,
}

/// One employee's fields of the shift copy (`table`, `e:<id>`, see `shift_copy`), read ahead
/// with the roster lookup.
#[derive(Debug, Clone)]
pub(crate) struct Prefetch {
    pub(super) employee: String,
    pub(super) fields: Vec<Option<String>>,
}

impl Prefetch {
    pub(super) fn new(employee: &str, fields: Vec<Option<String>>) -> Prefetch {
        Prefetch {
            employee: employee.to_string(),
            fields,
        }
    }
}

impl Board {
    /// Connect to the configured Redis (exit 2 for a bad URL, exit 3 when it is unreachable),
    /// for the configured namespace.
    pub fn open(cfg: &Config) -> Result<Board> {
        Ok(Board {
            con: Redis::open(cfg)?,
            keys: Keys::new(&cfg.namespace),
            signer: cfg.signing.signer()?.map(std::sync::Arc::new),
            shift_prefetch: None,
            rules_prefetch: None,
        })
    }

    /// Whether Redis answers (a reopened connection, before it is said to be back).
    pub(crate) fn ping(&mut self) -> Result<()> {
        redis::cmd("PING").query::<()>(&mut self.con)?;
        Ok(())
    }

    /// The key names of this board's namespace.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Whether this is a cluster.
    pub fn is_cluster(&self) -> bool {
        self.con.is_cluster()
    }

    /// The connection itself, for tests and benchmarks that send commands of their own.
    #[doc(hidden)]
    pub fn redis(&mut self) -> &mut Redis {
        &mut self.con
    }
}

/// An open connection to the configured Redis, with the configured timeouts.
pub enum Redis {
    Single(RedisConn),
    Cluster(Box<ClusterConn>),
}

impl Redis {
    /// Connect (exit 2 for a bad URL, exit 3 when Redis is unreachable): a cluster when
    /// `redis_url` is a `redis+cluster://` (or `rediss+cluster://`) list of seed nodes, else one node.
    pub fn open(cfg: &Config) -> Result<Redis> {
        if cluster::is_cluster_url(&cfg.redis_url) {
            Ok(Redis::Cluster(Box::new(ClusterConn::open(cfg)?)))
        } else {
            Ok(Redis::Single(super::conn::single_redis(cfg)?))
        }
    }

    /// Whether this is a cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Redis::Cluster(_))
    }

    /// `WAIT n timeout_ms` on the node that holds `key` (on a cluster, its slot's master), on
    /// the connection that wrote there: how many replicas have every write it made.
    pub(crate) fn wait_replicas(&mut self, key: &str, n: u32, timeout_ms: u32) -> RedisResult<u32> {
        match self {
            Redis::Single(c) => redis::cmd("WAIT").arg(n).arg(timeout_ms).query(c),
            Redis::Cluster(c) => c.wait_replicas(key, n, timeout_ms),
        }
    }

    fn con(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Redis::Single(c) => c,
            Redis::Cluster(c) => c.as_mut(),
        }
    }

    fn con_ref(&self) -> &dyn ConnectionLike {
        match self {
            Redis::Single(c) => c,
            Redis::Cluster(c) => c.as_ref(),
        }
    }
}

/// Enumerating keys by pattern: one SCAN on a single node, one per master on a cluster.
pub trait Keyspace: ConnectionLike {
    fn scan_keys(&mut self, pattern: &str) -> RedisResult<Vec<String>>;

    /// One SCAN call from `cursor` on a single node: (next cursor, keys found), so that a caller
    /// can do other work between calls. None on a cluster, whose scan runs master by master in
    /// one piece ([`Keyspace::scan_keys`]).
    fn scan_step(&mut self, pattern: &str, cursor: u64) -> RedisResult<Option<(u64, Vec<String>)>>;
}

/// SCAN on one node (the single-node handle), a thousand keys
/// looked at per round trip: redis-rs's own iterator asks for Redis's default of ten, one round
/// trip per ten keys of the whole server (a relay's round over a 1,000,000-employee day took
/// about 2,000 of them, which held its hand-offs back for some 90 ms).
fn scan_one(con: &mut impl ConnectionLike, pattern: &str) -> RedisResult<Vec<String>> {
    let mut keys = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, found) = step_one(con, pattern, cursor)?;
        keys.extend(found);
        if next == 0 {
            return Ok(keys);
        }
        cursor = next;
    }
}

fn step_one(con: &mut impl ConnectionLike, pattern: &str, cursor: u64) -> RedisResult<(u64, Vec<String>)> {
    redis::cmd("SCAN")
        .arg(cursor)
        .arg("MATCH")
        .arg(pattern)
        .arg("COUNT")
        .arg(SCAN_COUNT)
        .query(con)
}

impl Keyspace for Redis {
    fn scan_keys(&mut self, pattern: &str) -> RedisResult<Vec<String>> {
        match self {
            Redis::Single(c) => scan_one(c, pattern),
            Redis::Cluster(c) => c.scan_masters(pattern),
        }
    }

    fn scan_step(&mut self, pattern: &str, cursor: u64) -> RedisResult<Option<(u64, Vec<String>)>> {
        match self {
            Redis::Single(c) => step_one(c, pattern, cursor).map(Some),
            Redis::Cluster(_) => Ok(None),
        }
    }
}

// The board's methods send their commands and pipelines through this handle, whichever kind
// of connection it holds (benchmarks send their own through it too).
impl ConnectionLike for Redis {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.con().req_packed_command(cmd)
    }

    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        self.con().req_packed_commands(cmd, offset, count)
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        self.con().req_command(cmd)
    }

    fn get_db(&self) -> i64 {
        self.con_ref().get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.con().check_connection()
    }

    fn is_open(&self) -> bool {
        self.con_ref().is_open()
    }
}
