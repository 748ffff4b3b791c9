//! `checkin --file`: same outcomes as single check-ins, refused rows reported, good rows landed.

use crate::common;
use std::collections::HashMap;

use common::TestEnv;

const PUNCHES: &str = "employee_id,kind,at,source\n\
E000002,in,2026-11-02T08:10:00+01:00,gate-a\n\
E000003,,2026-11-02T09:20:00+01:00,gate-a\n\
E000002,,2026-11-02T08:10:20+01:00,gate-a\n\
NOBODY,in,2026-11-02T08:00:00+01:00,gate-a\n\
E000004,in,not-a-time,gate-b\n\
E000011,in,2026-11-02T08:30:00+01:00,gate-b\n\
E000002,out,2026-11-02T17:00:00+01:00,gate-a\n\
E000003,,2026-11-02T18:30:00+01:00,gate-a\n\
E000011,in,2026-11-02T08:30:00+01:00,gate-b\n";

fn boards(env: &TestEnv) -> HashMap<String, String> {
    let mut all = HashMap::new();
    for d in ["D001", "D002"] {
        all.extend(env.board(d, "2026-11-02"));
    }
    all
}

#[test]
fn bulk_gives_the_same_boards_as_single_checkins_and_reports_refusals() {
    let bulk = TestEnv::with_roster("Europe/Paris", 20, 2);
    let f = bulk.file("punches.csv", PUNCHES);
    let o = bulk.run(&["checkin", "--file", f.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "some rows refused: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["rows"], 9);
    let refused: Vec<u64> = report["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(refused, vec![5, 6]);
    assert!(report["refused"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("unknown employee"));
    assert_eq!(report["recorded"], 5);
    assert_eq!(report["unchanged"], 2);

    // The same good punches, one process each.
    let single = TestEnv::with_roster("Europe/Paris", 20, 2);
    for line in PUNCHES.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[0] == "NOBODY" || f[2] == "not-a-time" {
            continue;
        }
        let mut args = vec!["checkin", f[0], "--at", f[2], "--source", f[3]];
        if !f[1].is_empty() {
            args.extend(["--kind", f[1]]);
        }
        single.ok(&args);
    }
    assert_eq!(boards(&bulk), boards(&single));
    assert_eq!(boards(&bulk)["E000002"], "i29400,i29420,o61200");

    // One event per punch that was not an exact duplicate, sent to the broker with confirms
    // (so gone from the outboxes) and waiting in the department queues.
    assert_eq!(report["notifications"]["sent"], 6);
    assert_eq!(report["notifications"]["pending"], 0);
    assert_eq!(bulk.outbox_events(), 0);
    let events: usize = ["D001", "D002"]
        .iter()
        .map(|d| bulk.ok(&["watch-dept", d, "--once", "--json"]).lines().count())
        .sum();
    assert_eq!(events, 6);
}

#[test]
fn a_bad_header_refuses_the_whole_file_and_changes_nothing() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let before = env.redis_snapshot();
    let f = env.file("p.csv", "who,when\nE000002,2026-11-02T08:00:00Z\n");
    let e = env.fails(&["checkin", "--file", f.to_str().unwrap()], 2);
    assert!(e.contains("header"), "{e}");
    env.fails(&["checkin", "E000002", "--file", f.to_str().unwrap()], 2);
    assert_eq!(env.redis_snapshot(), before);
}

#[test]
fn bulk_reads_stdin() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let o = env
        .cmd()
        .args(["checkin", "--file", "-"])
        .write_stdin("employee_id,kind,at\nE000002,in,2026-11-02T08:00:00Z\n")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 recorded"));
}

/// Every employee of the roster checks in on 2026-11-02: (the file, how many punches).
fn everyone_in(env: &TestEnv) -> (std::path::PathBuf, usize) {
    use mysql::prelude::Queryable;
    let ids: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    let mut csv = String::from("employee_id,kind,at\n");
    for id in &ids {
        csv.push_str(&format!("{id},in,2026-11-02T08:30:00Z\n"));
    }
    (env.file("everyone.csv", &csv), ids.len())
}

/// The distinct event ids waiting in the department queues (a watcher shows each once).
fn delivered(env: &TestEnv, depts: u32) -> std::collections::HashSet<String> {
    (1..=depts).flat_map(|d| env.shown_ids(&format!("D{d:03}"))).collect()
}

#[test]
fn bulk_on_several_publishers_delivers_every_event() {
    let env = TestEnv::with_roster("UTC", 60, 6);
    let (file, n) = everyone_in(&env);
    // A proxy that never stalls, to count the connections.
    let proxy = common::stall::StallProxy::start("127.0.0.1:5672", common::stall::Stall::never());
    let o = env
        .cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "--json"])
        .env("ATTENDANCE_AMQP_PUBLISHERS", "3")
        .env("ATTENDANCE_AMQP_URL", proxy.amqp_url())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(proxy.accepted(), 3, "three publishers, each on its own connection");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["notifications"]["sent"], n, "{r}");
    assert_eq!(
        (
            r["notifications"]["pending"].as_u64(),
            r["notifications"]["departments"].as_u64()
        ),
        (Some(0), Some(6))
    );
    let depth: u32 = (1..=6)
        .map(|d| common::queue_depth(&format!("{}.dept.D{d:03}", env.ns)))
        .sum();
    assert_eq!(depth as usize, n, "each event published once");
    assert_eq!(env.outbox_events(), 0);
    assert_eq!(delivered(&env, 6).len(), n);
}

