//! TLS to the stores: a throwaway CA made by the test, its own TLS-only redis-server (and
//! MariaDB and RabbitMQ node), the real binary over TLS, what landed read back, and a wrong
//! CA refused in one line (exit 3) with nothing written.

use crate::common;

use std::process::Output;

use common::steps::{self, Company};
use common::tls::{self, Broker, Ca, Server};
use common::TestEnv;

/// A past Monday (the back-dating bound is raised for tests).
const DAY: &str = "2026-11-02";

/// A test's environment whose stores are the ones given (TLS ones or the shared plain ones),
/// with `SSL_CERT_FILE` naming its CA. It borrows the environment, so that the test's servers
/// (declared after the environment) stop before its directory is removed.
struct Stores<'a> {
    env: &'a TestEnv,
    ca: Ca,
    redis_url: String,
    mysql_url: Option<String>,
    amqp_url: Option<String>,
    /// Departments laid out: with a private MySQL and the shared broker, the environment's own
    /// clean-up (which reads them from the shared MySQL) cannot name their queues.
    departments: std::cell::Cell<u32>,
}

impl Drop for Stores<'_> {
    fn drop(&mut self) {
        if self.mysql_url.is_some() && self.amqp_url.is_none() {
            let ids: Vec<String> = (1..=self.departments.get()).map(|d| format!("D{d:03}")).collect();
            common::cleanup_amqp(&self.env.ns, &ids);
        }
    }
}

impl Stores<'_> {
    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = self.env.std_cmd();
        c.env("ATTENDANCE_REDIS_URL", &self.redis_url)
            .env("SSL_CERT_FILE", &self.ca.cert)
            .args(args);
        if let Some(url) = &self.mysql_url {
            c.env("ATTENDANCE_MYSQL_URL", url);
        }
        if let Some(url) = &self.amqp_url {
            c.env("ATTENDANCE_AMQP_URL", url);
        }
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        common::expect_ok(args, self.run(args))
    }

    /// `migrate`, a roster of `employees` in `departments` imported, and DAY laid out.
    fn day(&self, employees: u32, departments: u32) {
        let roster = self.env.dir.join("roster.csv");
        let company = Company::new(roster.to_str().unwrap(), employees, departments);
        company
            .set_up(|args| -> Result<String, ()> { Ok(self.ok(args)) })
            .unwrap();
        self.departments.set(departments);
        self.ok(&steps::init_day(DAY));
    }
}

/// Exit 3 and one line on stderr (besides warnings, such as the shared Redis's persistence)
/// that names TLS and the certificate.
fn refused_certificate(out: &Output) -> String {
    let all = String::from_utf8_lossy(&out.stderr);
    let err: Vec<&str> = all.lines().filter(|l| !l.starts_with("warning: ")).collect();
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert_eq!(err.len(), 1, "{all}");
    let err = err[0].to_string();
    assert!(err.contains("TLS") && err.contains("certificate"), "{err}");
    err
}

