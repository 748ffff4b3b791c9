//! The one Redis handle the rest of the program holds. Code outside `board` passes it to
//! board functions and never sends a command itself: every key format and every Redis call
//! stays in this module, which is where a Redis Cluster connection will slot in.

use anyhow::Result;
use redis::{Cmd, ConnectionLike, RedisResult, Value};

use crate::config::Config;

/// An open connection to the configured Redis, with the timeouts of `services::redis`.
/// Whatever connection that opens (a plain one today; one with its own deadlines, or a
/// cluster connection, later) sits behind the same handle.
pub struct Redis {
    con: Box<dyn ConnectionLike>,
}

impl Redis {
    /// Connect (exit 3 when Redis is unreachable).
    pub fn open(cfg: &Config) -> Result<Redis> {
        Ok(Redis {
            con: Box::new(crate::services::redis(cfg)?),
        })
    }
}

// Board functions take `impl ConnectionLike`, so they run on this handle, on a plain
// connection in tests, and later on a cluster connection, unchanged.
impl ConnectionLike for Redis {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.con.req_packed_command(cmd)
    }

    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        self.con.req_packed_commands(cmd, offset, count)
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        self.con.req_command(cmd)
    }

    fn get_db(&self) -> i64 {
        self.con.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.con.check_connection()
    }

    fn is_open(&self) -> bool {
        self.con.is_open()
    }
}
