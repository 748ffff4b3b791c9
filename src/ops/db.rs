//! Monthly partitions of the `attendance` table (`attendance db partition`).

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::mysql::partitions::{self as partition, Partition};

/// Give `attendance` a partition for each of `months` months from `from` (a first of the
/// month); returns the table's partitions after.
pub fn partition(cfg: &Config, from: NaiveDate, months: u32) -> Result<Vec<Partition>> {
    let pool = crate::mysql::conn::mysql(cfg)?;
    let mut conn = pool.get_conn().map_err(|e| crate::mysql::conn::mysql_error(cfg, e))?;
    partition::partition(&mut conn, from, months)
}
