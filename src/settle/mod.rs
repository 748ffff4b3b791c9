//! settle: write a finished day to MySQL. Every active employee gets one attendance row
//! (upserted, so a rerun rewrites the same rows), the run is recorded, and only once every
//! row is committed are the day's boards deleted and the next work day laid out.
//!
//! Kill-safety: rows are computed from the union of the boards and the punch histories
//! already stored for the day, so a rerun after a kill at any point (before, during or after
//! the writes, or half-way through deleting boards) computes the very same rows.

pub mod boards;
pub mod rows;
mod write;

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{Duration, NaiveDate};
use mysql::prelude::Queryable;
use serde::Serialize;

use crate::board::{self, LayoutReport};
use crate::config::Config;
use crate::db::{self, attendance, runs};
use crate::error::Error;
use crate::keys::Keys;
use crate::services::RedisConn;
use crate::{calendar, services};
use rows::{Day, Failure};

/// Test hooks, read from the environment. They stop the process the way `kill -9` does, at a
/// chosen point, so that tests can prove a rerun repairs everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks {
    /// `ATTENDANCE_SETTLE_ABORT_AFTER_BATCHES=N`: abort once N batches are committed.
    pub abort_after_batches: Option<u64>,
    /// `ATTENDANCE_SETTLE_ABORT_AFTER_DELETES=N`: abort once N boards are deleted.
    pub abort_after_deletes: Option<u64>,
}

impl Hooks {
    pub fn from_env() -> Result<Hooks, Error> {
        let read = |name: &str| -> Result<Option<u64>, Error> {
            match std::env::var(name) {
                Ok(v) => v
                    .parse()
                    .map(Some)
                    .map_err(|_| Error::input(format!("{name}: expected a number, found '{v}'"))),
                Err(_) => Ok(None),
            }
        };
        Ok(Hooks {
            abort_after_batches: read("ATTENDANCE_SETTLE_ABORT_AFTER_BATCHES")?,
            abort_after_deletes: read("ATTENDANCE_SETTLE_ABORT_AFTER_DELETES")?,
        })
    }

    fn check(limit: Option<u64>, done: u64) {
        if limit.is_some_and(|n| done >= n) {
            // The test hook: die at once, no destructor, no commit, like kill -9.
            std::process::abort();
        }
    }
}

/// What settle is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub date: NaiveDate,
    /// Today in the company's zone: only a day that has ended can be settled, and only a
    /// next work day from today on is laid out.
    pub today: NaiveDate,
    pub hooks: Hooks,
}

/// Progress as settle goes: the rows to write, then every batch written.
pub enum Progress {
    Rows(u64),
    Written(u64),
}

/// What a run did.
#[derive(Debug, Serialize)]
pub struct Report {
    pub run_id: u64,
    pub date: NaiveDate,
    pub workday: bool,
    pub employees: u64,
    pub rows_written: u64,
    /// Rows by status as they stand in MySQL after the run (corrections included).
    pub counts: BTreeMap<String, u64>,
    pub failed: u64,
    pub failures: Vec<Failure>,
    pub boards_deleted: u64,
    /// Boards kept because a row of their department failed (a rerun needs their punches).
    pub boards_kept: u64,
    /// What became of the outboxes' events: delivered by settle, or still pending and why.
    pub outbox: boards::Outboxes,
    pub next_workday: Option<NaiveDate>,
    /// The next work day's layout, when it was laid out.
    pub next_day: Option<LayoutReport>,
    pub seconds: f64,
    /// Seconds spent in each step, in order (for `-v` and the benchmark).
    pub steps: Vec<(&'static str, f64)>,
}

/// Wall time of each step of a run.
struct Steps {
    last: Instant,
    done: Vec<(&'static str, f64)>,
}

impl Steps {
    fn new() -> Steps {
        Steps {
            last: Instant::now(),
            done: Vec::new(),
        }
    }

