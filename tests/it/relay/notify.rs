//! Notifications against the real RabbitMQ, Redis and MySQL: the event in its department's
//! queue, the outbox when the broker is down, retry and parking, watch-dept, redelivery.
//! The test itself plays an outside client (another team) with amiquip, to look at queues.

use crate::common;
use std::time::Duration;

use amiquip::{AmqpProperties, AmqpValue, Connection, FieldTable, Publish, QueueDeclareOptions};
use common::{TestEnv, AMQP_URL};
use mysql::prelude::Queryable;
use serde_json::Value;

/// A past day, so that `--at` is never in the future.
const DAY: &str = "2026-11-02";

fn amqp() -> Connection {
    Connection::insecure_open(AMQP_URL).unwrap()
}

/// Messages ready in a queue (which must exist).
fn depth(queue: &str) -> u32 {
    let mut conn = amqp();
    let ch = conn.open_channel(None).unwrap();
    let q = ch.queue_declare_passive(queue).unwrap();
    let n = q.declared_message_count().unwrap();
    conn.close().ok();
    n
}

/// Take every message of a queue (acking them): (routing key, properties, body).
fn drain(queue: &str) -> Vec<(String, AmqpProperties, String)> {
    let mut conn = amqp();
    let ch = conn.open_channel(None).unwrap();
    let mut out = Vec::new();
    while let Some(g) = ch.basic_get(queue, false).unwrap() {
        let d = g.delivery;
        out.push((
            d.routing_key.clone(),
            d.properties.clone(),
            String::from_utf8(d.body.clone()).unwrap(),
        ));
        d.ack(&ch).unwrap();
    }
    conn.close().ok();
    out
}

fn publish_raw(exchange: &str, key: &str, body: &[u8], message_id: &str) {
    let props = AmqpProperties::default()
        .with_message_id(message_id.into())
        .with_delivery_mode(2);
    publish_raw_with(exchange, key, body, props);
}

fn publish_raw_with(exchange: &str, key: &str, body: &[u8], props: AmqpProperties) {
    let mut conn = amqp();
    let ch = conn.open_channel(None).unwrap();
    ch.basic_publish(exchange, Publish::with_properties(body, key, props))
        .unwrap();
    conn.close().unwrap();
}

/// An address where nothing listens: bound, then released.
fn closed_port_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("amqp://guest:hunter2@127.0.0.1:{port}/%2f")
}

