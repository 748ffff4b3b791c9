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
