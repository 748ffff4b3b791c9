//! The roster: import it into MySQL, the record, then refresh Redis's roster cache and move the
//! days of employees who changed department.

use std::collections::HashMap;

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::people::roster::{Member, RosterRow};
use crate::domain::people::roster_list::Entry;
use crate::domain::people::roster_plan::{self, Full, Held, Summary};
use crate::error::Error;
use crate::mysql::people::roster_import::{Finish, ImportReport};
use crate::redis::board::Board;

/// The ids of the active roster, by department then id, without those on approved leave on
/// `date` (who `simulate` punches for: someone on leave does not come in).
pub(crate) fn expected_ids(cfg: &Config, date: chrono::NaiveDate) -> Result<Vec<String>> {
    let db = crate::mysql::Db::open(cfg)?;
    let away = crate::mysql::people::leave_rows::on_leave(&mut db.conn()?, date)?;
    let members = crate::mysql::people::roster_rows::active_members(&db)?;
    Ok(members
        .into_iter()
        .map(|m| m.employee_id)
        .filter(|id| !away.contains(id))
        .collect())
}

/// Which employees `org list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    /// Employed today, or not yet started.
    Current,
    /// Past their end date, or off the roster.
    Left,
}

/// `org list`: the employees of the record (of one department), current or gone, judged by
/// today in the company's zone by the Redis server's clock; also returns that today. A
/// department the roster does not know is refused (exit 1), as by every report.
pub(crate) fn list(cfg: &Config, dept: Option<&str>, who: Who) -> Result<(NaiveDate, Vec<Entry>)> {
    let db = crate::mysql::Db::open(cfg)?;
    if let Some(d) = dept {
        if !crate::mysql::report::report_queries::known(
            &db,
            crate::mysql::report::report_queries::Known::Department,
            d,
        )? {
            return Err(Error::refused(format!("unknown department '{d}'")).into());
        }
    }
    let today = crate::domain::day::policy::work_date(cfg.timezone, Board::open(cfg)?.read_clock()?.server);
    let mut entries = crate::mysql::people::roster_rows::entries(&mut db.conn()?, dept)?;
    entries.retain(|e| e.left(today) == (who == Who::Left));
    Ok((today, entries))
}

/// `org export`: every employee on the roster, leavers included, as `org import` reads them.
pub(crate) fn export(cfg: &Config) -> Result<Vec<Entry>> {
    crate::mysql::people::roster_rows::entries(&mut crate::mysql::Db::open(cfg)?.conn()?, None)
}

/// How `org import` runs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ImportOptions {
    /// The file is the whole roster: everyone it leaves out leaves, on `end_date` (default today).
    pub full: bool,
    pub end_date: Option<NaiveDate>,
    /// Work everything out and show it; change nothing in any store.
    pub dry_run: bool,
}

/// What `org import` did (or, with `--dry-run`, would do): the record's side, what happened to
/// whom, the departments that are new, and the days that moved with the employees who changed
/// department.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Imported {
    pub dry_run: bool,
    /// The company's today by the Redis server's clock: what "left" and "reactivated" are
    /// judged by.
    pub today: NaiveDate,
    /// `--full`'s end date for those the file leaves out.
    pub end_date: Option<NaiveDate>,
    #[serde(flatten)]
    pub report: ImportReport,
    #[serde(flatten)]
    pub summary: Summary,
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

/// Work the import out against the record, in one transaction, and write it (the rows are
/// already validated whole); then cache the changed employees in Redis, so that new ones can
/// check in at once and leavers are refused, and move the days of those who changed department
/// to their new department's boards (see `redis/moves.rs`). Also returns the departments the
/// roster did not have before (their queues are declared ahead of their first check-in).
/// `--dry-run` runs the same transaction and rolls it back, and touches Redis only to read its
/// clock.
pub(crate) fn import(cfg: &Config, rows: &[RosterRow], opts: ImportOptions) -> Result<Imported> {
    let db = crate::mysql::Db::open(cfg)?;
    let mut board = Board::open(cfg)?;
    let today = crate::domain::day::policy::work_date(cfg.timezone, board.read_clock()?.server);
    let full = opts.full.then(|| Full {
        end: opts.end_date.unwrap_or(today),
    });
    let finish = if opts.dry_run { Finish::RollBack } else { Finish::Commit };
    let (plan, report) = crate::mysql::people::roster_import::import(
        &db,
        rows,
        opts.full,
        |held, departments| roster_plan::plan(rows, held, departments, full, today).map_err(|e| Error::input(e).into()),
        |held, _| {
            if opts.dry_run {
                return Ok(());
            }
            // Journal who leaves which department before the record changes: once MySQL says
            // the new department, a rerun could no longer tell a move from a plain re-import.
            let leaving: Vec<(&str, &str)> = rows
                .iter()
                .filter_map(|r| {
                    let h = held.get(&r.employee_id)?;
                    (h.active && h.department_id != r.department_id)
                        .then_some((h.employee_id.as_str(), h.department_id.as_str()))
                })
                .collect();
            board.note_moves(&leaving)
        },
        finish,
    )?;
    let mut imported = Imported {
        dry_run: opts.dry_run,
        today,
        end_date: full.map(|f| f.end),
        report,
        new_departments: plan.summary.departments_new.clone(),
        summary: plan.summary,
        moves: Moves::default(),
    };
    if opts.dry_run {
        return Ok(imported);
    }
    let target: HashMap<&str, &str> = rows
        .iter()
        .map(|r| (r.employee_id.as_str(), r.department_id.as_str()))
        .collect();
    // The changed employees and the leavers, as the cache keeps them (dates included).
    let cached: Vec<Member> = plan.write.iter().chain(&plan.leave).map(member).collect();
    board.cache_roster(&cached)?;
    if !plan.drop.is_empty() {
        board.uncache_roster(&plan.drop.iter().map(String::as_str).collect::<Vec<_>>())?;
    }
    if std::env::var_os("ATTENDANCE_ORG_ABORT_BEFORE_MOVES").is_some() {
        // The test hook: die here like kill -9, the roster changed and no day moved yet.
        std::process::abort();
    }
    // After the cache: a punch from now on goes to the new board, and one that went to the
    // old board meanwhile is caught by the move's compare-and-delete.
    imported.moves = finish_moves(&db, &mut board, &target)?;
    Ok(imported)
}

fn member(h: &Held) -> Member {
    Member {
        employee_id: h.employee_id.clone(),
        department_id: h.department_id.clone(),
        name: h.name.clone(),
        employment: h.employment,
    }
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
    let found = crate::mysql::people::roster_rows::active_by_ids(db, &others)?;
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
