//! A bulk check-in whose Redis fails says what it did before: recorded,
//! sent, pending, in stderr and in `--json` (printed on the failing exit too), and a Redis that
//! refused (OOM) is reported in its own words, not as "no reply". The figures are checked
//! against what is in Redis and the queues.

use crate::common;
use std::process::Output;

use common::day::Day;
use common::private_redis::PrivateRedis;
use common::stall::{Stall, StallProxy};
use common::{queue_depth, TestEnv};
use redis::Commands;
use serde_json::Value;

const DEPTS: u32 = 8;
const EMPLOYEES: u32 = 400;

/// One check-in per employee of the roster (E000001..), on a fixed past day.
fn punch_file(env: &TestEnv) -> String {
    let mut csv = String::from("employee_id,kind,at\n");
    for i in 1..=EMPLOYEES {
        csv.push_str(&format!("E{i:06},in,2026-11-02T08:30:00Z\n"));
    }
    env.file("punches.csv", &csv).to_str().unwrap().to_string()
}

/// Punches on the day's boards, and events in the outboxes, of the Redis at `con`.
fn in_redis(con: &mut redis::Connection, ns: &str) -> (usize, usize) {
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{ns}:*")).query(con).unwrap();
    let (mut punched, mut outboxes) = (0, 0);
    for k in keys {
        if k.contains(":board:") {
            let b: std::collections::HashMap<String, String> = con.hgetall(&k).unwrap();
            punched += b.values().filter(|v| !v.is_empty()).count();
        } else if k.contains(":outbox:") {
            outboxes += con.hlen::<_, usize>(&k).unwrap();
        }
    }
    (punched, outboxes)
}

fn queued(env: &TestEnv) -> usize {
    (1..=DEPTS)
        .map(|d| queue_depth(&format!("{}.dept.D{d:03}", env.ns)) as usize)
        .sum()
}

fn n(v: &Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}")) as usize
}

/// Exit 3, the one-line error, the summary line, and the `--json` summary.
fn failed(o: &Output) -> (String, Value) {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    let json: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("the --json summary even on the failing exit ({e}): {err}"));
    eprintln!("{json}");
    (err, json)
}

/// Regression: Redis dying while the events were published, after every punch was recorded,
/// gave exit 3 with an empty `--json` and only "removing sent events from the outboxes in
/// Redis: unexpected end of file". Here the publisher's connection is dropped at its first
/// removal from an outbox (which never reaches Redis) and every later Redis byte goes nowhere;
/// the file fits one pipeline, so every punch is recorded before any event is handed over.
#[test]
fn a_bulk_whose_redis_dies_while_publishing_says_what_it_recorded_sent_and_left_pending() {
    let env = TestEnv::with_roster("UTC", EMPLOYEES, DEPTS);
    let file = punch_file(&env);
    let proxy = StallProxy::start(
        "127.0.0.1:6379",
        Stall::when_client_sends(b"$4\r\nHDEL\r\n").hold_trigger().then_drop(),
    );
    let o = env
        .cmd()
        .args(["checkin", "--file", &file, "--json"])
        .env("ATTENDANCE_REDIS_URL", format!("redis://127.0.0.1:{}/", proxy.port()))
        .env("ATTENDANCE_AMQP_PUBLISHERS", "1")
        .env("ATTENDANCE_REDIS_READ_TIMEOUT_MS", "1000")
        .output()
        .unwrap();
    let (err, r) = failed(&o);
    assert!(proxy.tripped(), "the publisher removed an event from an outbox");
    drop(proxy);

    let total = EMPLOYEES as usize;
    assert_eq!(
        (n(&r["rows"]), n(&r["recorded"]), n(&r["unconfirmed"])),
        (total, total, 0),
        "{r}"
    );
    let notes = &r["notifications"];
    let (sent, pending) = (n(&notes["sent"]), n(&notes["pending"]));
    assert!(sent > 0, "the first confirms came before the removal: {r}");
    assert_eq!(sent + pending, total, "{r}");
    // No removal reached Redis: every confirmed event is still in its outbox, and says so.
    assert_eq!(n(&notes["unremoved"]), sent, "{r}");
    assert!(r["error"].as_str().unwrap().contains("Redis"), "{r}");

    let line = err.lines().find(|l| l.starts_with("checkin --file:")).expect(&err);
    assert!(
        line.contains("after all 400 rows were done, while publishing"),
        "{line}"
    );
    assert!(line.contains("400 punches recorded"), "{line}");
    assert!(
        line.contains(&format!(
            "notifications: {sent} sent ({sent} of them still in their outboxes"
        )),
        "{line}"
    );
    assert!(line.contains(&format!("{pending} pending in the outboxes")), "{line}");
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("error: ") && last.contains("while publishing the notifications"),
        "{last}"
    );

    // What the summary says is what the stores hold.
    let (punched, outboxes) = in_redis(&mut env.redis(), &env.ns);
    assert_eq!(punched, total, "every punch recorded");
    assert_eq!(
        outboxes, total,
        "every event still in its outbox: the confirmed and the pending"
    );
    assert!(queued(&env) >= sent, "every confirmed event is in a queue");
    // `relay` sends what waits (the confirmed ones again: at least once).
    let again = env.json(&["relay", "--json"]);
    assert_eq!((n(&again["sent"]), n(&again["pending"])), (total, 0), "{again}");
}

/// Regression: a Redis refusing writes (OOM) made the summary call the punches "unconfirmed
/// (sent, no reply)": Redis answered, with a refusal, and that answer is what is reported.
#[test]
fn a_bulk_refused_by_a_full_redis_reports_redis_answer_not_no_reply() {
    let dir = std::env::temp_dir().join(format!("att-bulk-oom-{}", uuid::Uuid::new_v4().simple()));
    let redis = PrivateRedis::start_in(dir, false);
    let env = TestEnv::on_redis("UTC", &redis.url());
    env.day(Day::new(EMPLOYEES, DEPTS).import_flags(&["-q"]));
    let file = punch_file(&env);
    let before = redis.snapshot(&env.ns);
    redis.maxmemory(1);
    let (err, r) = failed(&env.run(&["checkin", "--file", &file, "--json"]));

    let total = EMPLOYEES as usize;
    assert_eq!((n(&r["recorded"]), n(&r["unconfirmed"])), (0, total), "{r}");
    let said = r["redis_answered"].as_str().expect("Redis's answer in --json");
    assert!(said.contains("OOM"), "{r}");
    assert!(r["error"].as_str().unwrap().contains("OOM"), "{r}");
    assert_eq!(
        (n(&r["notifications"]["sent"]), n(&r["notifications"]["pending"])),
        (0, 0),
        "{r}"
    );
    let line = err.lines().find(|l| l.starts_with("checkin --file:")).expect(&err);
    assert!(!line.contains("no reply"), "Redis replied: {line}");
    assert!(
        line.contains(&format!("{total} unconfirmed (Redis answered: ")) && line.contains("OOM"),
        "{line}"
    );
    assert!(err.lines().last().unwrap().contains("OOM"), "{err}");

    redis.maxmemory(0);
    assert_eq!(redis.snapshot(&env.ns), before, "nothing was written");
    assert_eq!(queued(&env), 0);
}
