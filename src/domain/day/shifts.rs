//! Work patterns: named shifts, who follows which from when, and the two questions every rule
//! asks of them: for an employee and a date, which shift (and why); for a punch instant, the
//! work date it belongs to (a night shift's punches belong to the date on which it starts).
//! Pure: the table is read from MySQL or from its Redis copy by the callers.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::domain::day::policy::Policy;
use crate::domain::day::shift::{Shift, DEFAULT_SHIFT};
use crate::domain::day::shift_clock::{DayClock, PunchFacts};

/// How long after a night shift's end a punch still belongs to the date the shift started on.
pub(crate) const NIGHT_CUTOFF_HOURS: i64 = 4;

/// Whom an assignment is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scope {
    Department,
    Employee,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Department => "department",
            Scope::Employee => "employee",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Scope> {
        match s {
            "department" | "dept" => Some(Scope::Department),
            "employee" | "emp" => Some(Scope::Employee),
            _ => None,
        }
    }
}

/// One assignment: `target` (a department or an employee id) follows `shift` from `from`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Assignment {
    pub(crate) scope: Scope,
    pub(crate) target: String,
    pub(crate) from: NaiveDate,
    pub(crate) shift: String,
}

/// Why a shift applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub(crate) enum Source {
    /// The employee's own assignment from that date.
    Employee { from: NaiveDate },
    /// Their department's from that date.
    Department { from: NaiveDate },
    /// Nothing assigned: the company policy.
    Default,
}

impl Source {
    pub(crate) fn words(&self) -> String {
        match self {
            Source::Employee { from } => format!("the employee's own assignment from {from}"),
            Source::Department { from } => format!("the department's assignment from {from}"),
            Source::Default => "nothing assigned: the company policy".to_string(),
        }
    }
}

/// Every shift and assignment: the whole table, as MySQL holds it and as Redis copies it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShiftTable {
    pub(crate) shifts: BTreeMap<String, Shift>,
    /// Per department, (from, shift) by date.
    pub(crate) departments: HashMap<String, Vec<(NaiveDate, String)>>,
    /// Per employee, (from, shift) by date.
    pub(crate) employees: HashMap<String, Vec<(NaiveDate, String)>>,
}

/// The latest entry on or before `date` of a list ordered by date.
fn latest(list: Option<&Vec<(NaiveDate, String)>>, date: NaiveDate) -> Option<&(NaiveDate, String)> {
    list?.iter().rev().find(|(from, _)| *from <= date)
}

impl ShiftTable {
    /// A table from its rows (any order).
    pub(crate) fn new(shifts: Vec<Shift>, assignments: Vec<Assignment>) -> ShiftTable {
        let mut t = ShiftTable {
            shifts: shifts.into_iter().map(|s| (s.name.clone(), s)).collect(),
            ..ShiftTable::default()
        };
        for a in assignments {
            t.assign(a);
        }
        t
    }

    /// Add or replace one assignment.
    pub(crate) fn assign(&mut self, a: Assignment) {
        let map = match a.scope {
            Scope::Department => &mut self.departments,
            Scope::Employee => &mut self.employees,
        };
        let list = map.entry(a.target).or_default();
        list.retain(|(from, _)| *from != a.from);
        list.push((a.from, a.shift));
        list.sort();
    }

    /// Whether anything at all is assigned (nothing: everyone follows the policy).
    pub(crate) fn is_empty(&self) -> bool {
        self.departments.is_empty() && self.employees.is_empty()
    }

    /// Every assignment, department ones first, by target and date.
    pub(crate) fn assignments(&self) -> Vec<Assignment> {
        let mut out = Vec::new();
        for (scope, map) in [
            (Scope::Department, &self.departments),
            (Scope::Employee, &self.employees),
        ] {
            let mut targets: Vec<&String> = map.keys().collect();
            targets.sort();
            for t in targets {
                for (from, shift) in &map[t] {
                    out.push(Assignment {
                        scope,
                        target: t.clone(),
                        from: *from,
                        shift: shift.clone(),
                    });
                }
            }
        }
        out
    }

    /// The name of the shift `employee` of `department` follows on `date`, and why.
    pub(crate) fn which(&self, employee: &str, department: &str, date: NaiveDate) -> (&str, Source) {
        if let Some((from, s)) = latest(self.employees.get(employee), date) {
            return (s, Source::Employee { from: *from });
        }
        if let Some((from, s)) = latest(self.departments.get(department), date) {
            return (s, Source::Department { from: *from });
        }
        (DEFAULT_SHIFT, Source::Default)
    }
}

