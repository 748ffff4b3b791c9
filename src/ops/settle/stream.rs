//! Settle's rows, a slice of departments at a time: read that slice's roster, boards and stored
//! histories, compute its rows and hand them to the writers while the next slice is read. No
//! step holds the whole day, so time and memory grow with the number of employees, no faster.
//!
//! An employee whose punches sit on another department's board (moved during the day, or off
//! the active roster) is a stray of the slice that read that board: strays are kept aside and,
//! once every slice is committed, their rows are computed again from the union of everything
//! (their own board, the strays' values, the history just stored), which is what a settle of
//! the whole day at once computes.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::Result;

use super::log::{self, Logged};
use super::rows::{self, BoardEntry, Day, DayRow, Failure};
use super::spent::Spent;
use super::vet::{self, Vetting};
use super::{write, Hooks, Progress, Run};
use crate::domain::event::backing::Backed;
use crate::domain::event::signing::Keyring;
use crate::mysql::{attendance, Conn};
use crate::redis::board::Board;
use crate::redis::cutover;

/// Departments per slice: a few thousand employees at 100k, 200 each at 1M.
const DEPTS_PER_SLICE: usize = 50;

/// The rows of a day once written.
pub(super) struct Written {
    pub employees: u64,
    pub rows_written: u64,
    pub failures: Vec<Failure>,
    /// The departments that had a board of the day (settle's copy).
    pub with_boards: HashSet<String>,
    /// Rows by status as written, when that is what MySQL now holds for the day: a day that
    /// had no row (so no correction either), nothing refused, no stray rewritten. `None`: ask
    /// MySQL.
    pub counts: Option<BTreeMap<String, u64>>,
    /// Seconds by part of the stream, summed over its threads (see [`Spent`]).
    pub parts: Vec<(&'static str, f64)>,
    /// Board tokens no good record backs: left out of the rows.
    pub unbacked: u64,
    /// The punch log entries refused (left out of MySQL's punch log) for their signature, and
    /// those that are no record at all.
    pub forged: u64,
    pub unreadable: u64,
    /// What the punch log's writer wrote alongside the rows.
    pub logged: Logged,
}

/// What reading and computing the slices gave, besides the rows sent to the writers.
#[derive(Default)]
struct Slices {
    employees: u64,
    rows: u64,
    failures: Vec<Failure>,
    with_boards: HashSet<String>,
    strays: HashMap<String, BoardEntry>,
    counts: BTreeMap<String, u64>,
    /// Board tokens no good record backs.
    unbacked: u64,
    /// Board values with a token the logs checked so far do not back: judged once every log
    /// is checked (a moved employee's punches are logged in their old department).
    pending: HashMap<String, BoardEntry>,
}

/// What reading a slice needs besides its connections.
struct SliceReader<'a> {
    day: &'a Day,
    on_leave: &'a HashSet<String>,
    /// Whether the day had rows when the run began: their histories are then read too.
    stored_any: bool,
    spent: &'a Spent,
}

impl SliceReader<'_> {
    /// One slice's rows: its roster, boards and stored histories read, the rows computed, the
    /// strays, failures and counts added to `out`.
    fn slice(
        &self,
        (conn, board): (&mut Conn, &mut Board),
        vetting: &mut Vetting,
        slice: &[String],
        out: &mut Slices,
    ) -> Result<Vec<DayRow>> {
        let (date, spent) = (self.day.date, self.spent);
        let mut members = spent.time("reading the roster", || {
            crate::mysql::people::roster_rows::active_members_of(conn, slice, false)
        })?;
        // Nobody is expected outside their employment: a leaver after their last day, a joiner
        // before their first, has no row (one who punched anyway is a stray: their punches stay).
        members.retain(|m| m.employment.covers(date));
        let boards = spent.time("reading the boards", || board.settle_boards(date, slice))?;
        out.with_boards.extend(boards.departments);
        spent.time("waiting for the signature checks", || vetting.next())?;
        let start = self.day.start.timestamp();
        let ids: HashSet<&str> = members.iter().map(|m| m.employee_id.as_str()).collect();
        let mut mine = HashMap::with_capacity(members.len());
        for (emp, mut entry) in boards.entries {
            let (kept, lost) = vetting.backed.keep(&emp, start, &entry.value);
            if lost > 0 && !vetting.done {
                cutover::join(&mut out.pending, &entry.department_id, emp, entry.value);
                continue;
            }
            out.unbacked += lost;
            entry.value = kept;
            if ids.contains(emp.as_str()) {
                mine.insert(emp, entry);
            } else if !entry.value.is_empty() {
                cutover::join(&mut out.strays, &entry.department_id, emp, entry.value);
            }
        }
        let stored = if self.stored_any {
            let ids: Vec<&str> = ids.into_iter().collect();
            spent.time("reading the stored histories", || {
                attendance::stored_punches_of(conn, date, &ids)
            })?
        } else {
            HashMap::new()
        };
        let (rows, failures) = spent.time("computing the rows", || {
            rows::day_rows(self.day, &members, &mine, &stored, self.on_leave)
        });
        out.employees += (rows.len() + failures.len()) as u64;
        out.rows += rows.len() as u64;
        out.failures.extend(failures);
        for r in &rows {
            *out.counts.entry(r.outcome.status.as_str().to_string()).or_default() += 1;
        }
        Ok(rows)
    }
}

