//! The database handle the operations hold ([`Db`]: a pool on the configured database, or on
//! the reports' replica), the connections ([`Conn`]) and transactions ([`Tx`]) it hands out,
//! and opening it again while the server is away ([`Retry`]). Operations pass these back to the
//! query functions of this folder; only this folder runs statements on them.

use std::thread::sleep;
use std::time::Duration;

use anyhow::Result;

use super::conn;
use crate::config::Config;
use crate::error::Error;

/// A connection from a [`Db`]'s pool, back to the pool when dropped.
pub(crate) type Conn = mysql::PooledConn;

/// A transaction on a [`Conn`]. End it with `commit()` or `rollback()`: dropping it rolls back
/// and swallows the error.
pub(crate) type Tx<'c> = mysql::Transaction<'c>;

/// A pool on one database, with the configured timeouts. Cheap to share by reference across
/// threads; each thread takes its own [`Conn`].
pub struct Db {
    pool: mysql::Pool,
    /// The URL it was opened on: an unknown database is named in the error.
    url: String,
}

/// How often and how patiently to try again while MySQL is briefly away: `attempts` in all,
/// the pause doubling from `backoff`. The operation decides these; what is worth retrying is
/// MySQL's (see [`super::failure::is_data_error`]).
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempts: u32,
    pub backoff: Duration,
}

impl Retry {
    /// Run `f` until it succeeds, at most `attempts` times (at least once), doubling the pause
    /// between attempts; `retry(e)` says whether an error is worth another attempt. Returns the
    /// last error with the number of the attempt that gave it.
    pub(super) fn run<T, E>(
        &self,
        retry: impl Fn(&E) -> bool,
        mut f: impl FnMut() -> Result<T, E>,
    ) -> Result<T, (E, u32)> {
        let mut delay = self.backoff;
        let attempts = self.attempts.max(1);
        let mut attempt = 1;
        loop {
            match f() {
                Ok(v) => return Ok(v),
                Err(e) if attempt == attempts || !retry(&e) => return Err((e, attempt)),
                Err(_) => {
                    sleep(delay);
                    delay *= 2;
                    attempt += 1;
                }
            }
        }
    }
}

impl Db {
    /// A pool on the configured database. Fails with exit 3 if the server is unreachable, and
    /// exit 2 if the database does not exist ("run migrate").
    pub fn open(cfg: &Config) -> Result<Db> {
        Db::on(cfg, &cfg.mysql_url)
    }

    /// A pool for reports: on `report_mysql_url` (a replica) when set, else the main database.
    /// Only this pool is opened, so reports run while the primary is away.
    pub fn open_reports(cfg: &Config) -> Result<Db> {
        Db::on(cfg, cfg.report_mysql_url())
    }

    /// [`Db::open`], tried again while the server is unreachable (not when the URL or the
    /// database is wrong, nor when TLS refuses the server's certificate: no retry changes those).
    pub fn open_retrying(cfg: &Config, retry: Retry) -> Result<Db> {
        let unreachable = |e: &anyhow::Error| {
            matches!(e.downcast_ref::<Error>(),
                Some(Error::Service { detail, .. }) if !crate::config::is_refused_certificate(detail))
        };
        retry
            .run(unreachable, || Db::open(cfg))
            .map_err(|(e, attempt)| e.context(format!("gave up after {attempt} attempt(s)")))
    }

    fn on(cfg: &Config, url: &str) -> Result<Db> {
        Ok(Db {
            pool: conn::pool(cfg, url)?,
            url: url.to_string(),
        })
    }

    /// A connection from the pool; a failure is MySQL failing (exit 3).
    pub fn conn(&self) -> Result<Conn> {
        self.pool.get_conn().map_err(|e| self.error(e))
    }

    /// A connection from the pool, the client's error as it is (for the query functions here,
    /// which let it travel up raw).
    pub(super) fn get_conn(&self) -> mysql::Result<Conn> {
        self.pool.get_conn()
    }

    /// A MySQL error of this database, typed: an unknown database is a usage error.
    pub(super) fn error(&self, e: mysql::Error) -> anyhow::Error {
        conn::url_error(&self.url, e)
    }
}

/// Begin a transaction on `conn`, with the server's default isolation.
pub(crate) fn begin(conn: &mut Conn) -> Result<Tx<'_>> {
    Ok(conn.start_transaction(mysql::TxOpts::default())?)
}
