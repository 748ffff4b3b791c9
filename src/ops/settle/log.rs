//! Settle's punch log: every punch of the day, as the departments' punch logs in Redis hold it
//! (moved to settle's keys with the boards at the cut-over) and a signed record backs it,
//! written to MySQL's `punch_log` while the day's rows are written (each slice's entries as
//! soon as their signatures are checked: see `vet`) and before the boards and logs are deleted.
//! Each row is keyed by its event id and inserted only if new, so a rerun after a kill at any
//! point writes nothing twice and loses nothing (the logs are deleted only with their boards).

use std::sync::mpsc::Receiver;

use anyhow::Result;

use super::spent::Spent;
use crate::domain::event::punch_log;
use crate::mysql::{Db, Retry};

/// What writing the punch log did.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Logged {
    /// Rows new in MySQL.
    pub written: u64,
    /// Entries that could not be read (left out, counted; the board's record is unaffected).
    pub unreadable: u64,
}

/// A slice's punch log entries that passed the check, and how many could not be read (left
/// out, counted; the board's record is unaffected).
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub entries: Vec<punch_log::Entry>,
    pub unreadable: u64,
}

/// Write the batches the check hands over (see `vet`) to MySQL's `punch_log` on a connection
/// of its own, as they come: the day's log loads alongside its rows.
/// With settle's patience (`retry`), as the rows' writers have it.
pub(super) fn write(db: &Db, retry: Retry, batches: Receiver<Batch>, spent: &Spent) -> Result<Logged> {
    let mut conn = None;
    let mut done = Logged::default();
    for b in batches {
        done.unreadable += b.unreadable;
        done.written += spent.time("punch log: loading", || {
            crate::mysql::punch_log::insert_day_patiently(db, &mut conn, &b.entries, retry)
        })?;
    }
    Ok(done)
}
