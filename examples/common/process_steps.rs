//! The morning's peak as kiosks make it: one `attendance checkin` process per punch, `--processes`
//! of them (20,000 by default) with `--parallel` (64) running at once and a `relay --follow`
//! taking their events, beside `redis-cli PING` processes run the same way (issue 40's
//! reference: a check-in process should reach at least 0.8x their rate). Then every punch is
//! checked where it must be: on today's boards and, once the relay has emptied the outboxes, in
//! the department queues (`attendance metrics` reads both).

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{percentiles, ping, Bench, RelayProcess};

/// What `n` processes made by `make(i)`, `parallel` at a time, took: (processes per second,
/// median ms, p99 ms).
fn run_parallel(n: usize, parallel: usize, make: &(dyn Fn(usize) -> Command + Sync)) -> Result<(f64, f64, f64)> {
    let next = AtomicUsize::new(0);
    let times = Mutex::new(Vec::with_capacity(n));
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let t = Instant::now();
                let o = make(i).stdout(Stdio::null()).stderr(Stdio::piped()).output();
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                match o {
                    Ok(o) if o.status.success() => times.lock().expect("not poisoned").push(ms),
                    Ok(o) => {
                        *failed.lock().expect("not poisoned") =
                            Some(format!("process {i} failed: {}", String::from_utf8_lossy(&o.stderr)));
                        next.store(n, Ordering::Relaxed);
                    }
                    Err(e) => {
                        *failed.lock().expect("not poisoned") = Some(format!("process {i} did not start: {e}"));
                        next.store(n, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    if let Some(why) = failed.into_inner().expect("not poisoned") {
        bail!("{why}");
    }
    let mut v = times.into_inner().expect("not poisoned");
    let (median, p99) = percentiles(&mut v);
    Ok((n as f64 / wall, median, p99))
}

/// `attendance metrics`, as series -> value.
fn metrics(b: &Bench) -> Result<HashMap<String, f64>> {
    let o = b
        .cmd()
        .args(["metrics", "--top", "0"])
        .stderr(Stdio::piped())
        .output()?;
    if !o.status.success() {
        bail!("metrics failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(String::from_utf8(o.stdout)?
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect())
}

/// The company's employees with no punch on today's boards yet (the single and latency steps
/// punch today too), last in the roster first, and the departments' queues.
fn fresh_today(b: &Bench, today: chrono::NaiveDate) -> Result<(Vec<String>, Vec<String>)> {
    let roster = attendance::parse_roster(std::fs::File::open(b.dir.join("roster.csv"))?)?;
    let mut depts: Vec<String> = roster.iter().map(|r| r.department_id.clone()).collect();
    depts.sort();
    depts.dedup();
    let keys = attendance::Keys::new(&b.cfg.namespace);
    let mut con = attendance::Redis::open(&b.cfg)?;
    let mut punched = std::collections::HashSet::new();
    for d in &depts {
        // init-day lays every employee out with an empty field: a punch makes it non-empty.
        let on: HashMap<String, String> = redis::Commands::hgetall(&mut con, keys.board(d, today))?;
        punched.extend(on.into_iter().filter(|(_, v)| !v.is_empty()).map(|(e, _)| e));
    }
    let ids = roster
        .iter()
        .rev()
        .map(|r| r.employee_id.clone())
        .filter(|e| !punched.contains(e))
        .collect();
    let queues = depts.iter().map(|d| format!("{}.dept.{d}", b.cfg.namespace)).collect();
    Ok((ids, queues))
}

/// `n` check-in processes (each one an employee's first punch of today), `parallel` at a time,
/// with a relay running; then `n` PING processes the same way; then the punches counted on the
/// boards and in the queues, which are emptied after.
pub(super) fn process_steps(b: &mut Bench, n: usize, parallel: usize) -> Result<()> {
    let today = chrono::Utc::now().with_timezone(&b.cfg.timezone).date_naive();
    b.run(&["init-day", "--date", &today.format("%Y-%m-%d").to_string()])?;
    let (ids, queues) = fresh_today(b, today)?;
    if ids.len() < n {
        bail!("--processes {n}: {} employees have not punched today", ids.len());
    }
    let count = |m: &HashMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let recorded = |m: &HashMap<String, f64>| {
        count(m, "attendance_checkins_recorded{kind=\"in\"}") + count(m, "attendance_checkins_recorded{kind=\"out\"}")
    };
    let relay = RelayProcess::start(b)?;
    // A relay sends the day's absence alerts to the same queues once they are due: let it, so
    // that the queues' count before the processes is the one to compare with.
    let mut before = metrics(b)?;
    for _ in 0..30 {
        std::thread::sleep(Duration::from_secs(1));
        let now = metrics(b)?;
        let settled = count(&now, "attendance_queue_messages") == count(&before, "attendance_queue_messages");
        before = now;
        if settled {
            break;
        }
    }
    b.quiet("the check-in processes");
    let checkins = run_parallel(n, parallel, &|i| {
        let mut c = b.cmd();
        c.args(["checkin", &ids[i], "--kind", "in", "-q"]);
        c
    })?;
    // The relay empties the outboxes into the queues: wait for it (bounded), then stop it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let after = loop {
        let m = metrics(b)?;
        if count(&m, "attendance_events_pending") == 0.0 || Instant::now() > deadline {
            break m;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    drop(relay);
    let pings = run_parallel(n, parallel, &|_| ping())?;
    let on_boards = recorded(&after) - recorded(&before);
    let queued = count(&after, "attendance_queue_messages") - count(&before, "attendance_queue_messages");
    let pending = count(&after, "attendance_events_pending");
    if on_boards as usize != n || queued as usize != n {
        bail!(
            "{n} check-in processes: {on_boards} punches on today's boards, {queued} in the queues, {pending} pending"
        );
    }
    b.report(
        &format!("{n} check-in processes, {parallel} at a time, relay running"),
        format!(
            "{:.0}/s = {:.2}x PING processes; median {:.1} ms, p99 {:.1} ms; {n} on the boards and {n} in the queues",
            checkins.0,
            checkins.0 / pings.0,
            checkins.1,
            checkins.2
        ),
        format!(
            "redis-cli PING processes run the same way: {:.0}/s, median {:.1} ms, p99 {:.1} ms",
            pings.0, pings.1, pings.2
        ),
        ">= 0.8x PING processes' rate",
    );
    // The queues hold a morning's worth of events: empty them for whatever runs next.
    super::purge(&b.cfg, &queues).context("purging the department queues")
}
