//! The day benchmark: a 100,000-employee, 500-department day on the local services, each step's
//! figure printed beside a reference measured in the same run on the same machine.
//!
//! cargo build --release --bins --examples && target/release/examples/bench [--employees N] [--departments N] [--runs N]
//!
//! It uses its own namespace (`bench`, or `--tag NAME`) and database (`attendance_<namespace>`),
//! which it resets first, and writes the figures to `bench-results/<namespace>.md` as well as the
//! screen. Every step is then compared with BENCHMARKS.md's first table (the latest full run),
//! and each one more than 20% worse is named; `--record` makes this run that first table, with
//! its date, commit and load average, the previous one kept below it.
//!
//! On a Redis Cluster: `ATTENDANCE_REDIS_URL=redis+cluster://host:port,host:port ...`
//! (`redis-benchmark --cluster` on the first seed node gives the reference figures); it then
//! uses the namespace `benchc` and the database `attendance_benchc`, so that a single-node run
//! at the same time on the same MySQL and RabbitMQ does not collide with it.

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

#[path = "common/amqp_refs.rs"]
mod amqp_refs;
#[path = "common/args.rs"]
mod args;
#[path = "common/mysql_refs.rs"]
mod mysql_refs;
#[path = "common/peak.rs"]
mod peak;
#[path = "common/process_steps.rs"]
mod process_steps;
#[path = "common/quiet.rs"]
mod quiet;
#[path = "common/record.rs"]
mod record;
#[path = "common/redis_refs.rs"]
mod redis_refs;
#[path = "common/shift_steps.rs"]
mod shift_steps;
#[path = "common/signing_steps.rs"]
mod signing_steps;
#[path = "common/steps.rs"]
mod steps;
#[path = "common/teardown.rs"]
mod teardown;

use std::path::PathBuf;

use amqp_refs::{broker_reference, purge};
use args::arg;
use redis_refs::{benchmark_target, delete_pattern, evalsha_stats, redis_benchmark};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use steps::Company;

use anyhow::{bail, Context, Result};
use attendance::Keys;
use attendance::PunchRow as Row;
use attendance::{Config, Overrides};
use attendance::{Punch, PunchRules};

struct Bench {
    bin: PathBuf,
    cfg: Config,
    dir: PathBuf,
    lines: Vec<String>,
    /// How long each timed step waited for the local broker to go idle first.
    quiet_waits: Vec<(&'static str, Duration)>,
    /// BENCHMARKS.md's latest run, and each step of this one beside it.
    record: record::Record,
    compared: Vec<(String, record::Compared)>,
    started: chrono::DateTime<chrono::Utc>,
    /// The machine's load averages when the run began: a busy machine explains a slow step.
    load_before: String,
}

/// How far back the benchmark's punches may be dated, in the binary (as an environment
/// variable) and in the files it parses itself (`backdating`).
const BACKDATE_DAYS: &str = "366";

/// The policy the benchmark's own parsing of its punch files uses: its days are past days.
fn backdating() -> attendance::Policy {
    attendance::Policy {
        max_backdate_days: BACKDATE_DAYS.parse().expect("a number of days"),
        ..Default::default()
    }
}

/// Which way a step's headline figure improves: throughputs against Redis's own are better
/// higher, every time, ratio and size better lower.
fn better(step: &str) -> record::Better {
    if step.starts_with("board alone") || step.contains("broker away") || step.contains("check-in processes") {
        record::Better::Higher
    } else {
        record::Better::Lower
    }
}

/// Where the record is: BENCHMARKS.md at the top of the checkout the benchmark runs from.
const RECORD: &str = "BENCHMARKS.md";

/// The `n` most recent work days (Monday to Friday) before today, newest first.
fn past_work_days(n: usize) -> Vec<String> {
    use chrono::Datelike;
    let mut d = chrono::Utc::now().date_naive();
    let mut days = Vec::with_capacity(n);
    while days.len() < n {
        d = d.pred_opt().expect("a date before");
        if d.weekday().number_from_monday() <= 5 {
            days.push(d.format("%Y-%m-%d").to_string());
        }
    }
    days
}

impl Bench {
    /// Let the local broker finish what the previous step left it to do (see `quiet.rs`)
    /// before `step` is timed, so that no step is timed against the last one's leftovers.
    fn quiet(&mut self, step: &'static str) {
        if let Some(waited) = quiet::wait_for_quiet_broker(Duration::from_secs(120)) {
            self.quiet_waits.push((step, waited));
        }
    }

    fn cmd(&self) -> Command {
        let mut c = args::command(&self.bin, &self.cfg);
        // The benchmark's days are past days: the rulebook's back-dating limit (`steps::POLICY`)
        // keeps them in.
        c.env("ATTENDANCE_TIMEZONE", self.cfg.timezone.name());
        c
    }

    /// Run the binary; fail on a non-zero exit. Returns the wall time.
    fn run(&self, args: &[&str]) -> Result<Duration> {
        self.run_with(&[], args)
    }

