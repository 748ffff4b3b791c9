//! Absence alerts: at the check-in deadline plus the alert's minutes, the
//! running relay tells each department who of those due has not arrived, once however many
//! relays run, late rather than never; `watch-dept` shows it. Against the real binary and
//! services. The day's deadline is set a few minutes before now (in a zone where now is mid-day),
//! so the alert time has come by the Redis server's clock without waiting for it.

use crate::common;
use crate::common::contract;
use std::io::Read;
use std::time::{Duration, Instant};

use common::relay::{wait_for, Relay};
use common::TestEnv;
use redis::Commands;

/// D1: E1 (checks in before the alert), E2 (missing), E3 (on leave today), E4 (left
/// yesterday), E5 (starts tomorrow); D2: E6 and E7 (both missing).
fn roster(env: &TestEnv) -> String {
    let today = env.today();
    let (y, t) = (today.pred_opt().unwrap(), today.succ_opt().unwrap());
    format!(
        "employee_id,name,department_id,department_name,role,start_date,end_date\n\
         E1,Ann,D1,Sales,supervisor,,\nE2,Bob,D1,Sales,employee,,\nE3,Cy,D1,Sales,employee,,\n\
         E4,Di,D1,Sales,employee,,{y}\nE5,Ed,D1,Sales,employee,{t},\n\
         E6,Flo,D2,Legal,supervisor,,\nE7,Gus,D2,Legal,employee,,\n"
    )
}

/// A company whose check-in deadline was `minutes_ago` minutes ago (every day a work day, no
/// grace, the alert at the deadline), its roster imported, the day laid out, E3 on leave
/// today, E1 checked in, and the check-in's event taken off D1's queue.
fn company(minutes_ago: i64) -> TestEnv {
    let (zone, offset) = common::midday_zone();
    let env = TestEnv::migrated(&zone);
    common::alert_due_rules(&env, offset, minutes_ago);
    env.import_roster("roster.csv", &roster(&env));
    env.ok(&["init-day", "-q"]);
    let date = env.today();
    env.ok(&["leave", "add", "E3", &date.to_string(), &date.to_string(), "-q"]);
    env.ok(&["checkin", "E1", "--kind", "in", "-q"]);
    env.ok(&["watch-dept", "D1", "--once", "-q"]);
    env.ok(&["queues", "declare", "-q"]);
    env
}

fn queue(env: &TestEnv, dept: &str) -> String {
    format!("{}.dept.{dept}", env.ns)
}

/// The suite's rulebook has alerts off (tests/common): these relays' company turns them on.
fn relay(env: &TestEnv) -> Relay {
    env.policy("policy.absence_alerts", "true", "2000-01-01");
    Relay::start_with(env, &[])
}

/// The alert marks of the namespace (key -> value).
fn marks(env: &TestEnv) -> Vec<(String, String)> {
    let mut con = env.redis();
    let mut keys: Vec<String> = con.keys(format!("{}:alert:*", env.ns)).unwrap();
    keys.sort();
    // A claim with a TTL (the dead relay's, below) may expire between KEYS and GET: gone, it
    // is no mark.
    keys.into_iter()
        .filter_map(|k| {
            let v: Option<String> = con.get(&k).unwrap();
            v.map(|v| (k, v))
        })
        .collect()
}

fn sent(env: &TestEnv, n: usize) -> bool {
    marks(env).iter().filter(|(_, v)| v == "sent").count() == n
}

/// Stop a relay and return what it said on stderr.
fn stop(mut r: Relay) -> String {
    r.signal(libc::SIGTERM);
    let mut said = String::new();
    r.0.stderr.take().unwrap().read_to_string(&mut said).unwrap();
    r.0.wait().unwrap();
    said
}

