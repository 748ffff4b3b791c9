//! The quick start on a broker with the common open-files limit of 1024: the demo
//! ends with a clear message or succeeds, and leaves the broker answering handshakes;
//! `scripts/services.sh --fix-broker`, as root, restarts such a local broker under the raised
//! limit (without the flag it only says so); and the demo's clean-up works as it prints it.
//!
//! The broker is the test's own: a second RabbitMQ node on free ports, its files in a temporary
//! directory, stopped and removed at the end.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::rabbit::{is_root, Node};
use common::TestEnv;
use mysql::prelude::Queryable;

/// The test's own node, with the management plugin, under `ulimit -n <nofile>`.
struct Broker(Node);

impl Broker {
    fn start(nofile: u32) -> Broker {
        let b = Broker(Node::start(true, Some(nofile)));
        b.wait_up();
        b
    }

    fn env(&self, c: &mut Command) {
        self.0.env(c);
    }

    /// Up: the AMQP handshake answered and the management API reporting file handles.
    fn wait_up(&self) {
        let until = Instant::now() + Duration::from_secs(120);
        while !(self.answers_handshake() && self.files().is_some()) {
            assert!(
                Instant::now() < until,
                "test broker {} did not come up within 120 s",
                self.0.node
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn amqp_url(&self) -> String {
        self.0.amqp_url()
    }

    fn mgmt(&self) -> u16 {
        self.0.mgmt.expect("started with the management plugin")
    }

    fn mgmt_url(&self) -> String {
        format!("http://guest:guest@127.0.0.1:{}", self.mgmt())
    }

    /// Whether the node answers the AMQP protocol header with a frame within 5 s.
    fn answers_handshake(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.0.amqp)) else {
            return false;
        };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 1];
        s.write_all(b"AMQP\x00\x00\x09\x01").is_ok() && s.read_exact(&mut b).is_ok() && b[0] == 1
    }

    fn api(&self, path: &str) -> Option<serde_json::Value> {
        let o = Command::new("curl")
            .args(["-sf", "-m", "5", "-u", "guest:guest"])
            .arg(format!("http://127.0.0.1:{}/api/{path}", self.mgmt()))
            .output()
            .ok()?;
        serde_json::from_slice(&o.stdout).ok()
    }

    /// The node's file handles: (used, total), once it reports them.
    fn files(&self) -> Option<(u64, u64)> {
        let n = self.api("nodes")?;
        Some((n[0]["fd_used"].as_u64()?, n[0]["fd_total"].as_u64()?))
    }

    fn queues_of(&self, ns: &str) -> usize {
        let q = self.api("queues?columns=name").unwrap();
        q.as_array()
            .unwrap()
            .iter()
            .filter(|q| q["name"].as_str().unwrap().starts_with(&format!("{ns}.")))
            .count()
    }

    fn pid(&self) -> Option<i32> {
        self.0.pid()
    }
}

/// scripts/demo.sh on the test's broker, in the environment's namespace and database, with
/// the test binary (no release build) and none of the caller's ATTENDANCE_* variables.
fn demo(env: &TestEnv, broker: &Broker, args: &[&str]) -> Output {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut c = Command::new("bash");
    c.arg(format!("{root}/scripts/demo.sh")).arg("--no-services").args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("ATTENDANCE_") || k.starts_with("DEMO_") {
            c.env_remove(k);
        }
    }
    c.env("ATTENDANCE_BIN", env!("CARGO_BIN_EXE_attendance"))
        .env("DEMO_NAMESPACE", &env.ns)
        .env("DEMO_MYSQL_URL", env.mysql_url())
        .env("ATTENDANCE_REDIS_URL", common::REDIS_URL)
        .env("ATTENDANCE_AMQP_URL", broker.amqp_url())
        .env("ATTENDANCE_AMQP_MANAGEMENT_URL", broker.mgmt_url())
        .output()
        .unwrap()
}

fn count(env: &TestEnv, sql: &str) -> u64 {
    env.mysql().query_first(sql).unwrap().unwrap_or(0)
}

