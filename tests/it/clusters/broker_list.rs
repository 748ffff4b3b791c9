//! A list of brokers (a RabbitMQ cluster's nodes): a command tries them in order, each within
//! the connect timeout, and long-running consumers move to another node when theirs goes away.
//!
//! No second real broker is at hand, so the other "nodes" are real failure modes in front of
//! the one real broker: a closed port, a silent port (a listener that never answers) and a
//! proxy (tests/common/stall.rs) that the test cuts and brings back.

use crate::common;

use std::collections::HashSet;
use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::stall::{Stall, StallProxy};
use common::{lines_of, queue_depth as depth, TestEnv, AMQP_URL};
use serde_json::Value;

/// Room for process start-up and a busy 2-core machine, on top of the configured timeouts.
const SLACK: Duration = Duration::from_millis(4_000);
const TIMEOUTS: &str = "[amqp]\nconnect_timeout_ms = 1000\nclose_timeout_ms = 300\n";

/// A port where nothing listens, with a password that must never be printed.
fn closed_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("amqp://guest:hunter2@127.0.0.1:{port}/%2f")
}

/// A listener that accepts the TCP connection (the kernel does) and never says a word.
fn silent() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("amqp://guest:hunter2@127.0.0.1:{}/%2f", l.local_addr().unwrap().port());
    (l, url)
}

fn host_port(url: &str) -> &str {
    url.split('@').nth(1).unwrap().split('/').next().unwrap()
}

fn interrupt(child: &Child) {
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
}

#[test]
fn a_refused_and_a_silent_broker_before_the_real_one_cost_one_connect_timeout() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let cfg = env.file("att.toml", TIMEOUTS);
    let (_silent, silent_url) = silent();
    let urls = format!("{},{silent_url},{AMQP_URL}", closed_url());
    let run = |args: &[&str]| {
        let started = Instant::now();
        let o = env
            .cmd()
            .args(args)
            .env("ATTENDANCE_AMQP_URL", &urls)
            .env("ATTENDANCE_CONFIG", &cfg)
            .output()
            .unwrap();
        let took = started.elapsed();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        // The refused node answers at once, the silent one after its 1000 ms.
        assert!(took < Duration::from_millis(1_000) + SLACK, "{args:?} took {took:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let c: Value =
        serde_json::from_str(&run(&["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"])).unwrap();
    assert_eq!(c["notification"], "sent");
    assert!(env.outbox("D001").is_empty());
    run(&["queues", "declare"]);
    let shown: Vec<Value> = run(&["watch-dept", "D001", "--once", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["event_id"], c["event_id"]);
}

#[test]
fn every_broker_down_is_exit_3_naming_each_broker_without_its_password() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let cfg = env.file("att.toml", TIMEOUTS);
    let (_silent, silent_url) = silent();
    let closed = closed_url();
    let urls = format!("{closed}, {silent_url}");
    let started = Instant::now();
    let o = env
        .cmd()
        .args(["watch-dept", "D001", "--once"])
        .env("ATTENDANCE_AMQP_URL", &urls)
        .env("ATTENDANCE_CONFIG", &cfg)
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: RabbitMQ") && err.contains("no broker answered"),
        "{err}"
    );
    assert!(
        err.contains(host_port(&closed)) && err.contains(host_port(&silent_url)),
        "{err}"
    );
    assert!(err.contains("did not answer within 1000 ms"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert!(took < Duration::from_millis(1_000) + SLACK, "took {took:?}");
    // A check-in still succeeds, its notification pending in Redis.
    let o = env
        .cmd()
        .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"])
        .env("ATTENDANCE_AMQP_URL", &urls)
        .env("ATTENDANCE_CONFIG", &cfg)
        .output()
        .unwrap();
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["notification"], "pending");
    assert_eq!(env.outbox("D001").len(), 1);
}

#[test]
fn a_broker_list_in_the_config_file_is_tried_in_order_and_each_url_is_checked() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let good = env.file(
        "good.toml",
        &format!("amqp_url = [\"{}\", \"{AMQP_URL}\"]\n{TIMEOUTS}", closed_url()),
    );
    let c = env
        .cmd()
        .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"])
        .env_remove("ATTENDANCE_AMQP_URL")
        .env("ATTENDANCE_CONFIG", &good)
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    assert_eq!(
        serde_json::from_slice::<Value>(&c.stdout).unwrap()["notification"],
        "sent"
    );
    let before = env.redis_snapshot();
    let o = env
        .cmd()
        .args(["checkin", "E000003", "--at", "2026-11-02T08:31:00Z"])
        .env("ATTENDANCE_AMQP_URL", format!("{AMQP_URL},http://u:hunter2@h/"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("amqp_url") && !err.contains("hunter2") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(env.redis_snapshot(), before, "a bad config changes nothing");
}

/// Bulk check-ins of every member of D001, published to its queue on the real broker.
fn queued_checkins(env: &TestEnv) -> usize {
    let members = env.members("D001");
    let mut csv = String::from("employee_id,kind,at\n");
    for m in &members {
        csv.push_str(&format!("{m},in,2026-11-02T08:30:00Z\n"));
    }
    let file = env.file("punches.csv", &csv);
    env.ok(&["checkin", "--file", file.to_str().unwrap(), "-q"]);
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)) as usize, members.len());
    members.len()
}

