//! MySQL: the system of record. Migrations (refinery, files in `migrations/`) and queries,
//! one submodule per area.

pub(crate) mod archive_rows;
pub(crate) mod attendance;
pub(crate) mod audit;
pub(crate) mod codes;
pub(crate) mod conn;
pub(crate) mod corrections;
pub(crate) mod failure;
pub(crate) mod grants;
mod handle;
pub(crate) mod held_punches;
pub(crate) mod partitions;
pub(crate) mod people;
pub(crate) mod punch_log;
pub(crate) mod report;
pub(crate) mod resettle_rows;
pub(crate) mod runs;
pub(crate) mod server;
pub(crate) mod signing_keys;
pub(crate) mod typed;
pub(crate) mod upserts;
pub(crate) mod voids;

pub use handle::Db;
pub(crate) use handle::{begin, Conn, Retry, Tx};

use anyhow::{Context, Result};
use mysql::prelude::Queryable;

use crate::config::Config;
use crate::error::{Error, Service};

refinery::embed_migrations!("migrations");

/// What `migrate` did.
#[derive(Debug, serde::Serialize)]
pub struct MigrateReport {
    pub database: String,
    pub created_database: bool,
    pub applied: Vec<String>,
}

/// Create the database if missing, then apply every pending migration. Idempotent.
pub(crate) fn migrate(cfg: &Config) -> Result<MigrateReport> {
    let database = cfg.mysql_database().context("mysql_url names no database")?;
    let mut server = conn::mysql_server(cfg)?;
    let existed: Option<String> = server
        .exec_first(
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            (&database,),
        )
        .map_err(|e| Error::service(Service::Mysql, e))?;
    server
        .query_drop(format!(
            "CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
        ))
        .map_err(|e| Error::service(Service::Mysql, e))?;
    drop(server);
    let mut conn = Db::open(cfg)?.conn()?;
    let report = migrations::runner()
        .set_abort_divergent(true)
        // Versions are numbered by feature, not by merge order: a database migrated by a build
        // that had V5 but not yet V3 must be refused, not silently left without V3.
        .set_abort_missing(true)
        .run(&mut conn)
        .map_err(migration_error)?;
    Ok(MigrateReport {
        database,
        created_database: existed.is_none(),
        applied: report.applied_migrations().iter().map(|m| m.to_string()).collect(),
    })
}

/// A database whose applied migrations disagree with this build's is a refusal (exit 1)
/// that says so; anything else is MySQL failing (exit 3).
fn migration_error(e: refinery::Error) -> Error {
    match e.kind() {
        // refinery words both directions "missing from the filesystem".
        refinery::error::Kind::MissingVersion(m) => Error::refused(format!(
            "migration {m} and this database disagree: it is in this build but not applied while a \
             later one is, or applied but not in this build; nothing was migrated"
        )),
        refinery::error::Kind::DivergentVersion(applied, here) => Error::refused(format!(
            "the applied migration {applied} differs from this build's {here}; nothing was migrated"
        )),
        _ => Error::service(Service::Mysql, format!("migration failed: {e}")),
    }
}

/// `?,?,...` groups for a multi-row statement: `rows` groups of `cols` placeholders.
pub fn placeholders(rows: usize, cols: usize) -> String {
    let one = format!("({})", vec!["?"; cols].join(","));
    vec![one; rows].join(",")
}
