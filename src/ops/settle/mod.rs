//! settle: write finished days to MySQL. Every active employee gets one attendance row per day
//! (upserted, so a rerun rewrites the same rows), the run is recorded, and only once every row
//! is committed are the day's boards deleted and the next work day laid out.
//!
//! Cut-over: before reading a department's board settle moves it out of the live key into its
//! own (`crate::redis::cutover`), so a punch that arrives meanwhile lands on a fresh live board and is
//! settled by a later run, never deleted unseen. Catch-up: without a date, settle takes
//! yesterday and every earlier day that still has boards, oldest first.
//!
//! Kill-safety: rows are computed from the union of settle's boards and the punch histories
//! already stored for the day, so a rerun after a kill at any point (around the cut-over,
//! during the writes, half-way through deleting boards) computes the very same rows.

mod day;
mod log;
pub(crate) mod reconcile;
pub(crate) mod rows;
mod spent;
mod stream;
mod vet;
mod write;

// After the fact: a settled day changed by hand (`correct`) or by a change of its rules
// (`resettle`: leave, calendar, shifts), computed again by settle's own rule.
pub(crate) mod correct;
pub(crate) mod resettle;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use anyhow::Result;
use chrono::{Duration, NaiveDate};
use serde::Serialize;

use crate::config::Config;
use crate::error::Error;
use crate::mysql::runs::SettleLock;
use crate::mysql::{attendance, runs, Db};
use crate::ops::relay::DrainReport;
use crate::redis::board::{Board, LayoutReport};
pub(crate) use reconcile::Reconciled;
use rows::Failure;

/// Test hooks, read from the environment. They stop the process the way `kill -9` does, at a
/// chosen point, so that tests can prove a rerun repairs everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks {
    /// `ATTENDANCE_SETTLE_ABORT_AFTER_CUTOVERS=N`: abort once N departments are cut over.
    pub abort_after_cutovers: Option<u64>,
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
            abort_after_cutovers: read("ATTENDANCE_SETTLE_ABORT_AFTER_CUTOVERS")?,
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

    /// Departments per Redis pipeline: one when a hook counts them, so it stops exactly there.
    fn per_call(limit: Option<u64>) -> usize {
        if limit.is_some() {
            1
        } else {
            200
        }
    }
}

/// What settle is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// One day; `None`: yesterday and every earlier day that still has boards (catch-up).
    pub date: Option<NaiveDate>,
    /// Settle a laid-out day even if some departments have no board at all.
    pub accept_missing_boards: bool,
    /// Settle the boards as they are, without checking them against the journal first.
    pub no_reconcile: bool,
    /// Read the journal back for every day, also those the same Redis servers held throughout.
    pub check_journal: bool,
    pub hooks: Hooks,
}

/// Progress as settle goes: the rows to write, then every batch written.
pub enum Progress {
    Rows(u64),
    Written(u64),
}

