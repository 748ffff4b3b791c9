//! The hand-off of a single check-in's event to a live `relay --follow` (a child process here),
//! on the real Redis, RabbitMQ and MySQL: the check-in wakes the relay through Redis and opens
//! no broker connection; the relay publishes; a relay that dies after the wake-up loses nothing.

use crate::common;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::relay::{heartbeat, wait_for, Relay};
use common::{queue_depth, TestEnv};
use redis::Commands;
use serde_json::Value;

fn checkin(env: &TestEnv, emp: &str, at: &str, extra_env: &[(&str, &str)]) -> Value {
    let o = env
        .cmd()
        .args(["checkin", emp, "--at", at, "--json"])
        .envs(extra_env.iter().copied())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn dept_queue(env: &TestEnv) -> String {
    format!("{}.dept.D001", env.ns)
}

#[test]
fn with_a_live_relay_the_checkin_hands_off_and_the_relay_publishes_it() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let _relay = Relay::start(&env);
    let c = checkin(&env, "E000002", "2026-11-02T08:30:00Z", &[]);
    assert_eq!(c["notification"], "handed_off");
    // The relay's next full round is a minute away: the wake-up is what sends it.
    wait_for("the event in the department queue", || {
        queue_depth(&dept_queue(&env)) == 1
    });
    // The confirm comes after the delivery: the relay takes it a moment later.
    wait_for("confirmed by the relay, so out of the outbox", || {
        env.outbox("D001").is_empty()
    });
    assert_eq!(env.shown_ids("D001"), [c["event_id"].as_str().unwrap()]);
    // The text line says nothing is pending.
    let o = env.ok(&["checkin", "E000003", "--at", "2026-11-02T08:31:00Z"]);
    assert!(o.contains("checked in") && !o.contains("pending"), "{o}");
}

#[test]
fn a_burst_of_handed_off_checkins_is_published_once_each_without_waiting_on_confirms() {
    let env = TestEnv::with_roster("UTC", 20, 1);
    let _relay = Relay::start(&env);
    // Twenty check-ins of one department at once: their wake-ups arrive while earlier events'
    // confirms are still due, and each wake-up reads the outbox again. An event on its way is
    // not published a second time.
    let ids: Vec<String> = std::thread::scope(|s| {
        let running: Vec<_> = (1..=20)
            .map(|i| {
                let env = &env;
                s.spawn(move || {
                    let c = checkin(env, &format!("E{i:06}"), "2026-11-02T08:30:00Z", &[]);
                    assert_eq!(c["notification"], "handed_off", "{c}");
                    c["event_id"].as_str().unwrap().to_string()
                })
            })
            .collect();
        running.into_iter().map(|h| h.join().unwrap()).collect()
    });
    wait_for("every event confirmed and out of the outbox", || {
        env.outbox("D001").is_empty()
    });
    assert_eq!(queue_depth(&dept_queue(&env)), 20, "each event published once");
    let mut shown = env.shown_ids("D001");
    let mut ids = ids;
    shown.sort();
    ids.sort();
    assert_eq!(shown, ids);
}

#[test]
fn a_handed_off_checkin_opens_no_broker_connection() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let _relay = Relay::start(&env);
    // A broker address that accepts TCP but never answers: a check-in that tried it would wait
    // out its connect timeout and say pending; the listener would see the connection.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    silent.set_nonblocking(true).unwrap();
    let url = format!("amqp://guest:guest@{}/%2f", silent.local_addr().unwrap());
    let started = Instant::now();
    let c = checkin(
        &env,
        "E000002",
        "2026-11-02T08:30:00Z",
        &[("ATTENDANCE_AMQP_URL", &url)],
    );
    assert_eq!(c["notification"], "handed_off");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it does not wait on the broker"
    );
    let accepted = silent.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the check-in connected to the broker: {accepted:?}"
    );
    wait_for("the event in the department queue", || {
        queue_depth(&dept_queue(&env)) == 1
    });
}

