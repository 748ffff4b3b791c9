//! Settling one day: cut the boards over, read them with the roster, the calendar, the leave
//! and the rows already stored, write every row, then release the boards and lay out the next
//! work day. Each step is its own function; [`Run::settle_day`] strings them together.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use anyhow::Result;
use chrono::{Duration, NaiveDate};

use super::rows::{self, Day, DayRow, Failure};
use super::{write, Hooks, Progress, Report, Run};
use crate::board::{self, cutover, LayoutReport};
use crate::db::roster::Member;
use crate::db::{self, attendance, runs};
use crate::notify::DrainReport;
use crate::{calendar, error};

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

/// What the reads bring together for one day.
struct Inputs {
    boards: cutover::DayBoards,
    stored: HashMap<String, String>,
    members: Vec<Member>,
    overrides: calendar::Overrides,
    on_leave: HashSet<String>,
}

/// The rows of a day once written.
struct Written {
    employees: u64,
    rows_written: u64,
    failures: Vec<Failure>,
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
        let inputs = self.read(date)?;
        let workday = calendar::is_workday(&self.cfg.policy, &inputs.overrides, date);
        steps.mark("read the boards, roster, calendar, leave and stored rows");
        let written = self.write_rows(date, workday, &inputs, progress)?;
        runs::record_failures(self.lock.conn(), run_id, date, &written.failures)?;
        steps.mark("compute and write the rows");
        let failed_depts: HashSet<&str> = written.failures.iter().map(|f| f.department_id.as_str()).collect();
        let (boards_deleted, boards_kept) = self.release(date, &inputs.boards, &failed_depts)?;
        steps.mark("delete the boards");
        let outbox = if last {
            self.drain_outboxes()
        } else {
            DrainReport::default()
        };
        let next_workday = calendar::next_workday(&self.cfg.policy, &inputs.overrides, date);
        let next_day = match next_workday {
            // A failed row may mean a roster to fix: the next day waits for a clean run (init-day
            // can lay it out meanwhile). A next work day in the past is never laid out.
            Some(next) if written.failures.is_empty() && next >= self.opts.today => {
                Some(self.lay_out(next, &inputs.members)?)
            }
            _ => None,
        };
        steps.mark("outboxes and the next day");
        let counts = attendance::counts(self.lock.conn(), date)?;
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
        })
    }

    /// Move every department's live board of the day into settle's own key.
    fn cut_over(&mut self, date: NaiveDate) -> Result<()> {
        let depts = self.all_departments();
        let hook = self.opts.hooks.abort_after_cutovers;
        let mut done = 0u64;
        cutover::cut_over(&mut self.con, &self.keys, date, &depts, Hooks::per_call(hook), |n| {
            done += n as u64;
            Hooks::check(hook, done);
        })?;
        Ok(())
    }

    /// The three reads wait on three servers' worth of work: do them at once.
    fn read(&mut self, date: NaiveDate) -> Result<Inputs> {
        let depts = self.all_departments();
        let (con, keys, pool, lock) = (&mut self.con, &self.keys, &self.pool, &mut self.lock);
        let (boards, stored, roster) = std::thread::scope(|s| {
            let boards = s.spawn(|| cutover::read(con, keys, date, &depts));
            let stored = s.spawn(|| -> Result<_> { attendance::stored_punches(&mut pool.get_conn()?, date) });
            let roster = (|| -> Result<_> {
                let members = db::roster::active_members(pool)?;
                // The day itself and the year after it (the next work day).
                let overrides = db::calendar::overrides(lock.conn(), date, date + Duration::days(367))?;
                let on_leave = db::leave::on_leave(lock.conn(), date)?;
                Ok((members, overrides, on_leave))
            })();
            let boards = boards.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            let stored = stored.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (boards, stored, roster)
        });
        let (members, overrides, on_leave) = roster?;
        Ok(Inputs {
            boards: boards?,
            stored: stored?,
            members,
            overrides,
            on_leave,
        })
    }

    /// Compute every row and write them in batches; record the rows that failed.
    fn write_rows(
        &mut self,
        date: NaiveDate,
        workday: bool,
        inp: &Inputs,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Written> {
        let day = Day::new(date, self.cfg.timezone, &self.cfg.policy, workday);
        let (mut rows, mut failures) =
            rows::day_rows(&day, &inp.members, &inp.boards.entries, &inp.stored, &inp.on_leave);
        // In primary-key order, InnoDB appends to the end of the table instead of splitting pages.
        rows.sort_unstable_by(|a, b| a.employee_id.cmp(&b.employee_id));
        // Employees considered: a row each, or a failure for those whose punches cannot be read.
        let employees = (rows.len() + failures.len()) as u64;
        progress(Progress::Rows(rows.len() as u64));
        let refused = self.write_batches(date, &rows, progress)?;
        let rows_written = (rows.len() - refused.len()) as u64;
        failures.extend(refused);
        Ok(Written {
            employees,
            rows_written,
            failures,
        })
    }

    fn write_batches(
        &self,
        date: NaiveDate,
        rows: &[DayRow],
        progress: &mut impl FnMut(Progress),
    ) -> Result<Vec<Failure>> {
        let per_batch = self.cfg.settle.batch_size.clamp(1, attendance::MAX_ROWS_PER_STATEMENT);
        let hook = self.opts.hooks.abort_after_batches;
        let mut batches = 0u64;
        write::all(&self.pool, &self.cfg.settle, date, rows, per_batch, |n| {
            batches += 1;
            progress(Progress::Written(n as u64));
            Hooks::check(hook, batches);
        })
    }

    /// Every row is committed: settle's boards may go, except those of a department with a
    /// failed row, whose punches a rerun still needs. Returns (deleted, kept).
    fn release(&mut self, date: NaiveDate, boards: &cutover::DayBoards, failed: &HashSet<&str>) -> Result<(u64, u64)> {
        let (kept, to_release): (Vec<String>, Vec<String>) = self
            .all_departments()
            .into_iter()
            .partition(|d| failed.contains(d.as_str()));
        let kept = boards.departments.iter().filter(|d| kept.contains(d)).count() as u64;
        let hook = self.opts.hooks.abort_after_deletes;
        let mut done = 0u64;
        let deleted = cutover::release(
            &mut self.con,
            &self.keys,
            date,
            &to_release,
            Hooks::per_call(hook),
            |n| {
                done += n as u64;
                Hooks::check(hook, done);
            },
        )?;
        Ok((deleted, kept))
    }

    /// Deliver the notifications still waiting in the outboxes (an event leaves its outbox
    /// only once the broker confirmed it). A broker outage never fails a settle whose rows
    /// are committed: what stays pending, and why, goes into the report.
    fn drain_outboxes(&mut self) -> DrainReport {
        crate::notify::drain_outboxes(self.cfg, &mut self.con, &self.keys).unwrap_or_else(|e| {
            let (departments, pending) = board::outbox_backlog(&mut self.con, &self.keys).unwrap_or_default();
            DrainReport {
                departments,
                pending,
                problem: Some(error::one_line(&e)),
                ..DrainReport::default()
            }
        })
    }

    /// Lay out the next work day and record it (a lost layout is then caught by its settle).
    fn lay_out(&mut self, next: NaiveDate, members: &[Member]) -> Result<LayoutReport> {
        let report = board::layout_day(&mut self.con, &self.keys, next, members, |_| {})?;
        runs::record_layout(self.lock.conn(), next, report.departments, report.employees)?;
        Ok(report)
    }
}
