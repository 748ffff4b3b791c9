//! Writing settle's rows to MySQL: multi-row upserts, one transaction per batch, retried with
//! back-off when MySQL is briefly away, and split row by row only when a batch holds a row
//! MySQL refuses (so that one bad row never stops the others).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::sleep;
use std::time::Duration;

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;
use mysql::{Pool, TxOpts};

use super::rows::{DayRow, Failure};
use crate::config::{Config, SettleSettings};
use crate::db::attendance;
use crate::error::{exit, exit_code_of, Error, Service};
use crate::services;

/// Server errors that say "try again", not "this row is wrong": lock wait, deadlock, too
/// many connections, shutdown, connection killed, read-only or out of resources.
const TRANSIENT: [u16; 8] = [1205, 1213, 1040, 1053, 1927, 1290, 1041, 1021];

/// A refusal of the data itself (a constraint, a bad value), as opposed to a failing server.
pub fn is_data_error(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if !TRANSIENT.contains(&me.code))
}

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
                        crate::error::mysql_detail(&e)
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
        match services::mysql(cfg) {
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

/// Write one batch in one transaction. Returns the rows MySQL refused, with the reason.
pub fn batch(pool: &Pool, s: &SettleSettings, date: NaiveDate, rows: &[DayRow]) -> Result<Vec<Failure>> {
    with_retry(s, "writing attendance rows", || match whole(pool, date, rows) {
        Err(e) if is_data_error(&e) => row_by_row(pool, date, rows),
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

fn whole(pool: &Pool, date: NaiveDate, rows: &[DayRow]) -> mysql::Result<Vec<Failure>> {
    let mut conn = pool.get_conn()?;
    let socket = std::os::unix::io::AsRawFd::as_raw_fd(&*conn);
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let written = known(&mut tx, rows).and_then(|(good, failures)| {
        if good.len() == rows.len() {
            attendance::upsert(&mut tx, date, rows)?;
        } else if !good.is_empty() {
            let good: Vec<DayRow> = good.into_iter().cloned().collect();
            attendance::upsert(&mut tx, date, &good)?;
        }
        Ok(failures)
    });
    match written {
        Ok(failures) => tx.commit().map(|()| failures),
        Err(e) => {
            // Before the rollback, which would wait on a stalled server all over again.
            services::abandon_if_stalled(socket, &e);
            tx.rollback().ok();
            Err(e)
        }
    }
}

/// The slow path, only for a batch that holds a refused row: each row its own statement, in
/// one transaction (MariaDB rolls back only the refused statement).
fn row_by_row(pool: &Pool, date: NaiveDate, rows: &[DayRow]) -> mysql::Result<Vec<Failure>> {
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let (good, mut failures) = known(&mut tx, rows)?;
    for r in good {
        match attendance::upsert(&mut tx, date, std::slice::from_ref(r)) {
            Ok(()) => {}
            Err(e) if is_data_error(&e) => failures.push(Failure {
                employee_id: r.employee_id.clone(),
                department_id: r.department_id.clone(),
                reason: e.to_string(),
            }),
            Err(e) => return Err(e),
        }
    }
    tx.commit()?;
    Ok(failures)
}

/// Write every row in batches of `per_batch`, on `writers` connections at once (MySQL has
/// more than one core to write with). `on_batch` runs on the caller's thread after each
/// committed batch, with its size. Returns the refused rows; stops at the first service
/// error, which it returns once the other writers have finished their batch.
pub fn all(
    pool: &Pool,
    s: &SettleSettings,
    date: NaiveDate,
    rows: &[DayRow],
    per_batch: usize,
    mut on_batch: impl FnMut(usize),
) -> Result<Vec<Failure>> {
    let batches: Vec<&[DayRow]> = rows.chunks(per_batch.max(1)).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Result<(usize, Vec<Failure>)>>();
    std::thread::scope(|scope| {
        for _ in 0..s.writers.max(1) {
            let tx = tx.clone();
            let (next, stop, batches) = (&next, &stop, &batches);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(chunk) = batches.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    let r = batch(pool, s, date, chunk).map(|f| (chunk.len(), f));
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if tx.send(r).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
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
        match first_error {
            Some(e) => Err(e),
            None => Ok(failures),
        }
    })
}
