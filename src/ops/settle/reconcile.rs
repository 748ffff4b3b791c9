//! Before settle marks anyone absent, the days' boards are checked against the journal: a punch
//! that was acknowledged (so published, so journaled) but is on no board, in no punch log of
//! its day in Redis and not in MySQL's punch log is what a fail-over to a lagging replica (or
//! any loss of Redis's data) took. It is put back on its board the way `recover` does (the same
//! punch script, logged as recovered, the keyring's checks included), before the cut-over.
//!
//! Only a day whose boards may have lost something is read: one whose Redis servers are not
//! the ones that held its boards from before its first punch (a restart, a fail-over to a
//! replica, a server swapped), or whose servers are not known (`days_to_check`). A day the same
//! servers held throughout lost nothing to a fail-over, and the journal is not read for it.
//!
//! The journal is read once for all the run's days, streamed in batches, up to a fence the
//! reader appends (so it ends as soon as it has read everything, not after an idle pause). A
//! punch voided since it was recorded is off its board but still in its punch log: it stays
//! voided. A journal that cannot be read stops the run before anything is written.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use super::Run;
use crate::domain::day::shift_clock::DayClock;
use crate::domain::event::record::Event;
use crate::mysql::runs::SettleLock;
use crate::ops::boards::recover::{self, Verify};
use crate::redis::board::{Board, Punch, PunchRules};

/// Journaled punches checked per batch: bounded memory however long the journal.
const BATCH: usize = 10_000;

/// A pause in deliveries this long ends the read should the fence not come back.
const IDLE: Duration = Duration::from_secs(2);

/// Whether a day was checked against the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Checked {
    /// Checked, and what the boards had lost put back.
    Done,
    /// `--no-reconcile`.
    Skipped,
    /// `journal.enabled = false`.
    JournalOff,
    /// The broker has no journal for the namespace: nothing was ever journaled.
    NoJournal,
    /// Not read: the Redis servers that held the day's boards from before its first punch
    /// hold them still (no restart, no fail-over), so no acknowledged punch can be missing.
    Unchanged,
}

impl Checked {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Checked::Done => "done",
            Checked::Skipped => "skipped",
            Checked::JournalOff => "journal_off",
            Checked::NoJournal => "no_journal",
            Checked::Unchanged => "unchanged",
        }
    }
}

impl std::fmt::Display for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the check against the journal did for one day.
#[derive(Debug, Clone, Serialize)]
pub struct Reconciled {
    pub status: Checked,
    /// The day's punches in the journal.
    pub journaled: u64,
    /// Punches the boards had lost, put back before the day's rows were computed.
    pub restored: u64,
    /// Lost punches the keyring or the roster refused: parked with their reason, not restored.
    pub refused: u64,
}

impl Reconciled {
    pub(super) fn none(status: Checked) -> Reconciled {
        Reconciled {
            status,
            journaled: 0,
            restored: 0,
            refused: 0,
        }
    }
}

