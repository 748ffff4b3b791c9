//! What an `org import` changes, worked out before anything is written: each listed employee's
//! record after the import beside the one before, sorted into new, changed (and which fields),
//! moved, reactivated and unchanged; with `--full`, everyone the file no longer lists who is
//! still employed gets an end date (deactivated). Pure: the caller reads the record and writes
//! the plan, or with `--dry-run` only shows it.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use serde::Serialize;

use crate::domain::people::employment::{Employment, Given};
use crate::domain::people::roster::{Login, Role, RosterRow};

/// Ids listed per category (the counts are always whole).
pub(crate) const LISTED_IDS: usize = 50;

/// An employee as the record holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    pub employee_id: String,
    pub name: String,
    pub department_id: String,
    pub role: Role,
    pub login: Option<String>,
    pub employment: Employment,
    pub active: bool,
}

impl Held {
    /// On the roster and not a leaver on `today` (a joiner whose first day is ahead counts).
    pub(crate) fn current(&self, today: NaiveDate) -> bool {
        self.active && !self.employment.ended_before(today)
    }
}

/// `--full`: the file is the whole roster; whoever it leaves out leaves on `end`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Full {
    pub end: NaiveDate,
}

/// Some ids and how many there are in all.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Listed {
    pub count: u64,
    /// The first [`LISTED_IDS`] ids, in the order met.
    pub ids: Vec<String>,
}

impl Listed {
    fn add(&mut self, id: &str) {
        self.count += 1;
        if self.ids.len() < LISTED_IDS {
            self.ids.push(id.to_string());
        }
    }
}

/// Changed employees, and how many had each field changed.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Changed {
    pub count: u64,
    pub ids: Vec<String>,
    /// Field name -> employees whose field changed (reactivated ones included).
    pub fields: BTreeMap<&'static str, u64>,
}

/// What an import does, by category. Every listed employee is in exactly one of `new`,
/// `changed`, `reactivated` and `unchanged`; `moved` counts those among them whose department
/// changed; `deactivated` those the file (with `--full`) no longer lists.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Summary {
    pub new: Listed,
    pub changed: Changed,
    pub moved: Listed,
    pub reactivated: Listed,
    pub deactivated: Listed,
    pub unchanged: u64,
    pub departments_new: Vec<String>,
    pub departments_renamed: Vec<String>,
}

/// The import worked out: what to write, and what it amounts to.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The record of every new, changed or reactivated employee after the import.
    pub write: Vec<Held>,
    /// Leavers `--full` gives an end date, as the record holds them after.
    pub leave: Vec<Held>,
    /// Joiners `--full` takes off the roster before their first day (`active` cleared).
    pub drop: Vec<String>,
    pub summary: Summary,
}