fn lines(out: &str) -> Vec<Value> {
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_checkin_event_reaches_its_department_queue_only_with_every_field() {
    let env = TestEnv::with_roster("Europe/Paris", 20, 2);
    // Declare D002's queue, so that "nowhere else" is checked on a queue that exists.
    assert_eq!(env.ok(&["watch-dept", "D002", "--once", "--json"]), "");
    let c = env.json(&[
        "checkin",
        "E000002",
        "--at",
        "2026-11-02T09:07:00+01:00",
        "--source",
        "kiosk-3",
        "--json",
    ]);
    assert_eq!(c["notification"], "sent");
    let q = |d: &str| format!("{}.dept.{d}", env.ns);
    assert_eq!(depth(&q("D002")), 0, "another department's queue got nothing");
    let got = drain(&q("D001"));
    assert_eq!(got.len(), 1);
    let (key, props, body) = &got[0];
    assert_eq!(key, &q("D001"), "straight to the queue, through the default exchange");
    let mut e: Value = serde_json::from_str(body).unwrap();
    // When it was recorded: now, not the punch's own (replayed) time.
    let recorded = e.as_object_mut().unwrap().remove("recorded_at").expect("recorded_at");
    let recorded = chrono::DateTime::parse_from_rfc3339(recorded.as_str().unwrap()).unwrap();
    assert!(
        (chrono::Utc::now() - recorded.with_timezone(&chrono::Utc))
            .num_seconds()
            .abs()
            < 60
    );
    // Signed by the recording process's key (every test environment has one).
    let sig = e.as_object_mut().unwrap().remove("sig").expect("a signature");
    assert_eq!(
        sig.as_str().map(str::len),
        Some(22),
        "HMAC-SHA256 truncated to 128 bits, base64url without padding"
    );
    assert_eq!(props.message_id().as_deref(), e["event_id"].as_str());
    assert_eq!(e["event_id"], c["event_id"]);
    assert_eq!(props.content_type().as_deref(), Some("application/json"));
    assert_eq!(*props.delivery_mode(), Some(2), "persistent");
    let expected = serde_json::json!({
        "event_id": c["event_id"],
        "employee_id": "E000002",
        "employee_name": c["employee_name"],
        "department_id": "D001",
        "kind": "in",
        "at": "2026-11-02T09:07:00+01:00",
        "work_date": DAY,
        "late": true,
        "late_minutes": 7,
        "early": false,
        "early_minutes": 0,
        "changed": true,
        "source": "kiosk-3",
        "key_id": common::KEY_ID,
    });
    assert_eq!(e, expected);
    assert!(env.outbox("D001").is_empty(), "a confirmed event leaves the outbox");
}

#[test]
fn the_events_exchange_gets_every_event_once_only_when_turned_on_and_old_bindings_go() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let (events, dept) = (format!("{}.events", env.ns), format!("{}.dept.D001", env.ns));
    // Another team's queue on the events exchange (exclusive: gone with this connection), and
    // the bindings versions before direct publishing made, which would double every event.
    let mut conn = amqp();
    let ch = conn.open_channel(None).unwrap();
    let opts = QueueDeclareOptions {
        exclusive: true,
        ..Default::default()
    };
    let other = ch.queue_declare("", opts).unwrap().name().to_string();
    ch.queue_bind(other.as_str(), events.as_str(), "*.in", FieldTable::new())
        .unwrap();
    ch.queue_bind(dept.as_str(), events.as_str(), "D001.*", FieldTable::new())
        .unwrap();
    ch.queue_bind(format!("{}.journal", env.ns), events.as_str(), "#", FieldTable::new())
        .unwrap();
    let depth_of = |q: &str| ch.queue_declare_passive(q).unwrap().declared_message_count().unwrap();

    let c = env.json(&["checkin", "E000001", "--at", "2026-11-02T08:30:00Z", "--json"]);
    assert_eq!(c["notification"], "sent");
    assert_eq!((depth_of(&dept), depth_of(&other)), (1, 0), "off by default");

    let on = |args: &[&str]| {
        let o = env
            .cmd()
            .env("ATTENDANCE_AMQP_EVENTS_EXCHANGE", "true")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    on(&["queues", "declare", "-q"]);
    let c: Value =
        serde_json::from_str(&on(&["checkin", "E000002", "--at", "2026-11-02T08:31:00Z", "--json"])).unwrap();
    assert_eq!(c["notification"], "sent");
    assert_eq!(depth_of(&dept), 2, "the department queue got the event once");
    let got = ch
        .basic_get(other.as_str(), true)
        .unwrap()
        .expect("the other team got it");
    assert_eq!(got.delivery.routing_key, "D001.in");
    let e: Value = serde_json::from_slice(&got.delivery.body).unwrap();
    assert_eq!(e["event_id"], c["event_id"]);
    assert_eq!(depth_of(&other), 0, "once");
    conn.close().unwrap();
    assert!(env.outbox("D001").is_empty());
}

#[test]
fn broker_unreachable_the_checkin_succeeds_and_relay_delivers_it_exactly_once() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let down = closed_port_url();
    let started = std::time::Instant::now();
    let o = env
        .cmd()
        .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"])
        .env("ATTENDANCE_AMQP_URL", &down)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["notification"], "pending");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("pending") && !err.contains("hunter2"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "a closed port fails fast");
    let id = c["event_id"].as_str().unwrap();
    assert_eq!(env.outbox("D001").keys().collect::<Vec<_>>(), [id]);
    // The human line says so too.
    let o = env
        .cmd()
        .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z"])
        .env("ATTENDANCE_AMQP_URL", &down)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("repeat"),
        "an exact repeat makes no event"
    );

    // relay against the dead broker: exit 3, nothing lost.
    let e = env
        .cmd()
        .args(["relay"])
        .env("ATTENDANCE_AMQP_URL", &down)
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(3));
    assert!(!String::from_utf8_lossy(&e.stderr).contains("hunter2"));
    assert_eq!(env.outbox("D001").len(), 1);

    let r = env.json(&["relay", "--json"]);
    assert_eq!(r, serde_json::json!({"departments": 1, "sent": 1, "pending": 0}));
    assert!(env.outbox("D001").is_empty());
    let r = env.json(&["relay", "--json"]);
    assert_eq!(r["sent"], 0);
    let got = drain(&format!("{}.dept.D001", env.ns));
    assert_eq!(got.len(), 1, "exactly once");
    assert_eq!(got[0].1.message_id().as_deref(), Some(id));
}

