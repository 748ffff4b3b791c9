//! Every wait is bounded: a broker, database or Redis that accepts the connection and then
//! stops answering (in the handshake, after a publish, at close, mid-reply) ends the command
//! within its configured timeouts, with its documented exit code or a pending notification,
//! and what landed in the stores is exactly what the command said.
//!
//! A local proxy (tests/common/stall.rs) stands in front of the real service and goes silent
//! on cue. The bounds asserted here are the configured timeouts plus a generous slack for a
//! loaded machine; before this was fixed, the same stalls held a command for 120 s to forever.

use crate::common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::day::Day;
use common::stall::{Stall, StallProxy};
use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;
use serde_json::Value;

/// Room for process start-up and a busy 2-core machine, on top of the configured timeouts.
const SLACK: Duration = Duration::from_millis(4_000);

/// AMQP frames (type, channel, size, then class and method ids) and their method ids.
const CHANNEL_OPEN: &[u8] = &[1, 0, 1, 0, 0, 0, 5, 0, 20, 0, 10];
const BASIC_PUBLISH: &[u8] = &[0, 60, 0, 40];
const BASIC_GET: &[u8] = &[0, 60, 0, 70];
const CONNECTION_CLOSE: &[u8] = &[0, 10, 0, 50];
/// A heartbeat frame: the client sends one when it has had nothing else to send.
const HEARTBEAT: &[u8] = &[8, 0, 0, 0, 0, 0, 0, 0xCE];
/// The client's first bytes: the protocol header, before any handshake frame.
const PROTOCOL_HEADER: &[u8] = b"AMQP\x00\x00\x09\x01";
/// Connection.Start-Ok, the client's first handshake frame (after the broker's Start).
const START_OK: &[u8] = &[0, 10, 0, 11];

const AMQP_TIMEOUTS: &str = "[amqp]\nconnect_timeout_ms = 1000\ncheckin_confirm_ms = 500\n\
                             confirm_timeout_ms = 800\nclose_timeout_ms = 300\n";

fn amqp_via(p: &StallProxy) -> String {
    format!("amqp://guest:guest@127.0.0.1:{}/%2f", p.port())
}

