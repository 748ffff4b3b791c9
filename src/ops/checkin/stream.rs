//! A punch stream: `checkin --file -` or a named pipe, applied as the punches arrive, so a
//! kiosk can keep a pipe open all day. A reader thread parses rows as they come; this side
//! gathers them into batches, each recorded and published like a bulk check-in
//! ([`crate::ops::checkin::bulk::bulk`]) at most [`BATCH_WAIT`] after its first row or once it holds
//! [`BATCH_ROWS`]. The summary adds every batch up, at the end of the input or on Ctrl-C/SIGTERM.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError};

use super::record::Replication;
use crate::config::Config;
use crate::domain::formats::punch_file::{self, Refusal, Row, SHOWN_REFUSALS};
use crate::error::Error;
use crate::ops::checkin::bulk::Bulk;

/// A batch is flushed once it holds this many rows...
pub(crate) const BATCH_ROWS: usize = 100;
/// ...or this long after its first row arrived, whichever comes first.
pub(crate) const BATCH_WAIT: Duration = Duration::from_millis(200);
/// How often a wait with nothing arriving looks at the stop flag.
const TICK: Duration = Duration::from_millis(50);

type Arrival = Result<Result<Row, Refusal>, Error>;

/// How a stream ended.
#[derive(Debug)]
pub(crate) struct Streamed {
    /// Every batch added up.
    pub bulk: Bulk,
    /// The stream stopped part-way: its input refused (a line past the bound, too many rows),
    /// or a batch that could not be applied; every row before it was applied, none after.
    pub cut: Option<anyhow::Error>,
    /// Ctrl-C or SIGTERM ended it (not the end of the input).
    pub stopped: bool,
}

/// Apply `reader`'s punches batch by batch until its end, `stop`, or a batch whose Redis
/// failed (then `bulk.report.failure` holds why, with what was done before). An input refused
/// part-way (a line past the bound) has every row before that line applied and `cut` set; one
/// refused before its first row (a bad header, `/dev/zero`) is the error itself: nothing written.
pub(crate) fn stream(cfg: &Config, reader: Box<dyn Read + Send>, stop: &AtomicBool) -> Result<Streamed> {
    let (tx, rx) = bounded::<Arrival>(BATCH_ROWS * 4);
    // Detached: a read blocked on a silent pipe must not hold a stop (SIGTERM) back; the
    // thread ends with the process.
    std::thread::spawn(move || {
        let sent = punch_file::each(reader, |row| tx.send(Ok(row)).is_ok());
        if let Err(e) = sent {
            let _ = tx.send(Err(e));
        }
    });
    let mut total: Option<Bulk> = None;
    let mut departments: Vec<String> = Vec::new();
    loop {
        let (rows, refused, end) = batch(&rx, stop);
        if !rows.is_empty() || !refused.is_empty() {
            // Signals held back while Redis and the broker are read: a SIGTERM then ends the
            // stream after this batch, instead of cutting a read with a timeout.
            let b = match crate::interrupt::deferred(|| crate::ops::checkin::bulk::bulk(cfg, rows, refused, |_| {})) {
                Ok(b) => b,
                Err(e) => match total {
                    // A batch refused before anything was written (Redis or MySQL unreachable,
                    // a host clock past the skew): the summary says what the batches before did.
                    Some(bulk) => {
                        let n = bulk.report.rows;
                        let e = e.context(format!(
                            "the stream stopped; the {n} rows before this batch were applied"
                        ));
                        return Ok(finish(cfg, bulk, departments, Some(e), false));
                    }
                    None => return Err(e),
                },
            };
            departments.extend(b.departments.iter().cloned());
            departments.sort_unstable();
            departments.dedup();
            let failed = b.report.failure.is_some();
            total = Some(match total {
                None => b,
                Some(t) => add(t, b),
            });
            if failed {
                let bulk = total.expect("just set");
                return Ok(Streamed {
                    bulk,
                    cut: None,
                    stopped: false,
                });
            }
        }
        match end {
            End::More => {}
            // Every row before the refused line was applied; an input refused before its
            // first row (a bad header, `/dev/zero`) changes nothing, as a file does.
            End::Cut(e) => match total {
                None => return Err(e.into()),
                Some(bulk) => {
                    let msg = e.to_string();
                    let head = msg.split(": refused whole").next().unwrap_or(&msg);
                    let e = Error::input(format!(
                        "{head}: the stream stops there; the {} rows before it were applied",
                        bulk.report.rows
                    ));
                    return Ok(finish(cfg, bulk, departments, Some(e.into()), false));
                }
            },
            End::Eof | End::Stopped => {
                let bulk = total.unwrap_or_else(empty);
                return Ok(finish(cfg, bulk, departments, None, matches!(end, End::Stopped)));
            }
        }
    }
}