    /// The same, with extra environment variables.
    fn run_with(&self, env: &[(&str, &str)], args: &[&str]) -> Result<Duration> {
        let t = Instant::now();
        let mut c = self.cmd();
        c.envs(env.iter().copied());
        let o = c.args(args).arg("-q").stdout(Stdio::null()).output()?;
        let d = t.elapsed();
        if !o.status.success() {
            bail!("attendance {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        }
        Ok(d)
    }

    /// Run the binary and watch its peak resident memory (`VmHWM`, read until it exits).
    /// Returns the wall time and the peak in MB.
    fn run_peak(&self, args: &[&str]) -> Result<(Duration, f64)> {
        let mut cmd = self.cmd();
        cmd.args(args).arg("-q");
        let (status, d, peak_mb, err) = peak::run_peak(cmd)?;
        if !status.success() {
            bail!("attendance {args:?} failed: {err}");
        }
        Ok((d, peak_mb))
    }

    fn report(&mut self, step: &str, figure: String, reference: String, target: &str) {
        let line = format!("| {step} | {figure} | {reference} | {target} |");
        println!("{line}");
        self.lines.push(line);
        // The waits are not figures: how long the broker took to go idle says nothing of us.
        let compared = (!step.starts_with("waits")).then(|| self.record.compare(step, &figure, better(step)));
        if let Some(c) = compared.flatten() {
            self.compared.push((step.to_string(), c));
        }
    }
}

/// Wall times of `runs` runs of a process: (median, p99) in milliseconds.
fn process_times(runs: usize, mut make: impl FnMut() -> Command) -> Result<(f64, f64)> {
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        v.push(time_one(make())?);
    }
    Ok(percentiles(&mut v))
}

/// Wall time of one run of a process, in milliseconds.
fn time_one(mut c: Command) -> Result<f64> {
    let t = Instant::now();
    let o = c.stdout(Stdio::null()).stderr(Stdio::piped()).output()?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    if !o.status.success() {
        bail!("process failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(ms)
}

/// A `redis-cli PING` process: the reference of every process figure.
fn ping() -> Command {
    let mut c = Command::new("redis-cli");
    c.args(["-h", "127.0.0.1", "PING"]);
    c
}

fn percentiles(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}

/// `used_memory` of the node, or summed over the masters of a cluster.
fn used_memory(con: &mut impl redis::ConnectionLike) -> Result<u64> {
    attendance::info_texts(con, "memory")?
        .iter()
        .map(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .context("INFO memory has no used_memory")
        })
        .sum()
}

/// Bytes held by the keys matching a pattern (MEMORY USAGE, exact).
fn keys_memory(con: &mut impl attendance::Keyspace, pattern: &str) -> Result<(usize, u64)> {
    let keys = con.scan_keys(pattern)?;
    let mut total = 0u64;
    for k in &keys {
        let n: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(k)
            .arg("SAMPLES")
            .arg(0)
            .query(con)?;
        total += n.unwrap_or(0);
    }
    Ok((keys.len(), total))
}

/// Notification latency: from a `checkin` process's start and return to its event line from a
/// `watch-dept --json` process that follows the department's queue, each check-in followed by a
/// `redis-cli PING` process (the reference). Also how many events reached the consumer before
/// the check-in process had even exited.
fn notification_latency(b: &Bench, dept: &str, ids: &[String], runs: usize) -> Result<Latency> {
    use std::collections::HashMap;
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;

    let mut watcher = b
        .cmd()
        .args(["watch-dept", dept, "--json", "-q"])
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = watcher.stdout.take().context("watch-dept has no stdout")?;
    let (tx, rx) = mpsc::channel::<(String, Instant)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let id = serde_json::from_str::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v["event_id"].as_str().map(str::to_string))
                .unwrap_or_default();
            if tx.send((id, Instant::now())).is_err() {
                break;
            }
        }
    });
    // Let the watcher empty the queue of the day's earlier events first.
    while rx.recv_timeout(Duration::from_secs(2)).is_ok() {}
    let mut returned: HashMap<String, (Instant, Instant)> = HashMap::new();
    let mut arrived: HashMap<String, Instant> = HashMap::new();
    let mut pings = Vec::with_capacity(runs);
    for i in 0..runs {
        let spawned = Instant::now();
        let o = b.cmd().args(["checkin", &ids[i % ids.len()], "--json"]).output()?;
        let done = Instant::now();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).context("checkin --json")?;
        if let Some(id) = v["event_id"].as_str() {
            returned.insert(id.to_string(), (spawned, done));
        }
        // The reference, alternating with the check-ins: the machine's noise falls on both.
        pings.push(time_one(ping())?);
        while let Ok((id, t)) = rx.try_recv() {
            arrived.insert(id, t);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while arrived.len() < returned.len() && Instant::now() < deadline {
        if let Ok((id, t)) = rx.recv_timeout(Duration::from_millis(200)) {
            arrived.insert(id, t);
        }
    }
    watcher.kill().ok();
    watcher.wait().ok();
    let mut early = 0;
    let (mut from_return, mut from_spawn): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for (id, (spawned, done)) in &returned {
        let Some(t) = arrived.get(id) else { continue };
        from_spawn.push(t.duration_since(*spawned).as_secs_f64() * 1000.0);
        match t.checked_duration_since(*done) {
            Some(d) => from_return.push(d.as_secs_f64() * 1000.0),
            None => {
                early += 1;
                from_return.push(0.0);
            }
        }
    }
    if from_return.len() < returned.len() {
        bail!(
            "only {} of {} events reached watch-dept",
            from_return.len(),
            returned.len()
        );
    }
    Ok(Latency {
        from_return: percentiles(&mut from_return),
        from_spawn: percentiles(&mut from_spawn),
        spawn_ms: from_spawn,
        ping: percentiles(&mut pings),
        early,
    })
}

