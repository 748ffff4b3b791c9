//! The invariants checked after every night, each read straight from its store: the settled
//! rows (MySQL `attendance`) against the oracle, the punch log (MySQL `punch_log`) and the
//! journal (the broker's `<ns>.journal` stream) against the acknowledged punches, and the
//! record of settle runs (MySQL `settle_runs`) against the days settled.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use mysql::prelude::Queryable;

use super::model::{Kind, Punch, World};
use super::oracle::{expected, Row};
use crate::common::TestEnv;

/// A punch as every store can name it: employee, UTC instant to the second, kind.
type Key = (String, String, &'static str);

fn key_of(p: &Punch) -> Key {
    (
        p.emp.clone(),
        p.at.format("%Y-%m-%d %H:%M:%S").to_string(),
        p.kind.word(),
    )
}

fn kind_word(s: &str) -> &'static str {
    if s == "in" {
        Kind::In.word()
    } else {
        Kind::Out.word()
    }
}

/// A settled row as read: employee, status, first in, last out, late, early, corrected.
type StoredRow = (String, String, Option<String>, Option<String>, u32, u32, bool);

/// What one night's check found wrong, and what it saw in passing.
#[derive(Default, Debug)]
pub struct Found {
    pub problems: Vec<String>,
    /// Journal messages carrying an event a second time (the same event id).
    pub journal_copies: usize,
    /// How much was compared: settled rows, punch-log entries, journaled punches.
    pub rows: usize,
    pub logged: usize,
    pub journaled: usize,
}

pub fn night(env: &TestEnv, broker: &str, w: &World) -> Found {
    let mut f = Found::default();
    rows(env, w, &mut f);
    runs(env, w, &mut f);
    punch_log(env, w, &mut f);
    journal(env, broker, w, &mut f);
    f
}

/// Every settled day's last run is `ok`, and no run is left `running`: a settle that MySQL or
/// Redis died under is recorded `running` (its end never written) until the next run marks it
/// `interrupted`, and that next run completes the day.
fn runs(env: &TestEnv, w: &World, f: &mut Found) {
    let mut con = env.mysql();
    for &d in &w.settled {
        let last: Option<String> = con
            .exec_first(
                "SELECT CAST(outcome AS CHAR) FROM settle_runs WHERE work_date = ? ORDER BY id DESC LIMIT 1",
                (d.to_string(),),
            )
            .unwrap();
        if last.as_deref() != Some("ok") {
            f.problems
                .push(format!("settle_runs: {d}'s last run is {last:?}, not ok"));
        }
    }
    let running: Vec<(u64, String)> = con
        .query("SELECT id, CAST(work_date AS CHAR) FROM settle_runs WHERE outcome = 'running'")
        .unwrap();
    for (id, d) in running {
        f.problems
            .push(format!("settle_runs: run {id} of {d} is still recorded running"));
    }
}

fn rows(env: &TestEnv, w: &World, f: &mut Found) {
    let mut con = env.mysql();
    for &d in &w.settled {
        let got: Vec<StoredRow> = con
            .exec(
                "SELECT employee_id, status, CAST(first_in AS CHAR), CAST(last_out AS CHAR), late_minutes, \
                 early_minutes, corrected FROM attendance WHERE work_date = ?",
                (d.to_string(),),
            )
            .unwrap();
        let got: BTreeMap<String, Row> = got
            .into_iter()
            .map(|(e, status, first_in, last_out, late, early, corrected)| {
                (
                    e,
                    Row {
                        status,
                        first_in,
                        last_out,
                        late,
                        early,
                        corrected,
                    },
                )
            })
            .collect();
        let want = expected(w, d);
        f.rows += want.len();
        for (e, row) in &want {
            // A forged board field settles nothing: the oracle's row ignores it.
            let forged = if w.forged.contains(&(e.clone(), d)) {
                " (a forged board field)"
            } else {
                ""
            };
            match got.get(e) {
                None => f.problems.push(format!("{d} {e}: no row; the oracle says {row:?}")),
                Some(g) if g != row => {
                    f.problems
                        .push(format!("{d} {e}{forged}: settled {g:?}; the oracle says {row:?}"));
                }
                Some(_) => {}
            }
            // Nobody is absent who punched (said on its own: the plainest symptom of a lost punch).
            if let Some(g) = got.get(e) {
                if (g.status == "absent" || g.status == "on_leave") && row.first_in.is_some() | row.last_out.is_some() {
                    f.problems.push(format!("{d} {e}: {} although they punched", g.status));
                }
            }
        }
        for e in got.keys().filter(|e| !want.contains_key(*e)) {
            f.problems.push(format!(
                "{d} {e}: a row for someone not employed that day: {:?}",
                got[e]
            ));
        }
    }
}

/// The acknowledged punches of settled days, and the rejected ones of any day.
fn settled_punches(w: &World) -> (Vec<&Punch>, Vec<&Punch>) {
    let acked = w.acked.iter().filter(|p| w.settled.contains(&w.work_date(p))).collect();
    (acked, w.rejected.iter().collect())
}

