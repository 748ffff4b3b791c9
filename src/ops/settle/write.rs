//! Writing settle's rows: batches handed from the thread that computes them to writers on
//! several MySQL connections at once, with settle's retry policy. Each batch's transaction,
//! its retries and its refused rows are MySQL's (`crate::mysql::upserts`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use chrono::NaiveDate;

use super::rows::{DayRow, Failure};
use super::spent::Spent;
use crate::config::{Config, SettleSettings};
use crate::mysql::upserts::Writer;
use crate::mysql::{Db, Retry};

/// Settle's patience with MySQL: `settle.mysql_retries` attempts, the pause doubling from
/// `settle.retry_backoff_ms`.
pub(super) fn retry(s: &SettleSettings) -> Retry {
    Retry {
        attempts: s.mysql_retries,
        backoff: Duration::from_millis(s.retry_backoff_ms),
    }
}

/// Open the database, retrying with back-off while the server is unreachable.
pub(crate) fn connect(cfg: &Config) -> Result<Db> {
    Db::open_retrying(cfg, retry(&cfg.settle))
}

/// A batch of rows handed to the writers; `false` once they stopped (a service error).
pub(crate) type Send<'s> = dyn Fn(Vec<DayRow>) -> bool + 's;

/// Write the batches `produce` hands over (on its own thread, so that reading and computing
/// the next rows overlaps writing these), on `writers` connections at once (MySQL has more
/// than one core to write with). At most a few batches wait between the two, so memory stays
/// bounded however many rows there are. `on_batch` runs on the caller's thread after each
/// committed batch, with its size. Returns what `produce` returned and the refused rows; stops
/// at the first error (a writer's service error, or the producer's), which it returns once the
/// other writers have finished their batch.
pub(crate) fn stream<T: std::marker::Send>(
    db: &Db,
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
                let timing = |part, d| spent.add(part, d);
                let mut writer = Writer::new(db, retry(s), &timing);
                while !stop.load(Ordering::Relaxed) {
                    let next = spent.time("writers: waiting for rows", || batch_rx.lock().map(|rx| rx.recv()));
                    let Ok(Ok(chunk)) = next else {
                        break;
                    };
                    let r = writer.write(date, &chunk, fresh).map(|f| (chunk.len(), f));
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
