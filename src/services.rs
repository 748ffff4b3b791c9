//! Opening connections to Redis and MySQL, with timeouts, and errors that name the service
//! (never its password). AMQP connections live in the `notify` module with the rest of amiquip.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::config::Config;
use crate::error::{Error, Service};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// One Redis connection (a command needs one; bulk paths pipeline on it).
pub fn redis(cfg: &Config) -> Result<redis::Connection> {
    let client = redis::Client::open(cfg.redis_url.as_str()).map_err(|e| Error::service(Service::Redis, e))?;
    let con = client
        .get_connection_with_timeout(CONNECT_TIMEOUT)
        .map_err(|e| Error::service(Service::Redis, e))?;
    con.set_read_timeout(Some(IO_TIMEOUT))
        .context("setting the Redis read timeout")?;
    con.set_write_timeout(Some(IO_TIMEOUT))
        .context("setting the Redis write timeout")?;
    Ok(con)
}

/// MySQL options for the configured URL, with timeouts.
fn mysql_opts(url: &str) -> Result<mysql::Opts> {
    let opts = mysql::Opts::from_url(url).map_err(|e| Error::input(format!("config: mysql_url: {e}")))?;
    Ok(mysql::OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .read_timeout(Some(IO_TIMEOUT * 4))
        .write_timeout(Some(IO_TIMEOUT * 4))
        .pool_opts(mysql::PoolOpts::default().with_constraints(mysql::PoolConstraints::new_const::<1, 8>()))
        .into())
}

/// A MySQL pool on the configured database. Fails with exit 3 if the server is unreachable.
pub fn mysql(cfg: &Config) -> Result<mysql::Pool> {
    mysql_pool(&cfg.mysql_url)
}

/// A MySQL pool for reports: on `report_mysql_url` (a replica) when set, else the main
/// database. Only this pool is opened, so reports run while the primary is away.
pub fn mysql_report(cfg: &Config) -> Result<mysql::Pool> {
    mysql_pool(cfg.report_mysql_url())
}

fn mysql_pool(url: &str) -> Result<mysql::Pool> {
    let opts = mysql_opts(url)?;
    mysql::Pool::new(opts).map_err(|e| mysql_url_error(url, e))
}

/// A MySQL connection to the server without a database (to create it).
pub fn mysql_server(cfg: &Config) -> Result<mysql::Conn> {
    let opts = mysql_opts(&cfg.mysql_server_url())?;
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
    Error::service(Service::Mysql, e).into()
}