/// `redis-cli` over TLS (an outside reference): the namespace's keys.
fn tls_keys(redis: &Server, ca: &Ca, ns: &str) -> Vec<String> {
    let out = std::process::Command::new("redis-cli")
        .args(["--tls", "-h", "127.0.0.1", "-p", &redis.port.to_string()])
        .arg("--cacert")
        .arg(&ca.cert)
        .args(["--scan", "--pattern", &format!("{ns}:*")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut keys: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    keys.sort();
    keys
}

#[test]
fn a_checkin_over_rediss_lands_and_a_wrong_ca_is_refused() {
    let env = TestEnv::new("Europe/Paris");
    let ca = Ca::new(&env.dir, "good");
    let wrong = Ca::new(&env.dir, "wrong");
    let redis = tls::redis(&env.dir, &ca);
    let stores = Stores {
        redis_url: format!("rediss://localhost:{}/", redis.port),
        ca,
        env: &env,
        mysql_url: None,
        amqp_url: None,
        departments: Default::default(),
    };
    stores.day(6, 1);
    let j: serde_json::Value =
        serde_json::from_str(&stores.ok(&["checkin", "E000002", "--at", "2026-11-02T08:50:00+01:00", "--json"]))
            .unwrap();
    assert_eq!((j["kind"].as_str(), j["late"].as_bool()), (Some("in"), Some(false)));
    let status = stores.ok(&["status", "E000002", "--date", DAY]);
    assert!(status.contains("08:50"), "{status}");
    let keys = tls_keys(&redis, &stores.ca, &stores.env.ns);
    assert!(keys.iter().any(|k| k.contains("D001")), "{keys:?}");

    // A CA that did not sign the server's certificate: exit 3, one line, nothing written.
    let before = tls_keys(&redis, &stores.ca, &stores.env.ns);
    let mut c = stores.cmd(&["checkin", "E000003", "--at", "2026-11-02T08:40:00+01:00"]);
    let out = c.env("SSL_CERT_FILE", &wrong.cert).output().unwrap();
    refused_certificate(&out);
    assert_eq!(tls_keys(&redis, &stores.ca, &stores.env.ns), before);

    // The system's store (no SSL_CERT_FILE) does not know the test's CA either.
    let out = stores
        .cmd(&["status", "E000002", "--date", DAY])
        .env_remove("SSL_CERT_FILE")
        .output()
        .unwrap();
    refused_certificate(&out);
}

#[test]
fn a_bad_ssl_cert_file_is_a_usage_error_before_any_store() {
    let env = TestEnv::new("Europe/Paris");
    let not_pem = env.file("not-a-cert.txt", "hello\n");
    for (value, says) in [
        (env.dir.join("missing.pem").into_os_string(), "cannot read it"),
        (not_pem.into_os_string(), "holds no PEM certificate"),
        ("".into(), "set but empty"),
    ] {
        let out = env
            .std_cmd()
            .env("ATTENDANCE_REDIS_URL", "rediss://127.0.0.1:1/")
            .env("SSL_CERT_FILE", &value)
            .args(["status", "E000001", "--date", DAY])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("SSL_CERT_FILE") && err.contains(says), "{err}");
    }
}

/// `mariadb` over TLS with the CA (an outside reference): the rows of `sql`, tab-separated.
fn tls_query(db: &Server, ca: &Ca, sql: &str) -> String {
    let out = std::process::Command::new("mariadb")
        .args([
            "--no-defaults",
            "-h",
            "127.0.0.1",
            "-P",
            &db.port.to_string(),
            "-u",
            "root",
        ])
        .arg(format!("--ssl-ca={}", ca.cert.display()))
        .args(["--ssl-verify-server-cert", "-N", "-B", "-e", sql])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

#[test]
fn a_day_settles_and_reports_over_mysql_tls_and_a_wrong_ca_is_refused() {
    let env = TestEnv::new("Europe/Paris");
    let ca = Ca::new(&env.dir, "good");
    let wrong = Ca::new(&env.dir, "wrong");
    let db = tls::mariadb(&env.dir, &ca);
    let url = format!("mysql://root@localhost:{}/{}?require_ssl=true", db.port, env.db);
    let stores = Stores {
        redis_url: common::REDIS_URL.to_string(),
        ca,
        mysql_url: Some(url.clone()),
        amqp_url: None,
        env: &env,
        departments: Default::default(),
    };
    stores.day(6, 1);
    stores.ok(&["checkin", "E000002", "--at", "2026-11-02T08:50:00+01:00"]);
    stores.ok(&["settle", "--date", DAY]);
    let row = tls_query(
        &db,
        &stores.ca,
        &format!(
            "SELECT first_in FROM `{}`.attendance WHERE employee_id = 'E000002' AND work_date = '{DAY}'",
            stores.env.db
        ),
    );
    assert_eq!(row, "2026-11-02 07:50:00", "first_in is kept in UTC");
    let report = stores.ok(&["report", "day", "--date", DAY]);
    assert!(report.contains("total"), "{report}");
    // The server saw the connections encrypted: its TLS counter moved.
    let accepts = tls_query(&db, &stores.ca, "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'");
    let n: u64 = accepts.split_whitespace().last().unwrap().parse().unwrap();
    assert!(n >= 5, "{accepts}");

    // A wrong CA: exit 3 in one line, nothing settled again.
    let count = |s: &Stores| tls_query(&db, &s.ca, &format!("CHECKSUM TABLE `{}`.attendance", s.env.db));
    let before = count(&stores);
    let out = stores
        .cmd(&["settle", "--date", DAY])
        .env("SSL_CERT_FILE", &wrong.cert)
        .output()
        .unwrap();
    // Tried once: a certificate does not change between attempts (settle retries only a server
    // that is away).
    let err = refused_certificate(&out);
    assert!(err.contains("after 1 attempt"), "{err}");
    assert_eq!(count(&stores), before);

    // The crate's own parameter names the CA, and a CA file that is not there is exit 2.
    let own = format!(
        "mysql://root@localhost:{}/{}?root_cert_path={}",
        db.port,
        stores.env.db,
        stores.ca.cert.display()
    );
    let out = stores
        .cmd(&["report", "day", "--date", DAY])
        .env("ATTENDANCE_MYSQL_URL", &own)
        .env_remove("SSL_CERT_FILE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let missing = format!("{url}&root_cert_path=/nonexistent/ca.pem");
    let out = stores
        .cmd(&["report", "day", "--date", DAY])
        .env("ATTENDANCE_MYSQL_URL", &missing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        (out.status.code(), err.trim_end().lines().count()),
        (Some(2), 1),
        "{err}"
    );
    assert!(err.contains("root_cert_path"), "{err}");
    for bad in ["ssl-mode=REQUIRED", "require_ssl=maybe"] {
        let out = stores
            .cmd(&["report", "day", "--date", DAY])
            .env("ATTENDANCE_MYSQL_URL", format!("{url}&{bad}"))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{bad}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_day_runs_over_tls_on_all_three_stores_and_a_wrong_ca_is_refused_by_the_broker() {
    let env = TestEnv::new("Europe/Paris");
    let ca = Ca::new(&env.dir, "good");
    let wrong = Ca::new(&env.dir, "wrong");
    let broker = Broker::start(&env.dir, &ca, &env.ns);
    let redis = tls::redis(&env.dir, &ca);
    let db = tls::mariadb(&env.dir, &ca);
    let stores = Stores {
        redis_url: format!("rediss://localhost:{}/", redis.port),
        mysql_url: Some(format!(
            "mysql://root@localhost:{}/{}?require_ssl=true",
            db.port, env.db
        )),
        amqp_url: Some(format!("amqps://guest:guest@localhost:{}/%2f", broker.port)),
        ca,
        env: &env,
        departments: Default::default(),
    };
    stores.day(6, 1);
    let queue = format!("{}.dept.D001", stores.env.ns);
    // The node's counts lag a few seconds behind (quorum queues report them periodically).
    let ready = |b: &Broker, n: u64| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let got = b.queues(&queue).first().map_or(0, |q| q.1);
            if got == n || std::time::Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    };
    assert_eq!(ready(&broker, 0), 0);

    // A check-in: Redis and the broker, both over TLS; the event is in the private broker.
    let j: serde_json::Value =
        serde_json::from_str(&stores.ok(&["checkin", "E000002", "--at", "2026-11-02T08:50:00+01:00", "--json"]))
            .unwrap();
    assert_eq!(j["notification"], "sent", "{j} {:?}", broker.queues(""));
    assert_eq!(ready(&broker, 1), 1);
    // One more while the broker is unreachable waits in the outbox; the relay sends it over TLS.
    let down = stores
        .cmd(&["checkin", "E000003", "--at", "2026-11-02T09:20:00+01:00", "-q"])
        .env("ATTENDANCE_AMQP_URL", "amqps://guest:guest@127.0.0.1:1/%2f")
        .output()
        .unwrap();
    assert!(down.status.success(), "{}", String::from_utf8_lossy(&down.stderr));
    let relayed: serde_json::Value = serde_json::from_str(&stores.ok(&["relay", "--json"])).unwrap();
    assert_eq!(relayed["sent"], 1, "{relayed}");
    assert_eq!(ready(&broker, 2), 2);

    // Settle and report: MySQL over TLS.
    stores.ok(&["settle", "--date", DAY]);
    let rows = tls_query(
        &db,
        &stores.ca,
        &format!(
            "SELECT employee_id, first_in, late_minutes FROM `{}`.attendance WHERE first_in IS NOT NULL \
             ORDER BY employee_id",
            stores.env.db
        ),
    );
    assert_eq!(
        rows,
        "E000002\t2026-11-02 07:50:00\t0\nE000003\t2026-11-02 08:20:00\t20"
    );
    let report = stores.ok(&["report", "day", "--date", DAY]);
    assert!(report.contains("total"), "{report}");

    // The broker's certificate checked against a CA that did not sign it: exit 3, one line,
    // nothing published (Redis here is the shared plain one, so only the broker is refused).
    // Settle appended its fence to the journal; the broker's figures show it some seconds later
    // (they are refreshed every 5 s): read them once they have stopped moving.
    let before = steady(&broker, &stores.env.ns);
    let out = stores
        .cmd(&["dlq", "list"])
        .env("ATTENDANCE_REDIS_URL", common::REDIS_URL)
        .env("SSL_CERT_FILE", &wrong.cert)
        .env_remove("ATTENDANCE_MYSQL_URL")
        .output()
        .unwrap();
    let err = refused_certificate(&out);
    assert!(err.contains(&format!("localhost:{}", broker.port)), "{err}");
    assert_eq!(broker.queues(&stores.env.ns), before);
    // A name the certificate does not carry is refused too.
    let out = stores
        .cmd(&["dlq", "list"])
        .env("ATTENDANCE_REDIS_URL", common::REDIS_URL)
        .env(
            "ATTENDANCE_AMQP_URL",
            format!("amqps://guest:guest@127.0.0.2:{}/%2f", broker.port),
        )
        .env_remove("ATTENDANCE_MYSQL_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_checkin_over_a_rediss_cluster_lands_on_its_nodes_and_a_wrong_ca_is_refused() {
    let env = TestEnv::new("Europe/Paris");
    let ca = Ca::new(&env.dir, "good");
    let wrong = Ca::new(&env.dir, "wrong");
    let nodes = tls::redis_cluster(&env.dir, &ca);
    let seeds: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
    let stores = Stores {
        redis_url: format!("rediss+cluster://{}", seeds.join(",")),
        ca,
        env: &env,
        mysql_url: None,
        amqp_url: None,
        departments: Default::default(),
    };
    stores.day(6, 2);
    stores.ok(&["checkin", "E000002", "--at", "2026-11-02T08:50:00+01:00"]);
    let status = stores.ok(&["status", "E000002", "--date", DAY]);
    assert!(status.contains("08:50"), "{status}");
    // The namespace's keys, node by node (read with redis-cli over TLS): on more than one node.
    let pattern = format!("{}:*", env.ns);
    let holding = nodes
        .iter()
        .filter(|n| {
            !tls::redis_cli(&stores.ca, n.port, &["--scan", "--pattern", &pattern])
                .trim()
                .is_empty()
        })
        .count();
    assert!(holding >= 2, "the day's keys are spread over the masters ({holding})");

    let out = stores
        .cmd(&["status", "E000002", "--date", DAY])
        .env("SSL_CERT_FILE", &wrong.cert)
        .output()
        .unwrap();
    refused_certificate(&out);
}

/// The broker's queues under `prefix` once their figures have stayed the same for 6 s (longer
/// than the broker's 5 s statistics interval), within 30 s.
fn steady(broker: &common::tls::Broker, prefix: &str) -> Vec<(String, u64)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let (mut last, mut since) = (broker.queues(prefix), std::time::Instant::now());
    while since.elapsed() < std::time::Duration::from_secs(6) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let now = broker.queues(prefix);
        if now != last {
            (last, since) = (now, std::time::Instant::now());
        }
    }
    last
}