    fn mark(&mut self, step: &'static str) {
        let now = Instant::now();
        self.done.push((step, (now - self.last).as_secs_f64()));
        self.last = now;
    }
}

/// Settle one day. Returns the report also when rows failed (`failed > 0`): the caller shows
/// them and exits 4. MySQL unreachable after the retries: a service error, nothing deleted.
pub fn settle(cfg: &Config, opts: &Options, mut progress: impl FnMut(Progress)) -> Result<Report> {
    let started = Instant::now();
    let mut steps = Steps::new();
    let date = opts.date;
    if date >= opts.today {
        return Err(Error::refused(format!(
            "{date} has not ended yet in {} (today is {}): only a past day can be settled",
            cfg.timezone, opts.today
        ))
        .into());
    }
    // MySQL first: when it is unreachable nothing else is touched.
    let pool = write::connect(cfg)?;
    let keys = Keys::new(&cfg.namespace);
    let mut con = services::redis(cfg)?;
    let mut lock = pool.get_conn().map_err(|e| services::mysql_error(cfg, e))?;
    let got: Option<i64> = lock.query_first("SELECT GET_LOCK(CONCAT('attendance-settle-', MD5(DATABASE())), 0)")?;
    if got != Some(1) {
        return Err(Error::refused("another settle is running on this database").into());
    }
    let run_id = runs::start(&mut lock, date)?;
    steps.mark("connect and start the run");

    // The three reads wait on three servers' worth of work: do them at once.
    let (day_boards, stored, roster) = std::thread::scope(|s| {
        let boards = s.spawn(|| boards::read(&mut con, &keys, date));
        let stored = s.spawn(|| -> Result<_> { attendance::stored_punches(&mut pool.get_conn()?, date) });
        let roster = (|| -> Result<_> {
            let members = db::roster::active_members(&pool)?;
            let overrides = calendar_around(&mut lock, date)?;
            let on_leave = db::leave::on_leave(&mut lock, date)?;
            Ok((members, overrides, on_leave))
        })();
        let boards = boards.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let stored = stored.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (boards, stored, roster)
    });
    let (day_boards, stored, (members, overrides, on_leave)) = (day_boards?, stored?, roster?);
    let workday = calendar::is_workday(&cfg.policy, &overrides, date);
    steps.mark("read the boards, roster, calendar, leave and stored rows");
    let day = Day::new(date, cfg.timezone, &cfg.policy, workday);
    let (mut rows, mut failures) = rows::day_rows(&day, &members, &day_boards.entries, &stored, &on_leave);
    // In primary-key order, InnoDB appends to the end of the table instead of splitting pages.
    rows.sort_unstable_by(|a, b| a.employee_id.cmp(&b.employee_id));
    // Employees considered: a row each, or a failure for those whose punches cannot be read.
    let employees = (rows.len() + failures.len()) as u64;
    steps.mark("compute the rows");

    progress(Progress::Rows(rows.len() as u64));
    let per_batch = cfg.settle.batch_size.clamp(1, attendance::MAX_ROWS_PER_STATEMENT);
    let mut batches = 0u64;
    let refused = write::all(&pool, &cfg.settle, date, &rows, per_batch, |n| {
        batches += 1;
        progress(Progress::Written(n as u64));
        Hooks::check(opts.hooks.abort_after_batches, batches);
    })?;
    let written = (rows.len() - refused.len()) as u64;
    failures.extend(refused);
    runs::record_failures(&mut lock, run_id, date, &failures)?;
    steps.mark("write the rows");

    // Every row is committed: the boards may go, except those of a department with a failed
    // row, whose punches a rerun still needs.
    let failed_depts: HashSet<&str> = failures.iter().map(|f| f.department_id.as_str()).collect();
    let (kept, to_delete): (Vec<String>, Vec<String>) = day_boards
        .keys
        .into_iter()
        .partition(|k| Keys::dept_of(k).is_some_and(|d| failed_depts.contains(d)));
    let per_command = if opts.hooks.abort_after_deletes.is_some() {
        1
    } else {
        100
    };
    let mut deleted_so_far = 0u64;
    let boards_deleted = boards::delete(&mut con, &to_delete, per_command, |n| {
        deleted_so_far += n as u64;
        Hooks::check(opts.hooks.abort_after_deletes, deleted_so_far);
    })?;

    steps.mark("delete the boards");
    let outbox = drain_outboxes(cfg, &mut con, &keys).unwrap_or_else(|e| boards::Outboxes {
        problem: Some(crate::error::one_line(&e)),
        ..boards::Outboxes::default()
    });
    let next_workday = calendar::next_workday(&cfg.policy, &overrides, date);
    // A failed row may mean a roster to fix: the next day waits for a clean run (init-day
    // can lay it out meanwhile). A next work day in the past is never laid out.
    let next_day = match next_workday {
        Some(next) if failures.is_empty() && next >= opts.today => {
            Some(board::layout_day(&mut con, &keys, next, &members, |_| {})?)
        }
        _ => None,
    };

    steps.mark("outboxes and the next day");
    let counts = attendance::counts(&mut lock, date)?;
    let fin = runs::Finish {
        outcome: if failures.is_empty() { "ok" } else { "partial" },
        employees,
        rows_written: written,
        failed: failures.len() as u64,
        boards_deleted,
        counts: counts.clone(),
    };
    runs::finish(&mut lock, run_id, &fin)?;
    lock.query_drop("SELECT RELEASE_LOCK(CONCAT('attendance-settle-', MD5(DATABASE())))")
        .context("releasing the settle lock")?;
    steps.mark("finish the run");
    Ok(Report {
        run_id,
        date,
        workday,
        employees,
        rows_written: written,
        counts,
        failed: failures.len() as u64,
        failures,
        boards_deleted,
        boards_kept: kept.len() as u64,
        outbox,
        next_workday,
        next_day,
        seconds: started.elapsed().as_secs_f64(),
        steps: steps.done,
    })
}

/// The calendar entries settle needs: the day itself and the year after it (next work day).
fn calendar_around(conn: &mut impl Queryable, date: NaiveDate) -> Result<calendar::Overrides> {
    db::calendar::overrides(conn, date, date + Duration::days(367))
}

/// The outbox step: deliver the notifications still waiting in the outboxes (an event leaves
/// its outbox only once the broker confirmed it). A broker outage never fails a settle whose
/// rows are committed: what stays pending, and why, goes into the report.
pub fn drain_outboxes(cfg: &Config, con: &mut RedisConn, keys: &Keys) -> Result<boards::Outboxes> {
    match crate::notify::drain_outboxes(cfg, con, keys) {
        Ok(r) => Ok(boards::Outboxes {
            departments: r.departments,
            sent: r.sent,
            pending: r.pending,
            problem: r.problem,
        }),
        Err(e) => Ok(boards::Outboxes {
            problem: Some(crate::error::one_line(&e)),
            ..boards::pending_outboxes(con, keys)?
        }),
    }
}