/// A `relay --follow` process for the hand-off figures, stopped (SIGTERM, so it deletes its
/// heartbeat) when dropped, also when a step fails.
struct RelayProcess(std::process::Child);

impl RelayProcess {
    /// Start it and wait until its heartbeat is in Redis (check-ins hand off from then on).
    fn start(b: &Bench) -> Result<RelayProcess> {
        let child = b
            .cmd()
            .args(["relay", "--follow", "-q"])
            .stdout(Stdio::null())
            .spawn()?;
        let relay = RelayProcess(child);
        let mut con = attendance::Redis::open(&b.cfg)?;
        let beat = Keys::new(&b.cfg.namespace).relay_heartbeat();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !redis::Commands::exists::<_, bool>(&mut con, &beat)? {
            if Instant::now() > deadline {
                bail!("the relay wrote no heartbeat within 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(relay)
    }
}

impl Drop for RelayProcess {
    fn drop(&mut self) {
        // SAFETY: a signal to our own child process.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        if self.0.wait().is_err() {
            let _ = self.0.kill();
        }
    }
}

/// Notification latency, (p50, p99) in ms.
struct Latency {
    from_return: (f64, f64),
    from_spawn: (f64, f64),
    /// Every sample from the check-in's start, sorted.
    spawn_ms: Vec<f64>,
    /// `redis-cli PING` processes run between the check-ins.
    ping: (f64, f64),
    /// Events the consumer had before the check-in process exited.
    early: usize,
}

/// Namespace `bench` and database `attendance_bench`, or `benchc` and `attendance_benchc` on a
/// Redis Cluster, so that the two kinds of run never meet on the shared MySQL and RabbitMQ.
/// `--tag NAME` gives a run a namespace and database of its own, so that two runs at once
/// on the same services never reset each other's.
fn tag() -> &'static str {
    let on_cluster = std::env::var("ATTENDANCE_REDIS_URL").is_ok_and(|u| u.starts_with("redis+cluster://"));
    let default = if on_cluster { "benchc" } else { "bench" };
    args::tag(default)
}

/// The benchmark's configuration: its namespace and database (see [`tag`]).
fn config() -> Result<Config> {
    let tag = tag();
    let mut cfg = Config::load(&Overrides {
        namespace: Some(tag.into()),
        timezone: std::env::var("ATTENDANCE_TIMEZONE")
            .ok()
            .or(Some("Europe/Paris".into())),
        ..Default::default()
    })?;
    cfg.mysql_url = format!("{}attendance_{tag}", cfg.mysql_server_url());
    Ok(cfg)
}

/// Leave the shared services as found: every key, queue, exchange and the database the run
/// made (a day of events alone is a lot of memory in the broker).
fn cleanup(departments: u32) -> Result<()> {
    teardown::remove_run(&config()?, tag(), departments)
}

/// `--cleanup` only removes what an earlier run (killed, say) left behind.
/// `--only latency` runs the company's import and the notification latency steps alone;
/// `--only shifts` a day without and a day with shifts (`--shifts N`); `--only processes` the
/// morning peak as single check-in processes (`--processes N`, `--parallel P`).
fn main() -> Result<()> {
    let departments = arg("--departments", 500)?;
    let only = match args::text("--only")? {
        None => None,
        Some(step @ ("latency" | "signing" | "shifts" | "settle" | "processes")) => Some(step),
        Some(other) => {
            bail!("--only: '{other}' is not a step this benchmark can run alone (latency, signing, shifts, settle, processes)")
        }
    };
    // Also after a failure: a 1M run leaves 5,000 queues and a few hundred MB behind.
    args::run_then_cleanup(
        || match only {
            Some("latency") => run_latency(departments),
            Some("shifts") => run_shifts(departments),
            Some("settle") => run_settle(departments),
            Some("processes") => run_processes(departments),
            Some(_) => run_signing(departments),
            None => run(departments),
        },
        || cleanup(departments),
    )
}

/// The benchmark's state, on a namespace and database reset first; the table's header printed.
fn start(employees: u32, departments: u32) -> Result<Bench> {
    let bin = args::binary()?;
    let cfg = config()?;
    let dir = PathBuf::from("bench-results");
    std::fs::create_dir_all(&dir)?;
    let mut b = Bench {
        bin,
        cfg,
        dir,
        lines: Vec::new(),
        quiet_waits: Vec::new(),
        record: record::Record::read(std::path::Path::new(RECORD)),
        compared: Vec::new(),
        started: chrono::Utc::now(),
        load_before: record::load(),
    };
    // What an earlier run left (a day of events would pile up in the broker run after run).
    cleanup(departments)?;
    let title = format!(
        "# attendance day benchmark: {employees} employees, {departments} departments ({})",
        b.bin.display()
    );
    println!("{title}");
    println!("| step | figure | reference (same run) | target |");
    println!("| --- | --- | --- | --- |");
    b.lines.push(format!("{title}\n"));
    b.lines
        .push("| step | figure | reference (same run) | target |\n| --- | --- | --- | --- |".into());
    Ok(b)
}

/// The figures, also to `bench-results/<namespace>.md`.
fn write_figures(b: &mut Bench) -> Result<()> {
    if !b.quiet_waits.is_empty() {
        let waits: Vec<String> = b
            .quiet_waits
            .iter()
            .map(|(step, d)| format!("{step} {:.1} s", d.as_secs_f64()))
            .collect();
        b.report(
            "waits for the local broker to go idle before a timed step (not in any figure)",
            waits.join(", "),
            "under 15% of a core over half a second, 120 s at most".into(),
            "-",
        );
    }
    let out = b.dir.join(format!("{}.md", tag()));
    std::fs::write(&out, b.lines.join("\n") + "\n")?;
    println!("\nfigures written to {}", out.display());
    compare_with_record(b);
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--record") && args.iter().any(|a| a == "--only") {
        println!("--record: only a full run becomes the record (this one ran --only)");
    } else if args.iter().any(|a| a == "--record") {
        let block = format!(
            "Run of {} UTC, commit {}, load average before the run {} (1, 5, 15 min); the command:\n\n\
             ```sh\ncargo build --release --bins --examples && target/release/examples/bench --record\n```\n\n{}\n",
            b.started.format("%Y-%m-%d %H:%M"),
            record::commit(),
            b.load_before,
            b.lines[1..].join("\n")
        );
        record::record(std::path::Path::new(RECORD), &block)?;
        println!("{RECORD}: this run is now its first table, the previous one below it");
    }
    Ok(())
}

