//! Durability through the binary: a Redis of the test's own (with and without an append-only
//! file) killed with SIGKILL mid-day and restarted on the same port and directory; the journal
//! and `recover`; the persistence warnings; the back-dating limit in single and bulk check-ins.
//! Each crashed day is compared with an uncrashed twin: the same punches in another namespace
//! and database on the shared Redis.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use amiquip::Connection;
use chrono::{Duration as Days, SecondsFormat, Utc};
use common::day::Day;
use common::private_redis::PrivateRedis;
use common::{TestEnv, AMQP_URL};
use mysql::prelude::Queryable;
use serde_json::Value;

const TZ: &str = "Europe/Paris";
/// A Friday in the past (tests/common lifts the back-dating limit for fixed days like this one).
const DAY: &str = "2026-11-20";

/// The binary on the private Redis (or the shared one for `None`).
fn cmd(env: &TestEnv, redis: Option<&PrivateRedis>) -> Command {
    let mut c = env.std_cmd();
    if let Some(r) = redis {
        c.env("ATTENDANCE_REDIS_URL", r.url());
    }
    c
}

fn run(env: &TestEnv, redis: Option<&PrivateRedis>, args: &[&str]) -> std::process::Output {
    cmd(env, redis).args(args).output().unwrap()
}

fn ok(env: &TestEnv, redis: Option<&PrivateRedis>, args: &[&str]) -> String {
    common::expect_ok(args, run(env, redis, args))
}

/// A morning and an evening of the day: most punches in one bulk file, a few one by one
/// (one unlabelled, one a repeat), so both paths reach the journal.
fn day_of_punches(env: &TestEnv, redis: Option<&PrivateRedis>) -> usize {
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    let mut csv = String::from("employee_id,kind,at\n");
    let mut n = 0;
    for (i, e) in all.iter().enumerate().skip(3) {
        if i % 4 == 0 {
            continue; // absent
        }
        csv += &format!("{e},in,{DAY}T08:{:02}:00+01:00\n", 15 + i % 45);
        n += 1;
        if i % 3 != 0 {
            csv += &format!("{e},out,{DAY}T18:{:02}:00+01:00\n", i % 50);
            n += 1;
        }
    }
    let path = env.file("punches.csv", &csv);
    ok(env, redis, &["checkin", "--file", path.to_str().unwrap(), "-q"]);
    for (emp, kind, at) in [
        (&all[0], "in", "08:55:00"),
        (&all[0], "auto", "17:10:00"),
        (&all[1], "auto", "09:20:00"),
        (&all[1], "auto", "09:20:00"),
        (&all[2], "out", "18:30:00"),
    ] {
        let at = format!("{DAY}T{at}+01:00");
        let mut args = vec!["checkin", emp.as_str(), "--at", &at, "-q"];
        if kind != "auto" {
            args.extend(["--kind", kind]);
        }
        ok(env, redis, &args);
        n += 1;
    }
    n
}

/// The twin: the same roster and punches on the shared Redis, never crashed, settled.
fn twin_rows(employees: u32, departments: u32) -> Vec<String> {
    let twin = TestEnv::with_day(TZ, Day::new(employees, departments).init_day(DAY, &["-q"]));
    day_of_punches(&twin, None);
    ok(&twin, None, &["settle", "--date", DAY, "-q"]);
    twin.attendance_rows()
}

fn recover_json(env: &TestEnv, redis: &PrivateRedis) -> Value {
    let out = ok(
        env,
        Some(redis),
        &["recover", "--date", DAY, "--idle-ms", "1000", "--json"],
    );
    serde_json::from_str(out.trim()).unwrap()
}

use common::queue_depth as depth;

#[test]
fn with_aof_a_redis_killed_mid_day_keeps_every_punch_and_settles_like_its_twin() {
    let env = TestEnv::with_roster(TZ, 40, 3);
    let mut redis = PrivateRedis::start(&env, true);
    let o = run(&env, Some(&redis), &["init-day", "--date", DAY]);
    assert!(o.status.success());
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("warning"),
        "an AOF Redis with noeviction gets no warning: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    day_of_punches(&env, Some(&redis));
    let before = redis.snapshot(&env.ns);
    redis.crash_and_restart();
    assert_eq!(redis.snapshot(&env.ns), before, "the AOF brought every board back");
    ok(&env, Some(&redis), &["settle", "--date", DAY, "-q"]);
    let settled = env.attendance_rows();
    assert_eq!(settled.len(), 40);
    assert_eq!(settled, twin_rows(40, 3), "crashed with AOF == never crashed");
}

