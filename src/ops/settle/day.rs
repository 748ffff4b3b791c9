//! Settling one day: cut the boards over, read them with the roster, the calendar, the leave
//! and the rows already stored, write every row, then release the boards and lay out the next
//! work day. Each step is its own function; [`Run::settle_day`] strings them together.

use std::cell::Cell;
use std::collections::HashSet;
use std::time::Instant;

use anyhow::Result;
use chrono::{Duration, NaiveDate};

use super::log::Logged;
use super::rows::Day;
use super::stream::Written;
use super::{Hooks, Progress, Report, Run};
use crate::domain::day::workdays;
use crate::mysql::{attendance, runs};
use crate::ops::relay::DrainReport;
use crate::redis::board::LayoutReport;

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

/// What a day's rows depend on besides the roster, the boards and the stored histories.
struct Calendar {
    overrides: workdays::Overrides,
    on_leave: HashSet<String>,
    /// Half-day leave: `true` the morning off.
    half_leave: std::collections::HashMap<String, bool>,
}

/// The day's rows, written: what the steps after the commit work from.
struct Committed {
    cal: Calendar,
    workday: bool,
    written: Written,
    logged: Logged,
}

/// A step after the commit, named in the error line and the run's record when it fails.
#[derive(Clone, Copy)]
enum After {
    Release,
    LayOut(NaiveDate),
    Record,
    Finish,
}

/// A run stopped after its commit: the error, the step that failed, and the rows written.
type Stopped = Box<(anyhow::Error, After, Written)>;

/// Whether a stopped run's record reached MySQL: the error line claims only what was written.
#[derive(Clone, Copy)]
enum Recorded {
    Yes,
    No,
}

impl Recorded {
    fn words(self, outcome: &str) -> String {
        match self {
            Recorded::Yes => format!("recorded as {outcome}"),
            // MySQL shows the run `running` until the next run of the database marks it
            // `interrupted` (a settle run holds the lock, so any run still `running` was cut).
            Recorded::No => format!("not recorded as {outcome}: MySQL did not take the record"),
        }
    }
}

impl After {
    fn words(self) -> String {
        match self {
            After::Release => "deleting the boards".into(),
            After::LayOut(next) => format!("laying out the next work day {next}"),
            After::Record => "recording the settled day in Redis".into(),
            After::Finish => "recording the run".into(),
        }
    }
}

