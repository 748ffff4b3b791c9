//! Opening MySQL pools and connections, with the configured timeouts, and errors that name
//! the service (never its password).
//!
//! TLS: the URL's `require_ssl=true` / `ssl-mode=VERIFY_IDENTITY`, or the crate's own
//! parameters (`root_cert_path=...`, ...); the server's certificate and name are checked against
//! the CA file (the URL's, else `SSL_CERT_FILE`'s) and the crate's built-in roots.
//!
//! Every wait is bounded: a server that accepts the connection and then stops answering is an
//! error (exit 3) after `mysql.*_timeout_ms`, never a hang (see docs/timeouts.md).

use anyhow::Result;

use crate::config::Config;
use crate::error::{redact, Error, Service};

/// MySQL options for a URL, with the configured timeouts.
fn mysql_opts(cfg: &Config, url: &str) -> Result<mysql::Opts> {
    let t = cfg.mysql;
    let key = if url == cfg.report_mysql_url() && cfg.report_mysql_url.is_some() {
        "report_mysql_url"
    } else {
        "mysql_url"
    };
    let bad = |why: &str| Error::input(format!("config: {}: {}", cfg.named(key), redact(why)));
    let (url, tls) = crate::config::mysql_tls(url).map_err(|why| bad(&why))?;
    let opts = mysql::Opts::from_url(&url).map_err(|e| bad(&e.to_string()))?;
    let ssl = match tls {
        Some(false) => None,
        Some(true) => Some(opts.get_ssl_opts().cloned().unwrap_or_default()),
        None => opts.get_ssl_opts().cloned(),
    };
    let ssl = match ssl {
        Some(ssl) if ssl.root_cert_path().is_none() => match crate::config::ca_file()? {
            Some(ca) => Some(ssl.with_root_cert_path(Some(ca))),
            None => Some(ssl),
        },
        Some(ssl) => {
            let path = ssl.root_cert_path().unwrap_or(std::path::Path::new(""));
            std::fs::File::open(path).map_err(|e| bad(&format!("root_cert_path={}: {e}", path.display())))?;
            Some(ssl)
        }
        None => None,
    };
    Ok(mysql::OptsBuilder::from_opts(opts)
        .ssl_opts(ssl)
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
pub(super) fn abandon_if_stalled(socket: std::os::unix::io::RawFd, e: &mysql::Error) {
    if matches!(e, mysql::Error::IoError(_) | mysql::Error::CodecError(_)) {
        // SAFETY: shutdown() only ends the connection on a descriptor its owner still holds;
        // it neither closes nor reuses the descriptor.
        unsafe {
            libc::shutdown(socket, libc::SHUT_RDWR);
        }
    }
}

/// A pool on `url`, with the configured timeouts (see [`super::Db`]).
pub(super) fn pool(cfg: &Config, url: &str) -> Result<mysql::Pool> {
    let opts = mysql_opts(cfg, url)?;
    mysql::Pool::new(opts).map_err(|e| url_error(url, e))
}

/// A MySQL connection to the server without a database (to create it, or, for the tests and
/// benchmarks, to drop it).
pub fn mysql_server(cfg: &Config) -> Result<mysql::Conn> {
    let opts = mysql_opts(cfg, &cfg.mysql_server_url())?;
    mysql::Conn::new(opts).map_err(|e| Error::service(Service::Mysql, said(&e)).into())
}

/// Turn a MySQL error of the database at `url` into a typed one: an unknown database is a
/// usage error ("run migrate"), anything else MySQL failing (exit 3).
pub(super) fn url_error(url: &str, e: mysql::Error) -> anyhow::Error {
    if super::failure::is_unknown_database(&e) {
        return Error::input(format!(
            "MySQL database '{}' does not exist: run `attendance migrate` first",
            crate::config::database_of(url).unwrap_or_default()
        ))
        .into();
    }
    Error::service(Service::Mysql, said(&e)).into()
}

/// A MySQL error in words; a refused certificate (or TLS refused) names TLS.
fn said(e: &mysql::Error) -> String {
    let detail = super::failure::detail(e);
    if super::failure::is_server_error(e) {
        return detail;
    }
    crate::config::refused_certificate(&detail).unwrap_or(detail)
}
