//! init-day alone, at the size of the target (1,000,000 employees in 5,000 departments by
//! default): the roster is generated and imported once, then `init-day` runs as a process,
//! timed, with its peak RSS, for "a day after a roster change" (one employee's name changed in
//! MySQL just before, so the roster cache is stale) and for "a later day" (nothing changed),
//! `--runs` times each. With `--old PATH` (another build's `attendance` binary) the two builds
//! run alternately, the same days for both.
//!
//! cargo build --release --bins --examples && target/release/examples/initday_bench \
//!     [--employees N] [--departments N] [--runs N] [--old PATH] [--tag NAME] [--cleanup]
//!
//! Beside each run: the time Redis itself counted in the commands a layout sends (EVALSHA,
//! RESTORE, HSET, HMSET; INFO commandstats before and after, server-wide, so another client's count
//! too) and the queue declarations init-day reports (`-v`). The boards of each run are deleted
//! after it; everything (keys, queues, exchanges, the database) at the end, also after a failure.

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

#[path = "common/args.rs"]
mod args;
#[path = "common/peak.rs"]
mod peak;
#[path = "common/redis_refs.rs"]
mod redis_refs;
#[path = "common/steps.rs"]
mod steps;
#[path = "common/teardown.rs"]
mod teardown;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use attendance::{Config, Overrides};
use redis_refs::{command_usec, delete_pattern};

fn tag() -> &'static str {
    args::tag("initday")
}

fn config() -> Result<Config> {
    let tag = tag();
    let mut cfg = Config::load(&Overrides {
        namespace: Some(tag.into()),
        timezone: Some("Europe/Paris".into()),
        ..Default::default()
    })?;
    cfg.mysql_url = format!("{}attendance_{tag}", cfg.mysql_server_url());
    Ok(cfg)
}

fn command(bin: &Path, cfg: &Config) -> Command {
    let mut c = args::command(bin, cfg);
    c.env("ATTENDANCE_TIMEZONE", cfg.timezone.name());
    c
}

fn run(bin: &Path, cfg: &Config, args: &[&str]) -> Result<Duration> {
    let t = Instant::now();
    let o = command(bin, cfg).args(args).arg("-q").stdout(Stdio::null()).output()?;
    if !o.status.success() {
        bail!("attendance {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(t.elapsed())
}

/// One init-day process: wall time, peak RSS (MB), its stderr.
fn init_day(bin: &Path, cfg: &Config, date: &str) -> Result<(f64, f64, String)> {
    let mut cmd = command(bin, cfg);
    cmd.args(steps::init_day(date)).arg("-v");
    let (status, t, peak_mb, err) = peak::run_peak(cmd)?;
    if !status.success() {
        bail!("init-day {date} failed: {err}");
    }
    Ok((t.as_secs_f64(), peak_mb, err))
}

/// What init-day said of its queue declarations, if anything.
fn declared(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.contains("queues declared") || l.contains("queues looked up") || l.contains("not declared"))
        .map_or_else(
            || "no queues declared".into(),
            |l| l.trim_start_matches("init-day: ").to_string(),
        )
}

/// Touch the roster in MySQL (one employee's name) so that the Redis roster cache is stale.
fn change_roster(cfg: &Config, round: usize) -> Result<()> {
    let pool = mysql::Pool::new(cfg.mysql_url.as_str())?;
    let mut conn = pool.get_conn()?;
    mysql::prelude::Queryable::exec_drop(
        &mut conn,
        "UPDATE employees SET name = CONCAT('Renamed ', ?) WHERE id = (SELECT MIN(id) FROM employees)",
        (round,),
    )?;
    Ok(())
}

fn cleanup(departments: u32) -> Result<()> {
    teardown::remove_run(&config()?, tag(), departments)
}

fn main() -> Result<()> {
    let departments = args::arg("--departments", 5_000)?;
    args::run_then_cleanup(|| bench(departments), || cleanup(departments))
}

/// The value after `--old`, if given.
fn old_binary() -> Result<Option<PathBuf>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(i) = args.iter().position(|a| a == "--old") else {
        return Ok(None);
    };
    let p = PathBuf::from(args.get(i + 1).context("--old: a path is needed after it")?);
    if !p.exists() {
        bail!("--old: {} does not exist", p.display());
    }
    Ok(Some(p))
}

fn bench(departments: u32) -> Result<()> {
    let employees = args::arg("--employees", 1_000_000)?;
    let runs = args::arg("--runs", 3)? as usize;
    let new = args::binary()?;
    let old = old_binary()?;
    let cfg = config()?;
    cleanup(departments)?;
    let dir = std::env::temp_dir().join(format!("initday_bench_{}", tag()));
    std::fs::create_dir_all(&dir)?;
    let roster = dir.join("roster.csv");
    let r = roster.to_str().context("utf-8 path")?;
    let t = steps::Company::new(r, employees, departments).set_up(|args| run(&new, &cfg, args))?;
    std::fs::remove_file(&roster).ok();
    println!(
        "# init-day: {employees} employees, {departments} departments (org import {:.1} s)",
        t.as_secs_f64()
    );
    println!(
        "| run | build | day | init-day | peak RSS | Redis's own time (EVALSHA + RESTORE + HSET + HMSET) | queues |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut con = attendance::Redis::open(&cfg)?;
    let mut builds: Vec<(&str, &Path)> = Vec::new();
    if let Some(old) = &old {
        builds.push(("old", old));
    }
    builds.push(("new", &new));
    let mut day = chrono::NaiveDate::from_ymd_opt(2026, 6, 1).expect("a date");
    for round in 1..=runs {
        // Alternate which build goes first, so neither always runs on the other's heels.
        if round > 1 {
            builds.reverse();
        }
        for (name, bin) in &builds {
            for (kind, changed) in [("after a roster change", true), ("a later day", false)] {
                if changed {
                    change_roster(&cfg, round)?;
                }
                let date = day.to_string();
                day = day.succ_opt().expect("a next day");
                let before = command_usec(&mut con, &["evalsha", "restore", "hset", "hmset"])?;
                let (secs, peak, err) = init_day(bin, &cfg, &date)?;
                let redis_ms = (command_usec(&mut con, &["evalsha", "restore", "hset", "hmset"])? - before) / 1000.0;
                println!(
                    "| {round} | {name} | {kind} | {secs:.3} s | {peak:.0} MB | {redis_ms:.0} ms | {} |",
                    declared(&err)
                );
                delete_pattern(&mut con, &format!("{}:board:*", tag()))?;
            }
        }
    }
    Ok(())
}
