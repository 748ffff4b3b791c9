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

use crate::domain::event::record::{decode, Event, Written};
use crate::domain::event::render::signed_record;
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
    // With a keyring, signed records as this build writes them are checked where they lie
    // (nothing decoded: the bytes signed are in the record); the others are decoded.
    let (written, others): (Vec<Written>, Vec<&(String, String)>) = match ring {
        Some(_) => {
            let mut written = Vec::with_capacity(entries.len());
            let mut others = Vec::new();
            for entry in entries {
                match signed_record(&entry.0, &entry.1) {
                    Some(w) => written.push(w),
                    None => others.push(entry),
                }
            }
            (written, others)
        }
        None => (Vec::new(), entries.iter().collect()),
    };
    if let Some(ring) = ring {
        for (w, verdict) in written.iter().zip(ring.verify_written(&written)) {
            if let Err(refusal) = verdict {
                *out.forged.entry(refusal.class()).or_default() += 1;
                out.refused_ids.push(w.event_id.to_string());
            } else if w.work_date == date {
                out.prints.push(backed.print(w.employee_id, w.kind, w.at));
            }
        }
    }
    let mut events: Vec<Event> = Vec::with_capacity(others.len());
    for (id, record) in others {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::record::record_of;
    use crate::domain::event::signer::{ed25519_pair, Signer};
    use crate::domain::event::signing::sign_event;

    const DAY: &str = "2026-11-30";

    fn event(id: &str, emp: &str, at: &str, signer: Option<&Signer>) -> (String, String) {
        let mut ev: Event = serde_json::from_value(serde_json::json!({
            "event_id": id, "employee_id": emp, "employee_name": "Zoë", "department_id": "D1",
            "kind": "in", "at": at, "work_date": DAY, "late": false, "early": false,
            "late_minutes": 0, "early_minutes": 0, "changed": true, "source": "kiosk",
            "recorded_at": "2026-11-30T08:00:00.000Z",
        }))
        .unwrap();
        if let Some(s) = signer {
            sign_event(&mut ev, s).unwrap();
        }
        (id.to_string(), record_of(&ev).unwrap())
    }

    fn ring() -> (Keyring, Signer) {
        let (private, public) = ed25519_pair(&[3; 32]);
        let mut ring = Keyring::default();
        ring.add_public("k1", &public, false, None).unwrap();
        ring.knows_registry();
        (ring, Signer::ed25519("k1", &private).unwrap())
    }

    #[test]
    fn only_records_that_verify_back_their_board_tokens() {
        let (ring, k1) = ring();
        let stranger = Signer::ed25519("k1", &ed25519_pair(&[9; 32]).0).unwrap();
        let date = NaiveDate::parse_from_str(DAY, "%Y-%m-%d").unwrap();
        // Midnight UTC; E1 at 08:00 and E2 at 08:30 signed by k1 (many: one batch), E3 by a
        // stranger under k1's id, E4 unsigned.
        let start = 1_795_996_800;
        let mut entries: Vec<(String, String)> = (0..40)
            .map(|i| event(&format!("e{i}"), &format!("X{i}"), "2026-11-30T08:00:00Z", Some(&k1)))
            .collect();
        entries.push(event("a", "E1", "2026-11-30T08:00:00Z", Some(&k1)));
        entries.push(event("b", "E2", "2026-11-30T08:30:00Z", Some(&k1)));
        entries.push(event("c", "E3", "2026-11-30T08:00:00Z", Some(&stranger)));
        entries.push(event("d", "E4", "2026-11-30T08:00:00Z", None));
        entries.push(("junk".into(), "1\tE5".into()));
        let mut backed = Backed::default();
        let c = check(date, &entries, Some(&ring), &backed.sibling());
        let mut refused = c.refused_ids.clone();
        refused.sort();
        assert_eq!(refused, ["c", "d", "junk"]);
        assert_eq!(c.forged, BTreeMap::from([("bad_signature", 1), ("unsigned", 1)]));
        assert_eq!(c.unreadable, 1);
        backed.extend(c.prints);
        assert_eq!(backed.keep("E1", start, "i28800,o61200"), ("i28800".into(), 1));
        assert_eq!(backed.keep("E2", start, "i28800"), (String::new(), 1), "another time");
        assert_eq!(backed.keep("E3", start, "i28800"), (String::new(), 1));
        assert_eq!(backed.keep("E1", start, "i28800,junk"), ("i28800,junk".into(), 0));
        // An installation that signs nothing takes every record it can read.
        let mut open = Backed::default();
        let c = check(date, &entries, None, &open.sibling());
        assert_eq!(c.refused_ids, ["junk"]);
        open.extend(c.prints);
        assert_eq!(open.keep("E4", start, "i28800").1, 0);
    }

    #[test]
    fn a_batch_signed_record_altered_where_it_lies_is_refused_alone() {
        let (ring, k1) = ring();
        let date = NaiveDate::parse_from_str(DAY, "%Y-%m-%d").unwrap();
        let mut evs: Vec<Event> = (0..5)
            .map(|i| {
                let (_, record) = event(&format!("e{i}"), &format!("E{i}"), "2026-11-30T08:00:00Z", None);
                decode(&format!("e{i}"), &record).unwrap()
            })
            .collect();
        crate::domain::event::signing::sign_batch(&mut evs, &k1).unwrap();
        let mut entries: Vec<(String, String)> = evs
            .iter()
            .map(|ev| (ev.event_id.clone(), record_of(ev).unwrap()))
            .collect();
        assert!(
            entries.iter().all(|(id, r)| signed_record(id, r).is_some()),
            "read where they lie"
        );
        entries[3].1 = entries[3].1.replacen("\t1796025600\t", "\t1796029200\t", 1);
        let backed = Backed::default();
        let c = check(date, &entries, Some(&ring), &backed.sibling());
        assert_eq!(c.refused_ids, ["e3"]);
        assert_eq!(c.forged, BTreeMap::from([("bad_signature", 1)]));
        assert_eq!(c.prints.len(), 4);
    }
}
