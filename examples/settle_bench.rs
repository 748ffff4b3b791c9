//! The settle benchmark: settle a realistic day of 100,000 employees (500 departments) and,
//! in the same run on the same server, load the very same rows into same-shaped tables with
//! `LOAD DATA LOCAL INFILE` and with plain multi-row INSERTs, as the references.
//!
//! cargo run --release --example settle_bench [-- --employees N --departments N]
//!
//! It uses its own namespace (`benchsettle`, or `--tag NAME`) and database (`attendance_<namespace>`), resets
//! them first and drops them at the end. `ATTENDANCE_REDIS_URL` and `ATTENDANCE_MYSQL_URL`
//! (server part only) point it elsewhere.

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

#[path = "common/args.rs"]
mod args;
#[path = "common/mysql_refs.rs"]
mod mysql_refs;

use std::time::Instant;

use args::arg;

use anyhow::{bail, Context, Result};
use attendance::config::{Config, Overrides};
use attendance::db;
use attendance::keys::Keys;
use attendance::settle::{self, Hooks, Options};
use attendance::{policy, roster, services};
use chrono::{Duration, NaiveDate};
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The run's namespace: `benchsettle`, or `--tag NAME` (so that two runs at once do not meet).
fn ns() -> &'static str {
    args::tag("benchsettle").unwrap_or_else(|e| {
        eprintln!("settle_bench: {e:#}");
        std::process::exit(2)
    })
}

/// The run's database: `attendance_<namespace>`.
fn db() -> String {
    format!("attendance_{}", ns())
}

fn config() -> Result<Config> {
    let server = std::env::var("ATTENDANCE_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/x".into());
    let base = server.rsplit_once('/').map_or(server.as_str(), |(b, _)| b);
    Ok(Config::load(&Overrides {
        redis_url: std::env::var("ATTENDANCE_REDIS_URL").ok(),
        mysql_url: Some(format!("{base}/{}", db())),
        namespace: Some(ns().into()),
        timezone: Some("Europe/Paris".into()),
        ..Default::default()
    })?)
}

/// Delete every key of the namespace.
fn clear_redis(con: &mut impl redis::ConnectionLike) -> Result<()> {
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{}:*", ns())).query(con)?;
    for chunk in keys.chunks(1_000) {
        let _: () = redis::cmd("DEL").arg(chunk).query(con)?;
    }
    Ok(())
}

/// A realistic day straight onto the boards: 3% absent, 8% late, 5% early, 2% never check out.
fn write_day(
    cfg: &Config,
    con: &mut impl redis::ConnectionLike,
    members: &[db::roster::Member],
    date: NaiveDate,
) -> Result<()> {
    let keys = Keys::new(ns());
    let tz = cfg.timezone;
    let at = |h: u32, m: u32| policy::local_offset_secs(tz, date, chrono::NaiveTime::from_hms_opt(h, m, 0).unwrap());
    let mut rng = StdRng::seed_from_u64(7);
    let mut pipe = redis::pipe();
    for dept in members.chunk_by(|a, b| a.department_id == b.department_id) {
        let mut fields = Vec::with_capacity(dept.len());
        for m in dept {
            let roll: f64 = rng.gen_range(0.0..100.0);
            let value = if roll < 3.0 {
                String::new()
            } else {
                let inn = if roll < 11.0 {
                    rng.gen_range(at(9, 1)..at(10, 30))
                } else {
                    rng.gen_range(at(8, 0)..at(9, 0))
                };
                let out = if roll > 98.0 {
                    None
                } else if roll > 93.0 {
                    Some(rng.gen_range(at(16, 0)..at(18, 0)))
                } else {
                    Some(rng.gen_range(at(18, 0)..at(20, 0)))
                };
                match out {
                    Some(o) => format!("i{inn},o{o}"),
                    None => format!("i{inn}"),
                }
            };
            fields.push((m.employee_id.clone(), value));
        }
        pipe.hset_multiple(keys.board(&dept[0].department_id, date), &fields)
            .ignore();
    }
    pipe.query::<()>(con)?;
    Ok(())
}

/// A `/proc/self/status` figure (kB) in MB.
fn proc_status_mb(field: &str) -> Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/self/status"))?;
    Ok(kb / 1024.0)
}

