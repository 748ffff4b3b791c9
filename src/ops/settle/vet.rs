//! Settle's check of the day's punch logs, on a thread of its own: it reads each slice's punch
//! logs from Redis and checks their signatures in batches while the slice before is computed
//! and loaded into MySQL, so that the row stream waits for it only when it outruns it. Every
//! punch is checked once, in the log that holds it; its board token and its log entry are then
//! the same fingerprint (`domain::event::backing`). The entries that pass go on to the punch
//! log's writer ([`super::log::write`]) from here: the day's punch logs are read from Redis once.

use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc::{Receiver, SyncSender};

use anyhow::{anyhow, Result};
use chrono::NaiveDate;

use super::log::Batch;
use super::spent::Spent;
use crate::config::Config;
use crate::domain::event::backing::{self, Backed, Checked};
use crate::domain::event::punch_log;
use crate::domain::event::signing::Keyring;
use crate::redis::board::Board;

/// Check the punch logs of `slices` (departments, in the order the row stream reads their
/// boards), one message per slice, and hand the entries that pass to the punch log's writer
/// (`log`). Stops when the stream or the writer no longer listens.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    cfg: &Config,
    date: NaiveDate,
    ring: Option<Keyring>,
    slices: Vec<Vec<String>>,
    backed: Backed,
    tx: SyncSender<Result<Checked>>,
    log: SyncSender<Batch>,
    spent: &Spent,
) {
    let mut board = match Board::open(cfg) {
        Ok(b) => b,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    for slice in slices {
        let logs = spent.time("signature checks: reading the punch logs", || {
            board.settle_punch_logs(date, &slice)
        });
        let (entries, hows): (Vec<(String, String)>, Vec<_>) = match logs {
            Ok(logs) => logs.into_iter().map(|(id, record, how)| ((id, record), how)).unzip(),
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let checked = spent.time("signature checks: verifying", || {
            check_on_cores(date, &entries, ring.as_ref(), &backed)
        });
        // What passed, as MySQL's punch log keeps it: to its writer before the stream is told,
        // so that the log loads while the rows do.
        let batch = spent.time("punch log: parsing", || {
            let refused: HashSet<&str> = checked.refused_ids.iter().map(String::as_str).collect();
            let mut batch = Batch::default();
            for ((id, record), how) in entries.iter().zip(hows) {
                if refused.contains(id.as_str()) {
                    continue;
                }
                match punch_log::parse(id, record, how) {
                    Ok(e) => batch.entries.push(e),
                    Err(_) => batch.unreadable += 1,
                }
            }
            batch
        });
        if log.send(batch).is_err() || tx.send(Ok(checked)).is_err() {
            return;
        }
    }
}

/// Entries per thread below which a slice is checked on one: a thread costs more than it saves.
const MIN_PER_THREAD: usize = 256;

/// [`backing::check`] of `entries` split over the machine's cores (signatures are CPU work the
/// row stream's other threads, waiting on MySQL and Redis, leave room for), the answers joined
/// in order.
fn check_on_cores(date: NaiveDate, entries: &[(String, String)], ring: Option<&Keyring>, backed: &Backed) -> Checked {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(entries.len() / MIN_PER_THREAD).max(1);
    if threads == 1 {
        return backing::check(date, entries, ring, backed);
    }
    let parts: Vec<Checked> = std::thread::scope(|scope| {
        let handles: Vec<_> = entries
            .chunks(entries.len().div_ceil(threads))
            .map(|part| scope.spawn(move || backing::check(date, part, ring, backed)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut all = Checked::default();
    for c in parts {
        all.prints.extend(c.prints);
        all.refused_ids.extend(c.refused_ids);
        for (class, n) in c.forged {
            *all.forged.entry(class).or_default() += n;
        }
        all.unreadable += c.unreadable;
    }
    all
}

/// The stream's side: what the checks found so far.
pub(super) struct Vetting {
    rx: Receiver<Result<Checked>>,
    /// Slices still to come.
    left: usize,
    pub backed: Backed,
    /// Entries refused for their signature, by class.
    pub forged: BTreeMap<&'static str, u64>,
    pub unreadable: u64,
    /// Every punch log of the day is checked: a board token not backed by now never will be.
    pub done: bool,
}

impl Vetting {
    /// The checks of `slices` slices, as [`run`] sends them.
    pub(super) fn new(rx: Receiver<Result<Checked>>, slices: usize, backed: Backed) -> Vetting {
        Vetting {
            rx,
            left: slices,
            backed,
            forged: BTreeMap::new(),
            unreadable: 0,
            done: slices == 0,
        }
    }

    /// Take the next slice's checks (waiting for them); `done` once none is left.
    pub(super) fn next(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        match self.rx.recv() {
            Ok(checked) => {
                self.left -= 1;
                self.done = self.left == 0;
                let c = checked.map_err(|e| e.context("checking the day's punch logs"))?;
                self.backed.extend(c.prints);
                for (class, n) in c.forged {
                    *self.forged.entry(class).or_default() += n;
                }
                self.unreadable += c.unreadable;
                Ok(())
            }
            // Ended without a word (a panic): it did not read every log, and a token it did
            // not see is not thereby forged.
            Err(_) => Err(lost()),
        }
    }

    /// The channel from the check, taken so that dropping it ends the check (which then ends
    /// the punch log's batches); nothing more is taken from it after.
    pub(super) fn take_receiver(&mut self) -> Receiver<Result<Checked>> {
        self.done = true;
        let (_, closed) = std::sync::mpsc::sync_channel(0);
        std::mem::replace(&mut self.rx, closed)
    }

    /// Take every check still to come.
    pub(super) fn finish(&mut self) -> Result<()> {
        while !self.done {
            self.next()?;
        }
        Ok(())
    }

    /// Entries refused for their signature.
    pub(super) fn forged(&self) -> u64 {
        self.forged.values().sum()
    }
}

fn lost() -> anyhow::Error {
    anyhow!("the punch logs' check stopped")
}