#[test]
fn a_duplicate_punch_has_no_notification() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let args = ["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"];
    // The first punch notifies: at once, or (a broker slow to create the queue on a loaded
    // machine) through its outbox, which relay drains; either way one message.
    let first = env.json(&args)["notification"].clone();
    assert!(first == "sent" || first == "pending", "{first}");
    env.ok(&["relay", "-q"]);
    assert_eq!(env.json(&args)["notification"], "none");
    env.ok(&["relay", "-q"]);
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)), 1);
}

#[test]
fn a_malformed_message_goes_through_retry_to_parking_and_replay_brings_it_back() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.bare_broker();
    let cfg = env.file("att.toml", "[amqp]\nretry_delay_ms = 100\nmax_retries = 2\n");
    let cfg = cfg.to_str().unwrap();
    let watch = ["watch-dept", "D001", "--once", "--json", "--config", cfg];
    assert_eq!(env.ok(&watch), "", "declares the topology");
    publish_raw("", &format!("{}.dept.D001", env.ns), b"{not an event", "bad-1");
    // The first delivery fails and waits in the retry queue; the second fails and is parked.
    let parking = format!("{}.parking", env.ns);
    let mut runs = 0;
    while depth(&parking) == 0 {
        runs += 1;
        assert!(runs < 30, "never parked");
        let o = env.run(&watch);
        assert!(o.status.success());
        assert!(o.stdout.is_empty(), "a malformed message is never shown");
        std::thread::sleep(Duration::from_millis(150));
    }
    assert!(runs >= 2, "it went through retry first");
    // A list is a result: one JSON document, an array (docs/commands.md: the JSON rule).
    let listed = env.json(&["dlq", "list", "--json", "--config", cfg]);
    let listed = listed.as_array().expect("an array");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["message_id"], "bad-1");
    assert_eq!(listed[0]["department_id"], "D001");
    assert_eq!(listed[0]["failures"], 2);
    assert!(listed[0]["reason"].as_str().unwrap().contains("not an event"));
    assert_eq!(listed[0]["body"], "{not an event");
    // The listed message goes back to the queue by a requeue, which a quorum queue's count
    // shows a moment later on a busy broker.
    let mut waited = 0;
    while depth(&parking) != 1 && waited < 50 {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    assert_eq!(depth(&parking), 1, "list leaves the queue as it was");

    env.fails(&["dlq", "replay", "no-such-id", "--config", cfg], 4);
    assert_eq!(
        env.ok(&["dlq", "replay", "bad-1", "--config", cfg]).trim(),
        "1 replayed, 0 left in the parking queue"
    );
    assert_eq!(depth(&parking), 0);
    let back = drain(&format!("{}.dept.D001", env.ns));
    assert_eq!(back.len(), 1);
    let headers = back[0].1.headers().clone().unwrap_or_default();
    assert!(!headers.contains_key("x-death"), "replay starts a fresh failure count");
    assert_eq!(headers.get("x-att-replays"), Some(&AmqpValue::LongLongInt(1)));

    // Park it again and purge it for good.
    publish_raw("", &format!("{}.dept.D001", env.ns), b"[]", "bad-2");
    for _ in 0..30 {
        env.ok(&watch);
        if depth(&parking) == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    // Without --yes: one line, exit 2, the message still parked.
    let err = env.fails(&["dlq", "purge", "--all", "--config", cfg], 2);
    assert!(err.contains("add --yes") && err.trim().lines().count() == 1, "{err}");
    assert_eq!(depth(&parking), 1);
    assert_eq!(
        env.ok(&["dlq", "purge", "--all", "--yes", "--config", cfg]).trim(),
        "1 purged, 0 left in the parking queue"
    );
    assert_eq!(depth(&parking), 0);
}

#[test]
fn watch_dept_once_prints_its_department_in_order_then_nothing_new() {
    let env = TestEnv::with_roster("UTC", 20, 2);
    let mut ids = Vec::new();
    for (emp, at) in [
        ("E000002", "2026-11-02T08:01:00Z"),
        ("E000003", "2026-11-02T08:02:00Z"),
        ("E000002", "2026-11-02T17:00:00Z"),
    ] {
        let c = env.json(&["checkin", emp, "--at", at, "--json"]);
        ids.push(c["event_id"].as_str().unwrap().to_string());
    }
    // D002's first employee (the roster lists departments in order).
    let other: String = env
        .mysql()
        .query_first("SELECT MIN(id) FROM employees WHERE department_id = 'D002'")
        .unwrap()
        .unwrap();
    env.ok(&["checkin", &other, "--at", "2026-11-02T08:00:00Z"]);
    let shown = lines(&env.ok(&["watch-dept", "D001", "--once", "--json"]));
    let shown_ids: Vec<&str> = shown.iter().map(|e| e["event_id"].as_str().unwrap()).collect();
    assert_eq!(shown_ids, ids);
    assert!(shown.iter().all(|e| e["department_id"] == "D001"));
    assert_eq!(shown[2]["kind"], "out");
    assert_eq!(shown[2]["early"], true);
    assert_eq!(
        env.ok(&["watch-dept", "D001", "--once", "--json"]),
        "",
        "acked: nothing new"
    );
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)), 0);
    assert_eq!(depth(&format!("{}.dept.D002", env.ns)), 1, "untouched");
    let plain = env.ok(&["watch-dept", "D002", "--once"]);
    assert!(
        plain.starts_with("08:00:00 D002 ") && plain.trim_end().ends_with(" in"),
        "{plain}"
    );
}

