//! The month at scale: `report month` and `report payroll` of a settled month of 100,000
//! employees (500 departments), each run as a process writing CSV to a file (time and peak RSS),
//! beside `SELECT ... INTO OUTFILE` of the very rows each reads (the same columns, from the same
//! tables), in the same run.
//!
//! cargo build --release --bins --examples && target/release/examples/report_bench [--employees N --departments N --rounds N]
//!
//! `--keep` leaves the database in place to look into (`--cleanup` then removes it).
//!
//! The month is the last whole month before today; its work days' `attendance` rows (about 2.2
//! million) are written straight into the table with `LOAD DATA LOCAL INFILE`, a day at a time:
//! the reports read nothing else. It uses its own namespace (`benchreport`, or `--tag NAME`)
//! and database (`attendance_<namespace>`), and removes them, the reports and the OUTFILEs (the
//! server writes those into a folder of this run's under the temporary directory) at the end.

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

#[path = "common/args.rs"]
mod args;
#[path = "common/peak.rs"]
mod peak;
#[path = "common/redis_refs.rs"]
mod redis_refs;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use args::arg;
use attendance::Config;
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, TimeZone};
use mysql::prelude::Queryable;

fn ns() -> &'static str {
    args::tag("benchreport")
}

fn db() -> String {
    format!("attendance_{}", ns())
}

fn config() -> Result<Config> {
    args::ns_config(ns())
}

/// The first day of the last whole month before `today`.
fn last_month(today: NaiveDate) -> NaiveDate {
    let first = today.with_day(1).unwrap_or(today);
    (first - Duration::days(1)).with_day(1).unwrap_or(first)
}

/// A local time of `date` as the UTC instant the table stores.
fn utc(cfg: &Config, date: NaiveDate, h: u32, m: u32) -> NaiveDateTime {
    let local = date.and_hms_opt(h, m, 0).unwrap_or_default();
    cfg.timezone
        .from_local_datetime(&local)
        .earliest()
        .map_or(local, |t| t.naive_utc())
}

/// One work day's rows for everyone, as LOAD DATA reads them: most present, some late, some
/// leaving late (overtime), a few absent.
fn day_tsv(cfg: &Config, people: &[(String, String)], date: NaiveDate) -> Vec<u8> {
    let mut out = String::with_capacity(people.len() * 110);
    for (i, (e, d)) in people.iter().enumerate() {
        let k = (i as u64)
            .wrapping_mul(2_654_435_761)
            .wrapping_add(u64::from(date.ordinal()))
            % 100;
        let fmt = |t: NaiveDateTime| t.format("%Y-%m-%d %H:%M:%S").to_string();
        let (status, fi, lo, late) = match k {
            0..=2 => ("absent", "\\N".to_string(), "\\N".to_string(), 0),
            3..=10 => ("late", fmt(utc(cfg, date, 9, 20)), fmt(utc(cfg, date, 18, 5)), 20),
            11..=30 => ("present", fmt(utc(cfg, date, 8, 50)), fmt(utc(cfg, date, 19, 30)), 0),
            _ => ("present", fmt(utc(cfg, date, 8, 55)), fmt(utc(cfg, date, 18, 2)), 0),
        };
        let _ = writeln!(out, "{date}\t{e}\t{d}\t{status}\t{fi}\t{lo}\t{late}\t0\t\t0");
    }
    out.into_bytes()
}

/// Write the month's work days straight into `attendance`; the rows written.
fn fill_month(cfg: &Config, pool: &attendance::Db, first: NaiveDate, last: NaiveDate) -> Result<u64> {
    let mut conn = pool.conn()?;
    let people: Vec<(String, String)> = conn.query("SELECT id, department_id FROM employees ORDER BY id")?;
    let mut rows = 0;
    for date in first.iter_days().take_while(|d| *d <= last) {
        if !attendance::is_policy_workday(&cfg.policy, date) {
            continue;
        }
        let feed = std::sync::Arc::new(day_tsv(cfg, &people, date));
        conn.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(move |_, w| {
            w.write_all(&feed)?;
            Ok(())
        })));
        conn.query_drop(
            "LOAD DATA LOCAL INFILE 'day.tsv' INTO TABLE attendance (work_date, employee_id, department_id, \
             status, first_in, last_out, late_minutes, early_minutes, punches, corrected)",
        )?;
        rows += conn.affected_rows();
    }
    Ok(rows)
}

/// Seconds for `SELECT ... INTO OUTFILE` of `select` into `file` (written by the server).
fn outfile(pool: &attendance::Db, select: &str, file: &Path) -> Result<f64> {
    let mut conn = pool.conn()?;
    let t = Instant::now();
    conn.query_drop(format!("{select} INTO OUTFILE '{}'", file.display()))
        .context("SELECT ... INTO OUTFILE (is the server's secure_file_priv set?)")?;
    Ok(t.elapsed().as_secs_f64())
}

