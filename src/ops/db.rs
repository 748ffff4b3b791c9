//! The database itself: its schema (`attendance migrate`) and the monthly partitions of the
//! `attendance` table (`attendance db partition`).

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::mysql::partitions::{self as partition, Partition};

pub(crate) use crate::mysql::MigrateReport;

/// Create the database if missing, then apply every pending migration. Idempotent.
pub fn migrate(cfg: &Config) -> Result<MigrateReport> {
    crate::mysql::migrate(cfg)
}

/// Give `attendance` a partition for each of `months` months from `from` (a first of the
/// month); returns the table's partitions after.
pub(crate) fn partition(cfg: &Config, from: NaiveDate, months: u32) -> Result<Vec<Partition>> {
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    partition::partition(&mut conn, from, months)
}