/// `checkin --file FILE --json` on `publishers` connections through a proxy that drops the
/// connection sending the `nth` publish (the others then go silent), with short broker timeouts
/// and `extra` lines in `[amqp]`; requires exit 0 and that the proxy tripped.
fn bulk_cut(env: &TestEnv, file: &std::path::Path, nth: usize, publishers: u32, extra: &str) -> std::process::Output {
    use common::stall::{Stall, StallProxy};
    let proxy = StallProxy::start(
        "127.0.0.1:5672",
        Stall::when_client_sends(&[0, 60, 0, 40]).nth(nth).then_drop(),
    );
    let cfg = common::quick_broker_config(env, extra);
    let o = env
        .cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "--json"])
        .env("ATTENDANCE_AMQP_PUBLISHERS", publishers.to_string())
        .env("ATTENDANCE_AMQP_URL", proxy.amqp_url())
        .env("ATTENDANCE_CONFIG", &cfg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(proxy.tripped());
    o
}

#[test]
fn bulk_whose_broker_drops_one_publisher_mid_way_keeps_every_unconfirmed_event_pending() {
    let env = TestEnv::with_roster("UTC", 60, 6);
    let (file, n) = everyone_in(&env);
    // The 10th publish drops its connection; the other publishers' connections go silent.
    let o = bulk_cut(&env, &file, 10, 3, "");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (sent, pending) = (
        r["notifications"]["sent"].as_u64().unwrap(),
        r["notifications"]["pending"].as_u64().unwrap(),
    );
    assert_eq!((sent + pending) as usize, n, "{r}");
    assert!(pending > 0, "{r}");
    assert_eq!(
        env.outbox_events() as u64,
        pending,
        "every unconfirmed event stays in its outbox"
    );
    // relay sends the rest: every check-in reaches its queue (at least once, shown once).
    assert_eq!(env.json(&["relay", "--json"])["sent"], pending);
    assert_eq!(delivered(&env, 6).len(), n);
}