impl Run<'_> {
    /// Settle one day. `last`: the run's last day, which drains the outboxes.
    ///
    /// A run that stops is recorded as what it is (when MySQL still takes the record): `failed`
    /// with the rows committed before the stop, or, once every row is committed,
    /// `failed_after_commit` with all of them and what failed after; the error line says so too.
    pub(super) fn settle_day(
        &mut self,
        date: NaiveDate,
        last: bool,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Report> {
        let started = Instant::now();
        let mut steps = Steps::new();
        let run_id = runs::start(self.lock.conn(), date)?;
        // Rows in committed batches, for a run that stops before the end.
        let committed = Cell::new(0u64);
        let mut counting = |p: Progress| {
            if let Progress::Written(n) = p {
                committed.set(committed.get() + n);
            }
            progress(p)
        };
        let day = match self.write_day(date, &mut steps, &mut counting) {
            Ok(day) => day,
            Err(e) => {
                let rows = committed.get();
                let recorded = self.record_stop(
                    run_id,
                    runs::Finish {
                        outcome: "failed",
                        rows_written: rows,
                        ..runs::Finish::default()
                    },
                    &e,
                );
                // With nothing committed the store's own error says it all (and comes first).
                if rows == 0 {
                    return Err(e);
                }
                return Err(e.context(format!(
                    "settling {date} stopped after {rows} rows committed (run {run_id} {}, boards kept)",
                    recorded.words("failed")
                )));
            }
        };
        let mut deleted = 0;
        match self.after_commit(run_id, date, last, day, &mut steps, &mut deleted) {
            Ok(mut report) => {
                report.seconds = started.elapsed().as_secs_f64();
                report.steps = steps.done;
                Ok(report)
            }
            Err(stopped) => {
                let (e, step, written) = *stopped;
                let counts = written
                    .counts
                    .clone()
                    .or_else(|| attendance::counts(self.lock.conn(), date).ok());
                let recorded = self.record_stop(
                    run_id,
                    runs::Finish {
                        outcome: "failed_after_commit",
                        employees: written.employees,
                        rows_written: written.rows_written,
                        failed: written.failures.len() as u64,
                        boards_deleted: deleted,
                        counts: counts.unwrap_or_default(),
                        ..runs::Finish::default()
                    },
                    &e,
                );
                Err(e.context(format!(
                    "{date}: all {} rows committed (run {run_id}, {}), then {} failed",
                    written.rows_written,
                    recorded.words("failed_after_commit"),
                    step.words()
                )))
            }
        }
    }

    /// Up to the commit: cut the boards over, read the calendar, write every row and record
    /// the refused ones.
    fn write_day(
        &mut self,
        date: NaiveDate,
        steps: &mut Steps,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Committed> {
        self.cut_over(date)?;
        steps.mark("start the run and cut the boards over");
        let cal = self.read_calendar(date)?;
        let policy = self.policy(date)?;
        let workday = workdays::is_workday(&policy, &cal.overrides, date);
        steps.mark("read the calendar and leave");
        let calendar = cal.overrides.get(&date).map(|e| e.kind == workdays::DayKind::Workday);
        let shifts = std::sync::Arc::new(crate::domain::day::shifts::Shifts::new(self.shifts.clone(), &policy));
        let day = Day::new(date, self.cfg.timezone, &policy, workday)
            .with_shifts(self.cfg.timezone, &policy, shifts, calendar)
            .with_half_leave(cal.half_leave.clone());
        let ring = crate::ops::keys::settle_verifiers(self.cfg, &self.db)?;
        steps.mark("read the key registry");
        let written = self.stream_rows(&day, &cal.on_leave, ring, progress)?;
        steps.mark("read, compute and write the rows, department by department");
        let logged = written.logged;
        Ok(Committed {
            cal,
            workday,
            written,
            logged,
        })
    }

    /// After the commit: record the refused rows, release the boards, drain the outboxes, lay
    /// out the next work day and finish the run. On an error, what failed and the rows written.
    fn after_commit(
        &mut self,
        run_id: u64,
        date: NaiveDate,
        last: bool,
        day: Committed,
        steps: &mut Steps,
        deleted: &mut u64,
    ) -> Result<Report, Stopped> {
        let Committed {
            cal,
            workday,
            mut written,
            logged,
        } = day;
        if let Err(e) = runs::record_failures(self.lock.conn(), run_id, date, &written.failures) {
            return Err(Box::new((e, After::Finish, written)));
        }
        let failed_depts: HashSet<&str> = written.failures.iter().map(|f| f.department_id.as_str()).collect();
        let released = self.release(date, &written.with_boards, &failed_depts);
        drop(failed_depts);
        let (boards_deleted, boards_kept) = match released {
            Ok(r) => r,
            Err(e) => return Err(Box::new((e, After::Release, written))),
        };
        *deleted = boards_deleted;
        steps.mark("delete the boards");
        let outbox = if last {
            self.drain_outboxes()
        } else {
            DrainReport::default()
        };
        // The day's policy was read (and found valid) before its rows were written.
        let policy = self.policy(date).unwrap_or_else(|_| self.cfg.policy.clone());
        let next_workday = workdays::next_workday(&policy, &cal.overrides, date);
        let next_day = match next_workday {
            // A failed row may mean a roster to fix: the next day waits for a clean run (init-day
            // can lay it out meanwhile). A next work day in the past is never laid out.
            Some(next) if written.failures.is_empty() && next >= self.today => match self.lay_out(next) {
                Ok(l) => Some(l),
                Err(e) => return Err(Box::new((e, After::LayOut(next), written))),
            },
            _ => None,
        };
        steps.mark("outboxes and the next day");
        // The day's counts as written, when they are what MySQL holds (at 1M the query read a
        // million index entries on a buffer pool that no longer held them).
        let counts = match written.counts.take() {
            Some(c) => c,
            None => match attendance::counts(self.lock.conn(), date) {
                Ok(c) => c,
                Err(e) => return Err(Box::new((e, After::Finish, written))),
            },
        };
        let held_for_review = match crate::mysql::held_punches::pending(self.lock.conn(), Some(date)) {
            Ok(n) => n,
            Err(e) => {
                written.counts = Some(counts);
                return Err(Box::new((e, After::Finish, written)));
            }
        };
        // What MySQL now holds of the day, kept where a fail-over of MySQL cannot take it.
        let kept = self.policy(self.today).map(|p| p.max_backdate_days);
        if let Err(e) = kept.and_then(|days| {
            crate::ops::settled::record(&mut self.board, self.lock.conn(), (date, run_id), (self.today, days))
        }) {
            written.counts = Some(counts);
            return Err(Box::new((e, After::Record, written)));
        }
        let fin = runs::Finish {
            outcome: if written.failures.is_empty() { "ok" } else { "partial" },
            employees: written.employees,
            rows_written: written.rows_written,
            failed: written.failures.len() as u64,
            boards_deleted,
            counts: counts.clone(),
            refused_punches: written.unbacked + written.forged,
            ..runs::Finish::default()
        };
        if let Err(e) = runs::finish(self.lock.conn(), run_id, &fin) {
            written.counts = Some(counts);
            return Err(Box::new((e, After::Finish, written)));
        }
        steps.mark("finish the run");
        Ok(Report {
            run_id,
            date,
            workday,
            reconcile: super::Reconciled::none(super::reconcile::Checked::Skipped),
            employees: written.employees,
            rows_written: written.rows_written,
            counts,
            failed: written.failures.len() as u64,
            failures: written.failures,
            boards_deleted,
            punches_logged: logged.written,
            punch_log_unreadable: logged.unreadable + written.unreadable,
            refused_punches: super::RefusedPunches {
                unbacked: written.unbacked,
                forged: written.forged,
            },
            boards_kept,
            held_for_review,
            outbox,
            next_workday,
            next_day,
            seconds: 0.0,
            steps: Vec::new(),
            parts: written.parts,
        })
    }

    /// Record a run that stopped, with its error's one line; best effort: when MySQL is what
    /// failed the record may fail too, and the error line then says it was not recorded.
    fn record_stop(&mut self, run_id: u64, mut fin: runs::Finish, e: &anyhow::Error) -> Recorded {
        fin.problem = crate::ops::exit::one_line(e);
        match runs::finish(self.lock.conn(), run_id, &fin) {
            Ok(()) => Recorded::Yes,
            Err(_) => Recorded::No,
        }
    }

    /// Move every department's live board of the day into settle's own key.
    fn cut_over(&mut self, date: NaiveDate) -> Result<()> {
        let depts = self.all_departments();
        let hook = self.opts.hooks.abort_after_cutovers;
        let mut done = 0u64;
        self.board.cut_over(date, &depts, Hooks::per_call(hook), |n| {
            done += n as u64;
            Hooks::check(hook, done);
        })?;
        Ok(())
    }

    /// The calendar (the day itself and the year after it, for the next work day) and the leave.
    fn read_calendar(&mut self, date: NaiveDate) -> Result<Calendar> {
        Ok(Calendar {
            overrides: crate::mysql::people::calendar_rows::overrides(
                self.lock.conn(),
                date,
                date + Duration::days(367),
            )?,
            on_leave: crate::mysql::people::leave_rows::on_leave(self.lock.conn(), date)?,
            half_leave: crate::mysql::people::leave_rows::half_leave(self.lock.conn(), date)?,
        })
    }

    /// Every row is committed: settle's boards may go, except those of a department with a
    /// failed row, whose punches a rerun still needs. Returns (deleted, kept).
    fn release(
        &mut self,
        date: NaiveDate,
        with_boards: &HashSet<String>,
        failed: &HashSet<&str>,
    ) -> Result<(u64, u64)> {
        let (kept, to_release): (Vec<String>, Vec<String>) = self
            .all_departments()
            .into_iter()
            .partition(|d| failed.contains(d.as_str()));
        let kept = kept.iter().filter(|d| with_boards.contains(*d)).count() as u64;
        let hook = self.opts.hooks.abort_after_deletes;
        let mut done = 0u64;
        let keep = crate::domain::day::policy::repeats_kept_until(self.policy(date)?.max_backdate_days, date);
        let deleted = self
            .board
            .release(date, &to_release, keep, Hooks::per_call(hook), |n| {
                done += n as u64;
                Hooks::check(hook, done);
            })?;
        Ok((deleted, kept))
    }

    /// Deliver the notifications still waiting in the outboxes (an event leaves its outbox
    /// only once the broker confirmed it). A broker outage never fails a settle whose rows
    /// are committed: what stays pending, and why, goes into the report. With every outbox
    /// empty (the usual night) the broker is not even connected to: nothing to send.
    fn drain_outboxes(&mut self) -> DrainReport {
        let waiting = self.board.outbox_departments();
        if waiting.as_ref().is_ok_and(|d| d.is_empty()) {
            return DrainReport::default();
        }
        let drained = waiting.and_then(|depts| crate::ops::relay::drain_outboxes_of(self.cfg, &mut self.board, &depts));
        drained.unwrap_or_else(|e| {
            let (departments, pending) = self.board.outbox_backlog().unwrap_or_default();
            DrainReport {
                departments,
                pending,
                problem: Some(crate::ops::exit::one_line(&e)),
                ..DrainReport::default()
            }
        })
    }

    /// Lay out the next work day and record it (a lost layout is then caught by its settle).
    fn lay_out(&mut self, next: NaiveDate) -> Result<LayoutReport> {
        let depts = self.active_departments();
        let policy = self.policy(next)?;
        let identity = crate::ops::boards::layout::identity_before_layout(&mut self.board, next, &depts);
        let report = crate::ops::boards::layout::lay_out(&self.db, &mut self.board, &policy, next, &depts, |_| {})?;
        runs::record_layout(
            self.lock.conn(),
            next,
            report.departments,
            report.employees,
            identity.as_deref(),
        )?;
        Ok(report)
    }
}