fn punch_log(env: &TestEnv, w: &World, f: &mut Found) {
    let logged: Vec<(String, String, String, String, String)> = env
        .mysql()
        .query(
            "SELECT employee_id, CAST(punched_at AS CHAR), kind, how, CAST(work_date AS CHAR) \
             FROM punch_log WHERE how <> 'corrected'",
        )
        .unwrap();
    f.logged = logged.len();
    // A voided punch keeps its entry as it came and gains one `voided` entry: counted apart.
    let mut count: HashMap<Key, usize> = HashMap::new();
    let mut voids: HashMap<Key, usize> = HashMap::new();
    for (e, at, kind, how, _d) in &logged {
        let k = (e.clone(), at.clone(), kind_word(kind));
        *if how == "voided" {
            voids.entry(k)
        } else {
            count.entry(k)
        }
        .or_default() += 1;
    }
    for p in w.voided.iter().filter(|p| w.settled.contains(&w.work_date(p))) {
        let k = key_of(p);
        let n = voids.remove(&k).unwrap_or(0);
        if n != 1 {
            f.problems
                .push(format!("punch log: voided punch {k:?} marked voided {n} time(s)"));
        }
    }
    for (k, n) in voids {
        if !w.voided.iter().any(|p| key_of(p) == k) {
            f.problems
                .push(format!("punch log: {k:?} marked voided {n} time(s), never voided"));
        }
    }
    let (acked, rejected) = settled_punches(w);
    let mut known: HashSet<Key> = HashSet::new();
    for p in acked {
        let k = key_of(p);
        let n = count.get(&k).copied().unwrap_or(0);
        if n != 1 && known.insert(k.clone()) {
            f.problems
                .push(format!("punch log: acknowledged punch {k:?} is there {n} time(s)"));
        }
        known.insert(k);
    }
    for p in rejected {
        let k = key_of(p);
        if count.contains_key(&k) {
            f.problems.push(format!("punch log: rejected punch {k:?} was logged"));
        }
        known.insert(k);
    }
    for (e, at, kind, how, d) in logged.iter().filter(|l| l.3 != "voided") {
        let k = (e.clone(), at.clone(), kind_word(kind));
        if !known.contains(&k) && w.settled.contains(&NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap()) {
            f.problems
                .push(format!("punch log: {k:?} ({how}, {d}) was never acknowledged"));
        }
    }
}

/// Every event of the namespace's journal: (employee, instant, kind) -> event ids, one per
/// message that carried it.
pub fn read_journal(broker: &str, ns: &str, idle: Duration) -> HashMap<Key, Vec<String>> {
    let mut out: HashMap<Key, Vec<String>> = HashMap::new();
    for ev in crate::common::journal::events(broker, ns, idle) {
        let (Some(e), Some(at), Some(kind), Some(id)) = (
            ev["employee_id"].as_str(),
            ev["at"].as_str(),
            ev["kind"].as_str(),
            ev["event_id"].as_str(),
        ) else {
            continue;
        };
        let at: DateTime<Utc> = DateTime::parse_from_rfc3339(at).unwrap().with_timezone(&Utc);
        let k = (
            e.to_string(),
            at.format("%Y-%m-%d %H:%M:%S").to_string(),
            kind_word(kind),
        );
        out.entry(k).or_default().push(id.to_string());
    }
    out
}

fn journal(env: &TestEnv, broker: &str, w: &World, f: &mut Found) {
    // A pause of the shared broker longer than the idle wait would end the read early: a read
    // that finds something missing is read again, waiting longer, before it counts.
    let mut problems = Vec::new();
    for idle in [Duration::from_millis(1500), Duration::from_secs(8)] {
        let j = read_journal(broker, &env.ns, idle);
        f.journaled = j.len();
        problems = journal_against(&j, w, &mut f.journal_copies);
        if problems.is_empty() {
            break;
        }
    }
    f.problems.extend(problems);
}

/// Every acknowledged punch under one event id, journaled once (a second copy under the same
/// id, at-least-once publishing's, is a failure too: the journal holds each event once).
fn journal_against(j: &HashMap<Key, Vec<String>>, w: &World, copies: &mut usize) -> Vec<String> {
    let mut problems = Vec::new();
    *copies = 0;
    let (acked, rejected) = settled_punches(w);
    let mut seen = HashSet::new();
    for p in acked {
        let k = key_of(p);
        if !seen.insert(k.clone()) {
            continue;
        }
        let ids = j.get(&k).cloned().unwrap_or_default();
        let distinct: HashSet<&String> = ids.iter().collect();
        if distinct.len() != 1 {
            problems.push(format!(
                "journal: acknowledged punch {k:?} under {} event id(s) {distinct:?}",
                distinct.len()
            ));
        } else if ids.len() > 1 {
            *copies += ids.len() - 1;
            problems.push(format!(
                "journal: acknowledged punch {k:?} journaled {} times",
                ids.len()
            ));
        }
    }
    for p in rejected {
        if j.contains_key(&key_of(p)) {
            problems.push(format!("journal: rejected punch {:?} was journaled", key_of(p)));
        }
    }
    problems
}