/// A broker node that dies may not keep what it had just confirmed. Here the proxy
/// drops the one publisher's connection mid-way, and the department queues are then purged, as a
/// dead leader that did not honour its confirms leaves them: every event the lost connections
/// had confirmed within `amqp.republish_horizon_seconds` (here all of them: the bulk takes less
/// than 10 s) was put back in its outbox, so `relay` delivers every check-in all the same.
/// With the horizon at 0, what was confirmed is gone from the outboxes (the old behaviour).
#[test]
fn bulk_whose_broker_connection_is_lost_puts_back_what_it_had_just_confirmed() {
    for horizon in [10, 0] {
        let env = TestEnv::with_roster("UTC", 1200, 6);
        let (file, n) = everyone_in(&env);
        // A window of 50: by the 900th publish, most of the first ones are confirmed.
        let extra = format!("republish_horizon_seconds = {horizon}\nconfirm_window = 50\n");
        let o = bulk_cut(&env, &file, 900, 1, &extra);
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        eprintln!("horizon {horizon}: {}", r["notifications"]);
        let get = |k: &str| r["notifications"][k].as_u64().unwrap_or(0);
        let (sent, pending, put_back) = (get("sent"), get("pending"), get("put_back"));
        assert_eq!((sent + pending) as usize, n, "{r}");
        assert_eq!(env.outbox_events() as u64, pending, "{r}");
        let queued: u32 = (1..=6)
            .map(|d| common::queue_depth(&format!("{}.dept.D{d:03}", env.ns)))
            .sum();
        if horizon == 0 {
            assert_eq!(put_back, 0, "{r}");
            assert!(sent > 0, "the broker confirmed some before the drop: {r}");
        } else {
            // The one publisher's connection was lost within 10 s of its confirms: everything
            // is in the outboxes again, including what the queues hold.
            assert_eq!((sent, pending as usize), (0, n), "{r}");
            assert!(put_back > 0 && put_back <= u64::from(queued), "{r}");
            let said = String::from_utf8_lossy(&o.stderr);
            assert!(said.contains("notifications pending"), "{said}");
        }
        // The leader died without keeping them: the queues lose what they held.
        for d in 1..=6 {
            common::purge_queue(&format!("{}.dept.D{d:03}", env.ns));
        }
        assert_eq!(env.json(&["relay", "--json"])["sent"], pending);
        let expected = if horizon == 0 { pending as usize } else { n };
        assert_eq!(delivered(&env, 6).len(), expected, "horizon {horizon}: {r}");
    }
}

/// A policy on the shared broker for the test's own queues, cleared when dropped.
struct Policy(String);

