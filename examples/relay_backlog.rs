//! The backlog benchmark: a relay draining what a broker outage left in the outboxes, beside
//! RabbitMQ alone (as many messages of the same size, published with confirms in the same
//! window by one publisher into the same queues), in the same run; and one `checkin` process
//! with 10 and with 100,000 older events waiting in its department's outbox.
//!
//! cargo build --release --bins --examples && target/release/examples/relay_backlog [--employees N] [--departments N] [--runs N]
//!
//! It uses its own namespace (`benchrelay`, or `--tag NAME`) and database (`attendance_<namespace>`), resets them
//! first and removes them (keys, queues, exchanges, database) at the end, also after a failure;
//! `--cleanup` (with the same `--departments`) only removes what a killed run left. The journal
//! is off, so the relay and the reference put each message into one queue.

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

#[path = "common/amqp_refs.rs"]
mod amqp_refs;
#[path = "common/args.rs"]
mod args;
#[path = "common/steps.rs"]
mod steps;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use amqp_refs::{broker_reference, purge};

use anyhow::{bail, Context, Result};
use args::arg;
use attendance::{Board, Keyspace};
use attendance::{Config, Overrides};
use mysql::prelude::Queryable;
use redis::Commands;

/// The run's namespace: `benchrelay`, or `--tag NAME` (so that two runs at once do not meet).
fn ns() -> &'static str {
    args::tag("benchrelay")
}

/// The run's database: `attendance_<namespace>`.
fn db() -> String {
    format!("attendance_{}", ns())
}

/// A port where no broker listens: the bulk check-in leaves every event in its outbox.
const NO_BROKER: &str = "amqp://guest:guest@127.0.0.1:1/%2f";

fn config() -> Result<Config> {
    let mut cfg = Config::load(&Overrides {
        namespace: Some(ns().into()),
        ..Default::default()
    })?;
    cfg.mysql_url = format!("{}{}", cfg.mysql_server_url(), db());
    // A busy broker deleting thousands of quorum queues takes seconds over one: the cleanup
    // must not give up half-way (seen with 5,000 departments).
    cfg.amqp.confirm_timeout_ms = cfg.amqp.confirm_timeout_ms.max(60_000);
    Ok(cfg)
}

/// The binary with the benchmark's settings.
fn cmd(bin: &Path, cfg: &Config) -> Command {
    let mut c = args::command(bin, cfg);
    c.env("ATTENDANCE_JOURNAL_ENABLED", "false")
        .arg("-q")
        .stdout(Stdio::null());
    c
}