/// The queue's messages, as `watch-dept --once --json` shows them, each checked against its
/// schema (docs/schema/watch-dept.json: only this scenario makes an absence alert).
fn shown(env: &TestEnv, dept: &str) -> Vec<serde_json::Value> {
    let schema = contract::validator("watch-dept");
    env.ok(&["watch-dept", dept, "--once", "--json", "-q"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .inspect(|v| contract::check(&schema, "watch-dept", v))
        .collect()
}

fn missing(alert: &serde_json::Value) -> Vec<&str> {
    alert["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["employee_id"].as_str().unwrap())
        .collect()
}

#[test]
fn an_alert_lands_in_each_department_queue_exactly_once_with_two_relays_running() {
    let env = company(2);
    assert_eq!(common::queue_depth(&queue(&env, "D1")), 0);
    let (a, b) = (relay(&env), relay(&env));
    wait_for("both departments' alerts marked sent", || sent(&env, 2));
    // Both relays have looked again since (every 5 s): neither sends a second one.
    std::thread::sleep(Duration::from_secs(6));
    let said = [stop(a), stop(b)].concat();
    assert_eq!(said.matches("absence alert sent to D1").count(), 1, "{said}");
    assert_eq!(said.matches("absence alert sent to D2").count(), 1, "{said}");
    assert_eq!(common::queue_depth(&queue(&env, "D1")), 1);
    assert_eq!(common::queue_depth(&queue(&env, "D2")), 1);
    // Exactly the missing: not the checked-in E1, not E3 on leave, not E4 who left, not E5
    // who starts tomorrow.
    let d1 = shown(&env, "D1");
    assert_eq!(d1.len(), 1, "{d1:?}");
    assert_eq!(d1[0]["type"], "absence_alert");
    assert_eq!(
        d1[0]["event_id"].as_str().unwrap(),
        format!("absence:D1:{}:default", d1[0]["work_date"].as_str().unwrap())
    );
    assert_eq!(missing(&d1[0]), ["E2"]);
    assert_eq!(d1[0]["missing"][0]["employee_name"], "Bob");
    assert_eq!(d1[0]["expected"], 2);
    // Signed by the relay's key, like a check-in's event.
    assert_eq!(d1[0]["key_id"], common::KEY_ID);
    let d2 = shown(&env, "D2");
    assert_eq!(missing(&d2[0]), ["E6", "E7"]);
    assert_eq!(d2[0]["expected"], 2);
}

#[test]
fn a_relay_started_after_the_alert_time_catches_up_and_says_it_is_late() {
    let env = company(10);
    // A relay that died holding D2's claim: its claim runs out, and the alert goes out late
    // rather than never.
    let claim = format!("{}:alert:{{D2}}:{}:default", env.ns, env.today());
    let _: () = redis::cmd("SET")
        .arg(&claim)
        .arg("claim:a-relay-that-died")
        .arg("PX")
        .arg(4_000)
        .query(&mut env.redis())
        .unwrap();
    let started = Instant::now();
    let relay = relay(&env);
    wait_for("D1's alert", || {
        marks(&env).iter().any(|(k, v)| k.contains("{D1}") && v == "sent")
    });
    assert_eq!(
        common::queue_depth(&queue(&env, "D2")),
        0,
        "D2 is claimed by another relay"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sent(&env, 2) {
        assert!(
            Instant::now() < deadline,
            "D2's alert never went out: {:?}",
            marks(&env)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "sent before the dead relay's claim ran out"
    );
    let said = stop(relay);
    assert!(said.contains("absence alert sent to D1 for"), "{said}");
    assert!(said.contains("late by"), "{said}");
    let d1 = shown(&env, "D1");
    assert_eq!(d1.len(), 1);
    assert_eq!(d1[0]["late"], true);
    assert!(d1[0]["late_minutes"].as_u64().unwrap() >= 9, "{:?}", d1[0]);
    assert_eq!(missing(&shown(&env, "D2")[0]), ["E6", "E7"]);
}

#[test]
fn no_alert_before_its_time_nor_when_alerts_are_off() {
    let env = company(2);
    for vars in [("true", "600"), ("false", "0")] {
        env.policy("policy.absence_alerts", vars.0, "2000-01-01");
        env.policy("policy.absence_alert_minutes", vars.1, "2000-01-01");
        let relay = Relay::start_with(&env, &[]);
        std::thread::sleep(Duration::from_secs(6));
        let said = stop(relay);
        assert!(!said.contains("absence alert"), "{vars:?}: {said}");
        assert!(marks(&env).is_empty(), "{vars:?}: {:?}", marks(&env));
        assert_eq!(common::queue_depth(&queue(&env, "D1")), 0, "{vars:?}");
    }
    // The same company with alerts on and due: sent.
    let relay = relay(&env);
    wait_for("the alerts", || sent(&env, 2));
    stop(relay);
}

/// A company whose alerts a relay sent; then `late` (employee, department), missing at the
/// alert, checks in and the relay hands their event on.
fn alerted(late: Option<(&str, &str)>) -> TestEnv {
    let env = company(2);
    let relay = relay(&env);
    wait_for("the alerts", || sent(&env, 2));
    if let Some((emp, dept)) = late {
        env.ok(&["checkin", emp, "--kind", "in", "-q"]);
        wait_for("the late check-in in its queue", || {
            common::queue_depth(&queue(&env, dept)) == 2
        });
    }
    stop(relay);
    env
}

#[test]
fn watch_dept_prints_the_alert_and_marks_a_later_check_in_arrived_late() {
    let env = alerted(Some(("E2", "D1")));
    let lines = env.ok(&["watch-dept", "D1", "--once", "-q"]);
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("D1 absence alert (default shift, due ") && lines[0].contains(": 1 of 2 not in: E2 Bob"),
        "{lines:?}"
    );
    assert!(lines[1].contains("E2 Bob in (late by"), "{lines:?}");
    assert!(lines[1].contains("arrived late (missing at the "), "{lines:?}");
    // Shown once: a second watcher finds nothing new.
    assert_eq!(env.ok(&["watch-dept", "D1", "--once", "-q"]), "");
}

#[test]
fn the_live_screen_shows_who_is_still_missing_and_who_arrived_late() {
    let env = alerted(Some(("E6", "D2")));
    let mut c = env.std_cmd();
    c.args(["watch-dept", "D2"]);
    let mut pty = common::pty::Pty::spawn(c, 24, 100);
    let has = |r: &[String], needle: &str| r.iter().any(|l| l.contains(needle));
    pty.wait_for("the alert's panel and the late arrival", |r| {
        has(r, "Absence alert ")
            && has(r, "still missing 1: E7 Gus")
            && has(r, "Arrived late:  E6 Flo")
            && has(r, "arrived late (missing at the ")
    });
    pty.send(b"q");
    assert!(pty.wait_exit(Duration::from_secs(10)).success());
}

#[test]
fn a_forged_or_unsigned_alert_is_parked_and_never_shown() {
    let env = alerted(None);
    let ring = env.keyring(&[(common::KEY_ID, &env.key_secret, false)], &[]);
    // A copy of the real alert with a name taken off the list, and an unsigned one.
    let mut real = shown_checked(&env, &ring, "D2");
    assert_eq!(real.len(), 1, "the relay's own alert verifies: {real:?}");
    let mut forged = real.remove(0);
    forged["missing"].as_array_mut().unwrap().pop();
    common::publish_to_queue(&queue(&env, "D2"), &forged.to_string(), "absence:forged");
    let mut unsigned = forged.clone();
    unsigned.as_object_mut().unwrap().remove("sig");
    unsigned.as_object_mut().unwrap().remove("key_id");
    common::publish_to_queue(&queue(&env, "D2"), &unsigned.to_string(), "absence:unsigned");
    let o = watch_with(&env, &ring, "D2");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "", "nothing shown");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("refused: bad signature"), "{said}");
    assert!(said.contains("refused: unsigned"), "{said}");
    assert_eq!(common::queue_depth(&format!("{}.parking", env.ns)), 2);
}

#[test]
fn dlq_replay_puts_a_parked_alert_back_and_keeps_a_forged_one() {
    let env = alerted(None);
    // D1's real alert parked by a watcher whose keyring revokes the relay's key.
    let revoked = env.keyring(&[(common::KEY_ID, &env.key_secret, false)], &[common::KEY_ID]);
    let o = watch_with(&env, &revoked, "D1");
    assert!(String::from_utf8_lossy(&o.stderr).contains("refused: "), "{o:?}");
    // A forged copy of D2's alert parked by a watcher with the right keyring.
    let ring = env.keyring(&[(common::KEY_ID, &env.key_secret, false)], &[]);
    let mut forged = shown_checked(&env, &ring, "D2").remove(0);
    forged["missing"].as_array_mut().unwrap().pop();
    common::publish_to_queue(&queue(&env, "D2"), &forged.to_string(), "absence:forged");
    assert!(shown_checked(&env, &ring, "D2").is_empty());
    assert_eq!(common::queue_depth(&format!("{}.parking", env.ns)), 2);

    let o = env.with_keyring(&ring, &["dlq", "replay", "--all"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("not replayed: absence:forged (bad signature"), "{said}");
    assert_eq!(
        common::queue_depth(&format!("{}.parking", env.ns)),
        1,
        "the forgery stays"
    );
    let back = shown_checked(&env, &ring, "D1");
    assert_eq!(back.len(), 1, "{back:?}");
    assert_eq!(back[0]["type"], "absence_alert", "{back:?}");
}

/// `watch-dept DEPT --once --json` with the keyring.
fn watch_with(env: &TestEnv, ring: &std::path::Path, dept: &str) -> std::process::Output {
    env.with_keyring(ring, &["watch-dept", dept, "--once", "--json"])
}

/// What [`watch_with`] shows, which must succeed.
fn shown_checked(env: &TestEnv, ring: &std::path::Path, dept: &str) -> Vec<serde_json::Value> {
    let o = watch_with(env, ring, dept);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