/// Every step beside BENCHMARKS.md's record, and the ones more than 20% worse named last.
fn compare_with_record(b: &Bench) {
    if b.compared.is_empty() {
        println!("\nno step to compare: {RECORD} has no table with these steps");
        return;
    }
    println!("\ncompared with {RECORD}'s latest run ({}):", b.record.dated);
    for (step, c) in &b.compared {
        println!("- {step}: {c}");
    }
    let worse: Vec<&str> = b
        .compared
        .iter()
        .filter(|(_, c)| c.worse)
        .map(|(s, _)| s.as_str())
        .collect();
    if worse.is_empty() {
        println!(
            "no step more than 20% worse than the record ({} compared)",
            b.compared.len()
        );
    } else {
        println!(
            "{} step(s) MORE THAN 20% WORSE than the record: {}",
            worse.len(),
            worse.join("; ")
        );
    }
}

/// `--only latency`: the company imported, then the notification latency steps (each check-in
/// is then the employee's first punch of the day). Minutes less than the whole day.
fn run_latency(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let runs = arg("--runs", 300)? as usize;
    let mut b = start(employees, departments)?;
    org_steps(&mut b, employees, departments)?;
    let roster = attendance::parse_roster(std::fs::File::open(b.dir.join("roster.csv"))?)?;
    let staff = roster
        .iter()
        .map(|r| (r.department_id.as_str(), r.employee_id.as_str()));
    b.quiet("the latency");
    latency_steps(&mut b, runs, staff)?;
    write_figures(&mut b)
}

/// `--only processes`: the company imported, then `--processes N` (20,000) check-in processes,
/// `--parallel P` (64) at a time, with a relay running, beside PING processes run the same way.
fn run_processes(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let mut b = start(employees, departments)?;
    org_steps(&mut b, employees, departments)?;
    processes(&mut b)?;
    write_figures(&mut b)
}

/// The check-in processes step with its arguments.
fn processes(b: &mut Bench) -> Result<()> {
    let n = arg("--processes", 20_000)? as usize;
    process_steps::process_steps(b, n, arg("--parallel", 64)?.max(1) as usize)
}

/// `--only signing`: the company imported, then what signing costs (bulk and single check-ins
/// with an Ed25519 key and with an HMAC secret, side by side).
fn run_signing(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let runs = arg("--runs", 300)? as usize;
    let mut b = start(employees, departments)?;
    org_steps(&mut b, employees, departments)?;
    signing_steps::signing_steps(&mut b, runs, arg("--pairs", 5)? as usize)?;
    write_figures(&mut b)
}

/// `--only shifts`: the company imported, then a day without shifts and a day with
/// `--shifts N` (default 5) shifts, side by side (init-day, bulk check-ins, settle, single
/// check-ins).
fn run_shifts(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let runs = arg("--runs", 100)? as usize;
    let mut b = start(employees, departments)?;
    org_steps(&mut b, employees, departments)?;
    shift_steps::shift_steps(&mut b, arg("--shifts", 5)?.max(1), runs)?;
    write_figures(&mut b)
}

