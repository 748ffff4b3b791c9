//! One clock, the servers': the binary run with this host's clock moved by
//! libfaketime (Debian's `faketime`) against the real services. A punch without `--at` takes
//! the Redis server's time; a host off by more than `policy.max_clock_skew_secs` has its
//! punches with `--at`, its punch files and its settles refused, with nothing written.

use crate::common;
use std::process::{Command, Output};

use chrono::{DateTime, NaiveDate, Utc};
use common::TestEnv;

const TZ: &str = "Europe/Paris";

/// Whether `faketime` is here; without it each test says so and passes, except under CI
/// (`CI` set), where scripts/test.sh installs it and its absence fails the test: there a
/// skipped clock test would be a test that cannot fail.
fn faketime_missing() -> bool {
    let found = Command::new("faketime").arg("--version").output().is_ok();
    assert!(
        found || std::env::var_os("CI").is_none(),
        "faketime is required under CI: scripts/test.sh installs Debian's faketime"
    );
    if !found {
        eprintln!("SKIPPED: faketime (libfaketime, Debian package `faketime`) is not installed");
    }
    !found
}

/// Four employees in D001, when faketime is here to move the clock.
fn roster() -> Option<TestEnv> {
    (!faketime_missing()).then(|| TestEnv::with_roster(TZ, 4, 1))
}

/// `attendance args` with this host's clock moved by `offset` (faketime's `+2d`, `+10s`).
fn shifted(env: &TestEnv, offset: &str, args: &[&str]) -> Output {
    shifted_with(env, offset, args, &[])
}

/// [`shifted`] with more environment variables.
fn shifted_with(env: &TestEnv, offset: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut bin = env.std_cmd();
    bin.envs(vars.iter().copied());
    let mut c = Command::new("faketime");
    c.arg("-f").arg(offset).arg(bin.get_program()).args(args);
    // The monotonic clock bounds the waits: leave it alone.
    c.env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    for (k, v) in bin.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.output().unwrap()
}