impl Run<'_> {
    /// Compute and write every row of the day; the refused rows are in the failures.
    pub(super) fn stream_rows(
        &mut self,
        day: &Day,
        on_leave: &HashSet<String>,
        ring: Option<Keyring>,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Written> {
        let date = day.date;
        let spent = Spent::default();
        let (depts, active): (Vec<String>, Vec<u64>) =
            crate::mysql::people::roster_rows::departments_by_first_employee(self.lock.conn())?
                .into_iter()
                .unzip();
        progress(Progress::Rows(active.iter().sum()));
        let stored_any = attendance::any_rows(self.lock.conn(), date)?;
        let per_batch = self.cfg.settle.batch_size.clamp(1, attendance::MAX_ROWS_PER_STATEMENT);
        let hook = self.opts.hooks.abort_after_batches;
        let mut batches = 0u64;
        // The punch logs of every department are checked, the stream's slices first, in its
        // order, then those of departments with no active member (a moved employee's old one).
        let mut checks: Vec<Vec<String>> = depts.chunks(DEPTS_PER_SLICE).map(<[String]>::to_vec).collect();
        let streamed: HashSet<&String> = depts.iter().collect();
        checks.push(
            self.all_departments()
                .into_iter()
                .filter(|d| !streamed.contains(d))
                .collect(),
        );
        let backed = Backed::default();
        let (cfg, board, db, spent_ref) = (self.cfg, &mut self.board, &self.db, &spent);
        let reader = SliceReader {
            day,
            on_leave,
            stored_any,
            spent: &spent,
        };
        let (slices, refused) = write::stream(
            db,
            spent_ref,
            &self.cfg.settle,
            date,
            // A day with no row yet (the nightly case) is loaded, not upserted: MySQL's fastest path.
            !stored_any,
            |send| {
                std::thread::scope(|scope| {
                    let (tx, rx) = std::sync::mpsc::sync_channel(2);
                    let (log_tx, log_rx) = std::sync::mpsc::sync_channel(2);
                    let mut vetting = Vetting::new(rx, checks.len(), backed.sibling());
                    scope.spawn(move || vet::run(cfg, date, ring, checks, backed, tx, log_tx, spent_ref));
                    let retry = write::retry(&cfg.settle);
                    let logger = scope.spawn(move || log::write(db, retry, log_rx, spent_ref));
                    let streamed = (|| {
                        let mut conn = db.conn()?;
                        let mut out = Slices::default();
                        for slice in depts.chunks(DEPTS_PER_SLICE) {
                            let rows = reader.slice((&mut conn, &mut *board), &mut vetting, slice, &mut out)?;
                            if !spent_ref.time("waiting for the writers", || send_sorted(rows, per_batch, send)) {
                                break;
                            }
                        }
                        spent_ref.time("waiting for the signature checks", || vetting.finish())?;
                        Ok(out)
                    })();
                    // The stream's end (or its error) drops the check's channel, which ends the
                    // check and so the writer's batches. A writer that failed stopped the check
                    // too: its own error is the cause to report.
                    drop(vetting.take_receiver());
                    let logged = spent_ref.time("waiting for the punch log", || {
                        logger.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
                    });
                    match (streamed, logged) {
                        (_, Err(e)) => Err(e),
                        (Err(e), _) => Err(e),
                        (Ok(out), Ok(logged)) => Ok((out, vetting, logged)),
                    }
                })
            },
            |n| {
                batches += 1;
                progress(Progress::Written(n as u64));
                Hooks::check(hook, batches);
            },
        )?;
        let (mut slices, vetting, logged) = slices;
        // Judged now that every log is checked: what a record backs joins the strays, whose
        // rows are computed again from all their punches.
        let start = day.start.timestamp();
        for (emp, entry) in std::mem::take(&mut slices.pending) {
            let (kept, lost) = vetting.backed.keep(&emp, start, &entry.value);
            slices.unbacked += lost;
            cutover::join(&mut slices.strays, &entry.department_id, emp, kept);
        }
        let clean = !stored_any && refused.is_empty() && slices.strays.is_empty();
        let mut written = Written {
            employees: slices.employees,
            rows_written: slices.rows - refused.len() as u64,
            failures: slices.failures,
            with_boards: slices.with_boards,
            counts: clean.then_some(slices.counts),
            parts: Vec::new(),
            unbacked: slices.unbacked,
            forged: vetting.forged(),
            unreadable: vetting.unreadable,
            logged,
        };
        written.failures.extend(refused);
        if !slices.strays.is_empty() {
            self.settle_strays(day, on_leave, slices.strays, (&vetting.backed, &spent), &mut written)?;
        }
        written.parts = spent.seconds();
        Ok(written)
    }

    /// The rows of employees found on another department's board, once every slice is
    /// committed: an active member's row again from the union of all its punches, and a row for
    /// each employee off the active roster (as the board's department).
    fn settle_strays(
        &mut self,
        day: &Day,
        on_leave: &HashSet<String>,
        mut strays: HashMap<String, BoardEntry>,
        (backed, spent): (&Backed, &Spent),
        written: &mut Written,
    ) -> Result<()> {
        let date = day.date;
        let ids: Vec<&str> = strays.keys().map(String::as_str).collect();
        let mut members = crate::mysql::people::roster_rows::active_by_ids(&self.db, &ids)?;
        members.retain(|m| m.employment.covers(date));
        let stored = attendance::stored_punches_of(self.lock.conn(), date, &ids)?;
        let pairs: Vec<(&str, &str)> = members
            .iter()
            .map(|m| (m.department_id.as_str(), m.employee_id.as_str()))
            .collect();
        let own = self.board.settle_values(date, &pairs)?;
        for (m, value) in members.iter().zip(own) {
            // Counted when its slice read it: here only cut to what a record backs.
            let v = value.map(|v| backed.keep(&m.employee_id, day.start.timestamp(), &v).0);
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                cutover::join(&mut strays, &m.department_id, m.employee_id.clone(), v);
            }
        }
        let (rows, failures) = rows::day_rows(day, &members, &strays, &stored, on_leave);
        // Active members were counted with their own department; only those off the roster are new.
        let known: HashSet<&str> = members.iter().map(|m| m.employee_id.as_str()).collect();
        let extra = |id: &str| !known.contains(id);
        let new_rows = rows.iter().filter(|r| extra(&r.employee_id)).count() as u64;
        written.employees += new_rows + failures.iter().filter(|f| extra(&f.employee_id)).count() as u64;
        let per_batch = self.cfg.settle.batch_size.clamp(1, attendance::MAX_ROWS_PER_STATEMENT);
        let ((), refused) = write::stream(
            &self.db,
            spent,
            &self.cfg.settle,
            date,
            false,
            |send| {
                send_sorted(rows, per_batch, send);
                Ok(())
            },
            |_| {},
        )?;
        written.rows_written += new_rows - refused.iter().filter(|f| extra(&f.employee_id)).count() as u64;
        written.failures.extend(failures);
        written.failures.extend(refused);
        Ok(())
    }
}

/// Hand rows to the writers in primary-key order (InnoDB then appends instead of splitting
/// pages), `per_batch` a batch. `false` once the writers stopped.
fn send_sorted(mut rows: Vec<DayRow>, per_batch: usize, send: &write::Send) -> bool {
    rows.sort_unstable_by(|a, b| a.employee_id.cmp(&b.employee_id));
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        if !send(rows.by_ref().take(per_batch).collect()) {
            return false;
        }
    }
    true
}
