//! What signing events with a kiosk's Ed25519 key costs beside today's HMAC secret
//! (docs/security.md): the same bulk check-ins and single check-ins with either
//! `signing.key_file`, side by side in one run, in alternating pairs, and each signature alone
//! in process.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use base64::Engine;

use super::quiet::broker_cpu_secs;
use super::{amqp_refs, delete_pattern, percentiles, steps, time_one, Bench};

const KEY: &str = "ATTENDANCE_SIGNING_KEY_FILE";

/// A throwaway signing key in the results folder (private, as the binary requires).
fn key_file(b: &Bench) -> Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let raw = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let secret = base64::engine::general_purpose::STANDARD.encode(&raw.as_bytes()[..32]);
    let path = b.dir.join("bench-signing.key");
    std::fs::write(&path, format!("key_id = \"bench\"\nsecret = \"{secret}\"\n"))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(path.to_str().expect("utf-8 path").to_string())
}

/// A kiosk's Ed25519 key made by `keys generate` and added to the registry by `keys add`, as a
/// site deploys one.
fn ed25519_key_file(b: &Bench) -> Result<String> {
    let (key, public) = (b.dir.join("bench-ed25519.key"), b.dir.join("bench-ed25519.pub"));
    let _ = std::fs::remove_file(&key);
    let key = key.to_str().expect("utf-8 path").to_string();
    let o = command(b, None, &["keys", "generate", "bench-ed", "--out", &key])
        .stdout(Stdio::piped())
        .output()?;
    if !o.status.success() {
        bail!("keys generate failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    std::fs::write(&public, &o.stdout)?;
    let public = public.to_str().expect("utf-8 path");
    timed(b, None, &["keys", "add", "bench-ed", "--public-key", public])?;
    Ok(key)
}

/// The binary, signing with `key` or (None) not signing whatever the caller's environment says.
fn command(b: &Bench, key: Option<&str>, args: &[&str]) -> std::process::Command {
    let mut c = b.cmd();
    match key {
        Some(k) => c.env(KEY, k),
        None => c.env_remove(KEY),
    };
    c.args(args).arg("-q").stdout(Stdio::null());
    c
}

fn timed(b: &Bench, key: Option<&str>, args: &[&str]) -> Result<Duration> {
    let t = Instant::now();
    let o = command(b, key, args).output()?;
    if !o.status.success() {
        bail!("attendance {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(t.elapsed())
}

/// `n` work days (Monday to Friday) counting back from a week before today: every punch of
/// them is in the past, and each bulk check-in gets a day nobody punched on yet.
pub(super) fn fresh_days(n: usize) -> Vec<String> {
    use chrono::Datelike;
    let mut d = chrono::Local::now().date_naive() - chrono::Days::new(7);
    let mut days = Vec::with_capacity(n);
    while days.len() < n {
        if d.weekday().number_from_monday() <= 5 {
            days.push(d.format("%Y-%m-%d").to_string());
        }
        d = d.pred_opt().expect("a date before");
    }
    days
}

/// CPU seconds (user + system) of this process's children that have been waited for.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// CPU seconds the Redis server has used (user + system, `INFO cpu`; the whole server, so
/// another client's work counts too).
fn redis_cpu(con: &mut attendance::Redis) -> Result<f64> {
    let mut total = 0.0;
    for info in attendance::info_texts(con, "cpu")? {
        for l in info.lines() {
            if let Some(v) = l.strip_prefix("used_cpu_sys:").or(l.strip_prefix("used_cpu_user:")) {
                total += v.trim().parse::<f64>()?;
            }
        }
    }
    Ok(total)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    percentiles(&mut v).0
}

/// `pairs` pairs of bulk check-ins, one signed with an Ed25519 key and one with an HMAC secret,
/// each on a fresh day, the order alternating from pair to pair (HMAC first in the first); each
/// pair's ratio and the
/// median ratio. Between runs the broker is let go idle, the department queues are emptied and
/// the day's keys deleted, so that every run starts from the same state. Then single check-ins
/// alternating, then the MAC alone.
pub(super) fn signing_steps(b: &mut Bench, runs: usize, pairs: usize) -> Result<()> {
    let hmac = key_file(b)?;
    let ed25519 = ed25519_key_file(b)?;
    let roster = attendance::parse_roster(std::fs::File::open(b.dir.join("roster.csv"))?)?;
    let mut depts: Vec<&str> = roster.iter().map(|r| r.department_id.as_str()).collect();
    depts.sort_unstable();
    depts.dedup();
    let queues: Vec<String> = depts.iter().map(|d| format!("{}.dept.{d}", b.cfg.namespace)).collect();
    let mut con = attendance::Redis::open(&b.cfg)?;
    let days = fresh_days(2 * pairs);
    let (mut ratios, mut lines, mut punches) = (Vec::new(), Vec::new(), 0);
    let (mut all_signed, mut all_plain) = (Vec::new(), Vec::new());
    // CPU seconds per run, [HMAC, Ed25519]: of the `checkin --file` process, of Redis and of
    // the local broker.
    let (mut cpu, mut rcpu, mut bcpu) = (
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
    );
    for (i, pair) in days.chunks(2).enumerate() {
        let signed_first = i % 2 == 1;
        let mut times = [0.0f64; 2]; // [HMAC, Ed25519]
        for (k, day) in pair.iter().enumerate() {
            let sign = (k == 0) == signed_first;
            b.run(&steps::init_day(day))?;
            let f = b.dir.join(format!("signing-{day}-morning.csv"));
            let file = f.to_str().expect("utf-8 path").to_string();
            b.run(&steps::simulate(day, "morning", &file))?;
            punches = std::fs::read_to_string(&f)?.lines().count().saturating_sub(1);
            b.quiet("signing: a bulk check-in");
            let (c0, r0, b0) = (children_cpu(), redis_cpu(&mut con)?, broker_cpu_secs());
            let key = if sign { &ed25519 } else { &hmac };
            let t = timed(b, Some(key), &["checkin", "--file", &file])?.as_secs_f64();
            times[usize::from(sign)] = t;
            cpu[usize::from(sign)].push(children_cpu() - c0);
            rcpu[usize::from(sign)].push(redis_cpu(&mut con)? - r0);
            // Until the broker is idle again: what it writes after the confirms counts too.
            b.quiet("signing: the broker after a bulk check-in");
            if let (Some(b0), Some(b1)) = (b0, broker_cpu_secs()) {
                bcpu[usize::from(sign)].push(b1 - b0);
            }
            // The same state for the next run: no messages queued, no day's keys left.
            amqp_refs::purge(&b.cfg, &queues)?;
            let ns = &b.cfg.namespace;
            delete_pattern(&mut con, &format!("{ns}:board:*:{day}"))?;
            delete_pattern(&mut con, &format!("{ns}:punchlog:*:{day}:*"))?;
            std::fs::remove_file(&f)?;
        }
        let ratio = times[1] / times[0];
        ratios.push(ratio);
        all_plain.push(times[0]);
        all_signed.push(times[1]);
        lines.push(format!(
            "{}: {:.2} / {:.2} s = {ratio:.3}x",
            if signed_first { "E-H" } else { "H-E" },
            times[1],
            times[0]
        ));
    }
    b.report(
        &format!("bulk check-in of {punches} punches (a morning, each on a fresh day), Ed25519 / HMAC, {pairs} pairs"),
        format!(
            "median ratio {:.3}x (Ed25519 median {:.2} s, HMAC {:.2} s)",
            median(&ratios),
            median(&all_signed),
            median(&all_plain)
        ),
        format!("each pair, in its order: {}", lines.join("; ")),
        "<= 1.05x",
    );
    let (sc, uc, sr, ur) = (median(&cpu[1]), median(&cpu[0]), median(&rcpu[1]), median(&rcpu[0]));
    let broker = if bcpu[0].is_empty() || bcpu[1].is_empty() {
        "no local broker".to_string()
    } else {
        let (sb, ub) = (median(&bcpu[1]), median(&bcpu[0]));
        format!("RabbitMQ {sb:.2} / {ub:.2} s = {:.3}x", sb / ub)
    };
    b.report(
        "CPU of the same bulk check-ins, Ed25519 / HMAC, medians (less noisy than wall time on a busy machine)",
        format!(
            "checkin process {sc:.2} / {uc:.2} s = {:.3}x; Redis {sr:.2} / {ur:.2} s = {:.3}x; {broker}",
            sc / uc,
            sr / ur
        ),
        "Redis and RabbitMQ: the whole server's CPU (other clients count too); RabbitMQ until idle again".into(),
        "-",
    );
    let ids: Vec<String> = roster.iter().map(|r| r.employee_id.clone()).collect();
    let (mut with, mut without) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    b.quiet("signing: single check-ins");
    for i in 0..runs {
        // Each a punch now (today's first for its employee): distinct employees, both alike,
        // the order alternating.
        let (e1, e2) = (&ids[(2 * i) % ids.len()], &ids[(2 * i + 1) % ids.len()]);
        if i % 2 == 0 {
            with.push(time_one(command(b, Some(&ed25519), &["checkin", e1]))?);
            without.push(time_one(command(b, Some(&hmac), &["checkin", e2]))?);
        } else {
            without.push(time_one(command(b, Some(&hmac), &["checkin", e2]))?);
            with.push(time_one(command(b, Some(&ed25519), &["checkin", e1]))?);
        }
    }
    let (w, wo) = (percentiles(&mut with), percentiles(&mut without));
    b.report(
        "single checkin process, Ed25519 (runs alternating with HMAC ones)",
        format!("median {:.2} ms = {:.3}x HMAC, p99 {:.2} ms", w.0, w.0 / wo.0, w.1),
        format!("HMAC: median {:.2} ms, p99 {:.2} ms", wo.0, wo.1),
        "<= 1.05x",
    );
    let secret = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    for (what, signer) in [
        (
            "HMAC-SHA256 tag (128 bits, base64url)",
            attendance::Signer::new("bench", &secret),
        ),
        (
            "Ed25519 signature (base64url)",
            attendance::Signer::ed25519("bench", &secret),
        ),
    ] {
        let signer = signer.map_err(anyhow::Error::msg)?;
        // A record's signed bytes as a bulk check-in writes them (`event::record_prefix`).
        let body = "E000123\tEmployee 123\tD042\t1796029920\t3600\t2026-11-30\tbulk\t1796029920250\t12\t0\tbench\t";
        let n = 100_000;
        let t = Instant::now();
        let mut len = 0;
        for _ in 0..n {
            let tag = signer.tag_record(
                std::hint::black_box("6f1c2d3e-4f5a-4b6c-8d9e-0f1a2b3c4d5e"),
                std::hint::black_box(body),
                attendance::Kind::In,
            );
            len += tag.len();
        }
        let per = t.elapsed().as_secs_f64() / f64::from(n) * 1e6;
        b.report(
            &format!("{what} of one event's record, in process"),
            format!(
                "{per:.2} us per event; {:.0} ms per 100,000 ({len} tag bytes)",
                per * 100.0
            ),
            "-".into(),
            "-",
        );
    }
    Ok(())
}
