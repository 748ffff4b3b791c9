//! What N department queues cost the broker: real open files and memory of the RabbitMQ node
//! before and after the binary declares them (the way a day does: `checkin --file` of a
//! morning declares each department's quorum queue and publishes its punches), then every
//! queue, exchange, key and the database it made are deleted again. Figures for docs/sizing.md.
//!
//! cargo build --release --bins --examples && target/release/examples/queue_sizing --departments 500
//!
//! Needs `rabbitmqctl` on the broker's host (it asks the node for its own counts). At most
//! 5,000 departments, and only while the node's file handle cache keeps 2,000 handles free
//! for its other users (the broker is shared).

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use attendance::{Config, Overrides};

#[path = "common/args.rs"]
mod args;
#[path = "common/steps.rs"]
mod steps;

/// File handles left free for the broker's other users while measuring.
const HEADROOM: u64 = 2_000;

/// One number the node computes (`rabbitmqctl eval`).
fn eval(expr: &str) -> Result<u64> {
    let o = Command::new("rabbitmqctl").args(["eval", expr]).output()?;
    let s = String::from_utf8_lossy(&o.stdout);
    s.trim()
        .parse()
        .with_context(|| format!("rabbitmqctl eval {expr}: {s}"))
}

/// The node's own view: (real open files of its process, erlang:memory(total) in bytes,
/// quorum queues, handles its file handle cache counts against its limit).
fn broker() -> Result<(u64, u64, u64, u64)> {
    Ok((
        eval("length(element(2, file:list_dir(\"/proc/\" ++ os:getpid() ++ \"/fd\"))).")?,
        eval("erlang:memory(total).")?,
        eval("length([Q || Q <- rabbit_amqqueue:list(), amqqueue:get_type(Q) =:= rabbit_quorum_queue]).")?,
        eval("proplists:get_value(total_used, file_handle_cache:info([total_used])).")?,
    ))
}

/// (queues, bytes of their processes' memory) of the namespace's queues, from `list_queues`:
/// the part of the node's memory that is theirs alone, whatever else runs on the broker.
fn own_queues(ns: &str) -> Result<(u64, u64)> {
    let o = Command::new("rabbitmqctl")
        .args(["list_queues", "-q", "--no-table-headers", "name", "memory"])
        .output()?;
    let prefix = format!("{ns}.");
    let mut n = (0, 0);
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let mut f = line.split_whitespace();
        if let (Some(name), Some(mem)) = (f.next(), f.next()) {
            if name.starts_with(&prefix) {
                n = (n.0 + 1, n.1 + mem.parse::<u64>().unwrap_or(0));
            }
        }
    }
    Ok(n)
}

/// The most real open files the node had while `f` ran (sampled as fast as rabbitmqctl answers).
fn peak_files<T>(f: impl FnOnce() -> T) -> (T, (u64, u64)) {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut peak = (0, 0);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(b) = broker() {
                    peak = (peak.0.max(b.0), peak.1.max(b.3));
                }
            }
            peak
        });
        let r = f();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (r, sampler.join().unwrap_or((0, 0)))
    })
}