/// `--only settle`: the company imported, a day laid out, its morning and evening checked in
/// (untimed), then the night as the whole run times it.
fn run_settle(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let mut b = start(employees, departments)?;
    let mut con = attendance::Redis::open(&b.cfg)?;
    org_steps(&mut b, employees, departments)?;
    let days = past_work_days(1);
    let (morning, evening, before) = day_steps(&mut b, &mut con, &days[0], employees)?;
    b.run(&["checkin", "--file", morning.to_str().expect("utf-8")])?;
    b.run(&["checkin", "--file", evening.to_str().expect("utf-8")])?;
    night(&mut b, &mut con, &days[0], employees, before)?;
    write_figures(&mut b)
}

fn run(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let runs = arg("--runs", 300)? as usize;
    let mut b = start(employees, departments)?;
    let keys = Keys::new(&b.cfg.namespace);
    let mut con = attendance::Redis::open(&b.cfg)?;

    let target = benchmark_target(&b.cfg);
    let hset = redis_benchmark(&target, &[])?;
    let hset_p16 = redis_benchmark(&target, &["-P", "16"])?;
    // redis-benchmark leaves its key behind (with a hash tag on a cluster).
    delete_pattern(&mut con, "myhash*")?;
    let href = format!("redis-benchmark HSET: {hset:.0}/s (50 clients), {hset_p16:.0}/s (-P 16)");

    org_steps(&mut b, employees, departments)?;

    // Past work days, so that every punch is in the past, counted back from today: fixed dates
    // fall out of the back-dating window as the calendar moves (this benchmark once measured
    // zero punches that way). The first is the day's; the others are the journal's.
    let days = past_work_days(5);
    let day = days[0].as_str();
    let (morning, evening, before) = day_steps(&mut b, &mut con, day, employees)?;

    // The board alone: the same script, pipelined, no publish, on another day's keys.
    let (rows, _) = attendance::parse_punch_file(
        std::fs::File::open(&morning)?,
        &attendance::PunchWindow::new(&backdating(), chrono_tz::UTC, chrono::Utc::now()),
    )?;
    let ids: Vec<&str> = rows.iter().map(|r| r.employee_id.as_str()).collect();
    let known = attendance::resolve(&b.cfg, &mut attendance::Board::open(&b.cfg)?, &ids)?;
    board_alone(&mut b, &mut con, &rows, &known, (hset, &href))?;

    let depts = bulk_steps(&mut b, &morning, &evening, &rows, &known, &href)?;

    night(&mut b, &mut con, day, employees, before)?;

    journal_figures(&mut b, &mut con, &keys, &depts, &days[1..])?;

    b.quiet("the single processes");
    single_processes(&mut b, runs, &rows)?;

    let staff = known.values().map(|e| (e.department_id.as_str(), e.id.as_str()));
    b.quiet("the latency");
    latency_steps(&mut b, runs.min(200), staff)?;
    processes(&mut b)?;
    // Last: it registers an Ed25519 key, and from then on consumers refuse unsigned events (the
    // latency step's watch-dept saw none of its 200 when it ran after this one).
    signing_steps::signing_steps(&mut b, runs.min(200), arg("--pairs", 3)? as usize)?;
    write_figures(&mut b)
}

/// Lay out the day and simulate its morning and evening; returns the two punch files and
/// Redis's used memory before the layout.
fn day_steps(b: &mut Bench, con: &mut attendance::Redis, day: &str, employees: u32) -> Result<(PathBuf, PathBuf, u64)> {
    let before = used_memory(con)?;
    let (t, peak_mb) = b.run_peak(&steps::init_day(day))?;
    b.report(
        "init-day (boards; the day's department queues looked up, the missing ones declared)",
        format!("{:.3} s; peak RSS {peak_mb:.0} MB", t.as_secs_f64()),
        "-".into(),
        if employees >= 1_000_000 {
            "<= 3 s at 1M"
        } else {
            "<= 1 s"
        },
    );

    let morning = b.dir.join("morning.csv");
    let evening = b.dir.join("evening.csv");
    b.run(&steps::simulate(day, "morning", morning.to_str().expect("utf-8")))?;
    b.run(&steps::simulate(day, "evening", evening.to_str().expect("utf-8")))?;
    Ok((morning, evening, before))
}

/// The company: migrate, a generated roster, its import.
fn org_steps(b: &mut Bench, employees: u32, departments: u32) -> Result<()> {
    let roster = b.dir.join("roster.csv");
    let company = Company::new(roster.to_str().expect("utf-8 path"), employees, departments);
    let t = company.set_up(|args| b.run(args))?;
    b.report(
        &format!("org import (declares the {departments} new departments' queues on the fresh namespace)"),
        format!("{:.2} s", t.as_secs_f64()),
        "-".into(),
        "seconds, not minutes",
    );
    Ok(())
}