impl Policy {
    /// Set it on the one queue named, and wait until the queue has it.
    fn set(name: &str, queue: &str, definition: &str) -> Policy {
        let pattern = format!("^{}$", queue.replace('.', "\\."));
        let ok = std::process::Command::new("rabbitmqctl")
            .args([
                "-q",
                "set_policy",
                name,
                &pattern,
                definition,
                "--apply-to",
                "queues",
                "--priority",
                "100",
            ])
            .status()
            .unwrap();
        assert!(ok.success(), "rabbitmqctl set_policy");
        let policy = Policy(name.to_string());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let out = std::process::Command::new("rabbitmqctl")
                .args(["-q", "list_queues", "name", "policy", "--no-table-headers"])
                .output()
                .unwrap();
            let listed = String::from_utf8_lossy(&out.stdout).into_owned();
            if listed.lines().any(|l| l.split_whitespace().eq([queue, name])) && refuses(queue) {
                return policy;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{queue} never took the policy {name}"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}

/// Whether the queue now refuses a publish past its limit (a quorum queue takes a new limit a
/// little after it lists the policy): publish until a nack or 20 acks, then empty it.
fn refuses(queue: &str) -> bool {
    let mut conn = amiquip::Connection::insecure_open(common::AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    let confirms = ch.listen_for_publisher_confirms().unwrap();
    ch.enable_publisher_confirms().unwrap();
    let mut nacked = false;
    for _ in 0..20 {
        ch.basic_publish("", amiquip::Publish::new(b"probe", queue)).unwrap();
        if matches!(confirms.recv().unwrap(), amiquip::Confirm::Nack(_)) {
            nacked = true;
            break;
        }
    }
    ch.queue_purge(queue).unwrap();
    conn.close().ok();
    nacked
}

impl Drop for Policy {
    fn drop(&mut self) {
        let _ = std::process::Command::new("rabbitmqctl")
            .args(["-q", "clear_policy", &self.0])
            .status();
    }
}

/// A queue failing over refuses (nacks) publishes, and a surviving node may then also
/// confirm some it does not keep. Here D001's queue refuses past 5 messages (a policy with
/// `reject-publish`): the bulk puts back in D001's outbox the events it had had confirmed, and
/// touches no other department's, so that the next `relay` sends every D001 event again.
#[test]
fn bulk_puts_back_what_a_department_that_refused_events_had_confirmed() {
    let env = TestEnv::with_roster("UTC", 60, 2);
    let (file, n) = everyone_in(&env);
    // One publish at a time: a quorum queue applies its limit late, by a window of publishes.
    let one_by_one = common::quick_broker_config(&env, "confirm_window = 1\n");
    env.ok(&["queues", "declare"]);
    let d1 = format!("{}.dept.D001", env.ns);
    let policy = Policy::set(
        &format!("{}-refuse", env.ns),
        &d1,
        r#"{"max-length":5,"overflow":"reject-publish"}"#,
    );
    let in_d1 = env.outbox("D001").len();
    assert_eq!(in_d1, 0);
    let o = env
        .cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "--json"])
        .env("ATTENDANCE_AMQP_PUBLISHERS", "1")
        .env("ATTENDANCE_CONFIG", &one_by_one)
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let get = |k: &str| r["notifications"][k].as_u64().unwrap_or(0);
    let d1_size = env.outbox("D001").len() as u64;
    let d2_size = n as u64 - d1_size;
    let took = u64::from(common::queue_depth(&d1));
    assert!((5..d1_size).contains(&took), "{took} of {d1_size} taken: {r}");
    assert_eq!(
        (get("sent"), get("pending"), get("put_back")),
        (d2_size, d1_size, took),
        "D001's confirmed events put back, D002's sent: {r}"
    );
    assert_eq!(env.outbox("D002").len(), 0, "{r}");
    drop(policy);
    common::purge_queue(&d1);
    assert_eq!(env.json(&["relay", "--json"])["sent"], d1_size);
    assert_eq!(delivered(&env, 2).len(), n);
}

#[test]
fn bulk_publishes_while_recording_sends_older_pending_events_too_and_journals_every_one() {
    let env = TestEnv::with_roster("UTC", 250, 3);
    // An event an earlier outage left in D001's outbox (E000001 is in D001).
    env.punch("E000001", "out", "2026-11-02T07:00:00", true);
    assert_eq!(env.outbox_events(), 1);
    let (file, n) = everyone_in(&env);
    let o = env
        .cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "--json"])
        .env("ATTENDANCE_AMQP_PUBLISHERS", "2")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        r["notifications"]["sent"],
        n + 1,
        "the bulk's events and the older one: {r}"
    );
    assert_eq!(r["notifications"]["pending"], 0, "{r}");
    assert_eq!(env.outbox_events(), 0);
    let depth: u32 = (1..=3)
        .map(|d| common::queue_depth(&format!("{}.dept.D{d:03}", env.ns)))
        .sum();
    assert_eq!(depth as usize, n + 1, "each event published once");
    // The journal has every one of them, in batches of up to 100: wipe the day, recover it.
    let mut con = env.redis();
    for k in env.board_keys("2026-11-02") {
        let _: () = redis::cmd("DEL").arg(k).query(&mut con).unwrap();
    }
    let rec = env.json(&["recover", "--date", "2026-11-02", "--idle-ms", "1000", "--json"]);
    assert_eq!(rec["read"], n + 1, "{rec}");
    assert_eq!(rec["restored"], n + 1, "{rec}");
    assert!(
        rec["messages"].as_u64().unwrap() <= 6,
        "batches, not one message each: {rec}"
    );
}
