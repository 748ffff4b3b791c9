//! The settle benchmark: settle a realistic day of 100,000 employees (500 departments) and,
//! in the same run on the same server, load the very same rows into same-shaped tables with
//! `LOAD DATA LOCAL INFILE` and with plain multi-row INSERTs, as the references.
//!
//! cargo run --release --example settle_bench [-- --employees N --departments N --rounds N
//! --signed-per N]
//!
//! `--rounds N` settles the same fresh day N times, each beside a LOAD DATA run right after it
//! (on a shared machine a pair measured together says more than one run), and prints the medians.
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
use attendance::Config;
use attendance::Keys;
use attendance::{Hooks, SettleOptions as Options};
use chrono::{Duration, NaiveDate, TimeZone};
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// The run's namespace: `benchsettle`, or `--tag NAME` (so that two runs at once do not meet).
fn ns() -> &'static str {
    args::tag("benchsettle")
}

/// The run's database: `attendance_<namespace>`.
fn db() -> String {
    format!("attendance_{}", ns())
}

fn config() -> Result<Config> {
    args::ns_config(ns())
}

/// Delete every key of the namespace.
fn clear_redis(con: &mut impl redis::ConnectionLike) -> Result<()> {
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{}:*", ns())).query(con)?;
    for chunk in keys.chunks(1_000) {
        let _: () = redis::cmd("DEL").arg(chunk).query(con)?;
    }
    Ok(())
}

/// The kiosk key the day's punches are signed with (a fixed seed), and its id.
const KIOSK: &str = "bench-kiosk";
const KIOSK_SEED: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

/// Add the bench kiosk's public key to the registry: settle checks every punch's signature.
fn register_kiosk(pool: &attendance::Db) -> Result<()> {
    let (_, public) = attendance::ed25519_pair(&[7; 32]);
    pool.conn()?.exec_drop(
        "INSERT INTO signing_keys (key_id, public_key, replay, added_at, added_by, added_os_user) \
         VALUES (?, ?, FALSE, UTC_TIMESTAMP(3), 'settle_bench', 'settle_bench')",
        (KIOSK, public),
    )?;
    Ok(())
}

/// Records a signature covers in the day's punch logs: `--signed-per N`, 100 by default (a
/// bulk check-in signs each script call's records, up to 100 of a department, as one batch);
/// 1 signs each alone, as single check-ins do.
fn signed_per() -> Result<usize> {
    Ok(arg("--signed-per", 100)?.max(1) as usize)
}