/// What settling one day did.
#[derive(Debug, Serialize)]
pub struct Report {
    pub run_id: u64,
    #[serde(rename = "work_date")]
    pub date: NaiveDate,
    pub workday: bool,
    pub employees: u64,
    pub rows_written: u64,
    /// The boards checked against the journal before any row was computed: punches restored.
    pub reconcile: Reconciled,
    /// Rows by status as they stand in MySQL after the run (corrections included).
    pub counts: BTreeMap<String, u64>,
    pub failed: u64,
    pub failures: Vec<Failure>,
    pub boards_deleted: u64,
    /// Punches new in MySQL's punch log (a rerun finds them there: 0).
    pub punches_logged: u64,
    /// Punch log entries that could not be read, left out of MySQL's punch log.
    pub punch_log_unreadable: u64,
    /// Punches refused because no good signed record backs them: left out of the rows and of
    /// MySQL's punch log (docs/settle.md, "Only signed punches settle").
    pub refused_punches: RefusedPunches,
    /// Boards kept because a row of their department failed (a rerun needs their punches).
    pub boards_kept: u64,
    /// Punches of the day held for review and still pending: not in its rows until approved
    /// (then the next settle writes the day again).
    pub held_for_review: u64,
    /// What became of the outboxes' events (drained once per run, with its last day).
    pub outbox: DrainReport,
    pub next_workday: Option<NaiveDate>,
    /// The next work day's layout, when it was laid out.
    pub next_day: Option<LayoutReport>,
    pub seconds: f64,
    /// Seconds spent in each step, in order (for `-v` and the benchmark); in JSON a list of
    /// `{"name", "seconds"}`.
    #[serde(serialize_with = "timed")]
    pub steps: Vec<(&'static str, f64)>,
    /// Seconds spent in each part of writing the rows, summed over the threads that read and
    /// write at once (so they add up to more than the step's wall time).
    #[serde(serialize_with = "timed")]
    pub parts: Vec<(&'static str, f64)>,
}

/// Punches of a day that no signed record backs, refused by settle.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct RefusedPunches {
    /// Board tokens (a check-in or check-out on a board) that no punch log record with a good
    /// signature, of that employee, work date, time and kind, backs: a raw `HSET`.
    pub unbacked: u64,
    /// Punch log entries whose signature fails (none, bad, an unknown key, a key revoked by the
    /// time it was signed).
    pub forged: u64,
}

impl RefusedPunches {
    pub fn total(&self) -> u64 {
        self.unbacked + self.forged
    }
}

/// Named timings as JSON objects, `{"name": "reading the boards", "seconds": 0.12}`: a reader
/// keys on names, not on positions in a pair (docs/commands.md, "The JSON contract").
fn timed<S: serde::Serializer>(timings: &[(&'static str, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        timings
            .iter()
            .map(|(name, seconds)| serde_json::json!({ "name": name, "seconds": seconds })),
    )
}

/// What a run did: the last day's report at the top (the shape of a one-day run), the days
/// settled oldest first, and the reports of the earlier days a catch-up settled. A catch-up
/// whose only day still waits for its last shift settles nothing (`last` is `None`): that day
/// is in `waiting`, for the next run.
#[derive(Debug, Serialize)]
pub struct Summary {
    #[serde(flatten)]
    pub last: Option<Report>,
    pub settled_days: Vec<NaiveDate>,
    pub earlier: Vec<Report>,
    /// Days a catch-up left for its next run: a shift working on them had not ended.
    pub waiting: Vec<Waiting>,
}

/// A day a catch-up (settle without `--date`) left for its next run.
#[derive(Debug, Clone, Serialize)]
pub struct Waiting {
    #[serde(rename = "work_date")]
    pub date: NaiveDate,
    /// When its last shift ends, in the company's zone (RFC 3339).
    pub last_shift_ends: String,
}

impl Summary {
    /// Every day's report, oldest first.
    pub fn days(&self) -> impl Iterator<Item = &Report> {
        self.earlier.iter().chain(self.last.iter())
    }

    pub fn failed(&self) -> u64 {
        self.days().map(|r| r.failed).sum()
    }
}

/// The stores and the roster a run works with, opened once for all its days.
struct Run<'a> {
    cfg: &'a Config,
    opts: &'a Options,
    db: Db,
    board: Board,
    lock: SettleLock,
    /// Today in the company's zone by the Redis server's clock (the one punches are filed by):
    /// only a day that has ended can be settled, and only a next work day from today on is
    /// laid out.
    today: NaiveDate,
    /// Now by the Redis server's clock: a day is settled only once its last shift has ended.
    now: chrono::DateTime<chrono::Utc>,
    /// Every shift and assignment (empty: everyone on the policy), read once for the run.
    shifts: crate::domain::day::shifts::ShiftTable,
    /// The rulebook, read once for the run: each day is judged by the policy in force on it.
    rules: crate::ops::lookup::Rules,
    /// Every department (boards are looked for in each), and whether it has active members
    /// (a layout reads those; it gives a board to the ones with members employed that day).
    departments: Vec<(String, bool)>,
}

/// What settle can tell of its config before it opens a store: the journal is read before any
/// row, so a broker URL that is not one is a usage error (exit 2) before anything is opened,
/// not a failed check after Redis was.
pub(crate) fn check_config(cfg: &Config, opts: &Options) -> Result<()> {
    if !opts.no_reconcile && cfg.journal.enabled {
        crate::amqp::check_urls(cfg)?;
    }
    Ok(())
}

/// Settle one day, or catch up. Returns the summary also when rows failed (`failed() > 0`):
/// the caller shows them and exits 4. MySQL unreachable after the retries: a service error,
/// nothing deleted. A laid-out day whose boards are missing: refused (exit 6), nothing changed.
pub fn settle(cfg: &Config, opts: &Options, mut progress: impl FnMut(Progress)) -> Result<Summary> {
    if let Some(date) = opts.date {
        runs::check_storable(date)?;
    }
    check_config(cfg, opts)?;
    let mut run = Run::open(cfg, opts)?;
    if let Some(date) = opts.date.filter(|d| *d >= run.today) {
        return Err(Error::refused(format!(
            "{date} has not ended yet in {} (today is {} by the Redis server's clock): only a past day can be settled",
            cfg.timezone, run.today
        ))
        .into());
    }
    let (days, waiting) = match opts.date {
        Some(d) => {
            run.refuse_unfinished(d)?;
            crate::mysql::people::periods::refuse_closed(run.lock.conn(), d, d, "settle")?;
            (vec![d], Vec::new())
        }
        None => {
            // Catching up: a day whose night shift is still on waits for the next run, which
            // is no failure of this one (docs/shifts.md): nothing of it is touched.
            let (mut done, mut waiting) = (Vec::new(), Vec::new());
            for d in run.days_to_settle()? {
                match run.unfinished(d) {
                    Some(end) => waiting.push(Waiting {
                        date: d,
                        last_shift_ends: crate::domain::instant::text(&end.with_timezone(&cfg.timezone)),
                    }),
                    None => done.push(d),
                }
            }
            (done, waiting)
        }
    };
    if days.is_empty() {
        return Ok(Summary {
            last: None,
            settled_days: days,
            earlier: Vec::new(),
            waiting,
        });
    }
    run.refuse_short_days(&days)?;
    if !opts.accept_missing_boards {
        run.refuse_lost_days(&days)?;
    }
    // Before any row: a punch the boards lost would be written absent.
    let mut reconciled = run.reconcile(&days)?;
    let mut reports = Vec::with_capacity(days.len());
    for (i, &date) in days.iter().enumerate() {
        let mut report = run.settle_day(date, i + 1 == days.len(), &mut progress)?;
        if let Some(r) = reconciled.remove(&date) {
            report.reconcile = r;
        }
        reports.push(report);
    }
    let last = reports.pop();
    Ok(Summary {
        last,
        settled_days: days,
        earlier: reports,
        waiting,
    })
}

impl<'a> Run<'a> {
    fn open(cfg: &'a Config, opts: &'a Options) -> Result<Run<'a>> {
        // MySQL first: when it is unreachable nothing else is touched.
        let db = write::connect(cfg)?;
        let rules = crate::ops::lookup::rules_from(cfg, &db)?;
        let mut board = Board::open(cfg)?;
        // Which day has ended is the server's to say; a host whose clock disagrees with it is
        // refused before the lock is taken or anything is written.
        let clock = board.read_clock()?;
        let today = crate::domain::day::policy::work_date(cfg.timezone, clock.server);
        clock
            .check(rules.on(today)?.max_clock_skew_secs, "settle")
            .map_err(Error::refused)?;
        let mut lock = SettleLock::try_acquire(&db)?
            .ok_or_else(|| Error::refused("another settle is running on this database"))?;
        let departments = crate::mysql::people::roster_rows::department_ids(lock.conn())?;
        let shifts = crate::mysql::people::shift_rows::table(lock.conn())?;
        Ok(Run {
            cfg,
            opts,
            db,
            board,
            lock,
            today,
            now: clock.server,
            shifts,
            rules,
            departments,
        })
    }

