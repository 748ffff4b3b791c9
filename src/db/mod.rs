//! MySQL: the system of record. Migrations (refinery, files in `migrations/`) and queries,
//! one submodule per area.

pub mod attendance;
pub mod calendar;
pub mod corrections;
pub mod leave;
pub mod report;
pub mod roster;
pub mod runs;

use anyhow::{Context, Result};
use mysql::prelude::Queryable;

use crate::config::Config;
use crate::error::{Error, Service};
use crate::services;

refinery::embed_migrations!("migrations");

/// What `migrate` did.
#[derive(Debug, serde::Serialize)]
pub struct MigrateReport {
    pub database: String,
    pub created_database: bool,
    pub applied: Vec<String>,
}

/// Create the database if missing, then apply every pending migration. Idempotent.
pub fn migrate(cfg: &Config) -> Result<MigrateReport> {
    let database = cfg.mysql_database().context("mysql_url names no database")?;
    let mut server = services::mysql_server(cfg)?;
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
    let pool = services::mysql(cfg)?;
    let mut conn = pool.get_conn().map_err(|e| services::mysql_error(cfg, e))?;
    let report = migrations::runner()
        .set_abort_divergent(true)
        .run(&mut conn)
        .map_err(|e| Error::service(Service::Mysql, format!("migration failed: {e}")))?;
    Ok(MigrateReport {
        database,
        created_database: existed.is_none(),
        applied: report.applied_migrations().iter().map(|m| m.to_string()).collect(),
    })
}

/// `?,?,...` groups for a multi-row statement: `rows` groups of `cols` placeholders.
pub fn placeholders(rows: usize, cols: usize) -> String {
    let one = format!("({})", vec!["?"; cols].join(","));
    vec![one; rows].join(",")
}
