//! The roster: import it into MySQL, the record, then refresh Redis's roster cache and move the
//! days of employees who changed department.

use std::collections::HashMap;

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

/// What `org import` did: the record's side, the departments that are new, and the days that
/// moved with the employees who changed department.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Imported {
    #[serde(flatten)]
    pub report: ImportReport,
    #[serde(skip)]
    pub new_departments: Vec<String>,
    pub moves: Moves,
}

/// The moves an import made (and any a crashed import left unfinished).
#[derive(Debug, Default, serde::Serialize)]
pub(crate) struct Moves {
    /// Employees whose department changed (or whose unfinished move this import finished).
    pub employees: u64,
    /// Their days moved to the new department's boards, and of those the days with punches.
    pub days: u64,
    pub days_with_punches: u64,
}

/// Upsert the rows (already validated whole) in one transaction, then cache them in Redis so
/// that new employees can check in at once, then move the days of those who changed department
/// to their new department's boards (see `redis/moves.rs`). Also returns the departments the
/// roster did not have before (their queues are declared ahead of their first check-in).
pub(crate) fn import(cfg: &Config, rows: &[RosterRow]) -> Result<Imported> {
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
    let mut board = Board::open(cfg)?;
    // Journal who leaves which department before the record changes: once MySQL says the new
    // department, a rerun could no longer tell a move from a plain re-import.
    let target: HashMap<&str, &str> = rows
        .iter()
        .map(|r| (r.employee_id.as_str(), r.department_id.as_str()))
        .collect();
    let ids: Vec<&str> = target.keys().copied().collect();
    let before = crate::mysql::roster_rows::active_by_ids(&db, &ids)?;
    let leaving: Vec<(&str, &str)> = before
        .iter()
        .filter(|m| target.get(m.employee_id.as_str()) != Some(&m.department_id.as_str()))
        .map(|m| (m.employee_id.as_str(), m.department_id.as_str()))
        .collect();
    board.note_moves(&leaving)?;
    let report = crate::mysql::roster_rows::upsert(&db, rows)?;
    let cached = rows
        .iter()
        .map(|r| (r.employee_id.as_str(), r.department_id.as_str(), r.name.as_str()));
    board.cache_roster(cached)?;
    if std::env::var_os("ATTENDANCE_ORG_ABORT_BEFORE_MOVES").is_some() {
        // The test hook: die here like kill -9, the roster changed and no day moved yet.
        std::process::abort();
    }
    // After the cache: a punch from now on goes to the new board, and one that went to the
    // old board meanwhile is caught by the move's compare-and-delete.
    let moves = finish_moves(&db, &mut board, &target)?;
    Ok(Imported {
        report,
        new_departments: new,
        moves,
    })
}

/// Move the days of every journalled move (this import's and any a crash left) to the
/// department MySQL now holds; an employee no longer active has nowhere to go: their days stay
/// (settle records them under the board's department, as for anyone off the roster).
fn finish_moves(db: &crate::mysql::Db, board: &mut Board, target: &HashMap<&str, &str>) -> Result<Moves> {
    let pending = board.pending_moves()?;
    let others: Vec<&str> = pending
        .keys()
        .map(String::as_str)
        .filter(|e| !target.contains_key(e))
        .collect();
    let found = crate::mysql::roster_rows::active_by_ids(db, &others)?;
    let now: HashMap<&str, &str> = found
        .iter()
        .map(|m| (m.employee_id.as_str(), m.department_id.as_str()))
        .chain(target.iter().map(|(e, d)| (*e, *d)))
        .collect();
    let mut moves = Moves::default();
    for (emp, left) in &pending {
        if let Some(to) = now.get(emp.as_str()).filter(|to| left.iter().any(|d| d != *to)) {
            moves.employees += 1;
            for from in left.iter().filter(|d| d != to) {
                let m = board.move_days(emp, from, to)?;
                moves.days += m.days;
                moves.days_with_punches += m.with_punches;
            }
        }
        board.forget_move(emp)?;
    }
    Ok(moves)
}