    /// The policy `date` is judged by: the rulebook's version in force on it.
    fn policy(&self, date: NaiveDate) -> Result<crate::config::Policy> {
        self.rules.on(date)
    }

    /// Refused (exit 1) while `date`'s last shift has not ended: a night shift's punches are
    /// still coming in. Says when settle may run.
    fn refuse_unfinished(&self, date: NaiveDate) -> Result<()> {
        let tz = self.cfg.timezone;
        if let Some(end) = self.unfinished(date) {
            return Err(Error::refused(format!(
                "{date}'s last shift ends at {}: settle it after that (now {} by the Redis server's clock)",
                crate::domain::instant::text(&end.with_timezone(&tz)),
                crate::domain::instant::text(&self.now.with_timezone(&tz))
            ))
            .into());
        }
        Ok(())
    }

    /// When `date`'s last shift ends, if it has not ended yet (by the Redis server's clock).
    fn unfinished(&self, date: NaiveDate) -> Option<chrono::DateTime<chrono::Utc>> {
        if self.shifts.is_empty() {
            return None;
        }
        // A rulebook that cannot give this day's policy is refused by the day's own settle.
        let policy = self.policy(date).unwrap_or_default();
        let shifts = crate::domain::day::shifts::Shifts::new(self.shifts.clone(), &policy);
        let end = shifts.last_end(self.cfg.timezone, date);
        (self.now < end).then_some(end)
    }

    /// The departments with active members: those a layout reads.
    fn active_departments(&self) -> Vec<String> {
        self.departments
            .iter()
            .filter(|(_, active)| *active)
            .map(|(d, _)| d.clone())
            .collect()
    }