/// The day's Redis memory, then the night: settle the day, beside MySQL's own bulk paths with
/// the same rows.
fn night(b: &mut Bench, con: &mut attendance::Redis, day: &str, employees: u32, before: u64) -> Result<()> {
    let keys = Keys::new(&b.cfg.namespace);
    let (nb, board_bytes) = keys_memory(
        con,
        &keys.board_pattern(chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")?),
    )?;
    let (no, outbox_bytes) = keys_memory(con, &keys.outbox_pattern())?;
    let after = used_memory(con)?;
    b.report(
        "Redis memory of one day (boards + outboxes)",
        format!(
            "{:.1} MB ({nb} boards {:.1} MB, {no} outboxes {:.1} MB)",
            (board_bytes + outbox_bytes) as f64 / 1e6,
            board_bytes as f64 / 1e6,
            outbox_bytes as f64 / 1e6
        ),
        format!(
            "used_memory {:.1} MB before init-day, {:.1} MB after the day",
            before as f64 / 1e6,
            after as f64 / 1e6
        ),
        "<= 8 MB",
    );

    // The night: settle the day, then MySQL's own bulk paths with the same rows.
    b.quiet("settle");
    let (t, peak_mb) = b.run_peak(&["settle", "--date", day])?;
    let pool = attendance::Db::open(&b.cfg)?;
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")?;
    let (load_s, insert_s) = mysql_refs::references(&pool, date, b.cfg.settle.batch_size)?;
    let (log_s, logged) = mysql_refs::punch_log_reference(&pool, date)?;
    b.report(
        "settle (process: the day's rows and its punch log written, boards deleted)",
        format!(
            "{:.2} s = {:.2}x LOAD DATA; peak RSS {peak_mb:.0} MB",
            t.as_secs_f64(),
            t.as_secs_f64() / (load_s + log_s)
        ),
        format!(
            "LOAD DATA LOCAL INFILE of the same rows and punch log: {:.2} s ({load_s:.2} s the rows, \
             {log_s:.2} s the {logged} punch log rows); multi-row INSERT of the rows: {insert_s:.2} s",
            load_s + log_s
        ),
        if employees >= 1_000_000 {
            "<= 1.3x LOAD DATA; <= 12 s and <= 300 MB at 1M"
        } else {
            "<= 1.3x LOAD DATA"
        },
    );
    Ok(())
}

/// The board alone: the same script, pipelined, no publish, on another day's keys.
fn board_alone(
    b: &mut Bench,
    con: &mut attendance::Redis,
    rows: &[Row],
    known: &std::collections::HashMap<String, attendance::Employee>,
    (hset, href): (f64, &str),
) -> Result<()> {
    let tag = tag();
    let mut other = attendance::Board::open(&attendance::Config {
        namespace: format!("{tag}:alone"),
        ..b.cfg.clone()
    })?;
    let rules = PunchRules::new(&b.cfg.policy, b.cfg.timezone);
    let punches: Vec<Punch> = rows
        .iter()
        .map(|r| {
            let e = known[&r.employee_id].clone();
            Punch::new(e, r.kind, r.at, &r.source, &b.cfg.policy, b.cfg.timezone)
        })
        .collect();
    // Counters read before and after, not reset: a reset would spoil other users' figures.
    let (calls_before, usec_before) = evalsha_stats(con)?;
    let t = Instant::now();
    other.punch_many(rules, &punches, |_| {})?;
    let alone = punches.len() as f64 / t.elapsed().as_secs_f64();
    let (calls, usec) = evalsha_stats(con)?;
    // The counters are server-wide: say when another client's scripts ran meanwhile.
    let ours = attendance::punch_calls(
        &redis::Script::new(attendance::PUNCH_SCRIPT),
        other.keys(),
        rules,
        &punches,
    )
    .len() as u64;
    let others = (calls - calls_before).saturating_sub(ours);
    b.report(
        "board alone (Lua, pipelined, no publish)",
        format!(
            "{alone:.0} punches/s = {:.2}x HSET; Redis spent {:.1} µs of EVALSHA per punch{}",
            alone / hset,
            (usec - usec_before) / punches.len() as f64,
            if others > 0 {
                format!(" (counting {others} EVALSHA calls of other clients)")
            } else {
                String::new()
            }
        ),
        href.to_string(),
        ">= 2x HSET (50 clients)",
    );
    delete_pattern(con, &format!("{tag}:alone:*"))?;
    Ok(())
}
/// The day's two bulk check-ins, end to end, beside RabbitMQ alone; returns the department
/// queues.
fn bulk_steps(
    b: &mut Bench,
    morning: &std::path::Path,
    evening: &std::path::Path,
    rows: &[Row],
    known: &std::collections::HashMap<String, attendance::Employee>,
    href: &str,
) -> Result<Vec<String>> {
    let n = rows.len() as f64;
    b.quiet("the first morning");
    let first = b.run(&["checkin", "--file", morning.to_str().expect("utf-8")])?;
    let t = first;
    b.report(
        "bulk check-in, morning, end to end, first on the fresh namespace (queues declared ahead)",
        format!(
            "{:.2} s for {n} punches = {:.0}/s",
            t.as_secs_f64(),
            n / t.as_secs_f64()
        ),
        href.to_string(),
        "100,000 in <= 4 s",
    );
    // The morning's events wait in the department queues; the reference below purges them.
    let mut depts: Vec<String> = known
        .values()
        .map(|e| format!("{}.dept.{}", b.cfg.namespace, e.department_id))
        .collect();
    depts.sort();
    depts.dedup();
    b.quiet("RabbitMQ alone");
    let broker = broker_reference(&b.cfg, &depts, rows.len(), 420, b.cfg.amqp.confirm_window)?;
    b.quiet("the evening");
    let t = b.run(&["checkin", "--file", evening.to_str().expect("utf-8")])?;
    b.report(
        "bulk check-out, evening, end to end (board, outbox, confirmed publish, outbox cleared)",
        format!("{:.2} s for {n} punches = {:.0}/s", t.as_secs_f64(), n / t.as_secs_f64()),
        format!(
            "RabbitMQ alone, {n} persistent 420-byte messages with confirms (window {}) into the same {} queues: {broker:.0}/s = {:.2} s",
            b.cfg.amqp.confirm_window,
            depts.len(),
            n / broker
        ),
        "100,000 in <= 4 s",
    );
    bulk_ratios(b, first.as_secs_f64(), t.as_secs_f64(), n / broker);
    Ok(depts)
}

/// The bulk against its references: RabbitMQ alone (one publisher), and the first morning
/// against a later bulk. Seconds each.
fn bulk_ratios(b: &mut Bench, first: f64, later: f64, broker: f64) {
    b.report(
        "bulk end to end (the evening) / RabbitMQ alone, one publisher",
        format!("{:.2}x", later / broker),
        format!(
            "{later:.2} s / {broker:.2} s (the bulk publishes on amqp.publishers = {} connections)",
            b.cfg.amqp.publishers
        ),
        "<= 1.0x",
    );
    b.report(
        "first morning on a fresh namespace / a later bulk (the evening)",
        format!("{:.2}x", first / later),
        format!("{first:.2} s / {later:.2} s"),
        "<= 1.1x",
    );
}

/// Single processes, as a kiosk calls them: checkin (publishing itself, then handing off to a
/// running relay) and status, beside a `redis-cli PING` process.
fn single_processes(b: &mut Bench, runs: usize, rows: &[Row]) -> Result<()> {
    // Single processes, as a kiosk calls them.
    let pings = process_times(runs, ping)?;
    let ids: Vec<String> = rows.iter().take(2 * runs).map(|r| r.employee_id.clone()).collect();
    let mut i = 0;
    let checkin = process_times(runs, || {
        let mut c = b.cmd();
        c.args(["checkin", &ids[i % ids.len()], "-q"]);
        i += 1;
        c
    })?;
    let mut i = 0;
    let status = process_times(runs, || {
        let mut c = b.cmd();
        c.args(["status", &ids[i % ids.len()]]);
        i += 1;
        c
    })?;
    let pref = format!(
        "redis-cli PING process: median {:.2} ms, p99 {:.2} ms",
        pings.0, pings.1
    );
    b.report(
        "single checkin process (no relay: it publishes itself)",
        format!("median {:.2} ms, p99 {:.2} ms", checkin.0, checkin.1),
        pref.clone(),
        "median <= 10 ms",
    );
    // The same with a `relay --follow` running: the check-in hands its event over through Redis.
    // Runs alternate with PING processes, so that the machine's noise falls on both alike.
    let relay = RelayProcess::start(b)?;
    let (mut handed, mut near_ping) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for i in 0..runs {
        let mut c = b.cmd();
        c.args(["checkin", &ids[(runs + i) % ids.len()], "-q"]);
        handed.push(time_one(c)?);
        near_ping.push(time_one(ping())?);
    }
    drop(relay);
    let (handed, near_ping) = (percentiles(&mut handed), percentiles(&mut near_ping));
    b.report(
        "single checkin process, relay running (handed off)",
        format!(
            "median {:.2} ms = {:.2}x PING, p99 {:.2} ms",
            handed.0,
            handed.0 / near_ping.0,
            handed.1
        ),
        format!(
            "redis-cli PING process, runs alternating with these: median {:.2} ms, p99 {:.2} ms",
            near_ping.0, near_ping.1
        ),
        "median <= 1.5x PING",
    );
    b.report(
        "single status process",
        format!("median {:.2} ms, p99 {:.2} ms", status.0, status.1),
        pref,
        "median <= 3 ms",
    );
    Ok(())
}

/// The biggest department's supervisor, following its queue: how long a check-in takes to
/// reach it, without and with a running relay. `staff`: (department, employee) pairs.
fn latency_steps<'a>(b: &mut Bench, runs: usize, staff: impl Iterator<Item = (&'a str, &'a str)>) -> Result<()> {
    let mut sizes: std::collections::HashMap<&str, Vec<String>> = std::collections::HashMap::new();
    for (dept, id) in staff {
        sizes.entry(dept).or_default().push(id.to_string());
    }
    let (dept, people) = sizes
        .into_iter()
        .max_by_key(|(_, v)| v.len())
        .context("no department")?;
    let l = notification_latency(b, dept, &people, runs)?;
    let relay = RelayProcess::start(b)?;
    // Other employees: a repeat would make no event.
    let rest: Vec<String> = people.iter().rev().cloned().collect();
    let lr = notification_latency(b, dept, &rest, runs)?;
    drop(relay);
    b.report(
        "notification latency to a watch-dept consumer, relay running (handed off)",
        format!(
            "from the checkin's start: p50 {:.1} ms, p99 {:.1} ms (worst {}); from its return: p50 {:.1} ms, p99 {:.1} ms",
            lr.from_spawn.0,
            lr.from_spawn.1,
            worst(&lr.spawn_ms),
            lr.from_return.0,
            lr.from_return.1
        ),
        format!(
            "no relay (below): from the start p50 {:.1} ms, p99 {:.1} ms; redis-cli PING process, alternating with these check-ins: p50 {:.1} ms, p99 {:.1} ms",
            l.from_spawn.0, l.from_spawn.1, lr.ping.0, lr.ping.1
        ),
        "p99 <= 10 ms from the start",
    );
    b.report(
        "notification latency to a watch-dept consumer",
        format!(
            "from the checkin's return: p50 {:.1} ms, p99 {:.1} ms ({} events were shown before the process had exited); from its start: p50 {:.1} ms, p99 {:.1} ms (worst {})",
            l.from_return.0, l.from_return.1, l.early, l.from_spawn.0, l.from_spawn.1, worst(&l.spawn_ms)
        ),
        format!(
            "the checkin process itself, above; redis-cli PING process, alternating with these check-ins: p50 {:.1} ms, p99 {:.1} ms",
            l.ping.0, l.ping.1
        ),
        "p99 <= 50 ms",
    );
    Ok(())
}