/// The table with the default shift: what every rule asks.
#[derive(Debug, Clone)]
pub(crate) struct Shifts {
    pub(crate) table: ShiftTable,
    pub(crate) default: Shift,
}

impl Shifts {
    pub(crate) fn new(table: ShiftTable, policy: &Policy) -> Shifts {
        Shifts {
            table,
            default: Shift::from_policy(policy),
        }
    }

    /// A shift by name (`default` included); an unknown name (a shift removed since it was
    /// assigned) is the default.
    pub(crate) fn named(&self, name: &str) -> &Shift {
        self.table.shifts.get(name).unwrap_or(&self.default)
    }

    /// The shift an employee follows on `date`, and why.
    pub(crate) fn on(&self, employee: &str, department: &str, date: NaiveDate) -> (&Shift, Source) {
        let (name, why) = self.table.which(employee, department, date);
        (self.named(name), why)
    }

    /// The work date a punch at `at` belongs to: the local date, unless the shift of the day
    /// before crosses midnight, works that day, and `at` is at most [`NIGHT_CUTOFF_HOURS`]
    /// after its end: then the day before (the date the night shift started on).
    #[cfg(test)]
    pub(crate) fn work_date(&self, employee: &str, department: &str, tz: Tz, at: DateTime<Utc>) -> NaiveDate {
        Clocks::new(self, tz).work_date(employee, department, at)
    }

    /// The clock of the shift an employee follows on `date`.
    #[cfg(test)]
    pub(crate) fn clock(&self, employee: &str, department: &str, tz: Tz, date: NaiveDate) -> DayClock {
        DayClock::for_shift(self.on(employee, department, date).0, tz, date)
    }

    /// The facts of a punch at `at`: its work date by the employee's shift, and lateness,
    /// early leave and split by that shift.
    pub(crate) fn facts(&self, employee: &str, department: &str, tz: Tz, at: DateTime<Utc>) -> PunchFacts {
        Clocks::new(self, tz).facts(employee, department, at)
    }

    /// Every shift anyone follows on `date` (the default included when some department or
    /// employee has nothing assigned, which the table cannot rule out, so always).
    pub(crate) fn in_use(&self, date: NaiveDate) -> Vec<&Shift> {
        let mut names: Vec<&str> = vec![DEFAULT_SHIFT];
        for list in self.table.departments.values().chain(self.table.employees.values()) {
            if let Some((_, s)) = latest(Some(list), date) {
                if !names.contains(&s.as_str()) {
                    names.push(s);
                }
            }
        }
        names.into_iter().map(|n| self.named(n)).collect()
    }

    /// When the last shift of `date` ends (of those that work on its week day): settle of the
    /// date waits for it.
    pub(crate) fn last_end(&self, tz: Tz, date: NaiveDate) -> DateTime<Utc> {
        self.in_use(date)
            .into_iter()
            .filter(|s| s.works_on(date))
            .map(|s| DayClock::for_shift(s, tz, date).ends_at())
            .max()
            .unwrap_or_else(|| DayClock::for_shift(&self.default, tz, date).ends_at())
    }
}

/// Shift clocks worked out once per shift and date: a bulk check-in asks for thousands of
/// punches and does the time-zone arithmetic a handful of times.
pub(crate) struct Clocks<'a> {
    shifts: &'a Shifts,
    tz: Tz,
    cache: HashMap<(&'a str, NaiveDate), DayClock>,
}