fn run(bin: &Path, cfg: &Config, args: &[&str]) -> Result<()> {
    let o = Command::new(bin)
        .env("ATTENDANCE_MYSQL_URL", &cfg.mysql_url)
        .env("ATTENDANCE_NAMESPACE", &cfg.namespace)
        .env_remove("ATTENDANCE_CONFIG")
        .args(args)
        .arg("-q")
        .output()?;
    if !o.status.success() {
        bail!("attendance {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(())
}

fn main() -> Result<()> {
    let departments = args::arg("--departments", 500)?;
    if !(1..=5_000).contains(&departments) {
        bail!("--departments: 1 to 5000");
    }
    // The broker is shared: refuse to take its file handle cache close to its limit (a node
    // out of handles stops queues for everyone), leaving room for the other users.
    let limit = eval("file_handle_cache:get_limit().")?;
    let used = broker()?.3;
    let need = 3 * u64::from(departments) + 20;
    if used + need + HEADROOM > limit {
        bail!(
            "{departments} quorum queues need about {need} file handles; the node has {used} of {limit} in use, \
             and {HEADROOM} stay free for other users of the broker"
        );
    }
    let bin = args::binary()?;
    let ns = format!("qsize{}", std::process::id());
    let mut cfg = Config::load(&Overrides {
        namespace: Some(ns.clone()),
        ..Default::default()
    })?;
    cfg.mysql_url = format!("{}att_{ns}", cfg.mysql_server_url());
    let dir = std::env::temp_dir().join(&ns);
    std::fs::create_dir_all(&dir)?;
    let before = broker()?;
    let (measured, peak) = peak_files(|| declare(&bin, &cfg, &dir, departments));
    let after = broker();
    let own = own_queues(&ns);
    // Whatever happened, leave nothing behind.
    let depts: Vec<String> = (1..=departments).map(|d| format!("D{d:03}")).collect();
    attendance::teardown(&cfg, &depts)?;
    let mut con = attendance::Redis::open(&cfg)?;
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{ns}:*")).query(&mut con)?;
    for chunk in keys.chunks(500) {
        redis::cmd("DEL").arg(chunk).query::<()>(&mut con)?;
    }
    let mut server = attendance::mysql_server(&cfg)?;
    mysql::prelude::Queryable::query_drop(&mut server, format!("DROP DATABASE IF EXISTS att_{ns}"))?;
    std::fs::remove_dir_all(&dir).ok();
    let cleaned = broker()?;
    measured?;
    let (after, own) = (after?, own?);
    println!("| {departments} departments | quorum queues | real open files | file handle cache | erlang memory |");
    println!("| --- | --- | --- | --- | --- |");
    for (what, (fds, mem, q, fhc)) in [("before", before), ("after", after), ("after cleanup", cleaned)] {
        println!("| {what} | {q} | {fds} | {fhc} | {:.1} MB |", mem as f64 / 1e6);
    }
    let n = departments as f64;
    println!(
        "peak while declaring and publishing: {} real open files, {} in the file handle cache; per department queue at rest: {:.2} \
         open files, node memory {:.0} KB (other users of the broker included)",
        peak.0,
        peak.1,
        (after.0 as f64 - before.0 as f64) / n,
        (after.1 as f64 - before.1 as f64) / n / 1e3
    );
    println!(
        "the namespace's own {} queues: {:.1} MB of queue process memory = {:.0} KB each",
        own.0,
        own.1 as f64 / 1e6,
        own.1 as f64 / own.0.max(1) as f64 / 1e3
    );
    Ok(())
}

/// A roster of two employees per department, and a morning of their check-ins.
fn declare(bin: &Path, cfg: &Config, dir: &Path, departments: u32) -> Result<()> {
    let p = |name: &str| -> PathBuf { dir.join(name) };
    let s = |p: &PathBuf| p.to_str().expect("utf-8 temp dir").to_string();
    let (roster, morning) = (p("roster.csv"), p("morning.csv"));
    let roster = s(&roster);
    let company = steps::Company::new(&roster, departments * 2, departments);
    run(bin, cfg, &["migrate"])?;
    for step in steps::rulebook() {
        run(bin, cfg, &step)?;
    }
    run(bin, cfg, &company.generate())?;
    // A past work day (the most recent before today), so that no punch is in the future
    // whatever the hour of the run.
    let mut day = chrono::Utc::now().date_naive() - chrono::Days::new(1);
    while chrono::Datelike::weekday(&day).number_from_monday() > 5 {
        day = day - chrono::Days::new(1);
    }
    let day = day.to_string();
    let timed = |args: &[&str]| -> Result<()> {
        let t = std::time::Instant::now();
        run(bin, cfg, args)?;
        println!("{}: {:.2} s", args[..2].join(" "), t.elapsed().as_secs_f64());
        Ok(())
    };
    // Both declare the department queues: import as new departments (on a fresh broker), then
    // init-day again (each one there already).
    timed(&company.import())?;
    timed(&steps::init_day(&day))?;
    run(bin, cfg, &steps::simulate_everyone(&day, "morning", &s(&morning)))?;
    run(bin, cfg, &["checkin", "--file", &s(&morning)])
}