enum End {
    More,
    Eof,
    Stopped,
    Cut(Error),
}

/// The next batch: rows and refusals until [`BATCH_ROWS`] of them, [`BATCH_WAIT`] after the
/// first, the end of the input, or a stop.
fn batch(rx: &Receiver<Arrival>, stop: &AtomicBool) -> (Vec<Row>, Vec<Refusal>, End) {
    let (mut rows, mut refused) = (Vec::new(), Vec::new());
    let mut due: Option<Instant> = None;
    loop {
        if stop.load(Ordering::SeqCst) {
            // What was already read is applied too: a punch the kiosk wrote is not dropped.
            while let Ok(Ok(row)) = rx.try_recv() {
                match row {
                    Ok(r) => rows.push(r),
                    Err(r) => refused.push(r),
                }
            }
            return (rows, refused, End::Stopped);
        }
        let wait = due.map_or(TICK, |d| d.saturating_duration_since(Instant::now()).min(TICK));
        match rx.recv_timeout(wait) {
            Ok(Ok(row)) => {
                due.get_or_insert_with(|| Instant::now() + BATCH_WAIT);
                match row {
                    Ok(r) => rows.push(r),
                    Err(r) => refused.push(r),
                }
            }
            // A read cut by the signal that asked to stop is that stop, not bad input.
            Ok(Err(_)) if stop.load(Ordering::SeqCst) => return (rows, refused, End::Stopped),
            Ok(Err(e)) => return (rows, refused, End::Cut(e)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return (rows, refused, End::Eof),
        }
        if rows.len() + refused.len() >= BATCH_ROWS || due.is_some_and(|d| Instant::now() >= d) {
            return (rows, refused, End::More);
        }
    }
}

fn empty() -> Bulk {
    Bulk {
        report: Default::default(),
        notifications: Default::default(),
        redis_answered: None,
        departments: Vec::new(),
        held_for_review: Vec::new(),
        replication: Replication::Off,
        unreplicated: Vec::new(),
    }
}

/// Two batches' summaries as one.
fn add(mut t: Bulk, b: Bulk) -> Bulk {
    let (r, n) = (&mut t.report, &mut t.notifications);
    r.rows += b.report.rows;
    r.recorded += b.report.recorded;
    r.unchanged += b.report.unchanged;
    r.repeats += b.report.repeats;
    r.unconfirmed += b.report.unconfirmed;
    r.refused_count += b.report.refused_count;
    r.refused.extend(b.report.refused);
    r.held += b.report.held;
    let room = SHOWN_REFUSALS.saturating_sub(t.held_for_review.len());
    t.held_for_review.extend(b.held_for_review.into_iter().take(room));
    if b.report.failure.is_some() {
        r.error = b.report.error;
        r.failure = b.report.failure;
    }
    n.sent += b.notifications.sent;
    n.unremoved += b.notifications.unremoved;
    n.put_back += b.notifications.put_back;
    n.pending = b.notifications.pending;
    n.departments = n.departments.max(b.notifications.departments);
    if b.notifications.problem.is_some() {
        n.problem = b.notifications.problem;
    }
    n.redis_failed = b.notifications.redis_failed.or(n.redis_failed.take());
    n.malformed.extend(b.notifications.malformed);
    t.redis_answered = b.redis_answered.or(t.redis_answered);
    // Pending if any batch was; off only if every batch was.
    t.replication = match (t.replication, b.replication) {
        (Replication::Pending, _) | (_, Replication::Pending) => Replication::Pending,
        (Replication::Replicated, _) | (_, Replication::Replicated) => Replication::Replicated,
        _ => Replication::Off,
    };
    t.unreplicated.extend(b.unreplicated);
    t.unreplicated.truncate(SHOWN_REFUSALS);
    t
}

/// The summary: `pending` is what the outboxes of every department the stream recorded for
/// hold at its end (a later batch may have sent what an earlier one left pending).
fn finish(
    cfg: &Config,
    mut bulk: Bulk,
    departments: Vec<String>,
    cut: Option<anyhow::Error>,
    stopped: bool,
) -> Streamed {
    if !departments.is_empty() {
        let counted = crate::redis::board::Board::open(cfg).and_then(|mut b| b.outbox_len(&departments));
        if let Ok(n) = counted {
            bulk.notifications.pending = n;
        }
    }
    bulk.departments = departments;
    Streamed { bulk, cut, stopped }
}
