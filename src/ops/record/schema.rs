//! The database itself: its schema (`attendance migrate`) and the monthly partitions of the
//! `attendance` table (`attendance db partition`).

use anyhow::Result;
use chrono::{Datelike, NaiveDate};

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
    // Each month's partition holds the days before the next month's first: the last bound
    // must be a date too, so the months end by 9999-11 (checked before MySQL is asked).
    let last_bound = from.checked_add_months(chrono::Months::new(months));
    if last_bound.is_none_or(|d| !crate::domain::dates::YEARS.contains(&d.year())) {
        return Err(crate::error::Error::input(format!(
            "--from {} with --months {months} goes past 9999-11: the last month's partition needs the next month's first day as its bound",
            from.format("%Y-%m")
        ))
        .into());
    }
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    partition::partition(&mut conn, from, months)
}
