//! A broker that blocks publishers (a memory alarm: `connection.blocked`) holds no command past
//! the bounds of docs/timeouts.md: a bulk check-in records its punches and
//! leaves the notifications pending, `relay` leaves them pending (exit 4), each promptly and
//! naming the blocked broker. Before, bulk took 10.2 s and relay 10.0 s: twice the confirm
//! timeout. One private RabbitMQ node for the file (its start takes seconds), alarm set with
//! `rabbitmqctl set_vm_memory_high_watermark 0`.

use crate::common;
use std::process::Output;
use std::time::{Duration, Instant};

use common::rabbit::Node;
use common::TestEnv;
use serde_json::Value;

/// The confirm timeout the commands get here, and room for process start-up, the handshake
/// and the close on a busy 2-core machine (the bound checked is generous: the point is that no
/// wait is spent twice).
const CONFIRM_MS: u64 = 3_000;
const SLACK: Duration = Duration::from_millis(2_500);

/// The test's own node (its start takes seconds), up once `rabbitmqctl wait` says so.
fn broker() -> Node {
    let b = Node::start(false, None);
    b.ctl(&["wait", b.dir.join("pid").to_str().unwrap(), "--timeout", "120"]);
    b
}

fn timed(env: &TestEnv, broker: &Node, args: &[&str]) -> (Output, Duration) {
    let cfg = env.file(
        "att.toml",
        &format!("[amqp]\nconnect_timeout_ms = 2000\nconfirm_timeout_ms = {CONFIRM_MS}\nclose_timeout_ms = 300\n"),
    );
    let started = Instant::now();
    let o = env
        .cmd()
        .args(args)
        .env("ATTENDANCE_AMQP_URL", broker.amqp_url())
        .env("ATTENDANCE_CONFIG", &cfg)
        .output()
        .unwrap();
    let took = started.elapsed();
    eprintln!(
        "attendance {} -> {:?} in {took:?}\n{}",
        args.join(" "),
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    (o, took)
}

/// Bulk and relay in one test: one broker for the file, stopped at its end.
#[test]
fn a_broker_blocking_publishers_holds_bulk_and_relay_no_longer_than_one_confirm_timeout() {
    let broker = broker();
    let env = TestEnv::with_roster("UTC", 200, 4);
    let mut csv = String::from("employee_id,kind,at\n");
    for i in 1..=200 {
        csv.push_str(&format!("E{i:06},in,2026-11-02T08:30:00Z\n"));
    }
    let file = env.file("punches.csv", &csv);
    broker.ctl(&["set_vm_memory_high_watermark", "0"]);
    // The alarm is raised at the node's next memory check.
    std::thread::sleep(Duration::from_secs(2));

    let bound = Duration::from_millis(CONFIRM_MS) + SLACK;
    let (o, took) = timed(&env, &broker, &["checkin", "--file", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "the punches are recorded; the notifications wait"
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["recorded"], 200, "{r}");
    assert_eq!(
        (
            r["notifications"]["sent"].as_u64(),
            r["notifications"]["pending"].as_u64()
        ),
        (Some(0), Some(200)),
        "{r}"
    );
    let why = r["notifications"]["problem"].as_str().unwrap_or_default();
    assert!(why.contains("blocks publishers"), "names the blocked broker: {r}");
    assert!(took < bound, "bulk took {took:?}, bound {bound:?}");

    let (o, took) = timed(&env, &broker, &["relay", "--json"]);
    assert_eq!(o.status.code(), Some(4), "events still pending");
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["sent"].as_u64(), r["pending"].as_u64()), (Some(0), Some(200)), "{r}");
    assert!(
        r["problem"].as_str().unwrap_or_default().contains("blocks publishers"),
        "{r}"
    );
    assert!(took < bound, "relay took {took:?}, bound {bound:?}");

    // The alarm cleared, the same relay sends everything.
    broker.ctl(&["set_vm_memory_high_watermark", "0.4"]);
    std::thread::sleep(Duration::from_secs(2));
    let (o, _) = timed(&env, &broker, &["relay", "--json"]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["sent"].as_u64(), r["pending"].as_u64()), (Some(200), Some(0)), "{r}");
}