#[test]
fn without_a_relay_or_with_the_handoff_off_the_checkin_publishes_itself() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let c = checkin(&env, "E000002", "2026-11-02T08:30:00Z", &[]);
    assert_eq!(c["notification"], "sent");
    let _relay = Relay::start(&env);
    let c = checkin(
        &env,
        "E000003",
        "2026-11-02T08:30:00Z",
        &[("ATTENDANCE_AMQP_HANDOFF", "false")],
    );
    assert_eq!(c["notification"], "sent");
    assert_eq!(queue_depth(&dept_queue(&env)), 2);
    assert!(env.outbox("D001").is_empty());
}

#[test]
fn a_relay_killed_after_the_wakeup_leaves_the_event_for_the_next_relay() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let relay = Relay::start(&env);
    // Frozen, it cannot take the wake-up; its heartbeat outlives it by a few seconds.
    relay.signal(libc::SIGSTOP);
    let c = checkin(&env, "E000002", "2026-11-02T08:30:00Z", &[]);
    assert_eq!(c["notification"], "handed_off");
    relay.signal(libc::SIGKILL);
    drop(relay);
    let id = c["event_id"].as_str().unwrap();
    assert_eq!(env.outbox("D001").keys().collect::<Vec<_>>(), [id]);
    assert_eq!(queue_depth(&dept_queue(&env)), 0);
    let r = env.json(&["relay", "--json"]);
    assert_eq!(r, serde_json::json!({"departments": 1, "sent": 1, "pending": 0}));
    assert_eq!(env.json(&["relay", "--json"])["sent"], 0);
    assert_eq!(env.shown_ids("D001"), [id], "delivered once");
}

#[test]
fn a_relay_stopped_cleanly_deletes_its_heartbeat_and_checkins_publish_themselves() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let mut relay = Relay::start(&env);
    relay.signal(libc::SIGTERM);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut relay.0.stderr.take().unwrap(), &mut err).unwrap();
    let status = relay.0.wait().unwrap();
    assert!(status.success(), "{err}");
    assert!(!heartbeat(&env), "no heartbeat left to hand off to");
    let c = checkin(&env, "E000002", "2026-11-02T08:30:00Z", &[]);
    assert_eq!(c["notification"], "sent");
    assert_eq!(queue_depth(&dept_queue(&env)), 1);
}

#[test]
fn a_bad_handoff_setting_is_a_one_line_usage_error_that_changes_nothing() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let before = env.redis_snapshot();
    let err = {
        let o = env
            .cmd()
            .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z"])
            .env("ATTENDANCE_AMQP_HANDOFF", "maybe")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8(o.stderr).unwrap()
    };
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("amqp.handoff") && err.contains("'maybe'"), "{err}");
    assert_eq!(env.redis_snapshot(), before);
}

#[test]
fn a_relay_with_a_short_redis_read_timeout_keeps_waiting_for_wakeups() {
    // Regression: its blocked wait for wake-ups (up to a second) outlasted a shorter
    // redis.read_timeout_ms and ended the relay as if Redis had gone silent.
    let env = TestEnv::with_roster("UTC", 5, 1);
    let mut relay = Relay::start_with(&env, &[("ATTENDANCE_REDIS_READ_TIMEOUT_MS", "300")]);
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(relay.0.try_wait().unwrap().is_none(), "the relay is still running");
    let c = checkin(&env, "E000002", "2026-11-02T08:30:00Z", &[]);
    assert_eq!(c["notification"], "handed_off");
    wait_for("the event in the department queue", || {
        queue_depth(&dept_queue(&env)) == 1
    });
}

/// The library's configuration for this environment (the relay's side of the hand-off, driven
/// step by step).
fn config(env: &TestEnv) -> attendance::Config {
    attendance::Config {
        amqp_url: common::AMQP_URL.to_string(),
        redis_url: env.redis_url.clone(),
        namespace: env.ns.clone(),
        ..Default::default()
    }
}