#[test]
fn the_demo_on_a_broker_limited_to_1024_files_refuses_clearly_or_succeeds_and_leaves_it_answering() {
    let broker = Broker::start(1024);
    let (used, total) = broker.files().unwrap();
    assert!(total <= 1024, "the test broker has {total} file handles");

    // 500 departments need some 1,500 handles: refused before any queue is declared, exit 3.
    let env = TestEnv::new("Europe/Paris");
    let o = demo(&env, &broker, &["--employees", "1000", "--departments", "500"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("not enough file handles for the queues, nothing declared")
            && line.contains("new queues need about")
            && line.contains("ulimit -n")
            && line.contains("docs/operations.md"),
        "{line}"
    );
    assert!(broker.answers_handshake(), "the broker must still answer handshakes");
    assert_eq!(broker.queues_of(&env.ns), 0, "nothing was declared");
    assert!(broker.files().unwrap().0 < used + 100, "{:?}", broker.files());
    // The roster landed before the refusal.
    assert_eq!(count(&env, "SELECT COUNT(*) FROM departments"), 500);

    // --employees alone scales the departments: 400 employees, 2 departments, and a whole day.
    let env = TestEnv::new("Europe/Paris");
    let o = demo(&env, &broker, &["--employees", "400"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("roster: 400 employees in 2 departments"), "{err}");
    assert_eq!(count(&env, "SELECT COUNT(*) FROM departments"), 2);
    assert_eq!(count(&env, "SELECT COUNT(*) FROM attendance"), 400);
    assert_eq!(
        broker.queues_of(&env.ns),
        2 + 3,
        "two department queues, retry, parking, journal"
    );
    assert!(broker.answers_handshake());
    // Its own broker, not the shared one, got the queues.
    let keys = env.redis_keys();
    assert!(keys.iter().all(|k| k.starts_with(&format!("{}:", env.ns))), "{keys:?}");

    // A coherent story: E000010's sick day keeps them from checking in, the day
    // settles them as on leave, and the demo ends saying how to remove what it made.
    assert_eq!(
        count(
            &env,
            "SELECT COUNT(*) FROM attendance WHERE employee_id = 'E000010' AND status = 'on_leave'"
        ),
        1
    );
    assert_eq!(
        count(&env, "SELECT COUNT(*) FROM punch_log WHERE employee_id = 'E000010'"),
        0
    );
    assert!(
        err.trim_end()
            .ends_with("scripts/demo.sh --cleanup (with the same DEMO_* variables)"),
        "{err}"
    );

    // --cleanup removes it all: queues, Redis keys, database.
    let o = demo(&env, &broker, &["--cleanup"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(broker.queues_of(&env.ns), 0);
    assert_eq!(env.redis_keys(), Vec::<String>::new());
    let mut server = mysql::Pool::new(common::MYSQL_SERVER).unwrap().get_conn().unwrap();
    let dbs: Vec<String> = server.query(format!("SHOW DATABASES LIKE '{}'", env.db)).unwrap();
    assert!(dbs.is_empty(), "{dbs:?}");
}

#[test]
fn services_restarts_a_local_broker_limited_to_1024_files_only_when_told_to_fix_it() {
    if !is_root() {
        eprintln!("skipped: restarting a local broker needs root");
        return;
    }
    let broker = Broker::start(1024);
    let before = broker.pid().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let services = |args: &[&str]| {
        let mut c = Command::new("bash");
        c.arg(format!("{root}/scripts/services.sh")).args(args);
        broker.env(&mut c);
        c.output().unwrap()
    };

    // Without --fix-broker the broker is someone's: named, with what would change, left running.
    let o = services(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("has an open-files limit of 1024")
            && err.contains("--fix-broker (as root) would restart it under ulimit -n"),
        "{err}"
    );
    assert_eq!(broker.pid(), Some(before), "{err}");

    let o = services(&["--fix-broker"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("has an open-files limit of 1024") && err.contains("restarting it under ulimit -n"),
        "{err}"
    );
    let after = broker.pid().unwrap();
    assert_ne!(before, after, "{err}");
    let limits = std::fs::read_to_string(format!("/proc/{after}/limits")).unwrap();
    let nofile: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(nofile >= 16_384, "{limits}");
    assert!(broker.answers_handshake());
}

/// Whether the shared broker has a queue of this name (a passive declare).
fn shared_queue_exists(name: &str) -> bool {
    let mut conn = amiquip::Connection::insecure_open(common::AMQP_URL).unwrap();
    let found = conn.open_channel(None).unwrap().queue_declare_passive(name).is_ok();
    conn.close().ok();
    found
}

/// `scripts/demo.sh --cleanup` run exactly as the demo's last line prints it: the same DEMO_*
/// variables and nothing else (no ATTENDANCE_BIN: it failed then with "ATTENDANCE_BIN: unbound
/// variable" and removed nothing), on a small demo-like namespace made here on the shared services.
#[test]
fn the_demo_cleanup_as_printed_removes_the_queues_keys_and_database() {
    let env = TestEnv::migrated("Europe/Paris");
    env.import_roster(
        "roster.csv",
        "employee_id,name,department_id,department_name,role\n\
         E1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\nE3,Cy,D2,Ops,supervisor\n",
    );
    env.ok(&["queues", "declare"]);
    let day = env.today().to_string();
    env.ok(&["init-day", "--date", &day]);
    env.ok(&["checkin", "E2", "--kind", "in"]);
    let queue = format!("{}.dept.D1", env.ns);
    assert!(shared_queue_exists(&queue));
    assert!(!env.redis_keys().is_empty());

    let root = env!("CARGO_MANIFEST_DIR");
    let mut c = Command::new("bash");
    c.arg(format!("{root}/scripts/demo.sh")).arg("--cleanup");
    for (k, _) in std::env::vars() {
        if k.starts_with("ATTENDANCE_") || k.starts_with("DEMO_") {
            c.env_remove(k);
        }
    }
    let o = c
        .env("DEMO_NAMESPACE", &env.ns)
        .env("DEMO_MYSQL_URL", env.mysql_url())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("unbound variable"), "{err}");
    assert!(
        err.contains(&format!("demo removed: queues, Redis keys {}:*", env.ns)),
        "{err}"
    );

    assert!(!shared_queue_exists(&queue), "{err}");
    assert!(!shared_queue_exists(&format!("{}.dept.D2", env.ns)), "{err}");
    assert_eq!(env.redis_keys(), Vec::<String>::new());
    let mut server = mysql::Pool::new(common::MYSQL_SERVER).unwrap().get_conn().unwrap();
    let dbs: Vec<String> = server.query(format!("SHOW DATABASES LIKE '{}'", env.db)).unwrap();
    assert!(dbs.is_empty(), "{dbs:?}");
}
