//! The month's steps, each through the real binary: the kiosks' bulk files, single check-ins,
//! the front desk's held punches and their review, a void before settle, the offline kiosk's
//! replay, a forged board field, the roster's leaver and joiner, the night's settle and the morning's correction.

use std::collections::BTreeSet;

use chrono::{Duration, NaiveDate};
use rand::RngExt;
use redis::Commands;

use super::model::{local, Emp, Kind, Punch};
use super::net::Fault;
use super::plan::{Channel, Planned};
use super::run::Month;

/// What a check-in may meet: every Redis and broker fault (MySQL is not on its path).
const CHECKIN_FAULTS: &[Fault] = Fault::REDIS_AND_BROKER;

/// A punch as a row of a kiosk file; unlabelled rows leave the kind to the punch's time.
fn row(p: &Punch, labelled: bool, source: &str) -> String {
    let kind = if labelled { p.kind.word() } else { "" };
    format!("{},{kind},{},{source}\n", p.emp, p.at.to_rfc3339())
}

impl Month<'_> {
    /// The day's kiosk files: two kiosks, each file sent once (with a fault, perhaps), and one
    /// sent again whole (a kiosk script retrying: every row a repeat).
    pub(super) fn bulk(&mut self, punches: &[Planned]) {
        let mut files = [String::new(), String::new()];
        let mut sent = Vec::new();
        for p in punches {
            if let Channel::Bulk { labelled } = p.channel {
                let k = self.rng.random_range(0..2);
                files[k] += &row(&p.punch, labelled, &format!("kiosk-{k}"));
                sent.push(p.punch.clone());
            }
        }
        for (k, rows) in files.iter().enumerate() {
            if rows.is_empty() {
                continue;
            }
            let f = self.env.file(
                &format!("kiosk-{k}.csv"),
                &format!("employee_id,kind,at,source\n{rows}"),
            );
            let args = ["checkin", "--file", f.to_str().unwrap(), "-q"];
            self.attempt(&args, CHECKIN_FAULTS, &[0]);
            if k == 0 {
                self.attempt(&args, &[], &[0]);
            }
        }
        self.w.acked.extend(sent);
    }

    pub(super) fn singles(&mut self, punches: &[Planned]) {
        for p in punches {
            let Channel::Single { labelled } = p.channel else {
                continue;
            };
            let at = p.punch.at.to_rfc3339();
            let mut args = vec!["checkin", p.punch.emp.as_str(), "--at", at.as_str(), "--json"];
            if labelled {
                args.extend(["--kind", p.punch.kind.word()]);
            }
            let o = self.attempt(&args, CHECKIN_FAULTS, &[0]);
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            if v["status"] != "applied" || v["kind"] != p.punch.kind.word() {
                self.fail(&format!("checkin {args:?} answered {v}"));
            }
            self.w.acked.push(p.punch.clone());
        }
    }

    /// The front desk's back-dated punches: held (exit 7), then decided by HR.
    pub(super) fn desk(&mut self, punches: &[Planned]) {
        for p in punches {
            let Channel::Desk { approve } = p.channel else { continue };
            let at = p.punch.at.to_rfc3339();
            let args = [
                "checkin",
                p.punch.emp.as_str(),
                "--kind",
                p.punch.kind.word(),
                "--at",
                at.as_str(),
                "--json",
            ];
            let desk = self.sign.desk.clone();
            let o = self.attempt_signed(&args, &[], &[7], Some(desk));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let id = v["review_id"]
                .as_u64()
                .unwrap_or_else(|| self.fail(&format!("held: {v}")))
                .to_string();
            self.summary.held += 1;
            if approve {
                self.attempt_mysql_dies(
                    &["review", "approve", &id, "--reason", "desk entry checked"],
                    &[Fault::BrokerCut],
                    &[0],
                    (0.3, 150),
                );
                self.w.acked.push(p.punch.clone());
            } else {
                self.attempt_mysql_dies(
                    &["review", "reject", &id, "--reason", "not on site"],
                    &[],
                    &[0],
                    (0.3, 150),
                );
                self.w.rejected.push(p.punch.clone());
            }
        }
    }

    /// HR voids one of the day's punches before settle, half the days (a colleague's badge):
    /// a day worker's punch that a kiosk file or a single check-in recorded, never HR's own, nor
    /// a forged employee's. A broker cut leaves the supervisor's notice pending (exit 0).
    pub(super) fn void(&mut self, d: NaiveDate, punches: &[Planned]) {
        if !self.rng.random_bool(0.5) {
            return;
        }
        let candidates: Vec<Punch> = punches
            .iter()
            .filter(|p| matches!(p.channel, Channel::Bulk { .. } | Channel::Single { .. }))
            .map(|p| p.punch.clone())
            .filter(|p| {
                let e = self.w.emp(&p.emp);
                !e.night && e.id != self.hr && !self.w.forged.contains(&(e.id.clone(), d))
            })
            .collect();
        if candidates.is_empty() {
            return;
        }
        let p = candidates[self.rng.random_range(0..candidates.len())].clone();
        let at = p.at.to_rfc3339();
        self.attempt(
            &[
                "punch",
                "void",
                &p.emp,
                "--at",
                &at,
                "--kind",
                p.kind.word(),
                "--reason",
                "a colleague's badge",
                "-q",
            ],
            &[Fault::BrokerCut],
            &[0],
        );
        eprintln!("month: voided {}'s {} at {at}", p.emp, p.kind.word());
        self.w.voided.push(p);
    }

    /// The rotation day: the old kiosk key is revoked from now on (it may have leaked with a
    /// kiosk sent for repair). Everything it signed before stays valid: the days settled with
    /// it, and their re-settles, keep their punches (the oracle still counts them). A punch
    /// signed with it now is refused (exit 1) and lands nowhere.
    pub(super) fn revoke_retired_key(&mut self, d: NaiveDate) {
        let (id, key) = self.sign.retired();
        let key = key.clone();
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        self.ok(&[
            "keys",
            "revoke",
            id,
            "--at",
            &now,
            "--reason",
            "kiosk sent for repair",
            "-q",
        ]);
        // A second past the revocation: a punch recorded at or after it is refused.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let Some(e) = self
            .w
            .emps
            .iter()
            .find(|e| !e.night && e.employed(d) && e.id != self.hr)
            .map(|e| e.id.clone())
        else {
            return;
        };
        let p = Punch {
            emp: e,
            at: local(d, 7, 1, 1),
            kind: Kind::In,
        };
        let at = p.at.to_rfc3339();
        self.attempt_signed(
            &["checkin", &p.emp, "--kind", "in", "--at", &at, "-q"],
            &[],
            &[1],
            Some(key),
        );
        eprintln!("month: {id} revoked; {}'s punch signed with it refused", p.emp);
        self.w.rejected.push(p);
    }

    /// A raw HSET into a board: someone who did not come is given a colleague's day, with no
    /// signed punch, journal entry or punch log entry behind it.
    pub(super) fn forge(&mut self, d: NaiveDate, absent: &[String]) {
        let mut con = redis::Client::open(self.net.redis_url())
            .unwrap()
            .get_connection()
            .unwrap();
        for x in absent {
            let e = self.w.emp(x).clone();
            if e.night {
                continue;
            }
            let donor = self.w.acked.iter().find(|p| {
                let pe = self.w.emp(&p.emp);
                pe.dept == e.dept && !pe.night && self.w.work_date(p) == d
            });
            let Some(donor) = donor.map(|p| p.emp.clone()) else {
                continue;
            };
            let key = self.env.keys().board(&e.dept, d);
            let value: Option<String> = con.hget(&key, &donor).unwrap();
            let Some(value) = value else { continue };
            let _: () = con.hset(&key, x, &value).unwrap();
            self.w.forged.push((x.clone(), d));
            eprintln!("month: forged {x}'s field on {key} with {donor}'s ({value})");
            return;
        }
    }

    /// The offline kiosk is back: its file of the days it was down is replayed, and then again
    /// (its script did not see the first run's answer). Returns the days its punches are for.
    pub(super) fn kiosk_replay(&mut self) -> BTreeSet<NaiveDate> {
        let punches = std::mem::take(&mut self.kiosk_queue);
        let rows: String = punches.iter().map(|p| row(p, true, "kiosk-offline")).collect();
        let f = self
            .env
            .file("kiosk-offline.csv", &format!("employee_id,kind,at,source\n{rows}"));
        let args = ["checkin", "--file", f.to_str().unwrap(), "--json"];
        self.attempt(&args, CHECKIN_FAULTS, &[0]);
        let o = self.attempt(&args, &[], &[0]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        if v["repeats"].as_u64() != Some(punches.len() as u64) {
            self.fail(&format!("the second replay of {} punches: {v}", punches.len()));
        }
        let days = punches.iter().map(|p| self.w.work_date(p)).collect();
        self.w.acked.extend(punches);
        days
    }

    pub(super) fn settle(&mut self, d: NaiveDate) {
        let ds = d.to_string();
        self.attempt_mysql_dies(&["settle", "--date", &ds, "-q"], &Fault::ALL, &[0], (0.3, 800));
        self.w.settled.insert(d);
    }

    /// A leaver whose last day is `d`, and a joiner from the next day, in one roster import.
    pub(super) fn roster_change(&mut self, d: NaiveDate) {
        let leaver = self
            .w
            .emps
            .iter()
            .find(|e| e.role == "employee" && !e.night && e.dept != "D02" && e.id != self.hr && e.end.is_none())
            .map(|e| e.id.clone());
        let Some(leaver) = leaver else { return };
        let dept = self.w.emp(&leaver).dept.clone();
        let start = d + Duration::days(1);
        let csv = format!(
            "employee_id,name,department_id,department_name,role,start_date,end_date\n\
             {leaver},Name {leaver},{dept},Dept {n},employee,,{d}\n\
             E9001,Name E9001,{dept},Dept {n},employee,{start},\n",
            n = &dept[1..].trim_start_matches('0'),
        );
        let f = self.env.file("roster-change.csv", &csv);
        self.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
        self.w.emps.iter_mut().find(|e| e.id == leaver).unwrap().end = Some(d);
        self.w.emps.push(Emp {
            id: "E9001".into(),
            dept,
            role: "employee",
            night: false,
            start: Some(start),
            end: None,
        });
    }

    /// The day after a leaver's last: their punch is refused and lands nowhere.
    pub(super) fn leaver_is_refused(&mut self, d: NaiveDate) {
        let Some(leaver) = self
            .w
            .emps
            .iter()
            .find(|e| e.end.is_some_and(|x| x < d))
            .map(|e| e.id.clone())
        else {
            return;
        };
        let at = local(d, 8, 55, 0).to_rfc3339();
        self.attempt(&["checkin", &leaver, "--kind", "in", "--at", &at, "-q"], &[], &[1]);
        self.w.rejected.push(Punch {
            emp: leaver,
            at: local(d, 8, 55, 0),
            kind: Kind::In,
        });
    }

    /// HR corrects someone's check-out of the settled day to 18:15 (half the days).
    pub(super) fn correct(&mut self, d: NaiveDate, punches: &[Planned]) {
        if !self.rng.random_bool(0.5) {
            return;
        }
        let worked = |id: &str| {
            let mine: Vec<&Planned> = punches.iter().filter(|p| p.punch.emp == id).collect();
            mine.iter()
                .any(|p| p.punch.kind == Kind::In && matches!(p.channel, Channel::Bulk { .. } | Channel::Single { .. }))
                && mine.iter().any(|p| {
                    p.punch.kind == Kind::Out && matches!(p.channel, Channel::Bulk { .. } | Channel::Single { .. })
                })
        };
        let who = self
            .w
            .emps
            .iter()
            .filter(|e| !e.night && e.id != self.hr && worked(&e.id))
            .filter(|e| !self.w.forged.contains(&(e.id.clone(), d)))
            .map(|e| e.id.clone())
            .next();
        let Some(who) = who else { return };
        let ds = d.to_string();
        // MySQL may die under it: run again, the correction stands once.
        self.attempt_mysql_dies(
            &[
                "correct",
                &who,
                "--date",
                &ds,
                "--out",
                "18:15",
                "--reason",
                "kiosk clock was wrong",
            ],
            &[Fault::MysqlCut],
            &[0],
            (0.3, 150),
        );
        self.w.corrections.insert((who, d), local(d, 18, 15, 0));
    }
}