/// Run with extra environment; the output and how long it took.
fn timed(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> (Output, Duration) {
    let mut c = env.cmd();
    c.args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let started = Instant::now();
    let o = c.output().unwrap();
    let took = started.elapsed();
    eprintln!("attendance {} -> {:?} in {took:?}", args.join(" "), o.status.code());
    (o, took)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn outbox_len(env: &TestEnv, dept: &str) -> usize {
    env.redis().hlen(format!("{}:outbox:{{{dept}}}", env.ns)).unwrap()
}

/// A single check-in through a broker that goes silent at `stall`: exit 0 within the bound,
/// the punch recorded, and the notification as expected.
fn checkin_through(stall: Stall, expect: &str) -> (TestEnv, String) {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let proxy = StallProxy::start("127.0.0.1:5672", stall);
    let (o, took) = timed(
        &env,
        &["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"],
        &[
            ("ATTENDANCE_AMQP_URL", &amqp_via(&proxy)),
            ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(proxy.tripped(), "the proxy saw its trigger");
    // connect 1000 + confirm 500 + close 300 ms.
    assert!(took < Duration::from_millis(1_800) + SLACK, "took {took:?}");
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["notification"], expect, "{}", stderr(&o));
    let status = env.json(&["status", "E000002", "--date", "2026-11-02", "--json"]);
    assert!(status["first_in"].as_str().is_some(), "the punch is recorded: {status}");
    (env, c["event_id"].as_str().unwrap().to_string())
}

/// The event reached the department queue (at least once; the watcher shows it once).
fn delivered_once(env: &TestEnv, event_id: &str) {
    assert_eq!(env.shown_ids("D001"), [event_id]);
}

#[test]
fn checkin_whose_broker_stalls_after_the_handshake_is_pending_in_time_and_relay_sends_it() {
    // Was: 120 s in amiquip's Connection::close (forever with ?heartbeat=0).
    let (env, id) = checkin_through(Stall::when_client_sends(CHANNEL_OPEN).hold_trigger(), "pending");
    assert_eq!(outbox_len(&env, "D001"), 1);
    let r = env.json(&["relay", "--json"]);
    assert_eq!((r["sent"].as_u64(), r["pending"].as_u64()), (Some(1), Some(0)));
    assert_eq!(outbox_len(&env, "D001"), 0);
    delivered_once(&env, &id);
}

#[test]
fn checkin_whose_broker_stalls_in_the_handshake_is_pending_in_time() {
    for stall in [
        Stall::when_client_sends(PROTOCOL_HEADER).hold_trigger(),
        // The broker's Connection.Start cut mid-frame.
        Stall::when_client_sends(PROTOCOL_HEADER).then_pass_server_bytes(20),
        Stall::when_client_sends(START_OK).hold_trigger(),
    ] {
        let (env, _) = checkin_through(stall, "pending");
        assert_eq!(outbox_len(&env, "D001"), 1);
    }
}

#[test]
fn checkin_whose_broker_never_confirms_the_publish_is_pending_in_time() {
    let (env, id) = checkin_through(Stall::when_client_sends(BASIC_PUBLISH), "pending");
    assert_eq!(outbox_len(&env, "D001"), 1, "unconfirmed: it stays in the outbox");
    env.ok(&["relay"]);
    assert_eq!(outbox_len(&env, "D001"), 0);
    // The broker did get the first publish: the watcher drops the duplicate.
    delivered_once(&env, &id);
}

#[test]
fn checkin_whose_broker_stalls_at_close_is_sent_and_returns_in_time() {
    let (env, id) = checkin_through(Stall::when_client_sends(CONNECTION_CLOSE), "sent");
    assert_eq!(outbox_len(&env, "D001"), 0);
    delivered_once(&env, &id);
}

#[test]
fn checkin_whose_redis_stalls_exits_3_in_time_and_a_retry_records_it_once() {
    let env = TestEnv::with_day("UTC", Day::new(5, 1).init_day("2026-11-02", &["-q"]));
    let cfg = env.file("att.toml", "[redis]\nread_timeout_ms = 1000\n");
    // The punch script's call reaches Redis, and its reply never comes back.
    let proxy = StallProxy::start("127.0.0.1:6379", Stall::when_client_sends(b"EVALSHA"));
    let args = ["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"];
    let (o, took) = timed(
        &env,
        &args,
        &[
            ("ATTENDANCE_REDIS_URL", &format!("redis://127.0.0.1:{}/", proxy.port())),
            ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(proxy.tripped());
    assert!(
        err.contains("Redis sent no reply within 1000 ms") && err.lines().count() == 1,
        "{err}"
    );
    assert!(took < Duration::from_millis(1_000) + SLACK, "took {took:?}");
    // The kiosk retries on the real Redis: the punch landed once, whichever way it went.
    let c = env.json(&args);
    assert!(c["notification"] == "sent" || c["notification"] == "none", "{c}");
    let status = env.json(&["status", "E000002", "--date", "2026-11-02", "--json"]);
    assert!(status["first_in"].as_str().is_some(), "{status}");
}

/// A punch whose event waits in the outbox (the broker was down at check-in).
fn pending_punch(env: &TestEnv) {
    let o = env
        .cmd()
        .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "-q"])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(outbox_len(env, "D001"), 1);
}

#[test]
fn relay_on_a_stalled_broker_ends_in_time_and_keeps_the_events() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    pending_punch(&env);
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let cfg = cfg.to_str().unwrap();
    // Silent after the handshake: the connection never gets set up (exit 3).
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::when_client_sends(CHANNEL_OPEN).hold_trigger());
    let vars = [
        ("ATTENDANCE_AMQP_URL", amqp_via(&proxy)),
        ("ATTENDANCE_CONFIG", cfg.into()),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (o, took) = timed(&env, &["relay"], &vars);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not answer within 1000 ms"), "{}", stderr(&o));
    assert!(took < Duration::from_millis(1_300) + SLACK, "took {took:?}");
    assert_eq!(outbox_len(&env, "D001"), 1);
    // Silent after the publish: the event stays pending (exit 4, as for a nack).
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::when_client_sends(BASIC_PUBLISH));
    let (o, took) = timed(
        &env,
        &["relay", "--json"],
        &[("ATTENDANCE_AMQP_URL", &amqp_via(&proxy)), ("ATTENDANCE_CONFIG", cfg)],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["sent"].as_u64(), r["pending"].as_u64()), (Some(0), Some(1)));
    assert!(r["problem"].as_str().unwrap().contains("no publisher confirm"), "{r}");
    // connect + one confirm wait; no polite close with a broker that stopped answering. Before
    // that, the journal read for the event waiting (it may be journaled already): its fence is
    // the publish the broker goes silent at, so one confirm wait for a delivery and one for the
    // broker's answer to the question that pause asks.
    assert!(took < Duration::from_millis(1_800 + 1_600) + SLACK, "took {took:?}");
    assert_eq!(outbox_len(&env, "D001"), 1);
    assert_eq!(env.json(&["relay", "--json"])["sent"], 1);
}