impl Run<'_> {
    /// Check `days`' boards against the journal and restore what they lost. A journal that
    /// cannot be read is an error naming `recover`, before anything is written.
    pub(super) fn reconcile(&mut self, days: &[NaiveDate]) -> Result<BTreeMap<NaiveDate, Reconciled>> {
        let cfg = self.cfg;
        let skipped = if self.opts.no_reconcile {
            Some(Checked::Skipped)
        } else if !cfg.journal.enabled {
            Some(Checked::JournalOff)
        } else {
            None
        };
        if let Some(status) = skipped {
            return Ok(each(days, status));
        }
        // From here on, only the days to check: the others are neither read nor reported as done.
        let (days, unchanged) = self.days_to_check(days)?;
        let mut out = each(&unchanged, Checked::Unchanged);
        let Some(&first) = days.iter().min() else {
            return Ok(out);
        };
        // Unattended, a message in the journal that no kiosk signed must not become a row: with
        // neither a registry key nor a keyring file, events are checked against this host's own
        // shared secret (an installation that signs nothing checks nothing, as `recover`). The
        // registry is read from MySQL (Redis may have lost its copy); the roster only for the checks.
        let ring = match crate::ops::keys::verifiers_of_record(cfg, &self.db, &mut self.board)? {
            Some(ring) => Some(ring),
            None => cfg.signing.own_keyring()?,
        };
        let verify = match ring {
            Some(ring) => Some(Verify::new(
                cfg,
                ring,
                &crate::mysql::people::roster_rows::active_members(&self.db)?,
                recover::shifts_of_record(cfg, &self.db, first)?,
            )),
            None => None,
        };
        // Each day's clock by the policy in force on it; an unlabelled punch's kind by the
        // latest day's (the journal's events carry their kind once a board has read them).
        let clocks = days
            .iter()
            .map(|d| Ok((*d, DayClock::new(&self.policy(*d)?, cfg.timezone, *d))))
            .collect::<Result<_>>()?;
        let latest = self.policy(*days.iter().max().unwrap_or(&self.today))?;
        let mut r = Reconciler {
            board: &mut self.board,
            lock: &mut self.lock,
            rules: PunchRules::new(&latest, cfg.timezone),
            clocks,
            days: each(&days, Checked::Done),
            batch: Vec::with_capacity(BATCH),
            verify,
        };
        let read = crate::amqp::read_journal_to_fence(cfg, recover::read_from(cfg, first), IDLE, |ev| r.take(ev))
            .and_then(|read| r.flush().map(|()| read));
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                return Err(e.context(format!(
                    "{first}: settle could not check the boards against the journal and wrote nothing; settle again \
                     once it can be read, or run `attendance recover --date {first}` (--no-reconcile settles without it)"
                )))
            }
        };
        let Reconciler {
            days: checked, verify, ..
        } = r;
        recover::park(cfg, &mut self.board, verify)?;
        out.extend(if read.is_some() {
            checked
        } else {
            each(&days, Checked::NoJournal)
        });
        Ok(out)
    }

    /// `days` split into those the journal must be read for and those whose boards the same
    /// Redis servers held from before their first punch (as their layout recorded them). A
    /// restart, a fail-over or a server that cannot say which it is: the day is read.
    /// `--check-journal` reads them all.
    fn days_to_check(&mut self, days: &[NaiveDate]) -> Result<(Vec<NaiveDate>, Vec<NaiveDate>)> {
        if self.opts.check_journal {
            return Ok((days.to_vec(), Vec::new()));
        }
        let Ok(now) = self.board.server_identity() else {
            return Ok((days.to_vec(), Vec::new()));
        };
        let (mut check, mut unchanged) = (Vec::new(), Vec::new());
        for &d in days {
            if crate::mysql::runs::layout_identity(self.lock.conn(), d)?.as_deref() == Some(now.as_str()) {
                unchanged.push(d);
            } else {
                check.push(d);
            }
        }
        Ok((check, unchanged))
    }
}

/// Every one of `days` with nothing read, as `status` says.
fn each(days: &[NaiveDate], status: Checked) -> BTreeMap<NaiveDate, Reconciled> {
    days.iter().map(|d| (*d, Reconciled::none(status))).collect()
}

struct Reconciler<'r> {
    board: &'r mut Board,
    lock: &'r mut SettleLock,
    rules: PunchRules,
    /// The run's days, and each one's clock.
    clocks: HashMap<NaiveDate, DayClock>,
    days: BTreeMap<NaiveDate, Reconciled>,
    batch: Vec<Event>,
    verify: Option<Verify>,
}

impl Reconciler<'_> {
    fn take(&mut self, ev: Event) -> Result<()> {
        let Some(day) = self.days.get_mut(&ev.work_date) else {
            return Ok(());
        };
        day.journaled += 1;
        self.batch.push(ev);
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// The batch's events that Redis's punch logs and MySQL's do not hold, checked and put
    /// back on their boards.
    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let events = std::mem::take(&mut self.batch);
        let keys: Vec<(&str, NaiveDate, &str)> = events
            .iter()
            .map(|e| (e.department_id.as_str(), e.work_date, e.event_id.as_str()))
            .collect();
        let in_redis = self.board.logged_events(&keys)?;
        let mut lost: BTreeMap<NaiveDate, Vec<&Event>> = BTreeMap::new();
        for (ev, found) in events.iter().zip(in_redis) {
            if !found {
                lost.entry(ev.work_date).or_default().push(ev);
            }
        }
        for (date, evs) in lost {
            let ids: Vec<&str> = evs.iter().map(|e| e.event_id.as_str()).collect();
            let in_mysql = crate::mysql::punch_log::logged_ids(self.lock.conn(), date, &ids)?;
            let clock = self.clocks[&date];
            let mut punches: Vec<Punch> = Vec::new();
            for ev in evs.into_iter().filter(|e| !in_mysql.contains(&e.event_id)) {
                if let Some(v) = &mut self.verify {
                    if !v.passes(ev, self.board)? {
                        if let Some(day) = self.days.get_mut(&date) {
                            day.refused += 1;
                        }
                        continue;
                    }
                }
                punches.extend(recover::journaled_punch(&clock, ev.clone()));
            }
            if punches.is_empty() {
                continue;
            }
            let outcomes = self.board.replay_many(self.rules, &punches, |_| {})?;
            let restored = outcomes.iter().filter(|o| !o.duplicate).count() as u64;
            if let Some(day) = self.days.get_mut(&date) {
                day.restored += restored;
            }
        }
        Ok(())
    }
}