#[test]
fn without_aof_a_killed_redis_loses_the_day_and_recover_rebuilds_it_from_the_journal() {
    let env = TestEnv::with_roster(TZ, 40, 3);
    let mut redis = PrivateRedis::start(&env, false);
    let o = run(&env, Some(&redis), &["init-day", "--date", DAY]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: Redis has no persistence"), "{err}");
    let punches = day_of_punches(&env, Some(&redis));
    redis.crash_and_restart();
    assert!(redis.snapshot(&env.ns).is_empty(), "no AOF: the day is gone");

    let queues: Vec<String> = ["D001", "D002", "D003"]
        .iter()
        .map(|d| format!("{}.dept.{d}", env.ns))
        .collect();
    let depths: Vec<u32> = queues.iter().map(|q| depth(q)).collect();
    let first = recover_json(&env, &redis);
    // Every punch of the day but the exact repeat, which the board took as a duplicate and
    // published nothing for, so the journal never had it.
    let journaled = punches as u64 - 1;
    assert_eq!(first["read"], journaled, "{first}");
    assert_eq!(first["restored"], journaled, "{first}");
    assert_eq!(first["already_present"], 0, "{first}");
    assert_eq!(first["laid_out"], 40, "{first}");
    let after_first = redis.snapshot(&env.ns);
    assert!(
        after_first.iter().all(|(k, _)| !k.contains(":outbox:")),
        "recover writes no outbox: {after_first:?}"
    );
    assert_eq!(
        queues.iter().map(|q| depth(q)).collect::<Vec<_>>(),
        depths,
        "recover publishes nothing"
    );

    let second = recover_json(&env, &redis);
    assert_eq!(second["restored"], 0, "{second}");
    assert_eq!(second["already_present"], journaled, "{second}");
    assert_eq!(second["laid_out"], 0, "{second}");
    assert_eq!(redis.snapshot(&env.ns), after_first, "a second recover changes nothing");

    let o = run(&env, Some(&redis), &["settle", "--date", DAY]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: Redis has no persistence"), "{err}");
    assert_eq!(
        env.attendance_rows(),
        twin_rows(40, 3),
        "crashed and recovered == never crashed"
    );
}

#[test]
fn warnings_name_an_evicting_policy_and_stay_quiet_with_q() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let redis = PrivateRedis::start(&env, true);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut redis.con().unwrap())
        .unwrap();
    let o = run(&env, Some(&redis), &["init-day", "--date", DAY]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let warning: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warning.len(), 1, "{err}");
    assert!(
        warning[0].contains("allkeys-lru") && !warning[0].contains("no persistence"),
        "{err}"
    );
    let o = run(&env, Some(&redis), &["-q", "init-day", "--date", DAY]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stderr), "", "-q prints no warning");
}