/// The punch log records of a department's events, signed by the bench kiosk as a check-in
/// signs them: [`signed_per`] records a signature.
fn signed_records(signer: &attendance::Signer, evs: &mut [attendance::Event]) -> Result<Vec<(String, String)>> {
    let per = signed_per()?;
    for chunk in evs.chunks_mut(per) {
        if per == 1 {
            attendance::sign_event(&mut chunk[0], signer).map_err(|e| anyhow::anyhow!("{e}"))?;
        } else {
            attendance::sign_batch(chunk, signer).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    evs.iter()
        .map(|ev| Ok((ev.event_id.clone(), attendance::record_of(ev)?)))
        .collect()
}

/// One punch's event, unsigned.
fn punch_event(
    m: &attendance::Member,
    (date, start): (NaiveDate, chrono::DateTime<chrono_tz::Tz>),
    kind: attendance::Kind,
    secs: i64,
) -> attendance::Event {
    let at = start + Duration::seconds(secs);
    attendance::Event {
        event_id: format!("{}-{}-{secs}", m.employee_id, kind),
        employee_id: m.employee_id.clone(),
        employee_name: m.name.clone(),
        department_id: m.department_id.clone(),
        kind,
        at: at.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        work_date: date,
        late: false,
        early: false,
        late_minutes: 0,
        early_minutes: 0,
        changed: true,
        source: "bench".into(),
        recorded_at: Some(at.to_utc().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        key_id: None,
        sig: None,
    }
}

/// A realistic day straight onto the boards, each punch with its signed record in the day's
/// bulk punch log (settle takes no punch without one): 3% absent, 8% late, 5% early, 2% never
/// check out.
fn write_day(
    cfg: &Config,
    con: &mut impl redis::ConnectionLike,
    members: &[attendance::Member],
    date: NaiveDate,
) -> Result<()> {
    let signer = attendance::Signer::ed25519(KIOSK, KIOSK_SEED).map_err(|e| anyhow::anyhow!("{e}"))?;
    let start = cfg
        .timezone
        .from_local_datetime(&date.and_hms_opt(0, 0, 0).expect("midnight"))
        .earliest()
        .context("the day's midnight")?;
    let keys = Keys::new(ns());
    let tz = cfg.timezone;
    let at =
        |h: u32, m: u32| attendance::local_offset_secs(tz, date, chrono::NaiveTime::from_hms_opt(h, m, 0).unwrap());
    let mut rng = StdRng::seed_from_u64(7);
    let mut pipe = redis::pipe();
    for dept in members.chunk_by(|a, b| a.department_id == b.department_id) {
        let mut fields = Vec::with_capacity(dept.len());
        let mut logged = Vec::with_capacity(dept.len() * 2);
        for m in dept {
            let roll: f64 = rng.random_range(0.0..100.0);
            let value = if roll < 3.0 {
                String::new()
            } else {
                let inn = if roll < 11.0 {
                    rng.random_range(at(9, 1)..at(10, 30))
                } else {
                    rng.random_range(at(8, 0)..at(9, 0))
                };
                let out = if roll > 98.0 {
                    None
                } else if roll > 93.0 {
                    Some(rng.random_range(at(16, 0)..at(18, 0)))
                } else {
                    Some(rng.random_range(at(18, 0)..at(20, 0)))
                };
                logged.push(punch_event(m, (date, start), attendance::Kind::In, inn));
                if let Some(o) = out {
                    logged.push(punch_event(m, (date, start), attendance::Kind::Out, o));
                }
                match out {
                    Some(o) => format!("i{inn},o{o}"),
                    None => format!("i{inn}"),
                }
            };
            fields.push((m.employee_id.clone(), value));
        }
        pipe.hset_multiple(keys.board(&dept[0].department_id, date), &fields)
            .ignore();
        if !logged.is_empty() {
            let logged = signed_records(&signer, &mut logged)?;
            pipe.hset_multiple(keys.punch_log(&dept[0].department_id, date, "bulk"), &logged)
                .ignore();
        }
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
    let rounds = arg("--rounds", 1)?.max(1);
    let mut cfg = config()?;
    cfg.settle.batch_size = arg("--batch", cfg.settle.batch_size as u32)? as usize;
    cfg.settle.writers = arg("--writers", cfg.settle.writers as u32)? as usize;
    let mut server = attendance::mysql_server(&cfg)?;
    server.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
    drop(server);
    attendance::migrate(&cfg)?;
    let mut con = attendance::Redis::open(&cfg)?;
    clear_redis(&mut con)?;

    let mut csv = Vec::new();
    attendance::generate_roster(&mut csv, employees, departments, 42)?;
    let pool = attendance::Db::open(&cfg)?;
    attendance::upsert_roster(&pool, &attendance::parse_roster(csv.as_slice())?)?;
    register_kiosk(&pool)?;
    drop(csv);
    let mut members = Some(attendance::active_members(&pool)?);
    // The last work day by the policy's week, a few days back (so no next day is laid out).
    let today = chrono::Utc::now().with_timezone(&cfg.timezone).date_naive();
    let date = (4..12)
        .map(|d| today - Duration::days(d))
        .find(|d| attendance::is_policy_workday(&cfg.policy, *d))
        .context("no work day in a week")?;
    println!(
        "settle benchmark: {employees} employees, {departments} departments, day {date}, batch {}, writers {}, rounds {rounds}, {} record(s) a signature",
        cfg.settle.batch_size, cfg.settle.writers, signed_per()?
    );
    let opts = Options {
        date: Some(date),
        accept_missing_boards: false,
        no_reconcile: false,
        check_journal: false,
        hooks: Hooks::default(),
    };
    let mut runs = Vec::new();
    for round in 1..=rounds {
        if round > 1 {
            // The same fresh day again: no row or punch log stored, every board back, and the
            // record of settled days forgotten (else settle takes the emptied day for one a
            // lagging replica lost, and refuses to go on).
            pool.conn()?.query_drop("TRUNCATE TABLE attendance")?;
            pool.conn()?.query_drop("TRUNCATE TABLE punch_log")?;
            let _: () = redis::cmd("DEL")
                .arg(attendance::Keys::new(ns()).settled_days())
                .query(&mut con)?;
        }
        write_day(&cfg, &mut con, members.as_deref().unwrap_or_default(), date)?;
        if round == rounds {
            // Only the benchmark's own heap is left when settle's peak is read.
            members = None;
        }
        let (settle_s, peak, rss_before) = settle_once(&cfg, &opts, employees, round == 1)?;
        // What settle writes: the day's rows and its punch log, each loaded the fastest way.
        let rows_s = mysql_refs::load_reference(&pool, date)?;
        let (log_s, logged) = mysql_refs::punch_log_reference(&pool, date)?;
        let load_s = rows_s + log_s;
        println!(
            "  round {round}: settle {settle_s:.2} s, LOAD DATA {load_s:.2} s ({rows_s:.2} s the rows, {log_s:.2} s the \
             {logged} punch log rows): {:.2}x",
            settle_s / load_s
        );
        runs.push((settle_s, load_s, peak, rss_before));
    }
    let t = Instant::now();
    attendance::settle(&cfg, &opts, |_| {})?;
    let rerun_s = t.elapsed().as_secs_f64();
    let (load_s, insert_s) = mysql_refs::references(&pool, date, cfg.settle.batch_size)?;
    // Round 1's time (the one with the steps), the last round's peak (the setup's roster freed).
    let (_, _, peak, rss_before) = runs[runs.len() - 1];
    let settle_s = runs[0].0;
    print_table(employees, (settle_s, rerun_s, load_s, insert_s), (peak, rss_before));
    if rounds > 1 {
        print_rounds(&runs);
    }

    clear_redis(&mut con)?;
    // Settle connects to the broker only to drain events, and this day has none: this removes
    // whatever a run declared all the same (nothing, when all went well).
    attendance::teardown(&cfg, &[])?;

    drop(pool);
    attendance::mysql_server(&cfg)?.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
    Ok(())
}

/// Settle the day once, in-process: (seconds, peak RSS MB, RSS MB before it). `steps`: print
/// where the time went.
fn settle_once(cfg: &Config, opts: &Options, employees: u32, steps: bool) -> Result<(f64, f64, f64)> {
    // Settle's own peak: the high-water mark restarts from here (the setup's memory is freed).
    std::fs::write("/proc/self/clear_refs", "5").context("resetting the peak RSS")?;
    let rss_before = proc_status_mb("VmRSS:")?;
    let t = Instant::now();
    let report = attendance::settle(cfg, opts, |_| {})?
        .last
        .context("settle settled no day")?;
    let settle_s = t.elapsed().as_secs_f64();
    let peak = proc_status_mb("VmHWM:")?;
    if report.failed > 0 || report.rows_written != u64::from(employees) {
        bail!(
            "settle wrote {} rows with {} failures",
            report.rows_written,
            report.failed
        );
    }
    if steps {
        println!("  counts: {:?}", report.counts);
        for (step, secs) in &report.steps {
            println!("  {step}: {secs:.3}s");
        }
        for (part, secs) in &report.parts {
            println!("    summed over threads: {part}: {secs:.3}s");
        }
    }
    Ok((settle_s, peak, rss_before))
}

/// Every round's settle beside the LOAD DATA run right after it, and the medians.
fn print_rounds(runs: &[(f64, f64, f64, f64)]) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let ratios: Vec<f64> = runs.iter().map(|r| r.0 / r.1).collect();
    let within = ratios.iter().filter(|r| **r <= 1.3).count();
    println!(
        "rounds: settle median {:.2} s, LOAD DATA median {:.2} s; ratio median {:.2}x, within 1.3x in {within} of {}: {}",
        median(runs.iter().map(|r| r.0).collect()),
        median(runs.iter().map(|r| r.1).collect()),
        median(ratios.clone()),
        runs.len(),
        ratios.iter().map(|r| format!("{r:.2}x")).collect::<Vec<_>>().join(", ")
    );
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
