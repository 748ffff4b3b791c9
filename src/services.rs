//! Opening connections to Redis and MySQL, with the configured timeouts, and errors that name
//! the service (never its password). AMQP connections live in the `notify` module with the rest
//! of amiquip.
//!
//! Every wait is bounded: a server that accepts the connection and then stops answering is an
//! error (exit 3) after `redis.*_timeout_ms` / `mysql.*_timeout_ms`, never a hang (see
//! docs/timeouts.md).

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

/// The configured Redis, one node or a cluster (a command needs one connection; bulk paths
/// pipeline on it).
pub fn redis(cfg: &Config) -> Result<crate::board::Redis> {
    crate::board::Redis::open(cfg)
}

/// One connection to a single Redis node.
pub fn single_redis(cfg: &Config) -> Result<RedisConn> {
    let t = cfg.redis;
    let client = redis::Client::open(cfg.redis_url.as_str())
        .map_err(|e| Error::input(format!("config: redis_url: {}", redact(&e.to_string()))))?;
    let con = client
        .get_connection_with_timeout(t.connect())
        .map_err(|e| Error::service(Service::Redis, e))?;
    con.set_read_timeout(Some(t.read()))
        .context("setting the Redis read timeout")?;
    con.set_write_timeout(Some(t.write()))
        .context("setting the Redis write timeout")?;
    Ok(RedisConn {
        con,
        read_timeout_ms: t.read_timeout_ms,
    })
}

/// MySQL options for a URL, with the configured timeouts.
fn mysql_opts(cfg: &Config, url: &str) -> Result<mysql::Opts> {
    let t = cfg.mysql;
    let opts = mysql::Opts::from_url(url)
        .map_err(|e| Error::input(format!("config: mysql_url: {}", redact(&e.to_string()))))?;
    Ok(mysql::OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(t.connect()))
        // The socket's own timeouts, set before the handshake: they bound the handshake, every
        // query and the pool's health pings and resets alike.
        .read_timeout(Some(t.read()))
        .write_timeout(Some(t.write()))
        .pool_opts(
            mysql::PoolOpts::default()
                .with_constraints(mysql::PoolConstraints::new_const::<1, 8>())
                // A reset is one more round trip each time a connection goes back to the pool,
                // and one more read timeout when the server has stalled. Nothing here leaves
                // session state behind: transactions end explicitly or roll back on drop, and
                // settle's lock is released explicitly (or dies with the session).
                .with_reset_connection(false),
        )
        .into())
}

/// Give up on a MySQL connection whose server did not answer in time: shut its socket, so that
/// the rollback, the pool's clean-up and any later use fail at once instead of each waiting the
/// read timeout again on a server that has stalled. Other errors leave the connection alone.
/// `socket` is the connection's [`std::os::unix::io::AsRawFd::as_raw_fd`], taken before a
/// transaction borrowed the connection; the connection must still be alive.
pub fn abandon_if_stalled(socket: std::os::unix::io::RawFd, e: &mysql::Error) {
    if matches!(e, mysql::Error::IoError(_) | mysql::Error::CodecError(_)) {
        // SAFETY: shutdown() only ends the connection on a descriptor its owner still holds;
        // it neither closes nor reuses the descriptor.
        unsafe {
            libc::shutdown(socket, libc::SHUT_RDWR);
        }
    }
}

/// A MySQL pool on the configured database. Fails with exit 3 if the server is unreachable.
pub fn mysql(cfg: &Config) -> Result<mysql::Pool> {
    mysql_pool(cfg, &cfg.mysql_url)
}

/// A MySQL pool for reports: on `report_mysql_url` (a replica) when set, else the main
/// database. Only this pool is opened, so reports run while the primary is away.
pub fn mysql_report(cfg: &Config) -> Result<mysql::Pool> {
    mysql_pool(cfg, cfg.report_mysql_url())
}

fn mysql_pool(cfg: &Config, url: &str) -> Result<mysql::Pool> {
    let opts = mysql_opts(cfg, url)?;
    mysql::Pool::new(opts).map_err(|e| mysql_url_error(url, e))
}

/// A MySQL connection to the server without a database (to create it).
pub fn mysql_server(cfg: &Config) -> Result<mysql::Conn> {
    let opts = mysql_opts(cfg, &cfg.mysql_server_url())?;
    mysql::Conn::new(opts).map_err(|e| Error::service(Service::Mysql, e).into())
}

/// Turn a MySQL error into a typed one: an unknown database is a usage error ("run migrate").
pub fn mysql_error(cfg: &Config, e: mysql::Error) -> anyhow::Error {
    mysql_url_error(&cfg.mysql_url, e)
}

fn mysql_url_error(url: &str, e: mysql::Error) -> anyhow::Error {
    if let mysql::Error::MySqlError(me) = &e {
        if me.code == 1049 {
            return Error::input(format!(
                "MySQL database '{}' does not exist: run `attendance migrate` first",
                crate::config::database_of(url).unwrap_or_default()
            ))
            .into();
        }
    }
    Error::service(Service::Mysql, crate::error::mysql_detail(&e)).into()
}