#[test]
fn recover_without_a_journal_is_refused_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    // org import declared the topology ahead, the journal with it: a broker without it.
    env.bare_broker();
    let redis = PrivateRedis::start(&env, true);
    // Nothing was ever published in this namespace: no journal on the broker.
    let o = run(&env, Some(&redis), &["recover", "--date", DAY]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("journal"));
    assert!(redis.snapshot(&env.ns).is_empty());
    let o = cmd(&env, Some(&redis))
        .env("ATTENDANCE_JOURNAL_ENABLED", "false")
        .args(["recover", "--date", DAY])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let o = run(&env, Some(&redis), &["recover", "--date", "2026-11-31"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn journal_off_declares_no_journal_and_punches_still_notify() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    // org import declared the topology ahead (with the journal, on by default): start bare.
    env.bare_broker();
    let o = env
        .cmd()
        .env("ATTENDANCE_JOURNAL_ENABLED", "false")
        .args(["checkin", "E000002", "--at", &format!("{DAY}T08:00:00+01:00"), "--json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["notification"], "sent");
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)), 1);
    let mut conn = Connection::insecure_open(AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    assert!(ch.queue_declare_passive(format!("{}.journal", env.ns)).is_err());
    conn.close().ok();
}

#[test]
fn recover_ends_on_its_own_on_a_busy_journal_at_the_first_message_newer_than_its_start() {
    let env = TestEnv::with_day(TZ, Day::new(12, 2).init_day(DAY, &["-q"]));
    let punches = day_of_punches(&env, None);
    // An idle wait far longer than the test: only the newer message can end this read.
    let started = Instant::now();
    let child = env
        .std_cmd()
        .args(["recover", "--date", DAY, "--idle-ms", "60000", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    env.ok(&["checkin", "E000012", "-q"]);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["ended_by"], "newer_message", "{r}");
    assert_eq!(r["read"], punches as u64 - 1, "{r}");
    assert_eq!(r["restored"], 0, "nothing was lost: {r}");
}

/// Lay out DAY, punch E000002 in at 08:10 (published, which declares the journal), then `emp`
/// at 08:20 while the broker is away (its event pending in the outbox).
fn published_then_pending(env: &TestEnv, redis: &PrivateRedis, emp: &str) {
    ok(env, Some(redis), &["init-day", "--date", DAY, "-q"]);
    ok(
        env,
        Some(redis),
        &["checkin", "E000002", "--at", &format!("{DAY}T08:10:00+01:00"), "-q"],
    );
    let o = cmd(env, Some(redis))
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(["checkin", emp, "--at", &format!("{DAY}T08:20:00+01:00"), "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_punch_pending_in_the_outbox_reaches_the_journal_only_when_relay_sends_it() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let redis = PrivateRedis::start(&env, false);
    // One punch published at once (this also declares the journal), one while the broker is away.
    published_then_pending(&env, &redis, "E000003");
    let board = |r: &PrivateRedis| {
        r.snapshot(&env.ns)
            .into_iter()
            .filter(|(k, _)| k.contains(":board:"))
            .collect::<Vec<_>>()
    };
    let day_before = board(&redis);
    let wipe = |r: &PrivateRedis| {
        let keys: Vec<String> = r.snapshot(&env.ns).into_iter().map(|(k, _)| k).collect();
        let _: () = redis::cmd("DEL").arg(keys).query(&mut r.con().unwrap()).unwrap();
    };
    // Lost before relay ran: the journal has only the punch that was published.
    wipe(&redis);
    let r = recover_json(&env, &redis);
    assert_eq!((r["read"].as_u64(), r["restored"].as_u64()), (Some(1), Some(1)), "{r}");
    // Sent by relay (from an outbox that survived), then lost: both come back.
    wipe(&redis);
    ok(&env, Some(&redis), &["init-day", "--date", DAY, "-q"]);
    let o = cmd(&env, Some(&redis))
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(["checkin", "E000003", "--at", &format!("{DAY}T08:20:00+01:00"), "-q"])
        .output()
        .unwrap();
    assert!(o.status.success());
    ok(&env, Some(&redis), &["relay", "-q"]);
    wipe(&redis);
    let r = recover_json(&env, &redis);
    assert_eq!((r["read"].as_u64(), r["restored"].as_u64()), (Some(2), Some(2)), "{r}");
    assert_eq!(board(&redis), day_before, "the day as it was before it was lost");
}

#[test]
fn recover_reads_the_journal_batches_and_the_single_events_older_versions_wrote() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let redis = PrivateRedis::start(&env, false);
    // Today's publishers journal a batch (here of one event), while an older version journaled
    // each event on its own: made here from an event left pending in the outbox, published as
    // its JSON into the journal, and then removed from the outbox (as its publish would have).
    published_then_pending(&env, &redis, "E000004");
    let mut con = redis.con().unwrap();
    let outbox = env.keys().outbox("D001");
    let pending: std::collections::HashMap<String, String> =
        redis::cmd("HGETALL").arg(&outbox).query(&mut con).unwrap();
    let (id, stored) = pending.into_iter().next().expect("one pending event");
    // What an older version put on the wire (and in the journal) for it: the event JSON.
    let json = attendance::render(&id, &stored).unwrap().json;
    let mut conn = Connection::insecure_open(AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    let props = amiquip::AmqpProperties::default()
        .with_delivery_mode(2)
        .with_message_id(id.clone())
        .with_timestamp(Utc::now().timestamp() as u64);
    let journal = format!("{}.journal", env.ns);
    ch.basic_publish("", amiquip::Publish::with_properties(json.as_bytes(), journal, props))
        .unwrap();
    conn.close().unwrap();
    let _: () = redis::cmd("HDEL").arg(&outbox).arg(&id).query(&mut con).unwrap();
    std::thread::sleep(Duration::from_millis(1100));

    let keys: Vec<String> = redis.snapshot(&env.ns).into_iter().map(|(k, _)| k).collect();
    let _: () = redis::cmd("DEL").arg(keys).query(&mut con).unwrap();
    let r = recover_json(&env, &redis);
    assert_eq!((r["read"].as_u64(), r["restored"].as_u64()), (Some(2), Some(2)), "{r}");
    let status = ok(&env, Some(&redis), &["status", "E000004", "--date", DAY, "--json"]);
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["first_in"], format!("{DAY}T08:20:00+01:00"), "{status}");
}

/// An instant `days` days before now, RFC 3339.
fn days_ago(days: i64) -> String {
    (Utc::now() - Days::days(days)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[test]
fn a_punch_older_than_max_backdate_days_is_refused_by_a_rule_and_recorded_nowhere() {
    let env = TestEnv::with_roster("UTC", 4, 1);
    env.policy("policy.max_backdate_days", "7", "2000-01-01");
    let before = env.redis_snapshot();
    let mut c = env.std_cmd();
    let o = c.args(["checkin", "E000002", "--at", &days_ago(8)]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("max_backdate_days") && err.lines().count() == 1, "{err}");
    assert_eq!(env.redis_snapshot(), before);

    let mut c = env.std_cmd();
    let o = c
        .args(["checkin", "E000002", "--at", &days_ago(7), "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The rulebook's limit changed: a day back at most.
    env.policy("policy.max_backdate_days", "1", "2000-01-01");
    let mut c = env.std_cmd();
    let o = c.args(["checkin", "E000003", "--at", &days_ago(2)]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bulk_lists_a_back_dated_row_as_refused_exit_4_and_records_the_rest() {
    let env = TestEnv::with_roster("UTC", 4, 1);
    let csv = format!(
        "employee_id,kind,at\nE000002,in,{}\nE000003,in,{}\n",
        days_ago(9),
        days_ago(1)
    );
    let path = env.file("old.csv", &csv);
    env.policy("policy.max_backdate_days", "7", "2000-01-01");
    let o = env
        .cmd()
        .args(["checkin", "--file", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["recorded"], 1, "{v}");
    assert_eq!(v["refused"][0]["line"], 2, "{v}");
    assert!(
        v["refused"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("max_backdate_days"),
        "{v}"
    );
    let status: Value = serde_json::from_str(
        env.ok(&["status", "E000003", "--date", &days_ago(1)[..10], "--json"])
            .trim(),
    )
    .unwrap();
    assert_eq!(status["state"], "in", "{status}");
    let status: Value = serde_json::from_str(
        env.ok(&["status", "E000002", "--date", &days_ago(9)[..10], "--json"])
            .trim(),
    )
    .unwrap();
    assert_ne!(status["state"], "in", "{status}");
}

/// Settle's refusal of a lost day (exit 6, from branch `settle`) and recover as its answer.
#[test]
fn without_aof_settle_refuses_the_lost_day_until_recover_rebuilds_it() {
    let env = TestEnv::with_roster(TZ, 40, 3);
    let mut redis = PrivateRedis::start(&env, false);
    ok(&env, Some(&redis), &["init-day", "--date", DAY, "-q"]);
    day_of_punches(&env, Some(&redis));
    redis.crash_and_restart();
    let o = run(&env, Some(&redis), &["settle", "--date", DAY]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(6), "{err}");
    assert!(err.contains(&format!("attendance recover --date {DAY}")), "{err}");
    assert_eq!(env.count("attendance"), 0, "a refused settle writes no row");
    recover_json(&env, &redis);
    ok(&env, Some(&redis), &["settle", "--date", DAY, "-q"]);
    assert_eq!(env.attendance_rows(), twin_rows(40, 3));
}