/// `relay --follow --json` through `proxy`, full rounds `interval_ms` apart, its stderr piped.
fn relay_follow_via(
    env: &TestEnv,
    proxy: &StallProxy,
    cfg: &std::path::Path,
    interval_ms: &str,
    stdout: std::process::Stdio,
) -> std::process::Child {
    env.std_cmd()
        .args(["relay", "--follow", "--interval-ms", interval_ms, "--json"])
        .env("ATTENDANCE_AMQP_URL", amqp_via(proxy))
        .env("ATTENDANCE_CONFIG", cfg)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn relay_follow_on_a_stalled_broker_keeps_going_round_by_round_and_stops_on_ctrl_c() {
    use std::io::BufRead;
    let env = TestEnv::with_roster("UTC", 5, 1);
    pending_punch(&env);
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::when_client_sends(BASIC_PUBLISH));
    let mut child = relay_follow_via(&env, &proxy, &cfg, "100", std::process::Stdio::piped());
    // The first round publishes into the silence: the event stays pending, and says why.
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let round: Value = serde_json::from_str(&out.next().unwrap().unwrap()).unwrap();
    assert_eq!((round["sent"].as_u64(), round["pending"].as_u64()), (Some(0), Some(1)));
    assert!(
        round["problem"].as_str().unwrap().contains("no publisher confirm"),
        "{round}"
    );
    // Later rounds cannot even connect; each gives up within the connect timeout.
    std::thread::sleep(Duration::from_millis(2_500));
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let stopped = Instant::now();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // It notices Ctrl-C between rounds, and no round outlasts its timeouts.
    assert!(
        stopped.elapsed() < Duration::from_millis(1_000) + SLACK,
        "{:?}",
        stopped.elapsed()
    );
    assert!(err.contains("did not answer within 1000 ms"), "{err}");
    assert!(err.contains("relay: stopped; 0 events sent in all, 1 pending"), "{err}");
    assert_eq!(outbox_len(&env, "D001"), 1);
    assert_eq!(env.json(&["relay", "--json"])["sent"], 1);
}

