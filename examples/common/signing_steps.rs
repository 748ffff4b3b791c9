//! What signing events costs (docs/security.md): the same bulk check-ins and single check-ins
//! with and without `signing.key_file`, side by side in one run, and the HMAC alone in process.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use base64::Engine;

use super::{percentiles, steps, time_one, Bench};

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

/// Two fresh days of bulk check-ins, one signed and one not, in both orders (morning: unsigned
/// first; evening: signed first), then single check-ins alternating, then the HMAC alone.
pub(super) fn signing_steps(b: &mut Bench, runs: usize) -> Result<()> {
    let key = key_file(b)?;
    let days = ["2026-11-23", "2026-11-24"];
    let mut files = Vec::new();
    for day in days {
        b.run(&steps::init_day(day))?;
        for phase in ["morning", "evening"] {
            let f = b.dir.join(format!("signing-{day}-{phase}.csv"));
            b.run(&steps::simulate(day, phase, f.to_str().expect("utf-8")))?;
            files.push(f.to_str().expect("utf-8").to_string());
        }
    }
    let punches = std::fs::read_to_string(&files[0])?.lines().count().saturating_sub(1);
    // (file, signed): morning of day 1 unsigned, then day 2 signed; evenings the other way.
    let order = [
        (&files[0], false),
        (&files[2], true),
        (&files[3], true),
        (&files[1], false),
    ];
    let (mut plain, mut signed) = (Vec::new(), Vec::new());
    for (file, sign) in order {
        b.quiet("signing: a bulk check-in");
        let t = timed(b, sign.then_some(key.as_str()), &["checkin", "--file", file])?.as_secs_f64();
        if sign {
            signed.push(t)
        } else {
            plain.push(t)
        }
    }
    let (p, s) = (plain.iter().sum::<f64>(), signed.iter().sum::<f64>());
    b.report(
        &format!("bulk check-in of {punches} punches, signed (a morning and an evening, each on a fresh day)"),
        format!("{:.2} s + {:.2} s = {:.2}x unsigned", signed[0], signed[1], s / p),
        format!("unsigned, same run: {:.2} s + {:.2} s", plain[0], plain[1]),
        "<= 1.05x",
    );
    let ids: Vec<String> = std::fs::read_to_string(&files[0])?
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next().map(str::to_string))
        .collect();
    let (mut with, mut without) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    b.quiet("signing: single check-ins");
    for i in 0..runs {
        // Each an out punch now on day 1's employees: distinct employees, both alike.
        let (e1, e2) = (&ids[(2 * i) % ids.len()], &ids[(2 * i + 1) % ids.len()]);
        with.push(time_one(command(b, Some(&key), &["checkin", e1]))?);
        without.push(time_one(command(b, None, &["checkin", e2]))?);
    }
    let (w, wo) = (percentiles(&mut with), percentiles(&mut without));
    b.report(
        "single checkin process, signed (runs alternating with unsigned ones)",
        format!("median {:.2} ms = {:.3}x unsigned, p99 {:.2} ms", w.0, w.0 / wo.0, w.1),
        format!("unsigned: median {:.2} ms, p99 {:.2} ms", wo.0, wo.1),
        "<= 1.05x",
    );
    let signer = attendance::Signer::new("bench", &base64::engine::general_purpose::STANDARD.encode([7u8; 32]))
        .map_err(anyhow::Error::msg)?;
    let text = "attendance-event-v1\n\"6f1c2d3e4f5a4b6c8d9e0f1a2b3c4d5e\"\n\"E000123\"\n\"Employee 123\"\n\"D042\"\n2026-11-30\n1796029920\nin\n12\n0\n\"kiosk-3\"\n1796029920250\n\"bench\"";
    let n = 100_000;
    let t = Instant::now();
    let mut len = 0;
    for _ in 0..n {
        len += signer.sign(std::hint::black_box(text)).len();
    }
    let per = t.elapsed().as_secs_f64() / f64::from(n) * 1e6;
    b.report(
        "HMAC-SHA256 of one event's canonical text, in process",
        format!(
            "{per:.2} us per event; {:.0} ms per 100,000 ({len} signature bytes)",
            per * 100.0
        ),
        "-".into(),
        "-",
    );
    Ok(())
}