#[test]
fn redelivery_after_a_consumer_dies_before_acking_is_shown_once() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let c = env.json(&["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"]);
    let queue = format!("{}.dept.D001", env.ns);
    {
        // A consumer takes the event, and (at-least-once) a second copy is published, then the
        // consumer dies before acking: its channel closes and the broker requeues the message.
        let mut conn = amqp();
        let ch = conn.open_channel(None).unwrap();
        let got = ch.basic_get(queue.as_str(), false).unwrap().unwrap();
        let d = got.delivery;
        let copy = Publish::with_properties(&d.body, d.routing_key.clone(), d.properties.clone());
        ch.basic_publish("", copy).unwrap();
        ch.close().unwrap();
        conn.close().unwrap();
    }
    assert_eq!(depth(&queue), 2);
    let shown = lines(&env.ok(&["watch-dept", "D001", "--once", "--json"]));
    assert_eq!(shown.len(), 1, "shown once: {shown:?}");
    assert_eq!(shown[0]["event_id"], c["event_id"]);
    assert_eq!(depth(&queue), 0, "both copies acked");
    assert_eq!(env.ok(&["watch-dept", "D001", "--once", "--json"]), "");
}

#[test]
fn classic_queues_when_configured() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.bare_broker();
    let cfg = env.file("att.toml", "[amqp]\nqueue_type = \"classic\"\n");
    let c = env.json(&["checkin", "E000002", "--json", "--config", cfg.to_str().unwrap()]);
    assert_eq!(c["notification"], "sent");
    // Redeclaring the queue as classic succeeds only if it is classic.
    let mut conn = amqp();
    let ch = conn.open_channel(None).unwrap();
    let mut args = amiquip::FieldTable::new();
    args.insert("x-queue-type".into(), AmqpValue::LongString("classic".into()));
    args.insert(
        "x-dead-letter-exchange".into(),
        AmqpValue::LongString(format!("{}.dlx", env.ns)),
    );
    args.insert("x-dead-letter-routing-key".into(), AmqpValue::LongString("D001".into()));
    let opts = QueueDeclareOptions {
        durable: true,
        arguments: args,
        ..Default::default()
    };
    let q = ch.queue_declare(format!("{}.dept.D001", env.ns), opts).unwrap();
    assert_eq!(q.declared_message_count(), Some(1));
    conn.close().ok();
}

