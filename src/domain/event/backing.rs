//! Which punches a signed record backs: a day's punch log entries checked against the keys in
//! force (settle takes nothing else from a board), and a board value cut down to the tokens
//! such a record backs. A board field or a punch log entry anyone with write access to Redis
//! wrote by hand (`HSET`) backs nothing: no key of the registry signed it.
//!
//! A backed punch is kept as a fingerprint (employee, kind, instant) under a hasher keyed at
//! random per run, so a night of 200,000 punches is a few megabytes and nobody can aim at a
//! collision they cannot compute.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasher;

use chrono::{DateTime, NaiveDate};

use crate::domain::event::record::{decode, Event};
use crate::domain::event::signing::Keyring;
use crate::domain::punch::Kind;

/// The run's fingerprints of backed punches.
#[derive(Debug, Default)]
pub(crate) struct Backed {
    hasher: RandomState,
    prints: HashSet<u64>,
}

impl Backed {
    /// An empty set with the same hasher: a thread's own, whose fingerprints this set takes.
    pub(crate) fn sibling(&self) -> Backed {
        Backed {
            hasher: self.hasher.clone(),
            prints: HashSet::new(),
        }
    }

    /// A punch's fingerprint (`at`: unix seconds).
    pub(crate) fn print(&self, employee: &str, kind: Kind, at: i64) -> u64 {
        self.hasher.hash_one((employee, kind == Kind::In, at))
    }

    /// Add what a check found backed.
    pub(crate) fn extend(&mut self, prints: Vec<u64>) {
        self.prints.extend(prints);
    }

    /// `value` (a board field of `employee`, whose seconds count from `start`, unix seconds)
    /// with only the tokens a record backs, and how many it lost. A token that is no punch at
    /// all stays, so that the row fails as unreadable rather than being guessed.
    pub(crate) fn keep(&self, employee: &str, start: i64, value: &str) -> (String, u64) {
        let mut kept = String::with_capacity(value.len());
        let mut lost = 0;
        for tok in value.split(',').filter(|t| !t.is_empty()) {
            let punch = tok.split_at_checked(1).and_then(|(k, n)| {
                let kind = match k {
                    "i" => Kind::In,
                    "o" => Kind::Out,
                    _ => return None,
                };
                Some((kind, n.parse::<i64>().ok()?))
            });
            if let Some((kind, secs)) = punch {
                if !self.prints.contains(&self.print(employee, kind, start + secs)) {
                    lost += 1;
                    continue;
                }
            }
            if !kept.is_empty() {
                kept.push(',');
            }
            kept.push_str(tok);
        }
        (kept, lost)
    }
}

/// What checking some punch log entries found.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    /// Fingerprints of the punches of the day that a good record backs (see [`Backed::print`]).
    pub prints: Vec<u64>,
    /// Entries refused: kept out of MySQL's punch log.
    pub refused_ids: Vec<String>,
    /// Entries refused for their signature (none, bad, unknown or revoked key), by class.
    pub forged: BTreeMap<&'static str, u64>,
    /// Entries that are no record at all.
    pub unreadable: u64,
}

/// Check `entries` (event id, record) of `date`'s punch logs: each record's signature against
/// `ring` (`None`: an installation that signs nothing, whose records are taken unchecked, as
/// its consumers take its events), in one batch.
pub(crate) fn check(date: NaiveDate, entries: &[(String, String)], ring: Option<&Keyring>, backed: &Backed) -> Checked {
    let mut out = Checked::default();
    let mut events: Vec<Event> = Vec::with_capacity(entries.len());
    for (id, record) in entries {
        // Records as this build writes them; an older JSON event as it was written.
        match decode(id, record).or_else(|_| serde_json::from_str::<Event>(record).map_err(|_| ())) {
            Ok(ev) if ev.event_id == *id => events.push(ev),
            _ => {
                out.unreadable += 1;
                out.refused_ids.push(id.clone());
            }
        }
    }
    let refs: Vec<&Event> = events.iter().collect();
    let verdicts = match ring {
        Some(ring) => ring.verify_many(&refs),
        None => vec![Ok(()); refs.len()],
    };
    for (ev, verdict) in events.iter().zip(verdicts) {
        if let Err(refusal) = verdict {
            *out.forged.entry(refusal.class()).or_default() += 1;
            out.refused_ids.push(ev.event_id.clone());
            continue;
        }
        let at = DateTime::parse_from_rfc3339(&ev.at).map(|t| t.timestamp());
        if let (true, Ok(at)) = (ev.work_date == date, at) {
            out.prints.push(backed.print(&ev.employee_id, ev.kind, at));
        }
    }
    out
}