    /// The departments with active members employed on `date`: those a layout of that day gave
    /// a board (a department whose people have all left, or not yet started, has none).
    fn laid_out_departments(&mut self, date: NaiveDate) -> Result<Vec<String>> {
        Ok(
            crate::mysql::people::roster_rows::department_ids_on(self.lock.conn(), date)?
                .into_iter()
                .filter_map(|(d, employed)| employed.then_some(d))
                .collect(),
        )
    }

    fn all_departments(&self) -> Vec<String> {
        self.departments.iter().map(|(d, _)| d.clone()).collect()
    }

    /// Yesterday, and every earlier day some department still has a board of, oldest first.
    fn days_to_settle(&mut self) -> Result<Vec<NaiveDate>> {
        let yesterday = self.today - Duration::days(1);
        let depts = self.all_departments();
        let mut days: BTreeSet<NaiveDate> = self
            .board
            .days_with_boards(&depts)?
            .into_iter()
            // A board of a day MySQL cannot store (a punch dated in the year 999) could never be
            // settled: leave it out rather than fail every nightly run on it.
            .filter(|d| *d < yesterday && runs::check_storable(*d).is_ok())
            .collect();
        days.insert(yesterday);
        Ok(days.into_iter().collect())
    }

    /// Refuse (exit 6, before any change) when a day that was laid out has departments with no
    /// board at all and no row in MySQL: their punches are not anywhere settle can see, so
    /// settling would write them absent. `recover` rebuilds the boards from the journal.
    fn refuse_lost_days(&mut self, days: &[NaiveDate]) -> Result<()> {
        for &date in days {
            if !runs::laid_out(self.lock.conn(), date)? {
                continue;
            }
            let laid_out = self.laid_out_departments(date)?;
            let missing = self.board.without_board(date, &laid_out)?;
            if missing.is_empty() {
                continue;
            }
            let settled: HashSet<String> = attendance::departments_with_rows(self.lock.conn(), date)?
                .into_iter()
                .collect();
            let lost: Vec<String> = missing.into_iter().filter(|d| !settled.contains(d)).collect();
            let lost = self.expecting(date, lost)?;
            if lost.is_empty() {
                continue;
            }
            let mut named: Vec<&str> = lost.iter().take(5).map(|d| d.as_str()).collect();
            if lost.len() > named.len() {
                named.push("...");
            }
            return Err(Error::Lost(format!(
                "{date} was laid out but {} of {} departments have no board in Redis ({}): the day looks \
                 lost in Redis; run `attendance recover --date {date}` first (or settle with --accept-missing-boards)",
                lost.len(),
                laid_out.len(),
                named.join(", ")
            ))
            .into());
        }
        Ok(())
    }

    /// Refuse (exit 6, before any change) while a settled day's rows are short in MySQL (the
    /// record of settled days in Redis says what its settle left there): a fail-over to a
    /// replica that was behind lost them. A day this run settles again after `recover` put its
    /// boards back (the record says so) is what restores it; a board some late punch made is
    /// not (settling it alone would write everyone else absent). A catch-up checks every
    /// recorded day, `--date D` only D.
    fn refuse_short_days(&mut self, days: &[NaiveDate]) -> Result<()> {
        let mut short = crate::ops::settled::short_days(&mut self.board, self.lock.conn())?;
        if self.opts.date.is_some() {
            short.retain(|s| days.contains(&s.date));
        }
        if short.is_empty() {
            return Ok(());
        }
        short.retain(|s| !(s.expected.recovered && days.contains(&s.date)));
        if short.is_empty() {
            return Ok(());
        }
        Err(Error::Lost(crate::ops::settled::describe(&short)).into())
    }

    /// Those of `depts` whose boards of `date` held anyone: with shifts assigned, a department
    /// whose people all had a rest day by their shift got no board (`init_day::lay_out`), and
    /// is not lost. Read only for departments already found without a board (rare).
    fn expecting(&mut self, date: NaiveDate, depts: Vec<String>) -> Result<Vec<String>> {
        if depts.is_empty() || self.shifts.is_empty() {
            return Ok(depts);
        }
        let members = crate::mysql::people::roster_rows::active_members_of(self.lock.conn(), &depts, false)?;
        let calendar = crate::mysql::people::calendar_rows::entry(self.lock.conn(), date)?;
        let shifts = crate::domain::day::shifts::Shifts::new(self.shifts.clone(), &self.policy(date)?);
        let rota = crate::domain::day::due::Rota::new(shifts, calendar, date);
        let expected: HashSet<&str> = members
            .iter()
            .filter(|m| rota.expects(m))
            .map(|m| m.department_id.as_str())
            .collect();
        Ok(depts.into_iter().filter(|d| expected.contains(d.as_str())).collect())
    }
}
