//! Laying out a day: every active department's board in Redis from the MySQL roster, the day's
//! department queues declared on the broker meanwhile, and the layout recorded in MySQL (settle
//! then refuses the day if its boards go missing).
//!
//! The boards come from the MySQL roster a slice of departments at a time: one thread
//! reads the next slice's members while Redis lays out this one, so the time is the slower of
//! the two rather than their sum, and memory holds a couple of slices, never the whole roster.
//! `init-day` and settle (the next work day) both lay out through here.
//!
//! The Redis roster cache is rebuilt on the way only when it is not the roster MySQL has (see
//! [`Stamp`]), from a second reader that goes along the primary key (the names come with the
//! rows) while the first reads ids alone by department (the department index answers). A day
//! whose roster did not change reads ids alone and writes no roster field.

use std::sync::mpsc;
use std::time::Instant;

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::{Config, Policy};
use crate::domain::day::due::Rota;
use crate::domain::day::shifts::{ShiftTable, Shifts};
use crate::domain::people::roster::{Member, Stamp};
use crate::mysql::Db;
use crate::ops::relay::queues::{declare_missing, Declared};
use crate::redis::board::{Board, LayoutReport};
use crate::redis::copies::roster_cache::RosterRebuild;

/// What laying out a day did, and what the caller should tell the operator.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub layout: LayoutReport,
    /// Redis keeps nothing on disk or may evict keys: the one-line warning.
    pub persistence: Option<String>,
    /// The department queues declared, or why none were (a broker away costs a warning,
    /// never the day's layout).
    pub queues: Result<Declared, String>,
    pub seconds: f64,
}

