//! Provenance in the system of record: settle writes every punch of the day to
//! MySQL's punch_log with its source, recorded_at, event id and how it came (live, bulk file,
//! corrected), a rerun writes nothing twice, and `report punches` shows them.
//! Regression: before, the settled row kept only the times; source and recorded_at lived only
//! in the events, for a month.

use crate::common;

use chrono::{Duration, TimeZone, Utc};
use common::private_redis::PrivateRedis;
use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";

/// S1 supervises D1 (A1, A2); S2 supervises D2 (B1).
const ROSTER: &str = "employee_id,name,department_id,department_name,role\n\
S1,Name S1,D1,Dept D1,supervisor\n\
A1,Name A1,D1,Dept D1,employee\n\
A2,Name A2,D1,Dept D1,employee\n\
S2,Name S2,D2,Dept D2,supervisor\n\
B1,Name B1,D2,Dept D2,employee\n";

/// Three days ago in the company's zone: ended, and well inside the back-dating bound.
fn day() -> String {
    let tz: chrono_tz::Tz = TZ.parse().unwrap();
    (Utc::now().with_timezone(&tz).date_naive() - Duration::days(3)).to_string()
}

/// `day`'s local `hh:mm` as RFC 3339 with the zone's offset.
fn at(day: &str, hhmm: &str) -> String {
    let tz: chrono_tz::Tz = TZ.parse().unwrap();
    let local = chrono::NaiveDateTime::parse_from_str(&format!("{day}T{hhmm}"), "%Y-%m-%dT%H:%M").unwrap();
    tz.from_local_datetime(&local).single().unwrap().to_rfc3339()
}