/// Read stdout lines of a child on a thread, so a test can wait for one with a timeout.
fn line_reader(out: std::process::ChildStdout) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn interrupt(child: &std::process::Child) {
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
}

#[test]
fn watch_dept_follows_new_events_and_leaves_cleanly_on_ctrl_c() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let mut child = env
        .std_cmd()
        .args(["watch-dept", "D001", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = line_reader(child.stdout.take().unwrap());
    let c = env.json(&["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"]);
    let shown = lines.recv_timeout(Duration::from_secs(10)).expect("the event arrives");
    assert_eq!(
        serde_json::from_str::<Value>(&shown).unwrap()["event_id"],
        c["event_id"]
    );
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 events shown"), "{err}");
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)), 0, "shown, so acked");
}

#[test]
fn relay_follow_sends_what_a_broker_outage_left_behind() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let mut child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "100", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = line_reader(child.stdout.take().unwrap());
    let o = env
        .cmd()
        .args(["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"])
        .env("ATTENDANCE_AMQP_URL", closed_port_url())
        // Left behind by an outage, not handed to the live relay.
        .env("ATTENDANCE_AMQP_HANDOFF", "false")
        .output()
        .unwrap();
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["notification"], "pending");
    let round: Value = serde_json::from_str(&lines.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!(round["sent"], 1);
    interrupt(&child);
    assert!(child.wait().unwrap().success());
    assert!(env.outbox("D001").is_empty());
    let got = drain(&format!("{}.dept.D001", env.ns));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1.message_id().as_deref(), c["event_id"].as_str());
}

#[test]
fn a_queue_declared_otherwise_leaves_events_pending_and_says_why() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.ok(&["checkin", "E000002", "--at", "2026-11-02T08:30:00Z"]);
    // The queues exist as quorum queues; a config asking for classic ones cannot redeclare them.
    let cfg = env.file("att.toml", "[amqp]\nqueue_type = \"classic\"\n");
    let cfg = cfg.to_str().unwrap();
    let o = env.run(&["checkin", "E000003", "--json", "--config", cfg]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("PRECONDITION_FAILED"), "{err}");
    let err = env.fails(&["relay", "--config", cfg], 4);
    assert!(err.contains("PRECONDITION_FAILED"), "{err}");
    assert_eq!(env.outbox("D001").len(), 1, "still pending, not lost");
    assert_eq!(
        env.ok(&["relay"]).trim(),
        "1 events sent, 0 pending, from 1 departments"
    );
}

#[test]
fn settle_with_every_outbox_empty_needs_no_broker() {
    // The usual night: nothing pending, so settle's drain does not connect to RabbitMQ (it did,
    // and declared the topology, for nothing), and a broker away is no problem worth reporting.
    // (Without --no-reconcile settle reads the journal first and refuses: `settle::reconcile`.)
    let env = TestEnv::with_roster("UTC", 5, 1);
    let o = env
        .cmd()
        .args(["settle", "--date", "2026-11-19", "--json", "--no-reconcile"])
        .env("ATTENDANCE_AMQP_URL", closed_port_url())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["rows_written"], 5, "{s}");
    assert_eq!(
        (&s["outbox"]["pending"], &s["outbox"]["sent"]),
        (&0.into(), &0.into()),
        "{s}"
    );
    assert!(s["outbox"].get("problem").is_none(), "{s}");
}