/// A broker no one listens on: events wait in their outbox.
const NO_BROKER: (&str, &str) = ("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER);

/// When each event waiting in D001's outbox was recorded (the compact record's ninth field,
/// Unix milliseconds: `domain::event::record::record_prefix`).
fn recorded_at(env: &TestEnv) -> Vec<DateTime<Utc>> {
    env.outbox("D001")
        .values()
        .map(|r| {
            let ms: i64 = r.split('\t').nth(8).unwrap().parse().unwrap();
            DateTime::from_timestamp_millis(ms).unwrap()
        })
        .collect()
}

/// Whether `t` is within a second of the server's clock between `before` and `after`.
fn between(t: DateTime<Utc>, before: DateTime<Utc>, after: DateTime<Utc>) -> bool {
    t >= before - chrono::Duration::seconds(1) && t <= after + chrono::Duration::seconds(1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The Redis server's clock, as the test reads it (not through faketime).
fn server_now(env: &TestEnv) -> DateTime<Utc> {
    let (secs, micros): (i64, i64) = redis::cmd("TIME").query(&mut env.redis()).unwrap();
    DateTime::from_timestamp_micros(secs * 1_000_000 + micros).unwrap()
}

fn local_date(at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&TZ.parse::<chrono_tz::Tz>().unwrap()).date_naive()
}

/// `checkin EMP --json` without `--at` from a host `offset` off: it must exit 0 and be stamped
/// with the Redis server's time. Returns its JSON and the server's clock before it.
fn punch_now(env: &TestEnv, offset: &str, emp: &str) -> (serde_json::Value, DateTime<Utc>) {
    let before = server_now(env);
    let o = shifted_with(env, offset, &["checkin", emp, "--json"], &[NO_BROKER]);
    let after = server_now(env);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let at = DateTime::parse_from_rfc3339(v["at"].as_str().unwrap()).unwrap();
    assert!(
        between(at.with_timezone(&Utc), before, after),
        "the server's time {before}..{after}, not the host's ({offset}): {v}"
    );
    let recorded = recorded_at(env);
    assert!(
        recorded.iter().all(|t| between(*t, before, after)),
        "recorded by the server's clock: {recorded:?}"
    );
    let day = common::date(v["work_date"].as_str().unwrap());
    assert!(
        [local_date(before), local_date(after)].contains(&day),
        "filed under the server's day, not the host's: {v}"
    );
    (v, before)
}

#[test]
fn a_punch_without_at_from_a_host_two_days_ahead_lands_on_the_servers_day() {
    let Some(env) = roster() else { return };
    let (v, _) = punch_now(&env, "+2d", "E000002");
    let day = v["work_date"].as_str().unwrap().to_string();
    assert!(env.board("D001", &day).contains_key("E000002"), "on today's board");
    let ahead = (common::date(&day) + chrono::Days::new(2)).to_string();
    assert!(env.board_keys(&ahead).is_empty(), "no board two days away");
}

#[test]
fn a_punch_with_at_from_a_host_two_days_ahead_is_refused_naming_the_skew() {
    let Some(env) = roster() else { return };
    let at = (server_now(&env) - chrono::Duration::minutes(5)).to_rfc3339();
    let before = env.redis_snapshot();
    let o = shifted(&env, "+2d", &["checkin", "E000002", "--at", &at]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("s ahead of the Redis server's"), "{err}");
    assert!(err.contains("policy.max_clock_skew_secs = 30"), "{err}");
    assert_eq!(env.redis_snapshot(), before, "nothing written to Redis");

    // A punch file: every row has its own time, so the whole file is refused.
    let file = env.file(
        "punches.csv",
        &format!("employee_id,kind,at\nE000002,in,{at}\nE000003,in,{at}\n"),
    );
    let o = shifted(&env, "+2d", &["checkin", "--file", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("policy.max_clock_skew_secs"), "{}", stderr(&o));
    assert_eq!(env.redis_snapshot(), before, "nothing written to Redis");
}

#[test]
fn settle_of_today_from_a_host_a_day_ahead_is_refused() {
    let Some(env) = roster() else { return };
    let today = local_date(server_now(&env)).to_string();
    let o = shifted(&env, "+1d", &["settle", "--date", &today]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("s ahead of the Redis server's"), "{}", stderr(&o));
    assert!(stderr(&o).contains("settle is refused"), "{}", stderr(&o));
    // Nor a catch-up: the server's yesterday is not this host's.
    let o = shifted(&env, "+1d", &["settle"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        (env.count("attendance"), env.count("settle_runs")),
        (0, 0),
        "nothing written"
    );
}

#[test]
fn a_host_within_the_skew_punches_at_the_servers_time_and_settles_as_before() {
    let Some(env) = roster() else { return };
    let (_, before) = punch_now(&env, "+10s", "E000002");
    let at = (before - chrono::Duration::minutes(5)).to_rfc3339();
    let o = shifted(&env, "+10s", &["checkin", "E000003", "--at", &at, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // E000002's event was recorded a moment ago by the server's clock: not stale, so
    // E000003's check-in leaves it to the relay (to the host's clock, 10 s ahead, it looked
    // stale, and left with E000003's).
    let waiting = recorded_at(&env);
    assert_eq!(waiting.len(), 1, "E000002's event still waits: {waiting:?}");
    // A punch file from the same host: its events recorded by the server's clock too.
    let file = env.file("punches.csv", &format!("employee_id,kind,at\nE000004,in,{at}\n"));
    let start = server_now(&env);
    let o = shifted_with(
        &env,
        "+10s",
        &["checkin", "--file", file.to_str().unwrap()],
        &[NO_BROKER],
    );
    let end = server_now(&env);
    assert!(o.status.success(), "{}", stderr(&o));
    let recorded: Vec<_> = recorded_at(&env).into_iter().filter(|t| !waiting.contains(t)).collect();
    assert!(
        recorded.len() == 1 && between(recorded[0], start, end),
        "recorded by the server's clock {start}..{end}, not 10 s ahead: {recorded:?}"
    );
    let yesterday = (local_date(before) - chrono::Days::new(1)).to_string();
    let o = shifted(&env, "+10s", &["settle", "--date", &yesterday, "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(env.count("settle_runs"), 1);
}

#[test]
fn doctor_fails_a_host_past_the_skew_and_names_the_key() {
    if faketime_missing() {
        return;
    }
    let env = TestEnv::migrated(TZ);
    let o = shifted(&env, "+2d", &["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let clock = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "clock")
        .unwrap_or_else(|| panic!("no clock check: {v}"));
    assert_eq!(clock["status"], "fail", "{clock}");
    assert!(
        clock["detail"]
            .as_str()
            .unwrap()
            .contains("policy.max_clock_skew_secs = 30"),
        "{clock}"
    );
}
