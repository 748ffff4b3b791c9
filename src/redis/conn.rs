//! Opening a connection to one Redis node, with the configured timeouts, and errors that name
//! the service (never its password).
//!
//! Every wait is bounded: a server that accepts the connection and then stops answering is an
//! error (exit 3) after `redis.*_timeout_ms`, never a hang (see docs/timeouts.md).

use std::io;

use anyhow::{Context, Result};
use redis::{ConnectionLike, RedisResult, Value};

use crate::config::Config;
use crate::error::{redact, Error, Service};

/// A Redis connection whose pipelines give up at the first reply that does not come.
///
/// redis-rs reads every reply of a pipeline even after one timed out, each read waiting the
/// full read timeout again: a server that stalled mid-way through a 32-call pipeline held a
/// bulk check-in for 32 timeouts (over five minutes). Here the first I/O error ends the
/// pipeline; the connection is then out of step and the command fails (exit 3).
pub struct RedisConn {
    con: redis::Connection,
    read_timeout_ms: u32,
}

impl RedisConn {
    fn explain(&self, e: redis::RedisError) -> redis::RedisError {
        explain_timeout(e, self.read_timeout_ms)
    }
}

/// A read that timed out says so in words, with the setting that bounds it (the raw error is
/// "Resource temporarily unavailable"). Other errors pass unchanged.
pub(crate) fn explain_timeout(e: redis::RedisError, read_timeout_ms: u32) -> redis::RedisError {
    if !e.is_timeout() {
        return e;
    }
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("Redis sent no reply within {read_timeout_ms} ms (redis.read_timeout_ms)"),
    )
    .into()
}

impl RedisConn {
    /// Write commands without waiting for their replies (see `board`'s overlapped pipelines).
    pub(crate) fn send_packed(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.con.send_packed_command(cmd).map_err(|e| self.explain(e))
    }

    /// The next reply on the connection, within the read timeout.
    pub(crate) fn recv(&mut self) -> RedisResult<Value> {
        self.con.recv_response().map_err(|e| self.explain(e))
    }
}

impl ConnectionLike for RedisConn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.con.req_packed_command(cmd).map_err(|e| self.explain(e))
    }

    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        self.con.send_packed_command(cmd)?;
        let mut replies = Vec::with_capacity(count);
        let mut first_err = None;
        let mut idx = 0;
        while idx < offset + count {
            match self.con.recv_response() {
                // RESP3 pushes are not replies.
                Ok(Value::Push { .. }) => continue,
                Ok(v) if idx >= offset => replies.push(v),
                Ok(_) => {}
                Err(e) if e.is_io_error() => return Err(self.explain(e)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
            idx += 1;
        }
        first_err.map_or(Ok(replies), Err)
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

/// Redis could not be reached (exit 3); over TLS, a refused certificate says so in words.
pub(super) fn connect_error(e: redis::RedisError, tls: bool) -> Error {
    let detail = e.to_string();
    match crate::config::refused_certificate(&detail).filter(|_| tls) {
        Some(said) => Error::service(Service::Redis, said),
        None => Error::service(Service::Redis, detail),
    }
}

/// One connection to a single Redis node.
pub(super) fn single_redis(cfg: &Config) -> Result<RedisConn> {
    let t = cfg.redis;
    let tls = cfg.redis_url.starts_with("rediss://");
    if tls {
        // rustls-native-certs reads the same variable; a bad one is the user's (exit 2).
        crate::config::ca_file()?;
    }
    let client = redis::Client::open(cfg.redis_url.as_str()).map_err(|e| {
        Error::input(format!(
            "config: {}: {}",
            cfg.named("redis_url"),
            redact(&e.to_string())
        ))
    })?;
    let con = client
        .get_connection_with_timeout(t.connect())
        .map_err(|e| connect_error(e, tls))?;
    con.set_read_timeout(Some(t.read()))
        .context("setting the Redis read timeout")?;
    con.set_write_timeout(Some(t.write()))
        .context("setting the Redis write timeout")?;
    Ok(RedisConn {
        con,
        read_timeout_ms: t.read_timeout_ms,
    })
}
