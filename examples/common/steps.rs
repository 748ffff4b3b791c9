//! The argument lists of a day's set-up steps (`migrate`, `org generate`, `org import`,
//! `init-day`, `simulate`): one place for the benchmarks and the tests (which include this file
//! through `#[path]`), so that both build a company and its day with the same commands. Each
//! caller runs the lists its own way (its environment, `-q`, timing); this file runs nothing.
// Each includer uses a part of it: a benchmark lays out no day, a test times no import.
#![allow(dead_code)]

/// The rulebook a benchmark runs under: it replays whole days that are already past, as a kiosk
/// allowed to replay offline punches would (none is held for review, docs/security.md), and
/// those days stay within the back-dating bound (ten years).
pub const POLICY: [(&str, &str); 2] = [
    ("policy.replay_window_minutes", "5270400"),
    ("policy.max_backdate_days", "3660"),
];

/// `policy set` of each of [`POLICY`]'s keys, from long ago: run after `migrate`.
/// (The runners add `-q` to every step, as to `migrate`.)
pub fn rulebook() -> Vec<[&'static str; 8]> {
    POLICY
        .iter()
        .map(|(key, value)| {
            [
                "policy",
                "set",
                key,
                value,
                "--from",
                "2000-01-01",
                "--reason",
                "benchmark",
            ]
        })
        .collect()
}

/// A company of `employees` in `departments`, its roster generated into the file `roster`.
pub struct Company<'a> {
    roster: &'a str,
    employees: String,
    departments: String,
}

impl<'a> Company<'a> {
    pub fn new(roster: &'a str, employees: u32, departments: u32) -> Company<'a> {
        Company {
            roster,
            employees: employees.to_string(),
            departments: departments.to_string(),
        }
    }

    /// `org generate --employees N --departments M -o ROSTER`.
    pub fn generate(&self) -> [&str; 8] {
        [
            "org",
            "generate",
            "--employees",
            &self.employees,
            "--departments",
            &self.departments,
            "-o",
            self.roster,
        ]
    }

    /// `org import ROSTER`.
    pub fn import(&self) -> [&str; 3] {
        ["org", "import", self.roster]
    }

    /// `migrate` and the benchmark's rulebook ([`POLICY`]), then the roster generated and
    /// imported, each step through `run`, which stops at the first error; returns what `run`
    /// gave for the import (a benchmark times it).
    pub fn set_up<T, E>(&self, mut run: impl FnMut(&[&str]) -> Result<T, E>) -> Result<T, E> {
        run(&["migrate"])?;
        for step in rulebook() {
            run(&step)?;
        }
        run(&self.generate())?;
        run(&self.import())
    }
}

/// `init-day --date DATE`.
pub fn init_day(date: &str) -> [&str; 3] {
    ["init-day", "--date", date]
}

/// `simulate --date DATE --phase PHASE -o OUT`: the punches of a morning or an evening.
pub fn simulate<'a>(date: &'a str, phase: &'a str, out: &'a str) -> [&'a str; 7] {
    ["simulate", "--date", date, "--phase", phase, "-o", out]
}

/// The same with `--absent-pct 0`: every employee comes in.
pub fn simulate_everyone<'a>(date: &'a str, phase: &'a str, out: &'a str) -> [&'a str; 9] {
    [
        "simulate",
        "--date",
        date,
        "--phase",
        phase,
        "--absent-pct",
        "0",
        "-o",
        out,
    ]
}