/// An event left in its department's outbox, as a broker outage leaves it.
fn stranded(env: &TestEnv, emp: &str) -> String {
    let c = checkin(
        env,
        emp,
        "2026-11-02T08:30:00Z",
        &[
            ("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER),
            ("ATTENDANCE_AMQP_HANDOFF", "false"),
        ],
    );
    assert_eq!(c["notification"], "pending", "{c}");
    c["event_id"].as_str().unwrap().to_string()
}

/// Regression: the full round waited for the hand-offs' confirms, then drained every outbox
/// with confirms of its own, and the wake-ups that came meanwhile waited behind it (the p99 of
/// the notification latency with a relay).
#[test]
fn a_wakeup_that_comes_during_a_full_round_is_sent_by_the_round_at_once_and_reported_apart() {
    use attendance::Handoffs;
    use attendance::Publisher;
    let env = TestEnv::with_roster("UTC", 6, 2);
    let (d1, d2) = (env.members("D001"), env.members("D002"));
    // The round's work: two events an outage left in D001's outbox.
    stranded(&env, &d1[0]);
    stranded(&env, &d1[1]);
    // A check-in of D002 has just handed its event off: a wake-up waits.
    let handed = stranded(&env, &d2[0]);
    let cfg = config(&env);
    let mut board = attendance::Board::open(&cfg).unwrap();
    board.beat("test").unwrap();
    assert!(board.wake_relay("D002").unwrap());

    let mut p = Publisher::connect(&cfg).unwrap();
    let mut h = Handoffs::default();
    h.sweep(&mut p, &mut board).unwrap();
    assert!(
        board.take_wakes().unwrap().is_empty(),
        "the round took the wake-up on its way"
    );
    h.finish(&mut p, &mut board).unwrap();
    let by_wake = h.take_handed();
    assert_eq!((by_wake.departments, by_wake.sent), (1, 1), "{by_wake:?}");
    let round = h.take_round(&p, &mut board).unwrap().expect("the round is over");
    assert_eq!((round.departments, round.sent, round.pending), (1, 2, 0), "{round:?}");
    assert!(!h.round_open());
    p.close();
    assert!(env.outbox("D001").is_empty() && env.outbox("D002").is_empty());
    assert_eq!(queue_depth(&format!("{}.dept.D001", env.ns)), 2);
    assert_eq!(env.shown_ids("D002"), [handed], "sent once");
}

#[test]
fn an_event_on_its_way_from_a_wakeup_is_not_sent_again_by_the_full_round() {
    use attendance::Handoffs;
    use attendance::Publisher;
    let env = TestEnv::with_roster("UTC", 5, 1);
    let id = stranded(&env, "E000002");
    let cfg = config(&env);
    let mut board = attendance::Board::open(&cfg).unwrap();
    let mut p = Publisher::connect(&cfg).unwrap();
    let mut h = Handoffs::default();
    h.offer(&mut p, &mut board, &["D001".to_string()]).unwrap();
    // Its confirm may or may not have come: either way the round must not send it again.
    h.sweep(&mut p, &mut board).unwrap();
    h.finish(&mut p, &mut board).unwrap();
    assert_eq!(h.take_handed().sent, 1);
    let round = h.take_round(&p, &mut board).unwrap().expect("the round is over");
    assert_eq!((round.departments, round.sent, round.pending), (0, 0, 0), "{round:?}");
    p.close();
    assert!(env.outbox("D001").is_empty());
    assert_eq!(env.shown_ids("D001"), [id], "published once");
}

/// Listing the outboxes is a SCAN of the whole server (every namespace's keys, a thousand a
/// call): a relay whose round took wake-ups only after the whole scan held them back for it.
#[test]
fn the_full_round_looks_for_wakeups_between_the_scan_calls_that_list_the_outboxes() {
    let env = TestEnv::new("UTC");
    let keys = env.keys();
    let mut con = env.redis();
    // More keys than one SCAN call looks at: fillers of this namespace, and two outboxes.
    let mut pipe = redis::pipe();
    for i in 0..2_500 {
        pipe.set(format!("{}:filler:{i}", env.ns), 1).ignore();
    }
    pipe.hset(keys.outbox("D001"), "e1", "x").ignore();
    pipe.hset(keys.outbox("D002"), "e2", "x").ignore();
    pipe.query::<()>(&mut con).unwrap();
    let mut looks = 0;
    let mut board = env.board_handle();
    let depts = board
        .outbox_departments_between(|_| {
            looks += 1;
            Ok(())
        })
        .unwrap();
    assert_eq!(depts, ["D001", "D002"]);
    assert_eq!(depts, board.outbox_departments().unwrap());
    assert!(
        looks >= 2,
        "one look after each SCAN call over 2,502 keys or more: {looks}"
    );
}

/// Regression (found in review of the round's new stream): an outbox entry that is no event was
/// counted as on its way, whose confirm never comes, so its round never ended and no round
/// followed it.
#[test]
fn a_following_relay_facing_an_entry_that_is_no_event_names_it_and_keeps_going_round_after_round() {
    use std::io::BufRead;
    let env = TestEnv::with_roster("UTC", 5, 1);
    let _: () = env
        .redis()
        .hset(env.keys().outbox("D001"), "bad-record", "1\tE000004\tcut short")
        .unwrap();
    let mut child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "100", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let relay = Relay(child);
    let next = || -> Value {
        let line = rx.recv_timeout(Duration::from_secs(20)).expect("a round's line");
        serde_json::from_str(&line).unwrap()
    };
    let first = next();
    assert_eq!(
        (&first["sent"], &first["pending"]),
        (&Value::from(0), &Value::from(1)),
        "{first}"
    );
    assert!(first["malformed"][0]
        .as_str()
        .unwrap()
        .starts_with("D001 bad-record: not an event"));
    // A later round still comes, and sends what an outage leaves meanwhile.
    let id = stranded(&env, "E000002");
    let sent = loop {
        let r = next();
        if r["sent"] == 1 {
            break r;
        }
        assert_eq!(r["pending"], 1, "{r}");
    };
    assert_eq!(sent["pending"], 1, "the entry that is no event stays: {sent}");
    relay.signal(libc::SIGTERM);
    assert_eq!(env.shown_ids("D001"), [id]);
    assert_eq!(
        env.outbox("D001").len(),
        1,
        "the entry that is no event is never dropped"
    );
}

/// Right after a broker node dies, a surviving node may confirm a publish that it does
/// not keep, and a relay reconnects into that very window. What its new connection confirmed in
/// its first `amqp.republish_horizon_seconds` is published once more when that horizon ends.
/// Here the connection is cut and restored, a check-in is handed over and confirmed on the new
/// connection, the queue is then emptied (the survivor that did not keep it), and the relay
/// sends the event again.
#[test]
fn after_a_reconnect_the_relay_publishes_once_more_what_the_new_connection_confirmed_first() {
    use common::stall::{Stall, StallProxy};
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.ok(&["queues", "declare"]);
    let proxy = StallProxy::start("127.0.0.1:5672", Stall::never());
    let cfg = common::quick_broker_config(&env, "republish_horizon_seconds = 5\n");
    let mut child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "300"])
        .env("ATTENDANCE_AMQP_URL", proxy.amqp_url())
        .env("ATTENDANCE_CONFIG", &cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = common::lines_of(child.stderr.take().unwrap());
    let relay = Relay(child);
    let wait_said = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match said.recv_timeout(left) {
                Ok(line) if line.contains(what) => return,
                Ok(line) => eprintln!("relay said: {line}"),
                Err(_) => panic!("the relay never said {what:?}"),
            }
        }
    };
    wait_for("the relay's heartbeat", || heartbeat(&env));
    // The broker goes away: the relay finds its connection closed and, unable to connect,
    // takes its heartbeat back; then the broker is back and the relay publishes again.
    proxy.cut();
    wait_for("the relay giving up its heartbeat", || !heartbeat(&env));
    proxy.restore();
    wait_said("publishing again");
    wait_for("the relay's heartbeat again", || heartbeat(&env));
    let c = checkin(&env, "E000002", "2026-11-02T08:30:00Z", &[]);
    assert_eq!(c["notification"], "handed_off", "{c}");
    wait_for("confirmed on the new connection", || env.outbox("D001").is_empty());
    assert_eq!(queue_depth(&dept_queue(&env)), 1);
    common::purge_queue(&dept_queue(&env));
    // The first 5 s of the new connection are over: published once more.
    wait_said("published once more");
    wait_for("the event in its queue again", || queue_depth(&dept_queue(&env)) == 1);
    assert_eq!(env.shown_ids("D001"), [c["event_id"].as_str().unwrap()]);
    drop(relay);
}