/// Run to completion; `ok_codes` are the exit codes taken as success. Returns the wall time.
fn run(mut c: Command, ok_codes: &[i32]) -> Result<Duration> {
    let t = Instant::now();
    let o = c.output()?;
    let d = t.elapsed();
    if !ok_codes.contains(&o.status.code().unwrap_or(-1)) {
        bail!("{c:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(d)
}

fn main() -> Result<()> {
    let departments = arg("--departments", 500)?;
    args::run_then_cleanup(|| bench(departments), || cleanup(departments))
}

fn queues(departments: u32) -> Vec<String> {
    (1..=departments).map(|d| format!("D{d:03}")).collect()
}

/// Remove every key, queue, exchange and the database the run made, and its files.
fn cleanup(departments: u32) -> Result<()> {
    let cfg = config()?;
    let mut con = attendance::Redis::open(&cfg)?;
    for k in con.scan_keys(&format!("{}:*", ns()))? {
        let _: () = con.del(k)?;
    }
    let broker = attendance::teardown(&cfg, &queues(departments));
    let mut server = attendance::mysql_server(&cfg)?;
    server.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
    let _ = std::fs::remove_dir_all(dir());
    broker
}

fn dir() -> PathBuf {
    std::env::temp_dir().join("attendance-relay-backlog")
}

fn bench(departments: u32) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let runs = arg("--runs", 15)? as usize;
    let bin = args::binary()?;
    let cfg = config()?;
    cleanup(departments)?;
    std::fs::create_dir_all(dir())?;
    let roster = dir().join("roster.csv");
    let morning = dir().join("morning.csv");
    let (r, m) = (roster.to_str().context("utf-8")?, morning.to_str().context("utf-8")?);
    // Yesterday: a whole morning, all of it in the past.
    let day = (chrono::Utc::now().date_naive() - chrono::Days::new(1)).to_string();
    let step = |args: &[&str]| {
        let mut c = cmd(&bin, &cfg);
        c.args(args);
        run(c, &[0])
    };
    steps::Company::new(r, employees, departments).set_up(step)?;
    step(&steps::simulate_everyone(&day, "morning", m))?;
    // The morning, with the broker unreachable: every event waits in its outbox.
    let mut c = cmd(&bin, &cfg);
    c.env("ATTENDANCE_AMQP_URL", NO_BROKER).args(["checkin", "--file", m]);
    run(c, &[0, 3, 4])?;
    let mut board = Board::open(&cfg)?;
    let (depts, n) = board.outbox_backlog()?;
    let size = average_event_size(&mut board)?;
    println!("backlog: {n} events of about {size} bytes in {depts} departments ({employees} employees); journal off");
    let qs: Vec<String> = queues(departments)
        .iter()
        .map(|d| format!("{}.dept.{d}", ns()))
        .collect();

    let mut c = cmd(&bin, &cfg);
    c.arg("relay");
    let relay = run(c, &[0])?;
    let left = board.outbox_backlog()?.1;
    purge(&cfg, &qs)?;
    let reference = broker_reference(&cfg, &qs, n, size, cfg.amqp.confirm_window)?;
    let rate = n as f64 / relay.as_secs_f64();
    println!(
        "| relay of a {n}-event backlog | {:.2} s = {rate:.0} events/s ({left} left) | RabbitMQ alone, one publisher: {reference:.0}/s | {:.2}x |",
        relay.as_secs_f64(),
        rate / reference
    );

    ride_along(&cfg, &bin, &mut board, &qs, runs)
}

/// One check-in with 10, then with 100,000, older events waiting in its department: what its
/// ride-along of older events costs.
fn ride_along(cfg: &Config, bin: &std::path::Path, board: &mut Board, qs: &[String], runs: usize) -> Result<()> {
    // One check-in with 10, then with 100,000, older events waiting in its department.
    let members: Vec<String> = attendance::Db::open(cfg)?
        .conn()?
        .query("SELECT id FROM employees WHERE department_id = 'D001' ORDER BY id")?;
    let template = stale_event(cfg, bin, board, &members[0])?;
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (i, emp) in members.iter().skip(1).take(runs * 2).enumerate() {
        let waiting = if i % 2 == 0 { 10 } else { 100_000 };
        top_up(board, &template, waiting)?;
        let mut c = cmd(bin, cfg);
        c.args(["checkin", emp, "--kind", "out"]);
        times[i % 2].push(run(c, &[0])?.as_secs_f64() * 1000.0);
    }
    purge(cfg, qs)?;
    let [small, big] = times.map(|mut v| median(&mut v));
    println!(
        "| one `checkin` process, 10 older events waiting | {small:.2} ms median | with 100,000 waiting: {big:.2} ms median | {:.2}x |",
        big / small
    );
    Ok(())
}

/// Average size of the events waiting as published (the wire JSON rendered from the outbox
/// records), from a sample of one outbox.
fn average_event_size(board: &mut Board) -> Result<usize> {
    let (_, page) = board.outbox_page("D001", 0, 100)?;
    let mut total = 0;
    for (id, stored) in &page {
        total += attendance::render(id, stored)?.json.len();
    }
    Ok(total / page.len().max(1))
}

/// One real check-in's outbox record, made with the broker unreachable, as recorded an hour ago.
fn stale_event(cfg: &Config, bin: &Path, board: &mut Board, emp: &str) -> Result<String> {
    let mut c = cmd(bin, cfg);
    c.env("ATTENDANCE_AMQP_URL", NO_BROKER)
        .args(["checkin", emp, "--kind", "out"]);
    run(c, &[0])?;
    let (_, page) = board.outbox_page("D001", 0, 10)?;
    let (id, stored) = page.first().context("the check-in left no event")?;
    let mut ev: attendance::Event = serde_json::from_str(&attendance::render(id, stored)?.json)?;
    let hour_ago = chrono::Utc::now() - chrono::Duration::hours(1);
    ev.recorded_at = Some(hour_ago.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    Ok(attendance::record_of(&ev)?)
}

/// Bring D001's outbox to `n` older events (copies of the record `template` under fresh ids).
fn top_up(board: &mut Board, template: &str, n: usize) -> Result<()> {
    let key = board.keys().outbox("D001");
    let con = board.redis();
    let have: usize = con.hlen(&key)?;
    let mut missing = if have > n {
        let _: () = con.del(&key)?;
        n
    } else {
        n - have
    };
    while missing > 0 {
        let chunk: Vec<(String, String)> = (0..missing.min(1000))
            .map(|_| (uuid::Uuid::new_v4().to_string(), template.to_string()))
            .collect();
        missing -= chunk.len();
        let _: () = con.hset_multiple(&key, &chunk)?;
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
