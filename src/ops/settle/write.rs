//! Writing settle's rows to MySQL: multi-row upserts, one transaction per batch, retried with
//! back-off when MySQL is briefly away, and split row by row only when a batch holds a row
//! MySQL refuses (so that one bad row never stops the others).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::sleep;
use std::time::Duration;

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;
use mysql::{Pool, PooledConn, TxOpts};

use super::rows::{DayRow, Failure};
use super::spent::Spent;
use crate::config::{Config, SettleSettings};
use crate::error::{exit, Error, Service};
use crate::failure::exit_code_of;
use crate::mysql::attendance;

use crate::mysql::failure::is_data_error;

/// Run `f` until it succeeds, at most `s.mysql_retries` times, doubling the pause between
/// attempts; what still fails is a service error (exit 3).
pub fn with_retry<T>(s: &SettleSettings, what: &str, mut f: impl FnMut() -> mysql::Result<T>) -> Result<T> {
    let mut delay = Duration::from_millis(s.retry_backoff_ms);
    let attempts = s.mysql_retries.max(1);
    for attempt in 1..=attempts {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if attempt == attempts || is_data_error(&e) => {
                return Err(Error::service(
                    Service::Mysql,
                    format!(
                        "{what}: {} (attempt {attempt} of {attempts})",
                        crate::mysql::failure::detail(&e)
                    ),
                )
                .into())
            }
            Err(_) => {
                sleep(delay);
                delay *= 2;
            }
        }
    }
    unreachable!("the last attempt returns")
}

/// Open the MySQL pool, retrying with back-off while the server is unreachable.
pub fn connect(cfg: &Config) -> Result<Pool> {
    let s = &cfg.settle;
    let mut delay = Duration::from_millis(s.retry_backoff_ms);
    let attempts = s.mysql_retries.max(1);
    let mut attempt = 1;
    loop {
        match crate::mysql::conn::mysql(cfg) {
            Err(e) if attempt < attempts && exit_code_of(&e) == exit::SERVICE => {
                sleep(delay);
                delay *= 2;
                attempt += 1;
            }
            Err(e) => return Err(e.context(format!("gave up after {attempt} attempt(s)"))),
            Ok(pool) => return Ok(pool),
        }
    }
}

/// A writer's connection, kept from one batch to the next: the pool pings every connection it
/// hands out, one more round trip a batch. After an error it is given up, so that a retry
/// starts on a fresh connection.
pub struct Writer<'p> {
    pool: &'p Pool,
    conn: Option<PooledConn>,
    spent: &'p Spent,
}

impl<'p> Writer<'p> {
    pub fn new(pool: &'p Pool, spent: &'p Spent) -> Writer<'p> {
        Writer {
            pool,
            conn: None,
            spent,
        }
    }

    /// The kept connection, or a fresh one from the pool.
    fn take(&mut self) -> mysql::Result<PooledConn> {
        match self.conn.take() {
            Some(c) => Ok(c),
            None => self.spent.time("writers: connecting", || self.pool.get_conn()),
        }
    }

    /// Run `f` in a transaction on the writer's connection and commit; the connection is kept
    /// only if both succeeded. A failure rolls back explicitly (dropping a transaction rolls
    /// back silently), after shutting the socket of a server that stalled.
    fn in_tx<T>(&mut self, f: impl FnOnce(&mut mysql::Transaction, &Spent) -> mysql::Result<T>) -> mysql::Result<T> {
        let mut conn = self.take()?;
        let socket = std::os::unix::io::AsRawFd::as_raw_fd(&*conn);
        let mut tx = conn.start_transaction(TxOpts::default())?;
        let spent = self.spent;
        let done = match f(&mut tx, spent) {
            Ok(v) => spent.time("writers: committing", || tx.commit()).map(|()| v),
            Err(e) => {
                // Before the rollback, which would wait on a stalled server all over again.
                crate::mysql::conn::abandon_if_stalled(socket, &e);
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
                crate::mysql::conn::abandon_if_stalled(socket, &e);
                Err(e)
            }
        }
    }
}

