//! One simulated month, day by day: the company's set-up, each day's punches through every
//! channel with faults injected at random, the night's settle, what HR does after it (leave
//! added late, a correction), and the invariants checked after every night.

use std::collections::BTreeSet;
use std::process::{Command, Output};
use std::sync::Arc;

use chrono::{Duration, NaiveDate};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::check;
use super::model::{Emp, Punch, World, TZ};
use super::net::{Fault, Net};
use super::plan::{plan, Channel, Shape};
use super::signing::{self, Signing};
use crate::common::private_mariadb::PrivateMariadb;
use crate::common::TestEnv;

/// The shape of a run.
#[derive(Clone, Debug)]
pub struct Params {
    pub seed: u64,
    pub employees: usize,
    pub departments: usize,
    pub days: usize,
    /// The chance that a command gets a fault injected.
    pub fault_rate: f64,
    /// Run on a RabbitMQ node of the month's own (as root), so that the broker can be killed.
    pub private_broker: bool,
    /// Run on a MariaDB of the month's own, so that MySQL can be killed (else the shared
    /// server, only ever cut or silenced through the month's proxy).
    pub private_mysql: bool,
}

/// What a run saw, for its summary.
#[derive(Default, Debug)]
pub struct Summary {
    pub days: usize,
    pub acked: usize,
    pub held: usize,
    pub faults: Vec<String>,
    pub journal_copies: usize,
    /// Times the private MariaDB was killed (and started again).
    pub mysql_kills: usize,
}

pub(super) struct Month<'a> {
    pub(super) p: &'a Params,
    // Dropped in this order: the private Redis and the proxies go before the environment
    // removes its folder (the Redis's files are in it) and its database.
    pub(super) net: Net,
    pub(super) env: TestEnv,
    /// The private MariaDB (also in `net`, which kills it): kept until after the environment
    /// has dropped its database there.
    _mysql: Option<Arc<PrivateMariadb>>,
    pub(super) sign: Signing,
    pub(super) rng: StdRng,
    pub(super) w: World,
    pub(super) days: Vec<NaiveDate>,
    /// The day being run (index), for every failure message.
    pub(super) day: usize,
    /// The HR employee, mapped to the account the tests run as.
    pub(super) hr: String,
    /// Punches the offline kiosk took and has not replayed yet.
    pub(super) kiosk_queue: Vec<Punch>,
    /// A fault strikes this long into its command at most (a kill or a cut; see
    /// [`Month::attempt_mysql_dies`]).
    kill_within_ms: u64,
    pub(super) summary: Summary,
}

/// A kill or a cut strikes within this long of its command's start.
const FAULT_WITHIN_MS: u64 = 800;

/// Run a month; a failure panics with its seed and day.
pub fn month(p: &Params) -> Summary {
    eprintln!(
        "month: seed {} (ATTENDANCE_MONTH_SEED={} reruns it), {} employees, {} days",
        p.seed, p.seed, p.employees, p.days
    );
    let mut m = Month::new(p);
    for i in 0..m.days.len() {
        m.day = i;
        m.run_day();
    }
    m.summary.days = m.days.len();
    m.summary.mysql_kills = m.net.mysql_kills();
    m.summary.acked = m.w.acked.len();
    m.summary.faults = m
        .net
        .injected
        .iter()
        .map(|(d, f, what, code)| format!("day {d}: {f:?} -> exit {code:?} {what}"))
        .collect();
    m.summary
}

