//! Settle's punch log: every punch of the day, as the departments' punch logs in Redis hold it
//! (moved to settle's keys with the boards at the cut-over), written to MySQL's `punch_log`
//! once the day's rows are committed and before the boards and logs are deleted. Each row is
//! keyed by its event id and inserted only if new, so a rerun after a kill at any point writes
//! nothing twice and loses nothing (the logs are deleted only with their boards).

use std::collections::HashSet;

use anyhow::Result;
use chrono::NaiveDate;

use super::Run;
use crate::domain::event::punch_log;

/// Departments read from Redis and written to MySQL at a time: memory stays bounded.
const DEPTS_PER_STEP: usize = 200;

/// What writing the punch log did.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Logged {
    /// Rows new in MySQL.
    pub written: u64,
    /// Entries that could not be read (left out, counted; the board's record is unaffected).
    pub unreadable: u64,
}

impl Run<'_> {
    /// Write the day's punch logs to MySQL.
    /// The entries of `refused` (their signature failed: see `vet`) stay out.
    pub(super) fn write_punch_log(&mut self, date: NaiveDate, refused: &HashSet<String>) -> Result<Logged> {
        let mut done = Logged::default();
        for depts in self.all_departments().chunks(DEPTS_PER_STEP) {
            let raw = self.board.settle_punch_logs(date, depts)?;
            let mut entries = Vec::with_capacity(raw.len());
            for (id, record, how) in raw {
                if refused.contains(&id) {
                    continue;
                }
                match punch_log::parse(&id, &record, how) {
                    Ok(e) => entries.push(e),
                    Err(_) => done.unreadable += 1,
                }
            }
            done.written += crate::mysql::punch_log::insert_day(self.lock.conn(), &entries)?;
        }
        Ok(done)
    }
}
