//! Settle's rows into MySQL: multi-row upserts (or LOAD DATA for a day with no row yet), one
//! transaction per batch, retried with back-off when MySQL is briefly away, and split row by
//! row only when a batch holds a row MySQL refuses (so that one bad row never stops the
//! others). How many attempts and how long to wait is the caller's [`Retry`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;

use super::attendance::{self, DayRow};
use super::conn::abandon_if_stalled;
use super::failure::{detail, is_data_error, is_server_error, out_of_space};
use super::handle::{Conn, Db, Retry, Tx};
use super::runs::Failure;
use crate::error::{Error, Service};

/// Where a writer's time goes: called with a part ("writers: committing") and its wall time.
pub(crate) type Timing<'a> = &'a (dyn Fn(&'static str, Duration) + Sync);

/// A writer's connection, kept from one batch to the next: the pool pings every connection it
/// hands out, one more round trip a batch. After an error it is given up, so that a retry
/// starts on a fresh connection.
pub(crate) struct Writer<'p> {
    db: &'p Db,
    conn: Option<Conn>,
    retry: Retry,
    timing: Timing<'p>,
}

impl<'p> Writer<'p> {
    pub(crate) fn new(db: &'p Db, retry: Retry, timing: Timing<'p>) -> Writer<'p> {
        Writer {
            db,
            conn: None,
            retry,
            timing,
        }
    }

    fn time<R>(&self, part: &'static str, f: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let r = f();
        (self.timing)(part, started.elapsed());
        r
    }

    /// Write one batch in one transaction. Returns the rows MySQL refused, with the reason.
    /// `fresh`: the day had no row when the run began, so the rows are loaded, not upserted.
    /// What still fails after the retries is a service error (exit 3). MySQL out of space is
    /// one at once: no retry (space does not come back in seconds), and no row counted failed.
    pub(crate) fn write(&mut self, date: NaiveDate, rows: &[DayRow], fresh: bool) -> Result<Vec<Failure>> {
        let retry = self.retry;
        let attempts = retry.attempts.max(1);
        let done = retry.run(
            |e| !is_data_error(e) && !out_of_space(e),
            || match self.whole(date, rows, fresh) {
                Err(e) if is_data_error(&e) => self.row_by_row(date, rows),
                r => r,
            },
        );
        done.map_err(|(e, attempt)| {
            if out_of_space(&e) {
                // The client's own error, which MySQL's check words as out of space (exit 3).
                return anyhow::Error::new(e).context("writing attendance rows");
            }
            Error::service(
                Service::Mysql,
                format!(
                    "writing attendance rows: {} (attempt {attempt} of {attempts})",
                    detail(&e)
                ),
            )
            .into()
        })
    }

    /// The kept connection, or a fresh one from the pool.
    fn take(&mut self) -> mysql::Result<Conn> {
        match self.conn.take() {
            Some(c) => Ok(c),
            None => self.time("writers: connecting", || self.db.get_conn()),
        }
    }

    /// Run `f` in a transaction on the writer's connection and commit; the connection is kept
    /// only if both succeeded. A failure rolls back explicitly (dropping a transaction rolls
    /// back silently), after shutting the socket of a server that stalled.
    fn in_tx<T>(&mut self, f: impl FnOnce(&mut Tx, &Self) -> mysql::Result<T>) -> mysql::Result<T> {
        let mut conn = self.take()?;
        let socket = std::os::unix::io::AsRawFd::as_raw_fd(&*conn);
        let mut tx = conn.start_transaction(mysql::TxOpts::default())?;
        let done = match f(&mut tx, self) {
            Ok(v) => self.time("writers: committing", || tx.commit()).map(|()| v),
            Err(e) => {
                // Before the rollback, which would wait on a stalled server all over again.
                abandon_if_stalled(socket, &e);
                tx.rollback().ok();
                return Err(e);
            }
        };
        match done {
            Ok(v) => {
                self.conn = Some(conn);
                Ok(v)
            }
            Err(e) => {
                abandon_if_stalled(socket, &e);
                Err(e)
            }
        }
    }

    fn whole(&mut self, date: NaiveDate, rows: &[DayRow], fresh: bool) -> mysql::Result<Vec<Failure>> {
        self.in_tx(|tx, w| {
            let (good, failures) = w.time("writers: checking the employees", || known(tx, rows))?;
            if fresh && !good.is_empty() && w.time("writers: loading", || load(tx, date, &good))? {
                return Ok(failures);
            }
            w.time("writers: upserting", || {
                if good.len() == rows.len() {
                    attendance::upsert(tx, date, rows)?;
                } else if !good.is_empty() {
                    let good: Vec<DayRow> = good.into_iter().cloned().collect();
                    attendance::upsert(tx, date, &good)?;
                }
                Ok(failures)
            })
        })
    }

    /// The slow path, only for a batch that holds a refused row: each row its own statement,
    /// in one transaction (MariaDB rolls back only the refused statement).
    fn row_by_row(&mut self, date: NaiveDate, rows: &[DayRow]) -> mysql::Result<Vec<Failure>> {
        self.in_tx(|tx, _| {
            let (good, mut failures) = known(tx, rows)?;
            for r in good {
                match attendance::upsert(tx, date, std::slice::from_ref(r)) {
                    Ok(()) => {}
                    Err(e) if is_data_error(&e) => failures.push(Failure {
                        employee_id: r.employee_id.clone(),
                        department_id: r.department_id.clone(),
                        reason: super::failure::text(&e),
                    }),
                    Err(e) => return Err(e),
                }
            }
            Ok(failures)
        })
    }
}

/// Split off the rows of employees MySQL does not know (no foreign key refuses them since
/// V5): each becomes a failure, and the ids of the others stay locked until the commit.
fn known<'r>(tx: &mut impl Queryable, rows: &'r [DayRow]) -> mysql::Result<(Vec<&'r DayRow>, Vec<Failure>)> {
    let unknown = attendance::unknown_employees(tx, rows.iter().map(|r| r.employee_id.as_str()))?;
    let (bad, good): (Vec<&DayRow>, Vec<&DayRow>) = rows.iter().partition(|r| unknown.contains(&r.employee_id));
    let failures = bad
        .into_iter()
        .map(|r| Failure {
            employee_id: r.employee_id.clone(),
            department_id: r.department_id.clone(),
            reason: format!(
                "unknown employee '{}': not in employees (checked in place of the foreign key attendance_employee_fk)",
                r.employee_id
            ),
        })
        .collect();
    Ok((good, failures))
}

/// Whether LOAD DATA took every row as sent (see [`attendance::load_fresh`]). A server that
/// refuses LOAD DATA LOCAL is told once: every later batch is upserted at once. A server out
/// of space refuses nothing: that error goes up as it is.
fn load(tx: &mut Tx, date: NaiveDate, rows: &[&DayRow]) -> mysql::Result<bool> {
    static REFUSED: AtomicBool = AtomicBool::new(false);
    if REFUSED.load(Ordering::Relaxed) {
        return Ok(false);
    }
    match attendance::load_fresh(tx, date, rows.iter().copied()) {
        Err(e) if is_server_error(&e) && !out_of_space(&e) => {
            REFUSED.store(true, Ordering::Relaxed);
            Ok(false)
        }
        r => r,
    }
}
