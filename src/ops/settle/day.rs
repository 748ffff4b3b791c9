//! Settling one day: cut the boards over, read them with the roster, the calendar, the leave
//! and the rows already stored, write every row, then release the boards and lay out the next
//! work day. Each step is its own function; [`Run::settle_day`] strings them together.

use std::collections::HashSet;
use std::time::Instant;

use anyhow::Result;
use chrono::{Duration, NaiveDate};

use super::rows::Day;
use super::{Hooks, Progress, Report, Run};
use crate::domain::workdays;
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
}

impl Run<'_> {
    /// Settle one day. `last`: the run's last day, which drains the outboxes.
    pub(super) fn settle_day(
        &mut self,
        date: NaiveDate,
        last: bool,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Report> {
        let started = Instant::now();
        let mut steps = Steps::new();
        let run_id = runs::start(self.lock.conn(), date)?;
        self.cut_over(date)?;
        steps.mark("start the run and cut the boards over");
        let cal = self.read_calendar(date)?;
        let workday = workdays::is_workday(&self.cfg.policy, &cal.overrides, date);
        steps.mark("read the calendar and leave");
        let day = Day::new(date, self.cfg.timezone, &self.cfg.policy, workday);
        let mut written = self.stream_rows(&day, &cal.on_leave, progress)?;
        runs::record_failures(self.lock.conn(), run_id, date, &written.failures)?;
        steps.mark("read, compute and write the rows, department by department");
        let failed_depts: HashSet<&str> = written.failures.iter().map(|f| f.department_id.as_str()).collect();
        let (boards_deleted, boards_kept) = self.release(date, &written.with_boards, &failed_depts)?;
        steps.mark("delete the boards");
        let outbox = if last {
            self.drain_outboxes()
        } else {
            DrainReport::default()
        };
        let next_workday = workdays::next_workday(&self.cfg.policy, &cal.overrides, date);
        let next_day = match next_workday {
            // A failed row may mean a roster to fix: the next day waits for a clean run (init-day
            // can lay it out meanwhile). A next work day in the past is never laid out.
            Some(next) if written.failures.is_empty() && next >= self.opts.today => Some(self.lay_out(next)?),
            _ => None,
        };
        steps.mark("outboxes and the next day");
        // The day's counts as written, when they are what MySQL holds (at 1M the query read a
        // million index entries on a buffer pool that no longer held them).
        let counts = match written.counts.take() {
            Some(c) => c,
            None => attendance::counts(self.lock.conn(), date)?,
        };
        let fin = runs::Finish {
            outcome: if written.failures.is_empty() { "ok" } else { "partial" },
            employees: written.employees,
            rows_written: written.rows_written,
            failed: written.failures.len() as u64,
            boards_deleted,
            counts: counts.clone(),
        };
        runs::finish(self.lock.conn(), run_id, &fin)?;
        steps.mark("finish the run");
        Ok(Report {
            run_id,
            date,
            workday,
            employees: written.employees,
            rows_written: written.rows_written,
            counts,
            failed: written.failures.len() as u64,
            failures: written.failures,
            boards_deleted,
            boards_kept,
            outbox,
            next_workday,
            next_day,
            seconds: started.elapsed().as_secs_f64(),
            steps: steps.done,
            parts: written.parts,
        })
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
            overrides: crate::mysql::calendar_rows::overrides(self.lock.conn(), date, date + Duration::days(367))?,
            on_leave: crate::mysql::leave_rows::on_leave(self.lock.conn(), date)?,
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
        let deleted = self.board.release(date, &to_release, Hooks::per_call(hook), |n| {
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
        let report = crate::ops::init_day::lay_out(&self.db, &mut self.board, next, &depts, |_| {})?;
        runs::record_layout(self.lock.conn(), next, report.departments, report.employees)?;
        Ok(report)
    }
}
