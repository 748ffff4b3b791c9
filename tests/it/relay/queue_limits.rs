//! Bounded department queues: `queues declare` sets the namespace's policy through
//! the management API, a full queue drops its oldest events (and they do not come back through
//! the retry queue), a changed limit applies to the queue that exists without a redeclare
//! refused, `doctor` warns about a queue holding more than a day of events, and `queues delete`
//! removes the policy. On a broker of the test's own (with the management plugin), never the
//! shared one's policies.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{Duration as Days, Utc};
use common::rabbit::Node;
use common::TestEnv;
use serde_json::Value;

struct Broker(Node);

impl Broker {
    fn start() -> Broker {
        let b = Broker(Node::start(true, None));
        b.0.ctl(&["wait", b.0.dir.join("pid").to_str().unwrap(), "--timeout", "120"]);
        let until = Instant::now() + Duration::from_secs(120);
        while b.api("overview").is_none() {
            assert!(
                Instant::now() < until,
                "the management API did not come up within 120 s"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        b
    }

    fn mgmt_url(&self) -> String {
        format!("http://guest:guest@127.0.0.1:{}", self.0.mgmt.unwrap())
    }

    /// `GET /api/<path>` as JSON, None on any failure (a 404 included).
    fn api(&self, path: &str) -> Option<Value> {
        let o = Command::new("curl")
            .args(["-sf", "-m", "5", "-u", "guest:guest"])
            .arg(format!("http://127.0.0.1:{}/api/{path}", self.0.mgmt.unwrap()))
            .output()
            .ok()?;
        serde_json::from_slice(&o.stdout).ok()
    }

    /// Messages in a queue, as AMQP's passive declare counts them (ready ones).
    fn depth(&self, queue: &str) -> u32 {
        common::queue_depth_at(&self.0.amqp_url(), queue)
    }

    /// The bodies of the messages in a queue, taken off it in order.
    fn drain(&self, queue: &str) -> Vec<String> {
        let mut conn = amiquip::Connection::insecure_open(&self.0.amqp_url()).unwrap();
        let ch = conn.open_channel(None).unwrap();
        let mut bodies = Vec::new();
        while let Some(g) = ch.basic_get(queue, true).unwrap() {
            bodies.push(String::from_utf8_lossy(&g.delivery.body).into_owned());
        }
        conn.close().ok();
        bodies
    }
}

/// The binary on the test's broker, with a queue length limit (0: none) and a short retry.
fn run(env: &TestEnv, b: &Broker, max_length: u32, args: &[&str]) -> std::process::Output {
    env.std_cmd()
        .env("ATTENDANCE_AMQP_URL", b.0.amqp_url())
        .env("ATTENDANCE_AMQP_MANAGEMENT_URL", b.mgmt_url())
        .env("ATTENDANCE_AMQP_QUEUE_MAX_LENGTH", max_length.to_string())
        .env("ATTENDANCE_AMQP_RETRY_DELAY_MS", "200")
        .args(args)
        .output()
        .unwrap()
}

fn ok(env: &TestEnv, b: &Broker, max_length: u32, args: &[&str]) -> String {
    common::expect_ok(args, run(env, b, max_length, args))
}

/// Wait until the department queue runs under a policy whose `max-length` is `max_length`
/// (None: no length limit): the broker applies a policy to a quorum queue moments after it
/// accepts it.
fn applied(b: &Broker, ns: &str, max_length: Option<u64>) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let q = b.api(&format!("queues/%2F/{ns}.dept.D001")).unwrap_or_default();
        let effective = &q["effective_policy_definition"];
        if effective.is_object() && effective.get("max-length").and_then(Value::as_u64) == max_length {
            return;
        }
        assert!(Instant::now() < until, "the policy was not applied: {q}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// doctor's `queue backlog` check, from its --json.
fn backlog_check(stdout: &[u8]) -> Value {
    let report: Value = serde_json::from_slice(stdout).unwrap();
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "queue backlog")
        .unwrap_or_else(|| panic!("no backlog check: {report}"))
        .clone()
}

/// Wait until the department queue holds `n` and the retry queue none (dropped events pass
/// through the retry queue once).
fn settles_at(b: &Broker, ns: &str, n: u32) {
    let (dept, retry) = (format!("{ns}.dept.D001"), format!("{ns}.retry"));
    let until = Instant::now() + Duration::from_secs(60);
    while !(b.depth(&dept) == n && b.depth(&retry) == 0) {
        assert!(
            Instant::now() < until,
            "{dept} holds {} (expected {n}), {retry} {}",
            b.depth(&dept),
            b.depth(&retry)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_full_department_queue_drops_its_oldest_events_and_doctor_warns_of_a_backlog() {
    let b = Broker::start();
    let env = TestEnv::new("UTC");
    let roster = env.file("roster.csv", "");
    let roster = roster.to_str().unwrap();
    env.migrate();
    let gen = [
        "org",
        "generate",
        "--employees",
        "1",
        "--departments",
        "1",
        "-o",
        roster,
    ];
    ok(&env, &b, 1, &gen);
    ok(&env, &b, 1, &["org", "import", roster, "-q"]);

    // The policy, set through the management API: the length and the default age of 48 h.
    let out = ok(&env, &b, 1, &["queues", "declare", "--json"]);
    let declared: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(declared["limits"]["applied"], true, "{out}");
    let policy = b
        .api(&format!("policies/%2F/{}.dept-limits", env.ns))
        .expect("the policy is set");
    assert_eq!(policy["pattern"], format!("^{}\\.dept\\.", env.ns));
    assert_eq!(policy["apply-to"], "queues");
    assert_eq!(policy["definition"]["max-length"], 1);
    assert_eq!(policy["definition"]["overflow"], "drop-head");
    assert_eq!(policy["definition"]["message-ttl"], 48 * 3_600_000u64);
    applied(&b, &env.ns, Some(1));

    // doctor compares the broker's policy with the configuration: a changed limit not yet
    // declared is a warning.
    let o = run(&env, &b, 2, &["doctor", "--json"]);
    let backlog = backlog_check(&o.stdout);
    assert_eq!(backlog["status"], "warn", "{backlog}");
    let detail = backlog["detail"].as_str().unwrap();
    assert!(
        detail.contains("is not the configuration's") && detail.contains("\"max-length\":2"),
        "{detail}"
    );

    // Two events into a queue of one: the check-in is dropped, the check-out stays, and the
    // dropped one does not come back after its pass through the retry queue.
    ok(&env, &b, 1, &["checkin", "E000001", "--kind", "in", "-q"]);
    ok(&env, &b, 1, &["checkin", "E000001", "--kind", "out", "-q"]);
    settles_at(&b, &env.ns, 1);
    let kept = b.drain(&format!("{}.dept.D001", env.ns));
    assert_eq!(kept.len(), 1);
    assert!(kept[0].contains("\"kind\":\"out\""), "{kept:?}");
    assert_eq!(env.outbox_events(), 0, "every event was confirmed by the broker");

    // No length limit now: the policy changes on the queue that exists (no redeclare refused).
    ok(&env, &b, 0, &["queues", "declare"]);
    let policy = b.api(&format!("policies/%2F/{}.dept-limits", env.ns)).unwrap();
    assert_eq!(policy["definition"].get("max-length"), None, "{policy}");
    applied(&b, &env.ns, None);
    let yesterday = (Utc::now() - Days::days(1)).to_rfc3339();
    let today = Utc::now().to_rfc3339();
    ok(
        &env,
        &b,
        0,
        &["checkin", "E000001", "--kind", "in", "--at", &yesterday, "-q"],
    );
    ok(
        &env,
        &b,
        0,
        &["checkin", "E000001", "--kind", "out", "--at", &yesterday, "-q"],
    );
    ok(
        &env,
        &b,
        0,
        &["checkin", "E000001", "--kind", "in", "--at", &today, "-q"],
    );
    settles_at(&b, &env.ns, 3);

    // Three events of a department of one: more than a day (2), unread.
    let o = run(&env, &b, 0, &["doctor", "--json"]);
    let backlog = backlog_check(&o.stdout);
    assert_eq!(backlog["status"], "warn", "{backlog}");
    let detail = backlog["detail"].as_str().unwrap();
    assert!(detail.contains("D001 3 (a day: 2)"), "{detail}");
    assert!(
        !detail.contains("policy"),
        "the policy is the configuration's: {detail}"
    );

    // queues delete removes the policy with the queues.
    ok(&env, &b, 0, &["queues", "delete", "--yes"]);
    assert!(b.api(&format!("policies/%2F/{}.dept-limits", env.ns)).is_none());
}