/// The same instant as MySQL's UTC DATETIME text.
fn utc(day: &str, hhmm: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(&at(day, hhmm))
        .unwrap()
        .with_timezone(&Utc)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// Run the binary on the test's own Redis; it must succeed.
fn on(env: &TestEnv, redis: &PrivateRedis, args: &[&str]) -> String {
    let o = env
        .std_cmd()
        .env("ATTENDANCE_REDIS_URL", redis.url())
        .args(args)
        .output()
        .unwrap();
    common::expect_ok(args, o)
}

/// The punch log, in a stable order: employee, kind, time (UTC), source, how.
fn log(env: &TestEnv) -> Vec<(String, String, String, String, String)> {
    env.mysql()
        .query(
            "SELECT employee_id, kind, CAST(punched_at AS CHAR), source, how FROM punch_log \
             ORDER BY employee_id, punched_at, kind",
        )
        .unwrap()
}

#[test]
fn settle_logs_every_punch_with_its_source_and_how_and_a_rerun_adds_nothing() {
    let env = TestEnv::migrated(TZ);
    let roster = env.file("roster.csv", ROSTER);
    env.ok(&["org", "import", roster.to_str().unwrap(), "-q"]);
    let day = day();
    let no_broker = common::CLOSED_BROKER;

    // A live check-in from a kiosk, and a file of punches from another source.
    let o = env
        .cmd()
        .args([
            "checkin",
            "A1",
            "--kind",
            "in",
            "--at",
            &at(&day, "08:05"),
            "--source",
            "kiosk-3",
            "-q",
        ])
        .env("ATTENDANCE_AMQP_URL", no_broker)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = env.file(
        "punches.csv",
        &format!(
            "employee_id,kind,at,source\nA2,in,{},badge-7\nB1,in,{},badge-7\nB1,out,{},badge-7\n",
            at(&day, "08:40"),
            at(&day, "09:10"),
            at(&day, "17:20")
        ),
    );
    let o = env
        .cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "-q"])
        .env("ATTENDANCE_AMQP_URL", no_broker)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Settle killed after the first department's board and log are deleted: the rerun finds
    // D2's log again and writes none of it twice.
    let o = env
        .cmd()
        .args(["settle", "--date", &day, "-q"])
        .env("ATTENDANCE_SETTLE_ABORT_AFTER_DELETES", "1")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the hook kills settle");
    assert_eq!(env.count("punch_log"), 4, "every punch logged before the boards go");
    let kept: Vec<String> = env
        .redis_keys()
        .into_iter()
        .filter(|k| k.contains("settle:punchlog:{D2}"))
        .collect();
    assert_eq!(kept.len(), 1, "D2's log is still there for the rerun");
    let rerun = env.json(&["settle", "--date", &day, "--json"]);
    assert_eq!(rerun["punches_logged"], 0, "{rerun}");
    assert_eq!(env.count("punch_log"), 4);
    let left: Vec<String> = env
        .redis_keys()
        .into_iter()
        .filter(|k| k.contains("punchlog"))
        .collect();
    assert!(left.is_empty(), "settle deletes the logs with the boards: {left:?}");

    // A correction is logged too, as corrected, by whom.
    env.act_as("S1");
    env.ok(&[
        "correct",
        "A1",
        "--date",
        &day,
        "--out",
        "17:45",
        "--reason",
        "kiosk down",
        "-q",
    ]);

    let live = |e: &str, k: &str, t: &str, s: &str, h: &str| {
        (e.to_string(), k.to_string(), utc(&day, t), s.to_string(), h.to_string())
    };
    assert_eq!(
        log(&env),
        vec![
            live("A1", "in", "08:05", "kiosk-3", "live"),
            live("A1", "out", "17:45", "correct by S1", "corrected"),
            live("A2", "in", "08:40", "badge-7", "bulk"),
            live("B1", "in", "09:10", "badge-7", "bulk"),
            live("B1", "out", "17:20", "badge-7", "bulk"),
        ]
    );
    // Every settled punch keeps its event id (the outbox's, the notification's) and when it
    // was recorded (now-ish, not the back-dated time of the punch).
    let rows: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT event_id, CAST(recorded_at AS CHAR), how FROM punch_log WHERE how <> 'corrected'")
        .unwrap();
    let today = Utc::now().format("%Y-%m-%d").to_string();
    for (id, recorded, _) in &rows {
        assert_eq!(id.len(), 36, "a UUID: {id}");
        assert!(recorded.starts_with(&today), "{recorded}");
    }

    // The report: each punch with its local time, source and how.
    let r = env.json(&[
        "report",
        "punches",
        "--employee",
        "A1",
        "--from",
        &day,
        "--to",
        &day,
        "--format",
        "json",
    ]);
    let r = r["rows"].as_array().unwrap();
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r[0]["source"], "kiosk-3");
    assert_eq!(r[0]["how"], "live");
    assert_eq!(r[0]["kind"], "in");
    assert!(r[0]["at"].as_str().unwrap().contains("08:05"), "{r:?}");
    assert_eq!(
        r[0]["key_id"],
        common::KEY_ID,
        "the kiosk key that signed the punch: {r:?}"
    );
    assert_eq!(r[1]["how"], "corrected");
    assert!(r[1]["key_id"].is_null());
    let d2 = env.json(&[
        "report", "punches", "--dept", "D2", "--from", &day, "--to", &day, "--format", "json",
    ]);
    assert_eq!(d2["rows"].as_array().unwrap().len(), 2, "{d2}");
    env.fails(&["report", "punches", "--employee", "NOBODY"], 1);
}

#[test]
fn recover_logs_the_punches_it_puts_back_as_recovered_with_their_source() {
    let env = TestEnv::migrated(TZ);
    let roster = env.file("roster.csv", ROSTER);
    env.ok(&["org", "import", roster.to_str().unwrap(), "-q"]);
    let mut redis = PrivateRedis::start(&env, false);
    let day = day();
    let a1 = at(&day, "08:05");
    on(
        &env,
        &redis,
        &[
            "checkin", "A1", "--kind", "in", "--at", &a1, "--source", "kiosk-3", "-q",
        ],
    );
    let file = env.file(
        "punches.csv",
        &format!("employee_id,kind,at,source\nB1,in,{},badge-7\n", at(&day, "09:10")),
    );
    on(&env, &redis, &["checkin", "--file", file.to_str().unwrap(), "-q"]);
    // No AOF: the kill loses the boards and their punch logs; the journal still has the events.
    redis.crash_and_restart();
    on(&env, &redis, &["recover", "--date", &day, "--idle-ms", "1000", "-q"]);
    on(&env, &redis, &["settle", "--date", &day, "-q"]);
    let row = |e: &str, t: &str, s: &str| {
        (
            "in".to_string(),
            e.to_string(),
            utc(&day, t),
            s.to_string(),
            "recovered".to_string(),
        )
    };
    let got: Vec<(String, String, String, String, String)> =
        log(&env).into_iter().map(|(e, k, t, s, h)| (k, e, t, s, h)).collect();
    assert_eq!(got, vec![row("A1", "08:05", "kiosk-3"), row("B1", "09:10", "badge-7")]);
}