/// Work the import out. `held`: the record of the listed employees (with `full`, of every
/// employee); `departments`: every department's name as the record holds it; `today`: the
/// company's today by the server's clock. Err: the rows whose dates, once applied to what the
/// record holds, would end before they start (one line).
pub(crate) fn plan(
    rows: &[RosterRow],
    held: &HashMap<String, Held>,
    departments: &HashMap<String, String>,
    full: Option<Full>,
    today: NaiveDate,
) -> Result<Plan, String> {
    let mut p = Plan::default();
    let mut backwards = Vec::new();
    for r in rows {
        let before = held.get(&r.employee_id);
        let after = after_import(r, before, today);
        if let (Some(s), Some(e)) = (after.employment.start, after.employment.end) {
            if e < s {
                backwards.push(format!("{} ({s} to {e})", r.employee_id));
                continue;
            }
        }
        let Some(before) = before else {
            p.summary.new.add(&r.employee_id);
            p.write.push(after);
            continue;
        };
        let fields = changed_fields(before, &after);
        if fields.is_empty() {
            p.summary.unchanged += 1;
            continue;
        }
        for f in &fields {
            *p.summary.changed.fields.entry(f).or_default() += 1;
        }
        if before.department_id != after.department_id {
            p.summary.moved.add(&r.employee_id);
        }
        if !before.current(today) && after.current(today) {
            p.summary.reactivated.add(&r.employee_id);
        } else {
            p.summary.changed.count += 1;
            if p.summary.changed.ids.len() < LISTED_IDS {
                p.summary.changed.ids.push(r.employee_id.clone());
            }
        }
        p.write.push(after);
    }
    if !backwards.is_empty() {
        let n = backwards.len();
        backwards.truncate(5);
        return Err(format!(
            "roster rejected, nothing written: {n} employee(s) would end before they start once the file's dates \
             are applied to the record's: {}",
            backwards.join(", ")
        ));
    }
    if let Some(Full { end }) = full {
        let listed: std::collections::HashSet<&str> = rows.iter().map(|r| r.employee_id.as_str()).collect();
        let mut gone: Vec<&Held> = held
            .values()
            .filter(|h| h.active && !listed.contains(h.employee_id.as_str()))
            .filter(|h| h.employment.end.is_none_or(|e| e > end))
            .collect();
        gone.sort_by(|a, b| a.employee_id.cmp(&b.employee_id));
        for h in gone {
            p.summary.deactivated.add(&h.employee_id);
            if h.employment.start.is_some_and(|s| s > end) {
                p.drop.push(h.employee_id.clone());
            } else {
                let mut left = h.clone();
                left.employment.end = Some(end);
                p.leave.push(left);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        if !seen.insert(r.department_id.as_str()) {
            continue;
        }
        match departments.get(&r.department_id) {
            None => p.summary.departments_new.push(r.department_id.clone()),
            Some(name) if *name != r.department_name => p.summary.departments_renamed.push(r.department_id.clone()),
            Some(_) => {}
        }
    }
    p.summary.departments_new.sort();
    p.summary.departments_renamed.sort();
    Ok(p)
}

/// The record of a listed employee once imported. A column the file leaves out keeps what the
/// record holds, but being listed means being employed: an end date already past is cleared
/// unless the file gives one (a leaver listed again is reactivated).
fn after_import(r: &RosterRow, before: Option<&Held>, today: NaiveDate) -> Held {
    let held = before.map(|b| b.employment).unwrap_or_default();
    let end = match (&r.end_date, held.end) {
        (Given::Keep, Some(e)) if e < today => None,
        (given, held) => given.applied_to(held),
    };
    Held {
        employee_id: r.employee_id.clone(),
        name: r.name.clone(),
        department_id: r.department_id.clone(),
        role: r.role,
        login: match &r.login {
            Login::Keep => before.and_then(|b| b.login.clone()),
            Login::Clear => None,
            Login::Set(l) => Some(l.clone()),
        },
        employment: Employment::new(r.start_date.applied_to(held.start), end),
        active: true,
    }
}

/// The fields that differ, by their roster column's name.
fn changed_fields(a: &Held, b: &Held) -> Vec<&'static str> {
    let mut f = Vec::new();
    let mut check = |differs: bool, name| {
        if differs {
            f.push(name);
        }
    };
    check(a.name != b.name, "name");
    check(a.department_id != b.department_id, "department_id");
    check(a.role != b.role, "role");
    check(a.login != b.login, "login");
    check(a.employment.start != b.employment.start, "start_date");
    check(a.employment.end != b.employment.end, "end_date");
    check(a.active != b.active, "active");
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn row(id: &str, dept: &str) -> RosterRow {
        RosterRow {
            employee_id: id.into(),
            name: format!("N{id}"),
            department_id: dept.into(),
            department_name: format!("S{dept}"),
            role: Role::Employee,
            login: Login::Keep,
            start_date: Given::Keep,
            end_date: Given::Keep,
        }
    }

    fn held(id: &str, dept: &str, end: Option<&str>) -> Held {
        Held {
            employee_id: id.into(),
            name: format!("N{id}"),
            department_id: dept.into(),
            role: Role::Employee,
            login: None,
            employment: Employment::new(None, end.map(d)),
            active: true,
        }
    }

    #[test]
    fn every_listed_employee_falls_in_one_category_and_a_move_is_also_counted() {
        let today = d("2026-12-02");
        let record: HashMap<String, Held> = [
            held("E1", "D1", None),
            held("E2", "D1", None),
            held("E3", "D1", Some("2026-11-30")),
            held("E4", "D2", None),
            held("E5", "D2", Some("2026-12-31")),
        ]
        .into_iter()
        .map(|h| (h.employee_id.clone(), h))
        .collect();
        let depts: HashMap<String, String> = [("D1".into(), "SD1".into()), ("D2".into(), "old".into())].into();
        let mut renamed = row("E2", "D2");
        renamed.name = "Other".into();
        let rows = vec![row("E1", "D1"), renamed, row("E3", "D1"), row("E6", "D3")];
        let p = plan(&rows, &record, &depts, Some(Full { end: today }), today).unwrap();
        let s = &p.summary;
        assert_eq!((s.new.ids.clone(), s.unchanged), (vec!["E6".to_string()], 1));
        assert_eq!(s.changed.ids, vec!["E2"]);
        assert_eq!(s.moved.ids, vec!["E2"]);
        assert_eq!(s.reactivated.ids, vec!["E3"]);
        assert_eq!(s.changed.fields.get("end_date"), Some(&1));
        assert_eq!(s.changed.fields.get("department_id"), Some(&1));
        // E5's end date is later than --full's: brought forward; E4's is set.
        assert_eq!(s.deactivated.ids, vec!["E4", "E5"]);
        let left: Vec<(&str, Option<NaiveDate>)> = p
            .leave
            .iter()
            .map(|h| (h.employee_id.as_str(), h.employment.end))
            .collect();
        assert_eq!(left, vec![("E4", Some(today)), ("E5", Some(today))]);
        assert_eq!(
            (s.departments_new.clone(), s.departments_renamed.clone()),
            (vec!["D3".into()], vec!["D2".into()])
        );
        assert_eq!(p.write.len(), 3);
        // Again, as the record now is: nothing to do.
        let now: HashMap<String, Held> = p.write.iter().map(|h| (h.employee_id.clone(), h.clone())).collect();
        let record: HashMap<String, Held> = record.into_iter().chain(now).collect();
        let again = plan(&rows[..2], &record, &depts, None, today).unwrap();
        assert_eq!((again.summary.unchanged, again.write.len()), (2, 0));
    }

    #[test]
    fn a_joiner_left_out_before_their_first_day_is_dropped_and_dates_may_not_cross() {
        let today = d("2026-12-02");
        let mut joiner = held("E1", "D1", None);
        joiner.employment.start = Some(d("2027-01-04"));
        let record: HashMap<String, Held> = [("E1".to_string(), joiner)].into();
        let p = plan(
            &[row("E2", "D1")],
            &record,
            &HashMap::new(),
            Some(Full { end: today }),
            today,
        )
        .unwrap();
        assert_eq!((p.drop.clone(), p.leave.len()), (vec!["E1".to_string()], 0));
        let mut crossing = row("E1", "D1");
        crossing.end_date = Given::Set(d("2026-12-31"));
        let e = plan(&[crossing], &record, &HashMap::new(), None, today).unwrap_err();
        assert!(e.contains("E1 (2027-01-04 to 2026-12-31)"), "{e}");
    }
}