fn main() -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let departments = arg("--departments", 500)?;
    let mut cfg = config()?;
    cfg.settle.batch_size = arg("--batch", cfg.settle.batch_size as u32)? as usize;
    cfg.settle.writers = arg("--writers", cfg.settle.writers as u32)? as usize;
    let mut server = services::mysql_server(&cfg)?;
    server.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
    drop(server);
    db::migrate(&cfg)?;
    let mut con = services::redis(&cfg)?;
    clear_redis(&mut con)?;

    let mut csv = Vec::new();
    roster::generate(&mut csv, employees, departments, 42)?;
    let pool = services::mysql(&cfg)?;
    db::roster::upsert(&pool, &roster::parse(csv.as_slice())?)?;
    let members = db::roster::active_members(&pool)?;
    // The last work day by the policy's week, a few days back (so no next day is laid out).
    let today = chrono::Utc::now().with_timezone(&cfg.timezone).date_naive();
    let date = (4..12)
        .map(|d| today - Duration::days(d))
        .find(|d| policy::is_policy_workday(&cfg.policy, *d))
        .context("no work day in a week")?;
    write_day(&cfg, &mut con, &members, date)?;
    drop((members, csv));
    println!(
        "settle benchmark: {employees} employees, {departments} departments, day {date}, batch {}, writers {}",
        cfg.settle.batch_size, cfg.settle.writers
    );

    let opts = Options {
        date: Some(date),
        today,
        accept_missing_boards: false,
        hooks: Hooks::default(),
    };
    // Settle's own peak: the high-water mark restarts from here (the setup's memory is freed).
    std::fs::write("/proc/self/clear_refs", "5").context("resetting the peak RSS")?;
    let rss_before = proc_status_mb("VmRSS:")?;
    let t = Instant::now();
    let report = settle::settle(&cfg, &opts, |_| {})?.last;
    let settle_s = t.elapsed().as_secs_f64();
    let peak = proc_status_mb("VmHWM:")?;
    if report.failed > 0 || report.rows_written != u64::from(employees) {
        bail!(
            "settle wrote {} rows with {} failures",
            report.rows_written,
            report.failed
        );
    }
    println!("  counts: {:?}", report.counts);
    for (step, secs) in &report.steps {
        println!("  {step}: {secs:.3}s");
    }
    let t = Instant::now();
    settle::settle(&cfg, &opts, |_| {})?;
    let rerun_s = t.elapsed().as_secs_f64();

    let (load_s, insert_s) = mysql_refs::references(&pool, date, cfg.settle.batch_size)?;

    print_table(employees, (settle_s, rerun_s, load_s, insert_s), (peak, rss_before));

    clear_redis(&mut con)?;
    // Settle connects to the broker only to drain events, and this day has none: this removes
    // whatever a run declared all the same (nothing, when all went well).
    attendance::notify::teardown(&cfg, &[])?;

    drop(pool);
    services::mysql_server(&cfg)?.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
    Ok(())
}

/// The figures, as a Markdown table: settle's first run and rerun beside LOAD DATA and a
/// multi-row INSERT of the same rows, and settle's peak RSS.
fn print_table(employees: u32, secs: (f64, f64, f64, f64), rss: (f64, f64)) {
    let (settle_s, rerun_s, load_s, insert_s) = secs;
    let (peak, rss_before) = rss;
    println!("| step | seconds | vs LOAD DATA |");
    println!("| --- | --- | --- |");
    println!(
        "| settle (first run, {employees} rows, boards deleted) | {settle_s:.2} | {:.2}x |",
        settle_s / load_s
    );
    println!(
        "| settle (rerun, from stored histories) | {rerun_s:.2} | {:.2}x |",
        rerun_s / load_s
    );
    println!("| settle's peak RSS (the process's high-water mark during the first run) | {peak:.0} MB | RSS {rss_before:.0} MB before it |");
    println!("| LOAD DATA LOCAL INFILE, same rows, same-shaped table | {load_s:.2} | 1.00x |");
    println!(
        "| plain multi-row INSERT, same rows and batches | {insert_s:.2} | {:.2}x |",
        insert_s / load_s
    );
}