#[test]
fn live_watch_dept_moves_to_the_next_broker_when_its_own_goes_away_and_loses_nothing() {
    // More events than a pipe holds: the watcher blocks writing them while the test reads
    // slowly, with up to a prefetch of deliveries unacked when its broker is cut.
    let env = TestEnv::with_roster("UTC", 600, 1);
    let total = queued_checkins(&env);
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::never());
    let cfg = env.file("att.toml", TIMEOUTS);
    let mut child = env
        .std_cmd()
        .args(["watch-dept", "D001", "--json"])
        .env("ATTENDANCE_AMQP_URL", format!("{},{AMQP_URL}", proxy.amqp_url()))
        .env("ATTENDANCE_CONFIG", &cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let mut shown: Vec<String> = Vec::new();
    let take = |n: usize, shown: &mut Vec<String>| {
        while shown.len() < n {
            let Ok(l) = out.recv_timeout(Duration::from_secs(20)) else {
                break;
            };
            let v: Value = serde_json::from_str(&l).unwrap();
            shown.push(v["employee_id"].as_str().unwrap().to_string());
        }
    };
    take(20, &mut shown);
    assert_eq!(proxy.accepted(), 1, "the first node of the list took the watcher");
    proxy.cut();
    let moved = err
        .recv_timeout(Duration::from_secs(20))
        .expect("the watcher says it lost its broker");
    assert!(moved.contains("lost the broker, reconnecting"), "{moved}");
    let moved = err
        .recv_timeout(Duration::from_secs(20))
        .expect("and that it consumes again");
    assert!(moved.contains("consuming again, on 127.0.0.1:5672"), "{moved}");
    take(total, &mut shown);
    interrupt(&child);
    let status = child.wait().unwrap();
    let rest: Vec<String> = err.try_iter().collect();
    assert!(status.success(), "{status}: {rest:?}");
    let distinct: HashSet<&String> = shown.iter().collect();
    assert_eq!(distinct.len(), total, "every check-in shown");
    assert_eq!(shown.len(), total, "none shown twice");
    // A Ctrl-C that lands while a redelivered duplicate is being handled hands it back
    // unacked: the next watcher drops it as shown before, and the queue ends empty.
    let again = env.ok(&["watch-dept", "D001", "--once", "--json"]);
    assert_eq!(again, "", "nothing shown twice, even by the next watcher");
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)), 0, "every delivery acked");
}

#[test]
fn relay_follow_publishes_again_once_its_only_broker_is_back() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::never());
    let cfg = env.file("att.toml", TIMEOUTS);
    let mut child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "100", "--json"])
        .env("ATTENDANCE_AMQP_URL", proxy.amqp_url())
        .env("ATTENDANCE_CONFIG", &cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rounds = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let pending = |emp: &str, at: &str| {
        let o = env
            .cmd()
            .args(["checkin", emp, "--at", at, "--json"])
            .env("ATTENDANCE_AMQP_URL", closed_url())
            // Left behind by an outage, not handed to the live relay.
            .env("ATTENDANCE_AMQP_HANDOFF", "false")
            .output()
            .unwrap();
        let c: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(c["notification"], "pending");
        c["event_id"].as_str().unwrap().to_string()
    };
    let first = pending("E000002", "2026-11-02T08:30:00Z");
    let r: Value = serde_json::from_str(&rounds.recv_timeout(Duration::from_secs(20)).unwrap()).unwrap();
    assert_eq!(r["sent"], 1);
    proxy.cut();
    let second = pending("E000003", "2026-11-02T08:31:00Z");
    // Rounds fail while the node is away (the event waits in Redis), then it comes back.
    let failed = err
        .recv_timeout(Duration::from_secs(20))
        .expect("relay reports the lost broker");
    assert!(failed.starts_with("relay: "), "{failed}");
    assert_eq!(env.outbox("D001").len(), 1);
    proxy.restore();
    // Rounds that found the node gone say so (pending 1); then one sends the event.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r: Value = serde_json::from_str(
            &rounds
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("a round sends it"),
        )
        .unwrap();
        if r["sent"] == 1 {
            assert_eq!(r["pending"], 0, "{r}");
            break;
        }
        assert_eq!((r["sent"].as_u64(), r["pending"].as_u64()), (Some(0), Some(1)), "{r}");
    }
    interrupt(&child);
    let st = child.wait().unwrap();
    let rest: Vec<String> = err.try_iter().collect();
    assert!(st.success(), "relay stderr: {rest:?}");
    assert!(env.outbox("D001").is_empty());
    let shown = env.ok(&["watch-dept", "D001", "--once", "--json"]);
    let ids: HashSet<String> = common::event_ids(&shown).into_iter().collect();
    assert_eq!(ids, HashSet::from([first, second]));
}