/// The CPU seconds (user and system) of every child process waited for so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// A report as a process: (seconds, CPU seconds of its own, peak RSS MB, lines written). The
/// rest of its time is MySQL answering (and waiting for a core).
fn report(bin: &Path, cfg: &Config, args: &[&str], out: &Path) -> Result<(f64, f64, f64, usize)> {
    let mut c = args::command(bin, cfg);
    c.env("ATTENDANCE_TIMEZONE", "Europe/Paris")
        .args(args)
        .args(["--format", "csv", "-o"])
        .arg(out);
    let cpu = children_cpu();
    let (status, took, peak, err) = peak::run_peak(c)?;
    let cpu = children_cpu() - cpu;
    if !status.success() {
        bail!("attendance {args:?}: {status}: {err}");
    }
    let lines = std::fs::read(out)?.iter().filter(|b| **b == b'\n').count();
    Ok((took.as_secs_f64(), cpu, peak, lines))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bench(cfg: &Config, dir: &Path) -> Result<()> {
    let employees = arg("--employees", 100_000)?;
    let departments = arg("--departments", 500)?;
    let rounds = arg("--rounds", 1)?.max(1);
    let bin = args::binary()?;
    attendance::mysql_server(cfg)?.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
    attendance::migrate(cfg)?;
    let mut csv = Vec::new();
    attendance::generate_roster(&mut csv, employees, departments, 42)?;
    let pool = attendance::Db::open(cfg)?;
    attendance::upsert_roster(&pool, &attendance::parse_roster(csv.as_slice())?)?;
    let today = chrono::Utc::now().with_timezone(&cfg.timezone).date_naive();
    let first = last_month(today);
    let last = (first + Duration::days(31)).with_day(1).unwrap_or(first) - Duration::days(1);
    let t = Instant::now();
    let rows = fill_month(cfg, &pool, first, last)?;
    println!(
        "report benchmark: {employees} employees, {departments} departments, {} ({rows} rows written by LOAD DATA in {:.1} s), rounds {rounds}",
        first.format("%Y-%m"),
        t.elapsed().as_secs_f64()
    );
    let month = first.format("%Y-%m").to_string();
    let (from, to) = (first.to_string(), last.to_string());
    // The rows each report reads: the month sheet from the Monday of the month's first week
    // (the weekly threshold), payroll the same with the kind of each day's leave.
    let monday = first - Duration::days(i64::from(first.weekday().num_days_from_monday()));
    let month_select = format!(
        "SELECT a.department_id, a.employee_id, a.work_date, CAST(a.status AS CHAR), a.first_in, a.last_out \
         FROM attendance a WHERE a.work_date BETWEEN '{monday}' AND '{last}'"
    );
    let payroll_select = format!(
        "SELECT a.employee_id, a.department_id, CAST(a.status AS CHAR), a.first_in, a.last_out, a.late_minutes, \
         l.kind, a.work_date FROM attendance a LEFT JOIN leaves l ON a.status = 'on_leave' \
         AND l.employee_id = a.employee_id AND l.status = 'approved' AND l.half IS NULL \
         AND a.work_date BETWEEN l.from_date AND l.to_date WHERE a.work_date BETWEEN '{monday}' AND '{last}'"
    );
    let mut figures = Vec::new();
    for (name, args, select) in [
        (
            "report month",
            vec!["report", "month", "--month", month.as_str()],
            &month_select,
        ),
        (
            "report payroll",
            vec!["report", "payroll", "--from", from.as_str(), "--to", to.as_str()],
            &payroll_select,
        ),
    ] {
        let (mut secs, mut refs, mut peaks, mut cpus) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut lines = 0;
        for round in 0..rounds {
            // Alternating, so that neither always runs on a warmer cache.
            let file = dir.join(format!("{}-{round}.tsv", name.replace(' ', "-")));
            let out = dir.join(format!("{}-{round}.csv", name.replace(' ', "-")));
            let (s, c, p, l) = if round % 2 == 0 {
                refs.push(outfile(&pool, select, &file)?);
                report(&bin, cfg, &args, &out)?
            } else {
                let timed = report(&bin, cfg, &args, &out)?;
                refs.push(outfile(&pool, select, &file)?);
                timed
            };
            secs.push(s);
            cpus.push(c);
            peaks.push(p);
            lines = l;
            std::fs::remove_file(&file).ok();
            std::fs::remove_file(&out).ok();
        }
        let peak = peaks.iter().copied().fold(0.0, f64::max);
        figures.push((name, median(secs), median(cpus), median(refs), peak, lines));
    }
    println!();
    println!("| step | figure | reference (same run) | ratio (target <= 2x) |");
    println!("| --- | --- | --- | --- |");
    for (name, s, cpu, r, peak, lines) in figures {
        println!(
            "| `{name} --format csv -o FILE` (process; {lines} lines) | {s:.2} s ({cpu:.2} s of the process's own CPU); peak RSS {peak:.0} MB | SELECT ... INTO OUTFILE of the rows it reads: {r:.2} s | {:.2}x |",
            s / r
        );
    }
    println!(
        "(load average {})",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split(' ')
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(())
}

fn main() -> Result<()> {
    let cfg = config()?;
    // The server writes the OUTFILEs: into a folder of this run's that it may write, and that
    // this run may empty (files the server made in /tmp itself, sticky, would be its own).
    let dir = std::env::temp_dir().join(format!("report_bench.{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))?;
    let cleanup = |dir: &PathBuf| -> Result<()> {
        std::fs::remove_dir_all(dir).ok();
        redis_refs::delete_pattern(&mut attendance::Redis::open(&cfg)?, &format!("{}:*", ns()))?;
        attendance::mysql_server(&cfg)?.query_drop(format!("DROP DATABASE IF EXISTS {}", db()))?;
        Ok(())
    };
    if std::env::args().any(|a| a == "--keep") {
        // The month left in place to look into; `--cleanup` removes it.
        let ran = bench(&cfg, &dir);
        std::fs::remove_dir_all(&dir).ok();
        return ran;
    }
    args::run_then_cleanup(|| bench(&cfg, &dir), || cleanup(&dir))
}