#[test]
fn relay_follow_whose_broker_goes_silent_after_a_handoff_keeps_the_event_and_stops_handing_off() {
    use redis::Commands;
    let env = TestEnv::with_roster("UTC", 5, 1);
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::when_client_sends(BASIC_PUBLISH));
    let child = relay_follow_via(&env, &proxy, &cfg, "60000", std::process::Stdio::null());
    let alive = || -> bool { env.redis().exists(env.keys().relay_heartbeat()).unwrap() };
    let until = Instant::now() + Duration::from_secs(10);
    while !alive() {
        assert!(Instant::now() < until, "no heartbeat");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Handed off; the relay's publish meets the silence, and its confirm never comes.
    let c = env.json(&["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"]);
    assert_eq!(c["notification"], "handed_off");
    // Within the confirm timeout (and the wait before the next round), the relay gives the
    // publisher up and its heartbeat with it: later check-ins publish themselves.
    let since = Instant::now();
    while alive() {
        assert!(
            since.elapsed() < Duration::from_millis(2 * 800) + SLACK,
            "still handing off"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(outbox_len(&env, "D001"), 1, "unconfirmed, so still in the outbox");
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let stopped = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stopped.elapsed() < Duration::from_millis(1_000) + SLACK,
        "{:?}",
        stopped.elapsed()
    );
    assert_eq!(outbox_len(&env, "D001"), 1);
    assert_eq!(env.json(&["relay", "--json"])["sent"], 1);
}

#[test]
fn watch_dept_once_on_a_stalled_broker_ends_in_time_with_exit_3() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let cfg = cfg.to_str().unwrap();
    for (stall, bound) in [
        (Stall::when_client_sends(CHANNEL_OPEN).hold_trigger(), 1_000),
        (Stall::when_client_sends(BASIC_GET).hold_trigger(), 1_000 + 800),
    ] {
        let proxy = StallProxy::start("127.0.0.1:5672", stall);
        let (o, took) = timed(
            &env,
            &["watch-dept", "D001", "--once", "--json"],
            &[("ATTENDANCE_AMQP_URL", &amqp_via(&proxy)), ("ATTENDANCE_CONFIG", cfg)],
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{err}");
        assert!(
            err.starts_with("error: RabbitMQ") && err.contains("did not answer"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(took < Duration::from_millis(bound) + SLACK, "took {took:?}");
    }
}

#[test]
fn live_watch_dept_on_a_broker_that_goes_silent_notices_after_two_missed_heartbeats_and_reconnects() {
    use std::io::BufRead;
    let env = TestEnv::with_roster("UTC", 5, 1);
    let cfg = env.file("att.toml", &format!("{AMQP_TIMEOUTS}heartbeat_secs = 1\n"));
    // Silent once the consumer is up and idle: no delivery, no heartbeat ever comes back.
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::when_client_sends(HEARTBEAT));
    let started = Instant::now();
    let mut child = env
        .std_cmd()
        .args(["watch-dept", "D001", "--json"])
        .env("ATTENDANCE_AMQP_URL", amqp_via(&proxy))
        .env("ATTENDANCE_CONFIG", &cfg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let lost = err.next().unwrap().unwrap();
    let took = started.elapsed();
    assert!(proxy.tripped());
    assert!(
        lost.starts_with("watch-dept: lost the broker, reconnecting") && lost.contains("heartbeats"),
        "{lost}"
    );
    // The first client heartbeat (within a second), then two missed ones.
    assert!(took < Duration::from_secs(3) + SLACK, "took {took:?}");
    // Reconnection attempts meet the silence too, each within the connect timeout.
    let retry = err.next().unwrap().unwrap();
    assert!(retry.contains("did not answer within 1000 ms"), "{retry}");
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let stopped = Instant::now();
    assert!(child.wait().unwrap().success());
    assert!(
        stopped.elapsed() < Duration::from_millis(1_000) + SLACK,
        "{:?}",
        stopped.elapsed()
    );
}

/// The ids of every active employee.
fn employees(env: &TestEnv) -> Vec<(String, String)> {
    env.mysql()
        .query("SELECT id, department_id FROM employees ORDER BY id")
        .unwrap()
}

#[test]
fn settle_facing_a_stalled_mysql_gives_up_after_its_retries_and_a_rerun_works() {
    // Was: 484 s holding the settle lock (120 s write timeouts, four attempts).
    let env = TestEnv::with_roster("UTC", 12, 2);
    pending_punch(&env);
    // The day's boards, live or moved by settle's cut-over to its own key: the punches must all
    // still be in Redis, whichever key holds them.
    let day_boards = || {
        let mut s = env.redis_snapshot();
        s.retain(|(k, _)| k.contains(":board:"));
        for (k, _) in s.iter_mut() {
            *k = k.replace(":settle:board:", ":board:");
        }
        s
    };
    let before = day_boards();
    assert!(!before.is_empty());
    let cfg = env.file(
        "att.toml",
        "[mysql]\nread_timeout_ms = 1000\nwrite_timeout_ms = 1000\n\
         [settle]\nmysql_retries = 2\nretry_backoff_ms = 50\n",
    );
    let proxy = StallProxy::start(
        "127.0.0.1:3306",
        // A first settle of the day loads its rows (LOAD DATA), a rerun upserts them.
        Stall::when_client_sends(b"LOAD DATA LOCAL INFILE").hold_trigger(),
    );
    // Without prefer_socket=false the client would move to MySQL's Unix socket, past the proxy.
    let url = format!("mysql://root@127.0.0.1:{}/{}?prefer_socket=false", proxy.port(), env.db);
    let (o, took) = timed(
        &env,
        &["settle", "--date", "2026-11-02", "-q"],
        &[
            ("ATTENDANCE_MYSQL_URL", &url),
            ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(proxy.tripped());
    assert!(
        err.starts_with("error: MySQL") && err.contains("attempt 2 of 2"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Two attempts: the insert's read timeout, then a pooled connection's ping and a fresh
    // connection's handshake (a stalled connection is shut, never rolled back or reset).
    assert!(took < Duration::from_millis(3 * 1_000 + 50) + SLACK, "took {took:?}");
    eprintln!("settle on a stalled MySQL gave up after {took:?}");
    assert_eq!(day_boards(), before, "every punch is still on a board");
    assert_eq!(env.count("attendance"), 0);
    drop(proxy);
    // The lock died with the process's sessions: a rerun on the real server settles the day.
    let r = env.json(&["settle", "--date", "2026-11-02", "--json"]);
    assert_eq!(r["rows_written"], 12);
    assert_eq!(env.count("attendance"), 12);
}

#[test]
fn a_report_whose_mysql_stalls_mid_reply_ends_in_time_with_exit_3() {
    let env = TestEnv::with_roster("UTC", 12, 2);
    env.ok(&["settle", "--date", "2026-11-02", "-q"]);
    let cfg = env.file("att.toml", "[mysql]\nread_timeout_ms = 1000\n");
    // The result set starts coming back, then stops.
    let proxy = StallProxy::start(
        "127.0.0.1:3306",
        Stall::when_client_sends(b"FROM attendance a").then_pass_server_bytes(60),
    );
    let url = format!("mysql://root@127.0.0.1:{}/{}?prefer_socket=false", proxy.port(), env.db);
    let (o, took) = timed(
        &env,
        &["report", "day", "--date", "2026-11-02"],
        &[
            ("ATTENDANCE_MYSQL_URL", &url),
            ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(proxy.tripped());
    assert!(err.starts_with("error: MySQL") && err.lines().count() == 1, "{err}");
    assert!(err.contains("no reply within mysql.read_timeout_ms"), "{err}");
    assert!(took < Duration::from_millis(1_000) + SLACK, "took {took:?}");
}

/// One punch per employee of a roster of 40 departments: 40 script calls, two pipelines.
fn forty_departments() -> (TestEnv, String, usize) {
    let env = TestEnv::with_roster("UTC", 80, 40);
    let mut csv = String::from("employee_id,kind,at\n");
    let all = employees(&env);
    for (id, _) in &all {
        csv.push_str(&format!("{id},in,2026-11-02T08:30:00Z\n"));
    }
    let f = env.file("punches.csv", &csv);
    let path = f.to_str().unwrap().to_string();
    (env, path, all.len())
}

/// Punches on the day's boards.
fn punched(env: &TestEnv) -> usize {
    let mut con = env.redis();
    env.redis_keys()
        .iter()
        .filter(|k| k.contains(":board:"))
        .map(|k| {
            let b: std::collections::HashMap<String, String> = con.hgetall(k).unwrap();
            b.values().filter(|v| !v.is_empty()).count()
        })
        .sum()
}

#[test]
fn bulk_checkin_whose_redis_stalls_mid_reply_ends_in_time_and_a_rerun_completes_it() {
    // Was: hung until killed at 300 s (redis-rs waits the read timeout once per reply).
    let (env, file, n) = forty_departments();
    let cfg = env.file("att.toml", "[redis]\nread_timeout_ms = 1000\n");
    let proxy = StallProxy::start(
        "127.0.0.1:6379",
        Stall::when_client_sends(b"EVALSHA").then_pass_server_bytes(40),
    );
    let (o, took) = timed(
        &env,
        &["checkin", "--file", &file],
        &[
            ("ATTENDANCE_REDIS_URL", &format!("redis://127.0.0.1:{}/", proxy.port())),
            ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(proxy.tripped());
    assert!(err.contains("run the same file again"), "{err}");
    assert!(err.contains("Redis sent no reply within 1000 ms"), "{err}");
    // One read timeout, not one per reply of the 32-call pipeline.
    assert!(took < Duration::from_millis(1_000) + SLACK, "took {took:?}");
    drop(proxy);
    let r = env.json(&["checkin", "--file", &file, "--json"]);
    assert_eq!(
        r["recorded"].as_u64().unwrap() + r["unchanged"].as_u64().unwrap(),
        n as u64
    );
    assert_eq!(punched(&env), n);
}

#[test]
fn bulk_checkin_cut_off_by_redis_says_what_it_recorded_and_a_rerun_is_idempotent() {
    // Regression: it exited 3 with no summary although punches were already recorded.
    // Redis goes silent, or dies, after the first pipeline (32 calls of the punch script); the
    // second never reaches it. The trigger is the punch script's own hash, loaded beforehand:
    // another script's call, or a pipeline sent again after NOSCRIPT, must not move it.
    let punch = redis::Script::new(attendance::PUNCH_SCRIPT);
    let sha = punch.get_hash().as_bytes().to_vec();
    for (stall, why) in [
        (
            Stall::when_client_sends(&sha).nth(33).hold_trigger(),
            "no reply within 1000 ms",
        ),
        (
            Stall::when_client_sends(&sha).nth(33).hold_trigger().then_drop(),
            "Redis",
        ),
    ] {
        let (env, file, n) = forty_departments();
        let _: String = punch.prepare_invoke().load(&mut env.redis()).unwrap();
        let cfg = env.file("att.toml", "[redis]\nread_timeout_ms = 1000\n");
        let proxy = StallProxy::start("127.0.0.1:6379", stall);
        let (o, _) = timed(
            &env,
            &["checkin", "--file", &file, "--json"],
            &[
                ("ATTENDANCE_REDIS_URL", &format!("redis://127.0.0.1:{}/", proxy.port())),
                ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
            ],
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{err}");
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let recorded = r["recorded"].as_u64().unwrap() as usize;
        let unconfirmed = r["unconfirmed"].as_u64().unwrap() as usize;
        // Usually the first pipeline's punches are confirmed (recorded > 0). When the proxy
        // reads the first pipeline's end and the trigger in one chunk, Redis gets the first
        // pipeline but its replies are held: those punches landed unconfirmed, as the summary
        // says ("may or may not have landed"). Either way: every row is counted once, what
        // landed lies between recorded and recorded + unconfirmed, and a rerun does the rest.
        assert!(recorded < n, "{r}");
        assert_eq!(r["unchanged"], 0);
        assert_eq!(unconfirmed, n - recorded, "{r}");
        assert!(r["error"].as_str().unwrap().contains(why), "{r}");
        assert!(err.contains(&format!("{recorded} punches recorded")), "{err}");
        drop(proxy);
        let landed = punched(&env);
        assert!(
            (recorded..=recorded + unconfirmed).contains(&landed),
            "{landed} landed; it said {recorded} recorded and {unconfirmed} unconfirmed"
        );
        let again = env.json(&["checkin", "--file", &file, "--json"]);
        assert_eq!(again["unchanged"].as_u64().unwrap() as usize, landed);
        assert_eq!(again["recorded"].as_u64().unwrap() as usize, n - landed);
        assert_eq!(punched(&env), n);
        assert!(again.get("error").is_none());
    }
}

/// A bulk check-in whose broker accepts the connection and then goes silent, with the default
/// timeouts: docs/timeouts.md gives `connect_timeout_ms` + one `confirm_timeout_ms` (7 s).
/// Regression: a bulk whose window of confirms filled waited one confirm timeout there and a
/// second one at its end, 10.2 s; the publisher now stops waiting once a wait has run out.
#[test]
fn bulk_checkin_whose_broker_goes_silent_keeps_the_documented_bound_and_leaves_every_event_pending() {
    // Silent from the first byte (the handshake), and silent after the handshake, at the
    // first publish, with a window small enough to fill before the end of the file.
    for stall in [
        Stall::when_client_sends(PROTOCOL_HEADER).hold_trigger(),
        Stall::when_client_sends(BASIC_PUBLISH).hold_trigger(),
    ] {
        let (env, file, n) = forty_departments();
        let cfg = env.file("att.toml", "[amqp]\nconfirm_window = 10\n");
        let proxy = StallProxy::start("127.0.0.1:5672", stall);
        let (o, took) = timed(
            &env,
            &["checkin", "--file", &file, "--json"],
            &[
                ("ATTENDANCE_AMQP_URL", &amqp_via(&proxy)),
                ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
            ],
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(proxy.tripped());
        // The documented bound with the defaults (2 s + 5 s), and room for a loaded machine.
        assert!(
            took < Duration::from_millis(2_000 + 5_000 + 2_000),
            "took {took:?}: {err}"
        );
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["recorded"].as_u64(), Some(n as u64), "{r}");
        assert_eq!(r["notifications"]["sent"], 0, "{r}");
        assert_eq!(r["notifications"]["pending"].as_u64(), Some(n as u64), "{r}");
        assert_eq!(punched(&env), n, "every punch recorded");
        assert_eq!(env.outbox_events(), n, "every event waits in its outbox");
    }
}
