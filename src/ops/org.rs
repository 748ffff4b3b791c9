//! The roster: import it into MySQL, the record, then refresh Redis's roster cache.

use anyhow::Result;

use crate::config::Config;
use crate::domain::roster::RosterRow;
use crate::mysql::roster_rows::ImportReport;
use crate::redis::board::Board;

/// The ids of the active roster, by department then id (what `simulate` punches for).
pub(crate) fn active_ids(cfg: &Config) -> Result<Vec<String>> {
    let members = crate::mysql::roster_rows::active_members(&crate::mysql::Db::open(cfg)?)?;
    Ok(members.into_iter().map(|m| m.employee_id).collect())
}

/// Upsert the rows (already validated whole) in one transaction, then cache them in Redis so
/// that new employees can check in at once. Also returns the departments the roster did not
/// have before (their queues are declared ahead of their first check-in).
pub(crate) fn import(cfg: &Config, rows: &[RosterRow]) -> Result<(ImportReport, Vec<String>)> {
    let db = crate::mysql::Db::open(cfg)?;
    let known: std::collections::HashSet<String> = crate::mysql::server::departments(&mut db.conn()?)?
        .into_iter()
        .collect();
    let mut new: Vec<String> = rows
        .iter()
        .map(|r| &r.department_id)
        .filter(|d| !known.contains(*d))
        .cloned()
        .collect();
    new.sort_unstable();
    new.dedup();
    let report = crate::mysql::roster_rows::upsert(&db, rows)?;
    let mut board = Board::open(cfg)?;
    let cached = rows
        .iter()
        .map(|r| (r.employee_id.as_str(), r.department_id.as_str(), r.name.as_str()));
    board.cache_roster(cached)?;
    Ok((report, new))
}