#[test]
fn settle_drains_the_outboxes_and_a_broker_outage_does_not_fail_it() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let down = closed_port_url();
    for (emp, day) in [("E000002", "2026-11-19"), ("E000003", "2026-11-20")] {
        let o = env
            .cmd()
            .args(["checkin", emp, "--at", &format!("{day}T08:00:00Z"), "--json"])
            .env("ATTENDANCE_AMQP_URL", &down)
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    assert_eq!(env.outbox("D001").len(), 2);
    // --no-reconcile: without it settle refuses a broker it cannot read the journal from.
    let o = env
        .cmd()
        .args(["settle", "--date", "2026-11-19", "--json", "--no-reconcile"])
        .env("ATTENDANCE_AMQP_URL", &down)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["outbox"]["pending"], 2);
    assert!(s["outbox"]["problem"].as_str().unwrap().contains("RabbitMQ"), "{s}");
    assert_eq!(env.outbox("D001").len(), 2, "nothing lost");
    let s = env.json(&["settle", "--date", "2026-11-20", "--json"]);
    assert_eq!(s["outbox"]["sent"], 2);
    assert!(env.outbox("D001").is_empty());
    assert_eq!(depth(&format!("{}.dept.D001", env.ns)), 2);
}

#[test]
fn fifty_concurrent_checkins_each_reach_the_queue_at_least_once() {
    let env = TestEnv::with_roster("UTC", 60, 1);
    let children: Vec<_> = (2..52)
        .map(|i| {
            env.std_cmd()
                .args(["checkin", &format!("E{i:06}"), "--at", "2026-11-02T08:30:00Z", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["notification"] == "sent" || v["notification"] == "pending", "{v}");
        ids.insert(v["event_id"].as_str().unwrap().to_string());
    }
    // A confirm slower than checkin_confirm_ms under this load leaves its event pending: relay sends it.
    env.ok(&["relay"]);
    let got: std::collections::BTreeSet<String> = drain(&format!("{}.dept.D001", env.ns))
        .into_iter()
        .map(|(_, p, _)| p.message_id().clone().unwrap())
        .collect();
    assert_eq!(got, ids);
}

#[test]
fn watch_dept_piped_into_head_stops_quietly_and_keeps_the_rest() {
    let env = TestEnv::with_roster("UTC", 60, 1);
    // Enough events (about 100 KB of JSON) to fill the pipe before `head` goes away.
    let mut csv = String::from("employee_id,kind,at\n");
    for m in 0..6 {
        for e in 2..=61 {
            csv += &format!("E{e:06},in,2026-11-02T08:{m:02}:{:02}Z\n", e % 60);
        }
    }
    let f = env.file("punches.csv", &csv);
    let o = env.run(&["checkin", "--file", f.to_str().unwrap(), "--json"]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let sent = r["notifications"]["sent"].as_u64().unwrap();
    assert!(sent >= 300, "{r}");
    // The demo's own use: bash with pipefail, so the exit code is watch-dept's.
    let bin = assert_cmd::cargo::cargo_bin("attendance");
    let mut sh = std::process::Command::new("bash");
    sh.args([
        "-c",
        "set -o pipefail; \"$0\" watch-dept D001 --once --json | head -n 1 >/dev/null",
        bin.to_str().unwrap(),
    ]);
    for (k, v) in env.std_cmd().get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    let o = sh.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let left = u64::from(depth(&format!("{}.dept.D001", env.ns)));
    assert!(
        left > 0 && left < sent,
        "the unwritten rest stays queued: {left} of {sent}"
    );
}

#[test]
fn an_event_shown_by_an_earlier_watcher_is_not_shown_again() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.ok(&["checkin", "E000002", "--at", "2026-11-02T08:30:00Z"]);
    let queue = format!("{}.dept.D001", env.ns);
    // Keep a copy of the message, as a watcher that dies after showing and before acking would
    // leave it in the queue.
    let (key, props, body) = {
        let mut conn = amqp();
        let ch = conn.open_channel(None).unwrap();
        let d = ch.basic_get(queue.as_str(), false).unwrap().unwrap().delivery;
        let copy = (d.routing_key.clone(), d.properties.clone(), d.body.clone());
        conn.close().unwrap();
        copy
    };
    assert_eq!(lines(&env.ok(&["watch-dept", "D001", "--once", "--json"])).len(), 1);
    publish_raw_with("", &key, &body, props);
    let o = env.run(&["watch-dept", "D001", "--once", "--json"]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty(), "a restarted watcher drops what was shown");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 duplicates dropped"));
    assert_eq!(depth(&queue), 0, "and acks it");
}