impl<'a> Month<'a> {
    fn new(p: &'a Params) -> Month<'a> {
        let mysql = p.private_mysql.then(|| Arc::new(PrivateMariadb::start()));
        let mut env = TestEnv::new(TZ);
        if let Some(m) = &mysql {
            env.mysql_server = m.server_url();
        }
        let net = Net::start(&env, p.private_broker, mysql.clone());
        let mut rng = StdRng::seed_from_u64(p.seed);
        // The month ends two days ago: the last night shift has long ended.
        let last = env.today() - Duration::days(2);
        let days: Vec<NaiveDate> = (0..p.days as i64).rev().map(|k| last - Duration::days(k)).collect();
        let sign = signing::setup(&env, p.days / 2);
        let mut m = Month {
            p,
            env,
            _mysql: mysql,
            net,
            sign,
            rng: StdRng::seed_from_u64(0),
            w: World::default(),
            days,
            day: 0,
            hr: String::new(),
            kiosk_queue: Vec::new(),
            kill_within_ms: FAULT_WITHIN_MS,
            summary: Summary::default(),
        };
        m.rng = StdRng::seed_from_u64(rng.random());
        m.set_up();
        m
    }

    pub(super) fn fail(&self, what: &str) -> ! {
        panic!(
            "month seed {} (ATTENDANCE_MONTH_SEED={}), day {} ({}): {what}",
            self.p.seed, self.p.seed, self.day, self.days[self.day]
        )
    }

    /// A command of the month signed with the kiosks' key of the day.
    pub(super) fn cmd(&self, args: &[&str]) -> Command {
        self.net
            .cmd(&self.env, &self.sign.ring, self.sign.kiosk(self.day), args)
    }

    /// Run `args` until it exits with one of `ok` (at most five tries), the first try with a
    /// fault drawn from `faults` at the month's fault rate. Returns the accepted output.
    pub(super) fn attempt(&mut self, args: &[&str], faults: &[Fault], ok: &[i32]) -> Output {
        self.attempt_signed(args, faults, ok, None)
    }

    /// [`Month::attempt`], where MySQL dies (with a private MySQL) in one command in `chance`,
    /// besides the faults drawn at the month's rate: the commands that write the record (settle,
    /// a correction, a review's decision) meet a MySQL kill in every short run.
    /// The kill strikes within `within_ms` of the command's start: about as long as the
    /// command takes here, so that it lands in its middle as often as not.
    pub(super) fn attempt_mysql_dies(
        &mut self,
        args: &[&str],
        faults: &[Fault],
        ok: &[i32],
        (chance, within_ms): (f64, u64),
    ) -> Output {
        if self.net.supports(Fault::MysqlKill) && self.rng.random_bool(chance) {
            self.kill_within_ms = within_ms;
            let out = self.attempt_with(args, &[Fault::MysqlKill], ok, None, 1.0);
            self.kill_within_ms = FAULT_WITHIN_MS;
            return out;
        }
        self.attempt(args, faults, ok)
    }

    pub(super) fn attempt_signed(
        &mut self,
        args: &[&str],
        faults: &[Fault],
        ok: &[i32],
        key: Option<std::path::PathBuf>,
    ) -> Output {
        self.attempt_with(args, faults, ok, key, self.p.fault_rate)
    }

    /// Run `args` until it exits with one of `ok` (at most five tries), the first try with a
    /// fault drawn from `faults` in `rate` of the runs.
    fn attempt_with(
        &mut self,
        args: &[&str],
        faults: &[Fault],
        ok: &[i32],
        key: Option<std::path::PathBuf>,
        rate: f64,
    ) -> Output {
        let build = |m: &Month| match &key {
            Some(k) => m.net.cmd(&m.env, &m.sign.ring, k, args),
            None => m.cmd(args),
        };
        let mut last = String::new();
        for n in 0..5 {
            let usable: Vec<Fault> = faults.iter().copied().filter(|f| self.net.supports(*f)).collect();
            let out = if n == 0 && !usable.is_empty() && self.rng.random_bool(rate) {
                let fault = usable[self.rng.random_range(0..usable.len())];
                let delay = self.rng.random_range(0..self.kill_within_ms);
                self.net.inject(fault);
                let c = build(self);
                self.net.run_faulted(self.day, fault, c, delay)
            } else {
                self.net.run(build(self))
            };
            if let Some(code) = out.status.code().filter(|c| ok.contains(c)) {
                let _ = code;
                return out;
            }
            last = format!(
                "exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            // A settle that found the lock of a run its fault cut short, a connection pool
            // that has not noticed the restart yet: a moment, then again.
            std::thread::sleep(std::time::Duration::from_millis(700));
        }
        self.fail(&format!("attendance {args:?} never succeeded: {last}"))
    }

    pub(super) fn ok(&mut self, args: &[&str]) -> String {
        let o = self.attempt(args, &[], &[0]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The company: departments of uneven size, the last on the night shift; one HR employee
    /// (mapped to the account the tests run as: `correct` and `review` act as them); a holiday.
    fn set_up(&mut self) {
        // The suite's rulebook (imported by migrate), with the default replay window: a
        // back-dated punch from a key without replay authority is held.
        let mut migrate = self.cmd(&["migrate"]);
        migrate.envs(crate::common::SUITE_POLICY);
        let o = self.net.run(migrate);
        if !o.status.success() {
            self.fail(&format!("migrate: {}", String::from_utf8_lossy(&o.stderr).trim()));
        }
        self.ok(&[
            "policy",
            "set",
            "policy.replay_window_minutes",
            "15",
            "--from",
            "2000-01-01",
            "--reason",
            "the month's rules",
            "-q",
        ]);
        // The month's keys in its registry (through the month's own stores).
        for (id, public, replay) in self.sign.registry() {
            let mut add = vec!["keys", "add", id, "--public-key", public.to_str().unwrap(), "-q"];
            if replay {
                add.push("--replay");
            }
            self.ok(&add);
        }
        let n = self.p.employees;
        let depts = self.p.departments;
        let me = TestEnv::os_login();
        let mut csv = String::from("employee_id,name,department_id,department_name,role,login\n");
        let mut emps = Vec::new();
        for i in 0..n {
            // Uneven sizes: department k gets a share growing with k.
            let dept = (((i * i) as f64 / (n * n) as f64) * depts as f64) as usize % depts;
            let id = format!("E{:04}", i + 1);
            let first_of_dept = !emps.iter().any(|e: &Emp| e.dept == format!("D{:02}", dept + 1));
            let role = if first_of_dept {
                "supervisor"
            } else if self.hr.is_empty() && dept == 0 {
                self.hr = id.clone();
                "hr"
            } else {
                "employee"
            };
            let login = if role == "hr" { me.as_str() } else { "" };
            csv += &format!("{id},Name {id},D{:02},Dept {},{role},{login}\n", dept + 1, dept + 1);
            emps.push(Emp {
                id,
                dept: format!("D{:02}", dept + 1),
                role,
                night: dept + 1 == depts,
                start: None,
                end: None,
            });
        }
        assert!(!self.hr.is_empty(), "department 1 has an HR employee");
        let f = self.env.file("roster.csv", &csv);
        self.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
        self.w.emps = emps;
        // The night shift, for the last department, from before the month.
        let night = format!("D{depts:02}");
        let shifts = self.env.file(
            "night-shift.csv",
            "name,start,end,late_grace,early_grace,work_days,break,part_time\n\
             night,22:00,06:00,10,5,mon-sun,30,false\n",
        );
        self.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
        let from = (self.days[0] - Duration::days(7)).to_string();
        let a = self.env.file(
            "night-assign.csv",
            &format!("scope,target,from,shift\ndepartment,{night},{from},night\n"),
        );
        self.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
        // A holiday on a weekday past the first day (a month of five days or more has one).
        let weekdays: Vec<NaiveDate> = self.days[1..]
            .iter()
            .copied()
            .filter(|d| chrono::Datelike::weekday(d).num_days_from_monday() < 5)
            .collect();
        if self.days.len() >= 5 && !weekdays.is_empty() {
            let h = weekdays[self.rng.random_range(0..weekdays.len())];
            self.ok(&["calendar", "set", &h.to_string(), "holiday", "--note", "founders' day"]);
            self.w.holidays.insert(h);
        }
    }

    fn run_day(&mut self) {
        let i = self.day;
        let d = self.days[i];
        let ds = d.to_string();
        eprintln!("month: day {i} ({ds})");
        let n = self.days.len();
        // The roster changes a third of the way in: a leaver whose last day is today, and a
        // joiner from tomorrow.
        let change = n / 3;
        if i == change {
            self.roster_change(d);
        }
        if i == change + 1 {
            self.leaver_is_refused(d);
        }
        if i == self.sign.rotation_day {
            self.revoke_retired_key(d);
        }
        self.attempt(
            &["init-day", "--date", &ds, "-q"],
            &[Fault::RedisKill, Fault::RedisCut, Fault::MysqlCut, Fault::MysqlKill],
            &[0],
        );
        // The offline kiosk: department 2's, down for two days from a quarter of the way in,
        // back (and replaying its file, twice) on the third.
        let off_from = n / 4;
        let offline = (off_from..off_from + 2).contains(&i);
        let shape = Shape {
            offline_dept: offline.then_some("D02"),
            hr: &self.hr,
        };
        let plan = plan(&self.w, d, &mut self.rng, &shape);
        for e in &plan.leave_ahead {
            self.ok(&["leave", "add", e, &ds, &ds, "--kind", "annual", "-q"]);
            self.w.leave.insert((e.clone(), d));
        }
        for (e, morning) in &plan.half_ahead {
            let half = if *morning { "morning" } else { "afternoon" };
            self.ok(&["leave", "add", e, &ds, &ds, "--half", half, "--kind", "annual", "-q"]);
            self.w.half_leave.insert((e.clone(), d), *morning);
        }
        self.bulk(&plan.punches);
        self.singles(&plan.punches);
        self.desk(&plan.punches);
        self.void(d, &plan.punches);
        let kiosk: Vec<Punch> = plan
            .punches
            .iter()
            .filter(|p| p.channel == Channel::Kiosk)
            .map(|p| p.punch.clone())
            .collect();
        self.kiosk_queue.extend(kiosk);
        // Two forgeries a month, on the first days that have someone to forge for (a weekend
        // may have no one).
        if self.w.forged.len() < 2 {
            self.forge(d, &plan.absent);
        }
        let mut resettle = BTreeSet::new();
        if i == off_from + 2 || (i == n - 1 && !self.kiosk_queue.is_empty()) {
            resettle = self.kiosk_replay();
        }
        self.settle(d);
        for r in resettle.into_iter().filter(|r| *r != d) {
            self.settle(r);
        }
        // After the night: a sick note for someone who did not come, and a correction.
        let late = plan
            .absent
            .iter()
            .find(|e| !self.w.forged.iter().any(|(f, fd)| f == *e && *fd == d))
            .cloned();
        if let Some(e) = late.filter(|_| self.rng.random_bool(0.6)) {
            // It settles the day's row again: MySQL may die under it.
            self.attempt(
                &["leave", "add", &e, &ds, &ds, "--kind", "sick", "-q"],
                &[Fault::MysqlKill],
                &[0],
            );
            self.w.leave.insert((e, d));
        }
        self.correct(d, &plan.punches);
        // Whatever a fault left in the outboxes goes out now, on a healthy broker.
        self.ok(&["relay", "-q"]);
        let found = check::night(&self.env, &self.net.broker_url(), &self.w);
        self.summary.journal_copies = found.journal_copies;
        eprintln!(
            "month: night {i} checked {} settled rows, {} punch-log entries, {} journaled punches ({} copies)",
            found.rows, found.logged, found.journaled, found.journal_copies
        );
        if !found.problems.is_empty() {
            let shown: Vec<&String> = found.problems.iter().take(25).collect();
            self.fail(&format!(
                "{} invariant(s) broken after the night:\n{}",
                found.problems.len(),
                shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
            ));
        }
    }
}