/// Lay out `date`. `started(employees)` is called once the work is known, `progress(n)` as
/// boards are laid out.
pub(crate) fn init_day(
    cfg: &Config,
    date: NaiveDate,
    started: impl FnOnce(u64),
    mut progress: impl FnMut(usize),
) -> Result<Outcome> {
    crate::mysql::runs::check_storable(date)?;
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let depts: Vec<String> = crate::mysql::people::roster_rows::department_ids(&mut conn)?
        .into_iter()
        .filter_map(|(d, active)| active.then_some(d))
        .collect();
    let mut board = Board::open(cfg)?;
    let persistence = board.persistence_warning();
    // The progress bar's length: the roster as the cache last saw it (counting MySQL's active
    // employees would read the whole department index, a good part of a second at a million).
    started(board.roster_cache_state()?.held);
    let clock = Instant::now();
    let identity = identity_before_layout(&mut board, date, &depts);
    // The day's queues are looked up on the broker (the missing ones declared) while the boards
    // are laid out in Redis: two services' work, overlapped.
    let (layout, queues) = std::thread::scope(|s| {
        let declaring = s.spawn(|| declare_missing(cfg, &depts));
        let layout = lay_out(&db, &mut board, &cfg.policy, date, &depts, &mut progress);
        let queues = declaring
            .join()
            .unwrap_or_else(|_| Err("the declaring thread panicked".into()));
        (layout, queues)
    });
    let layout = layout?;
    // Recorded once the boards exist: a layout cut off half-way is not claimed.
    crate::mysql::runs::record_layout(
        &mut conn,
        date,
        layout.departments,
        layout.employees,
        identity.as_deref(),
    )?;
    Ok(Outcome {
        layout,
        persistence,
        queues,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// The Redis servers about to hold `date`'s boards, when none of its punches is recorded yet:
/// settle then knows whether the same servers held the day from its start (a restart or a
/// fail-over in between may have lost punches). `None` when a punch is there already, or when
/// Redis cannot say: the day is then checked against the journal, as before.
pub(crate) fn identity_before_layout(board: &mut Board, date: NaiveDate, depts: &[String]) -> Option<String> {
    match board.day_has_punches(date, depts) {
        Ok(false) => board.server_identity().ok(),
        _ => None,
    }
}

/// Departments per slice: enough employees for the pipelines to stay full.
pub(crate) const DEPTS_PER_SLICE: usize = 50;
/// Employees per chunk of the roster read for the cache.
const ROSTER_CHUNK: usize = 10_000;

/// Lay out `date` for the active members of `depts` employed that day (see `Employment`) and
/// expected by their shift (see [`Rota`]), `depts` being every department that has active
/// members, and report the totals. `progress` gets each slice's number of employees.
///
/// Someone on a rest day by their shift is left off the board rather than marked on it: a
/// missing field is what every reader already takes for "no punch yet" (punch.lua makes it on a
/// first punch, settle judges the roster, not the fields), so nothing else changes and a
/// day of rest costs no field at all, where a mark would cost one per resting employee and a
/// new value that the punch script, settle, voids and moves would all have to learn.
pub(crate) fn lay_out(
    db: &Db,
    board: &mut Board,
    policy: &Policy,
    date: NaiveDate,
    depts: &[String],
    mut progress: impl FnMut(usize),
) -> Result<LayoutReport> {
    // The punch path reads each employee's shift from Redis: every layout rewrites that copy
    // from MySQL, so a change made there by hand is picked up by the next day at the latest.
    let table = crate::ops::lookup::refresh_copy(db, board)?;
    // Likewise the key registry's copy, which kiosks and consumers read.
    crate::ops::keys::refresh_copy(db, board)?;
    let rota = rota(db, table, policy, date)?;
    // Read before the members: a change made while they are read shows at the next layout.
    let changed = crate::mysql::people::roster_rows::last_change(&mut db.conn()?)?;
    let cache = board.roster_cache_state()?;
    let mut rebuild = if cache.current(&changed) {
        None
    } else {
        Some(RosterRebuild::start(board)?)
    };
    let mut report = LayoutReport {
        date: date.to_string(),
        ..LayoutReport::default()
    };
    let mut cached = 0u64;
    // Every active member read, employed that day or not: what the roster cache holds.
    let mut active = 0u64;
    for_each_read(db, depts, rebuild.is_some(), |read| {
        match read {
            Read::Slice(mut members) => {
                active += members.len() as u64;
                members.retain(|m| m.employment.covers(date));
                let employed = members.len();
                members.retain(|m| rota.expects(m));
                report.rest_day += (employed - members.len()) as u64;
                let part = board.layout_day(date, &members, |_| {})?;
                report.departments += part.departments;
                report.employees += part.employees;
                report.laid_out += part.laid_out;
                progress(part.employees);
            }
            Read::Roster(members) => {
                cached += members.len() as u64;
                rebuild.as_mut().expect("read for a rebuild").add(board, &members)?;
            }
        }
        Ok(())
    })?;
    match rebuild {
        Some(r) => r.finish(
            board,
            &Stamp {
                active: cached,
                changed,
            },
        )?,
        // Nothing changed but the count: an employee row deleted. Rare; a pass of its own.
        None if cache.held != active => rebuild_cache(db, board, changed)?,
        None => {}
    }
    Ok(report)
}

/// Who `date`'s boards hold: by `table` (the shifts) and the date's calendar entry.
pub(crate) fn rota(db: &Db, table: ShiftTable, policy: &Policy, date: NaiveDate) -> Result<Rota> {
    let calendar = if table.is_empty() {
        // Nothing assigned: everyone employed is laid out, whatever the calendar says.
        None
    } else {
        crate::mysql::people::calendar_rows::entry(&mut db.conn()?, date)?
    };
    Ok(Rota::new(Shifts::new(table, policy), calendar, date))
}

/// Rebuild the roster cache alone.
fn rebuild_cache(db: &Db, board: &mut Board, changed: String) -> Result<()> {
    let mut r = RosterRebuild::start(board)?;
    let mut cached = 0u64;
    for_each_read(db, &[], true, |read| {
        if let Read::Roster(members) = read {
            cached += members.len() as u64;
            r.add(board, &members)?;
        }
        Ok(())
    })?;
    r.finish(
        board,
        &Stamp {
            active: cached,
            changed,
        },
    )
}

/// What the readers hand over.
enum Read {
    /// A slice of departments' active members, ids only, by department.
    Slice(Vec<Member>),
    /// A chunk of the whole active roster, with names, by id.
    Roster(Vec<Member>),
}

/// Read the active members of `depts` a slice at a time, and with `roster` the whole active
/// roster a chunk at a time, each reader on a thread and a connection of its own, handing what
/// it read to `each` as it reads on.
fn for_each_read(db: &Db, depts: &[String], roster: bool, mut each: impl FnMut(Read) -> Result<()>) -> Result<()> {
    let (tx, rx) = mpsc::sync_channel::<Read>(2);
    std::thread::scope(|s| {
        let by_id = tx.clone();
        let slices = s.spawn(move || -> Result<()> {
            let mut conn = db.conn()?;
            for slice in depts.chunks(DEPTS_PER_SLICE) {
                let members = crate::mysql::people::roster_rows::active_members_of(&mut conn, slice, false)?;
                // A send fails when Redis failed: its error is the one to report.
                if !members.is_empty() && tx.send(Read::Slice(members)).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let chunks = s.spawn(move || -> Result<()> {
            if !roster {
                return Ok(());
            }
            let mut conn = db.conn()?;
            let mut after = String::new();
            loop {
                let members = crate::mysql::people::roster_rows::active_members_after(&mut conn, &after, ROSTER_CHUNK)?;
                let Some(last) = members.last() else { return Ok(()) };
                after = last.employee_id.clone();
                if by_id.send(Read::Roster(members)).is_err() {
                    return Ok(());
                }
            }
        });
        let used = rx.iter().try_for_each(&mut each);
        // Stop the readers if Redis failed: their next send fails.
        drop(rx);
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<()>>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        let (a, b) = (join(slices), join(chunks));
        used.and(a).and(b)
    })
}