impl<'a> Clocks<'a> {
    pub(crate) fn new(shifts: &'a Shifts, tz: Tz) -> Clocks<'a> {
        Clocks {
            shifts,
            tz,
            cache: HashMap::new(),
        }
    }

    fn clock(&mut self, shift: &'a Shift, date: NaiveDate) -> DayClock {
        let tz = self.tz;
        *self
            .cache
            .entry((shift.name.as_str(), date))
            .or_insert_with(|| DayClock::for_shift(shift, tz, date))
    }

    /// See [`Shifts::work_date`].
    pub(crate) fn work_date(&mut self, employee: &str, department: &str, at: DateTime<Utc>) -> NaiveDate {
        let local = crate::domain::day::policy::work_date(self.tz, at);
        if self.shifts.table.is_empty() {
            return local;
        }
        let Some(prev) = local.pred_opt() else {
            return local;
        };
        let shifts = self.shifts;
        let (shift, _) = shifts.on(employee, department, prev);
        if shift.crosses_midnight() && shift.works_on(prev) {
            let clock = self.clock(shift, prev);
            if at < clock.ends_at() + Duration::hours(NIGHT_CUTOFF_HOURS) {
                return prev;
            }
        }
        local
    }

    /// The clock of the shift an employee follows on `date`.
    pub(crate) fn on(&mut self, employee: &str, department: &str, date: NaiveDate) -> DayClock {
        let shifts = self.shifts;
        self.clock(shifts.on(employee, department, date).0, date)
    }

    /// See [`Shifts::facts`].
    pub(crate) fn facts(&mut self, employee: &str, department: &str, at: DateTime<Utc>) -> PunchFacts {
        let date = self.work_date(employee, department, at);
        let shifts = self.shifts;
        let shift = shifts.on(employee, department, date).0;
        self.clock(shift, date).facts(at)
    }
}

/// Check a shift's own values: a name, times that differ.
pub(crate) fn check(shift: &Shift) -> Result<(), String> {
    crate::domain::people::roster::check_id("shift name", &shift.name).map_err(|e| e.to_string())?;
    if shift.name == DEFAULT_SHIFT {
        return Err(format!(
            "the shift '{DEFAULT_SHIFT}' is the company policy: set it with config, not here"
        ));
    }
    if shift.start == shift.end {
        return Err("start and end are the same time".into());
    }
    for (what, m) in [
        ("late_grace", shift.late_grace_minutes),
        ("early_grace", shift.early_grace_minutes),
        ("break", shift.break_minutes),
    ] {
        if m > 240 {
            return Err(format!("{what} of {m} minutes is more than 240"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::shift::{days_text, parse_days};
    use chrono::NaiveTime;
    use proptest::prelude::*;

    fn t(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn night() -> Shift {
        Shift {
            name: "night".into(),
            start: t(22, 0),
            end: t(6, 0),
            late_grace_minutes: 10,
            early_grace_minutes: 5,
            work_days: parse_days("mon-sun").unwrap(),
            break_minutes: 30,
            part_time: false,
            split: None,
        }
    }

    fn table() -> Shifts {
        let a = |scope, target: &str, from: &str, shift: &str| Assignment {
            scope,
            target: target.into(),
            from: d(from),
            shift: shift.into(),
        };
        Shifts::new(
            ShiftTable::new(
                vec![night()],
                vec![
                    a(Scope::Department, "D1", "2025-01-01", "night"),
                    a(Scope::Employee, "E2", "2026-11-16", "default"),
                    a(Scope::Employee, "E3", "2026-11-16", "night"),
                ],
            ),
            &Policy::default(),
        )
    }

    #[test]
    fn the_employee_beats_the_department_which_beats_the_default() {
        let s = table();
        assert_eq!(s.on("E1", "D1", d("2026-11-20")).0.name, "night");
        assert_eq!(s.on("E1", "D1", d("2024-12-31")).0.name, "default");
        assert_eq!(s.on("E2", "D1", d("2026-11-15")).0.name, "night");
        let (shift, why) = s.on("E2", "D1", d("2026-11-16"));
        assert_eq!(
            (shift.name.as_str(), why),
            ("default", Source::Employee { from: d("2026-11-16") })
        );
        assert_eq!(s.on("E3", "D9", d("2026-11-15")).1, Source::Default);
        assert_eq!(s.on("E3", "D9", d("2026-11-17")).0.name, "night");
    }

    #[test]
    fn a_night_shifts_punches_belong_to_the_date_it_started() {
        let s = table();
        let tz = chrono_tz::Europe::Paris;
        assert_eq!(
            s.work_date("E1", "D1", tz, at("2026-11-20T21:55:00+01:00")),
            d("2026-11-20")
        );
        assert_eq!(
            s.work_date("E1", "D1", tz, at("2026-11-21T06:10:00+01:00")),
            d("2026-11-20")
        );
        assert_eq!(
            s.work_date("E1", "D1", tz, at("2026-11-21T09:59:00+01:00")),
            d("2026-11-20")
        );
        assert_eq!(
            s.work_date("E1", "D1", tz, at("2026-11-21T10:00:00+01:00")),
            d("2026-11-21")
        );
        // A day shift's punch after midnight is the next date, as always.
        assert_eq!(
            s.work_date("E1", "D2", tz, at("2026-11-21T00:30:00+01:00")),
            d("2026-11-21")
        );
        let f = s.facts("E1", "D1", tz, at("2026-11-21T05:50:00+01:00"));
        assert_eq!((f.work_date, f.secs), (d("2026-11-20"), 29 * 3600 + 50 * 60));
        assert_eq!(f.early_minutes_if_out, 10);
        let f = s.facts("E1", "D1", tz, at("2026-11-20T22:15:00+01:00"));
        assert_eq!(f.late_minutes_if_in, 15);
        assert!(f.secs < f.split, "a check-in by its time");
    }

    #[test]
    fn across_a_dst_change_the_night_shift_is_one_hour_shorter_or_longer() {
        let s = table();
        let tz = chrono_tz::Europe::Paris;
        // 2026-03-28 22:00 to 03-29 06:00 in Paris loses the hour 02:00-03:00: 7 h.
        let c = s.clock("E1", "D1", tz, d("2026-03-28"));
        assert_eq!((c.ends_at() - c.starts_at()).num_hours(), 7);
        // 2026-10-24 22:00 to 10-25 06:00 gains one: 9 h.
        let c = s.clock("E1", "D1", tz, d("2026-10-24"));
        assert_eq!((c.ends_at() - c.starts_at()).num_hours(), 9);
        assert_eq!(c.ends_at(), at("2026-10-25T06:00:00+01:00"));
        assert_eq!(
            s.work_date("E1", "D1", tz, at("2026-10-25T05:59:00+01:00")),
            d("2026-10-24")
        );
    }

    #[test]
    fn settle_waits_for_the_last_shift_of_the_date() {
        let s = table();
        let tz = chrono_tz::UTC;
        assert_eq!(s.last_end(tz, d("2026-11-20")), at("2026-11-21T06:00:00Z"));
        assert_eq!(s.last_end(tz, d("2024-10-20")), at("2024-10-20T18:00:00Z"));
        let none = Shifts::new(ShiftTable::default(), &Policy::default());
        assert_eq!(none.last_end(tz, d("2026-11-20")), at("2026-11-20T18:00:00Z"));
    }

    #[test]
    fn the_default_shift_is_the_policy_exactly() {
        let p = Policy {
            grace_minutes: 7,
            ..Policy::default()
        };
        let tz = chrono_tz::Asia::Tokyo;
        let none = Shifts::new(ShiftTable::default(), &p);
        for s in [
            "2026-11-30T08:59:00+09:00",
            "2026-11-30T17:50:00+09:00",
            "2026-11-30T00:10:00+09:00",
        ] {
            let want = crate::domain::day::shift_clock::classify(&p, tz, at(s));
            assert_eq!(none.facts("E1", "D1", tz, at(s)), want);
            assert_eq!(want.split, 13 * 3600 + 30 * 60);
        }
    }

    #[test]
    fn days_read_as_lists_and_ranges() {
        assert_eq!(days_text(&parse_days("mon-fri").unwrap()), "mon,tue,wed,thu,fri");
        assert_eq!(days_text(&parse_days("sat,mon-tue,sat").unwrap()), "mon,tue,sat");
        assert_eq!(days_text(&parse_days("fri-mon").unwrap()), "mon,fri,sat,sun");
        assert!(parse_days("").is_err());
        assert!(parse_days("mon,funday").is_err());
    }

    proptest! {
        #[test]
        fn every_instant_of_a_night_shift_belongs_to_its_start_date(day in 0i64..730, mins in 0i64..(12 * 60), tzi in 0usize..3) {
            let tz = [chrono_tz::Europe::Paris, chrono_tz::America::New_York, chrono_tz::UTC][tzi];
            let s = table();
            let date = d("2026-01-01") + Duration::days(day);
            let c = s.clock("E1", "D1", tz, date);
            // From the start to the cutoff after the end (8 h + 4 h, give or take a DST hour).
            let t = c.starts_at() + Duration::minutes(mins);
            prop_assume!(t < c.ends_at() + Duration::hours(NIGHT_CUTOFF_HOURS));
            prop_assert_eq!(s.work_date("E1", "D1", tz, t), date);
            let f = s.facts("E1", "D1", tz, t);
            prop_assert_eq!(f.work_date, date);
            prop_assert_eq!(c.start + Duration::seconds(f.secs), t);
        }

        #[test]
        fn a_work_date_is_the_local_date_or_the_one_before(secs in 1_700_000_000i64..1_800_000_000, e in 0usize..3) {
            let tz = chrono_tz::Europe::Paris;
            let s = table();
            let emp = ["E1", "E2", "E3"][e];
            let t = DateTime::from_timestamp(secs, 0).unwrap();
            let local = t.with_timezone(&tz).date_naive();
            let w = s.work_date(emp, "D1", tz, t);
            prop_assert!(w == local || Some(w) == local.pred_opt());
            if w != local {
                prop_assert!(s.on(emp, "D1", w).0.crosses_midnight());
            }
        }
    }
}