/// Write one batch in one transaction. Returns the rows MySQL refused, with the reason.
/// `fresh`: the day had no row when the run began, so the rows are loaded, not upserted.
pub fn batch(
    w: &mut Writer,
    s: &SettleSettings,
    date: NaiveDate,
    rows: &[DayRow],
    fresh: bool,
) -> Result<Vec<Failure>> {
    with_retry(s, "writing attendance rows", || match whole(w, date, rows, fresh) {
        Err(e) if is_data_error(&e) => row_by_row(w, date, rows),
        r => r,
    })
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

fn whole(w: &mut Writer, date: NaiveDate, rows: &[DayRow], fresh: bool) -> mysql::Result<Vec<Failure>> {
    w.in_tx(|tx, spent| {
        let (good, failures) = spent.time("writers: checking the employees", || known(tx, rows))?;
        if fresh && !good.is_empty() && spent.time("writers: loading", || load(tx, date, &good))? {
            return Ok(failures);
        }
        spent.time("writers: upserting", || {
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

/// Whether LOAD DATA took every row as sent (see [`attendance::load_fresh`]). A server that
/// refuses LOAD DATA LOCAL is told once: every later batch is upserted at once.
fn load(tx: &mut mysql::Transaction, date: NaiveDate, rows: &[&DayRow]) -> mysql::Result<bool> {
    static REFUSED: AtomicBool = AtomicBool::new(false);
    if REFUSED.load(Ordering::Relaxed) {
        return Ok(false);
    }
    match attendance::load_fresh(tx, date, rows.iter().copied()) {
        Err(mysql::Error::MySqlError(_)) => {
            REFUSED.store(true, Ordering::Relaxed);
            Ok(false)
        }
        r => r,
    }
}

/// The slow path, only for a batch that holds a refused row: each row its own statement, in
/// one transaction (MariaDB rolls back only the refused statement).
fn row_by_row(w: &mut Writer, date: NaiveDate, rows: &[DayRow]) -> mysql::Result<Vec<Failure>> {
    w.in_tx(|tx, _| {
        let (good, mut failures) = known(tx, rows)?;
        for r in good {
            match attendance::upsert(tx, date, std::slice::from_ref(r)) {
                Ok(()) => {}
                Err(e) if is_data_error(&e) => failures.push(Failure {
                    employee_id: r.employee_id.clone(),
                    department_id: r.department_id.clone(),
                    reason: e.to_string(),
                }),
                Err(e) => return Err(e),
            }
        }
        Ok(failures)
    })
}

/// A batch of rows handed to the writers; `false` once they stopped (a service error).
pub type Send<'s> = dyn Fn(Vec<DayRow>) -> bool + 's;

/// Write the batches `produce` hands over (on its own thread, so that reading and computing
/// the next rows overlaps writing these), on `writers` connections at once (MySQL has more
/// than one core to write with). At most a few batches wait between the two, so memory stays
/// bounded however many rows there are. `on_batch` runs on the caller's thread after each
/// committed batch, with its size. Returns what `produce` returned and the refused rows; stops
/// at the first error (a writer's service error, or the producer's), which it returns once the
/// other writers have finished their batch.
pub fn stream<T: std::marker::Send>(
    pool: &Pool,
    spent: &Spent,
    s: &SettleSettings,
    date: NaiveDate,
    fresh: bool,
    produce: impl FnOnce(&Send) -> Result<T> + std::marker::Send,
    mut on_batch: impl FnMut(usize),
) -> Result<(T, Vec<Failure>)> {
    let writers = s.writers.max(1);
    let (batch_tx, batch_rx) = mpsc::sync_channel::<Vec<DayRow>>(writers * 2);
    // Shared by the writers, and dropped with the last of them: a producer then stops at once.
    let batch_rx = Arc::new(Mutex::new(batch_rx));
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Result<(usize, Vec<Failure>)>>();
    std::thread::scope(|scope| {
        let stop = &stop;
        let producer = scope.spawn(move || {
            let send = |b: Vec<DayRow>| !stop.load(Ordering::Relaxed) && batch_tx.send(b).is_ok();
            produce(&send)
        });
        for _ in 0..writers {
            let (tx, batch_rx) = (tx.clone(), batch_rx.clone());
            scope.spawn(move || {
                let mut writer = Writer::new(pool, spent);
                while !stop.load(Ordering::Relaxed) {
                    let next = spent.time("writers: waiting for rows", || batch_rx.lock().map(|rx| rx.recv()));
                    let Ok(Ok(chunk)) = next else {
                        break;
                    };
                    let r = batch(&mut writer, s, date, &chunk, fresh).map(|f| (chunk.len(), f));
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if tx.send(r).is_err() {
                        break;
                    }
                }
            });
        }
        drop((tx, batch_rx));
        let mut failures = Vec::new();
        let mut first_error = None;
        for r in rx {
            match r {
                Ok((n, f)) => {
                    failures.extend(f);
                    on_batch(n);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        let produced = producer.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        match (first_error, produced) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(v)) => Ok((v, failures)),
        }
    })
}
