//! A day of N employees in M departments, the set-up most tests start from: made by the real
//! binary's steps (`migrate`, `org generate`, `org import`, `init-day`, `simulate`), with the
//! argument lists the benchmarks use too (`examples/common/steps.rs`).

use std::path::PathBuf;

use super::steps::{self, Company};
use super::TestEnv;

/// What [`TestEnv::day`] sets up: a generated roster of `employees` in `departments`, imported,
/// and a day laid out if [`Day::init_day`] says which.
pub struct Day {
    employees: u32,
    departments: u32,
    import_flags: &'static [&'static str],
    init_day: Option<(String, &'static [&'static str])>,
}

impl Day {
    pub fn new(employees: u32, departments: u32) -> Day {
        Day {
            employees,
            departments,
            import_flags: &[],
            init_day: None,
        }
    }

    /// Flags after `org import ROSTER` (`-q` where a test reads no output).
    pub fn import_flags(mut self, flags: &'static [&'static str]) -> Day {
        self.import_flags = flags;
        self
    }

    /// Also lay out `date` (`init-day --date DATE` and `flags`), after the import.
    pub fn init_day(mut self, date: &str, flags: &'static [&'static str]) -> Day {
        self.init_day = Some((date.to_string(), flags));
        self
    }
}

/// `args` and then `flags`, as one argument list.
fn with<'a>(args: &[&'a str], flags: &[&'a str]) -> Vec<&'a str> {
    [args, flags].concat()
}

impl TestEnv {
    /// A fresh environment (in the company zone `tz`) with `day` set up in it.
    pub fn with_day(tz: &str, day: Day) -> TestEnv {
        let env = TestEnv::new(tz);
        env.day(day);
        env
    }

    /// A fresh environment with a generated roster imported (no day laid out).
    pub fn with_roster(tz: &str, employees: u32, departments: u32) -> TestEnv {
        TestEnv::with_day(tz, Day::new(employees, departments))
    }

    /// Set `day` up in this (not yet migrated) environment, on whatever Redis it uses;
    /// returns the roster file.
    pub fn day(&self, day: Day) -> PathBuf {
        self.migrate();
        let roster = self.roster_file(day.employees, day.departments);
        let company = Company::new(roster.to_str().unwrap(), day.employees, day.departments);
        self.ok(&with(&company.import(), day.import_flags));
        if let Some((date, flags)) = &day.init_day {
            self.init_day(date, flags);
        }
        roster
    }

    /// A generated roster CSV in the test's folder (not imported).
    pub fn roster_file(&self, employees: u32, departments: u32) -> PathBuf {
        let path = self.file("roster.csv", "");
        self.ok(&Company::new(path.to_str().unwrap(), employees, departments).generate());
        path
    }

    /// `init-day --date DATE` and `flags`; requires exit 0 and returns stdout.
    pub fn init_day(&self, date: &str, flags: &[&str]) -> String {
        self.ok(&with(&steps::init_day(date), flags))
    }

    /// The punches of a `phase` (`morning`, `evening`) of `date`, simulated into
    /// `<phase>.csv` in the test's folder.
    pub fn simulate(&self, date: &str, phase: &str) -> PathBuf {
        let out = self.dir.join(format!("{phase}.csv"));
        self.ok(&steps::simulate(date, phase, out.to_str().unwrap()));
        out
    }
}

impl TestEnv {
    /// Write `value` (`i<secs>,o<secs>,...`) as `emp`'s field of `dept`'s live board of `day`,
    /// each token with the unsigned record a check-in of this environment would log beside it
    /// (live punch log): what a test needs to put punches on boards the punch script would not
    /// (a stray, an unknown employee). Settle takes them while no registry key or keyring
    /// asks for signatures; a bare `HSET` of the field alone is a forgery it refuses.
    pub fn logged_board_field(&self, dept: &str, day: &str, emp: &str, value: &str) {
        use redis::Commands;
        let date = super::date(day);
        let tz: chrono_tz::Tz = self.tz.parse().unwrap();
        let start = chrono::TimeZone::from_local_datetime(&tz, &date.and_hms_opt(0, 0, 0).unwrap())
            .earliest()
            .unwrap();
        let keys = self.keys();
        let mut con = self.redis();
        for tok in value.split(',').filter(|t| !t.is_empty()) {
            let (kind, secs) = match tok.strip_prefix('i') {
                Some(s) => ("in", s),
                None => ("out", &tok[1..]),
            };
            let at = start + chrono::Duration::seconds(secs.parse().unwrap());
            let id = format!("logged-{emp}-{tok}");
            let ev: attendance::Event = serde_json::from_value(serde_json::json!({
                "event_id": id, "employee_id": emp, "employee_name": emp, "department_id": dept,
                "kind": kind, "at": at.to_rfc3339(), "work_date": day, "late": false, "early": false,
                "late_minutes": 0, "early_minutes": 0, "changed": true, "source": "test",
                "recorded_at": at.to_utc().to_rfc3339(),
            }))
            .unwrap();
            let record = attendance::record_of(&ev).unwrap();
            let _: () = con.hset(keys.punch_log(dept, date, "live"), &id, record).unwrap();
        }
        let _: () = con.hset(keys.board(dept, date), emp, value).unwrap();
        let _: () = con.sadd(keys.board_days(dept), day).unwrap();
    }
}