/// The three largest of sorted samples, in ms.
fn worst(sorted: &[f64]) -> String {
    let top: Vec<String> = sorted.iter().rev().take(3).map(|v| format!("{v:.1}")).collect();
    top.join(", ")
}

/// What the journal costs the bulk check-in, and how long `recover` takes: the same kind of
/// morning (every employee in) on other days, alternately without the journal (deleted, so
/// nothing is bound) and with it; then the last day's evening too, the day's boards deleted
/// as a Redis without AOF would lose them, and the day recovered from the journal.
fn journal_figures(
    b: &mut Bench,
    con: &mut impl attendance::Keyspace,
    keys: &Keys,
    queues: &[String],
    days: &[String],
) -> Result<()> {
    let (mut without, mut with) = (Vec::new(), Vec::new());
    let mut n = 0usize;
    for (i, day) in days.iter().enumerate() {
        let journal = i % 2 == 1;
        if !journal {
            delete_journal(&b.cfg)?;
        }
        let file = b.dir.join(format!("morning-{day}.csv"));
        let f = file.to_str().expect("utf-8");
        b.run(&steps::simulate(day, "morning", f))?;
        n = std::fs::read_to_string(&file)?.lines().count() - 1;
        b.run(&steps::init_day(day))?;
        let on = if journal { "true" } else { "false" };
        let t = b.run_with(&[("ATTENDANCE_JOURNAL_ENABLED", on)], &["checkin", "--file", f])?;
        if journal { &mut with } else { &mut without }.push(t.as_secs_f64());
        purge(&b.cfg, queues)?;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (w, wo) = (mean(&with), mean(&without));
    b.report(
        "journal cost: bulk check-in (morning) end to end, with the journal vs without (2 runs each, alternating)",
        format!(
            "with {w:.2} s = {:.0}/s; {:+.0}% ({:+.2} s)",
            n as f64 / w,
            (w / wo - 1.0) * 100.0,
            w - wo
        ),
        format!(
            "without {wo:.2} s = {:.0}/s (runs: with {with:.2?}, without {without:.2?})",
            n as f64 / wo
        ),
        "-",
    );
    let last = days[days.len() - 1].as_str();
    let file = b.dir.join(format!("evening-{last}.csv"));
    let f = file.to_str().expect("utf-8");
    b.run(&steps::simulate(last, "evening", f))?;
    b.run(&["checkin", "--file", f])?;
    purge(&b.cfg, queues)?;
    let date = chrono::NaiveDate::parse_from_str(last, "%Y-%m-%d")?;
    delete_pattern(con, &keys.board_pattern(date))?;
    let t = Instant::now();
    let o = b.cmd().args(["recover", "--date", last, "--json", "-q"]).output()?;
    let secs = t.elapsed().as_secs_f64();
    if !o.status.success() {
        bail!("recover failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    let r: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    b.report(
        "recover: a lost day rebuilt from the journal (lay out + replay; ends after a 2 s pause in deliveries)",
        format!(
            "{secs:.2} s for {} punches read, {} restored, {} employees laid out (of which the 2 s pause that ends the read: replay {:.2} s = {:.0} punches/s)",
            r["read"],
            r["restored"],
            r["laid_out"],
            secs - 2.0,
            r["read"].as_f64().unwrap_or(0.0) / (secs - 2.0)
        ),
        format!("{} journal messages read; the bulk check-ins above", r["messages"]),
        "-",
    );
    Ok(())
}

/// Delete the namespace's journal: with no queue bound, publishing is as it was before it.
fn delete_journal(cfg: &Config) -> Result<()> {
    amqp_refs::delete_queue(cfg, attendance::Names::new(&cfg.namespace).journal())
}
