//! `attendance doctor` against the real services, and against private Redis servers started
//! by the tests themselves (without persistence, with an evicting policy), never by
//! reconfiguring the shared one.

use crate::common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{Duration as Days, Utc};
use common::TestEnv;
use serde_json::Value;

/// A redis-server of the test's own on a free port, in its own directory; killed on drop.
struct PrivateRedis {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl PrivateRedis {
    fn start(args: &[&str]) -> PrivateRedis {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("att-doctor-redis-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
            .arg(&dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        let r = PrivateRedis { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while redis::Client::open(r.url().as_str())
            .and_then(|c| c.get_connection())
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_err()
        {
            assert!(Instant::now() < deadline, "private redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        r
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A RabbitMQ node of the test's own, with the management plugin, started under a small
/// open-files limit, on free ports and in its own directory; stopped on drop. It runs as the
/// `rabbitmq` user (as `rabbitmq-server` run by root does), so its directory is theirs.
struct PrivateBroker {
    child: Child,
    amqp: u16,
    http: u16,
    dir: std::path::PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl PrivateBroker {
    fn start(nofile: u32) -> PrivateBroker {
        let (amqp, http, dist) = (free_port(), free_port(), free_port());
        let dir = std::env::temp_dir().join(format!("att-doctor-rabbit-{amqp}"));
        std::fs::create_dir_all(dir.join("mnesia")).unwrap();
        std::fs::write(dir.join("enabled_plugins"), "[rabbitmq_management].\n").unwrap();
        std::fs::write(
            dir.join("rabbitmq.conf"),
            format!("listeners.tcp.default = {amqp}\nmanagement.tcp.port = {http}\nmanagement.tcp.ip = 127.0.0.1\n"),
        )
        .unwrap();
        assert!(Command::new("chown")
            .args(["-R", "rabbitmq:rabbitmq"])
            .arg(&dir)
            .status()
            .unwrap()
            .success());
        let var = |name: &str| dir.join(name).to_str().unwrap().to_string();
        let child = Command::new("sh")
            .args(["-c", &format!("ulimit -n {nofile} && exec rabbitmq-server")])
            .current_dir(&dir)
            .env("RABBITMQ_NODENAME", format!("atttest{amqp}@localhost"))
            .env("RABBITMQ_NODE_PORT", amqp.to_string())
            .env("RABBITMQ_DIST_PORT", dist.to_string())
            .env("RABBITMQ_MNESIA_BASE", var("mnesia"))
            .env("RABBITMQ_LOG_BASE", var("log"))
            .env("RABBITMQ_FEATURE_FLAGS_FILE", var("feature_flags"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", var("enabled_plugins"))
            .env("RABBITMQ_CONFIG_FILE", var("rabbitmq.conf"))
            .env("RABBITMQ_PID_FILE", var("pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rabbitmq-server is installed");
        let b = PrivateBroker { child, amqp, http, dir };
        // Up once the node reports its file handles (its first figures take a few seconds).
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let nodes = attendance::management_nodes(&b.management_url(), Duration::from_secs(2));
            if nodes.is_ok_and(|n| n.iter().all(|n| n.fd_total.is_some()) && !n.is_empty()) {
                return b;
            }
            assert!(Instant::now() < deadline, "private rabbitmq-server did not start");
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn management_url(&self) -> String {
        format!("http://guest:guest@127.0.0.1:{}", self.http)
    }

    fn amqp_url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.amqp)
    }
}

impl Drop for PrivateBroker {
    fn drop(&mut self) {
        // The node's own process (beam, as user rabbitmq) is in the pid file; `sh` is gone by exec.
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
            let deadline = Instant::now() + Duration::from_secs(20);
            while Path::new(&format!("/proc/{}", pid.trim())).exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run doctor --json with extra environment; returns the exit code and the checks by name.
fn doctor(env: &TestEnv, vars: &[(&str, &str)]) -> (i32, Checks) {
    let mut cmd = env.cmd();
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let o = cmd.args(["doctor", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)));
    let worst = match o.status.code() {
        Some(0) => "ok",
        Some(4) => "warn",
        _ => "fail",
    };
    assert!(
        v["status"] == worst || (worst == "ok" && v["status"] == "skip"),
        "the one-word status follows the exit code: {v}"
    );
    let checks = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (o.status.code().unwrap(), checks)
}

fn status<'a>(checks: &'a [(String, String, String)], name: &str) -> (&'a str, &'a str) {
    let c = checks
        .iter()
        .find(|c| c.0 == name)
        .unwrap_or_else(|| panic!("no check {name}: {checks:?}"));
    (c.1.as_str(), c.2.as_str())
}

/// A roster, its queues, yesterday settled: everything a sound installation has.
fn sound(env: &TestEnv) {
    let yesterday = (Utc::now().date_naive() - Days::days(1)).to_string();
    env.ok(&["queues", "declare"]);
    env.ok(&["settle", "--date", &yesterday]);
}

#[test]
fn a_sound_installation_is_all_ok_and_exits_0() {
    let (env, redis, code, checks) = on_private_redis(&["--appendonly", "yes"]);
    for (name, st, detail) in &checks {
        assert!(st == "ok" || st == "skip", "{name}: {st} {detail}");
    }
    assert_eq!(code, 0, "{checks:?}");
    assert!(status(&checks, "redis").1.contains("Redis 7"), "{checks:?}");
    assert!(status(&checks, "queues").1.starts_with("2 of 2"), "{checks:?}");
    assert!(status(&checks, "settle").1.contains(": ok,"), "{checks:?}");
    assert_eq!(status(&checks, "broker files").0, "skip");
    assert!(status(&checks, "broker files").1.contains("not checked"));

    // The human form: one line per check, ok/skip/warn/fail first.
    let o = doctor_text(&env, &redis);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), checks.len());
    assert!(
        text.lines().all(|l| ["ok ", "skip"].iter().any(|p| l.starts_with(p))),
        "{text}"
    );
}

/// Doctor's human form on the private Redis.
fn doctor_text(env: &TestEnv, redis: &PrivateRedis) -> std::process::Output {
    env.cmd()
        .env("ATTENDANCE_REDIS_URL", redis.url())
        .arg("doctor")
        .output()
        .unwrap()
}

type Checks = Vec<(String, String, String)>;

/// A sound installation whose Redis is a private one started with `redis_args`: doctor's answer.
fn on_private_redis(redis_args: &[&str]) -> (TestEnv, PrivateRedis, i32, Checks) {
    let env = TestEnv::with_roster("UTC", 20, 2);
    sound(&env);
    let redis = PrivateRedis::start(redis_args);
    let (code, checks) = doctor(&env, &[("ATTENDANCE_REDIS_URL", &redis.url())]);
    (env, redis, code, checks)
}

#[test]
fn a_redis_without_persistence_is_a_warning_exit_4() {
    let (env, redis, code, checks) = on_private_redis(&["--appendonly", "no", "--save", ""]);
    let (st, detail) = status(&checks, "redis persistence");
    assert_eq!(st, "warn");
    assert!(detail.contains("restart"), "{detail}");
    assert_eq!(status(&checks, "redis eviction").0, "ok");
    // Regression: then "no replicas (one node: its append-only file keeps the day ...)".
    let (_, replication) = status(&checks, "redis replication");
    assert!(!replication.contains("append-only file keeps"), "{replication}");
    assert_eq!(code, 4, "{checks:?}");
    // Regression: only warnings ended in "error: doctor: 1 warning(s)".
    let o = doctor_text(&env, &redis);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(err.trim(), "doctor: 1 warning, nothing failed");
}

#[test]
fn an_evicting_redis_is_a_failure_exit_3() {
    let (env, redis, code, checks) = on_private_redis(&["--appendonly", "yes", "--maxmemory-policy", "allkeys-lru"]);
    let (st, detail) = status(&checks, "redis eviction");
    assert_eq!(st, "fail");
    assert!(detail.contains("allkeys-lru"), "{detail}");
    assert_eq!(code, 3);
    let o = doctor_text(&env, &redis);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: doctor: 1 check failed"), "{err}");
}

#[test]
fn unreachable_services_fail_each_on_its_line_without_a_password() {
    let env = TestEnv::migrated("UTC");
    let dead = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, checks) = doctor(
        &env,
        &[
            ("ATTENDANCE_REDIS_URL", &format!("redis://:hush@127.0.0.1:{dead}/")),
            (
                "ATTENDANCE_AMQP_URL",
                &format!("amqp://guest:hush@127.0.0.1:{dead}/%2f"),
            ),
        ],
    );
    assert_eq!(code, 3);
    assert_eq!(status(&checks, "redis").0, "fail");
    assert_eq!(status(&checks, "rabbitmq").0, "fail");
    assert_eq!(status(&checks, "redis persistence").0, "skip");
    assert_eq!(status(&checks, "queues").0, "skip");
    assert_eq!(status(&checks, "mysql").0, "ok", "MySQL is still checked");
    assert_eq!(status(&checks, "migrations").0, "ok");
    assert!(status(&checks, "clock").1.contains("MySQL"), "{checks:?}");
    assert!(!format!("{checks:?}").contains("hush"));
    // Regression: with Redis unreachable, its past boards unread, this said ok.
    let (st, detail) = status(&checks, "unsettled days");
    assert_eq!(st, "skip", "{detail}");
    assert!(detail.contains("Redis is unreachable"), "{detail}");
}

#[test]
fn a_wrong_broker_password_is_a_refused_login_naming_the_user_not_a_broker_out_of_handles() {
    // Regression: RabbitMQ holds a refused login about 3 s, past the 2 s connect timeout, and
    // every command said the broker was out of file handles and pointed at ulimit.
    let env = TestEnv::migrated("UTC");
    let grants = common::roles::Grants {
        rabbit: Some([".*", ".*", ".*"]),
        ..Default::default()
    };
    let kiosk = common::roles::Role::create(&env, "kiosk", &grants);
    let wrong = format!("wrong{}", uuid::Uuid::new_v4().simple());
    let pw = env.file("wrong.pw", &format!("{wrong}\n"));
    let url = format!("amqp://{}@127.0.0.1:5672/%2f", kiosk.user);
    let vars = [
        ("ATTENDANCE_AMQP_URL", url.as_str()),
        ("ATTENDANCE_AMQP_PASSWORD_FILE", pw.to_str().unwrap()),
    ];
    let started = Instant::now();
    let o = env.cmd().envs(vars).args(["dlq", "list"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with("error: ")
            && err.contains(&format!("refused the login of user '{}'", kiosk.user))
            && !err.contains("file handles")
            && !err.contains(&wrong)
            && !err.contains(kiosk.password()),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());

    // doctor's rabbitmq line says the same, and the queues are skipped, not blamed.
    let (code, checks) = doctor(&env, &vars);
    assert_eq!(code, 3, "{checks:?}");
    let (st, detail) = status(&checks, "rabbitmq");
    assert_eq!(st, "fail");
    assert!(
        detail.contains("refused the login") && !detail.contains("file handles") && !detail.contains(&wrong),
        "{detail}"
    );

    // The right password logs in: the same user, so the refusal was the password's.
    let good = env.file("good.pw", &format!("{}\n", kiosk.password()));
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", &url)
        .env("ATTENDANCE_AMQP_PASSWORD_FILE", &good)
        .args(["dlq", "list"])
        .assert()
        .success();
}

#[test]
fn a_database_never_migrated_fails_and_names_the_fix() {
    let env = TestEnv::new("UTC");
    let (code, checks) = doctor(&env, &[]);
    assert_eq!(code, 3);
    let (st, detail) = status(&checks, "mysql");
    assert_eq!(st, "fail");
    assert!(detail.contains("attendance migrate"), "{detail}");
}

#[test]
fn past_days_waiting_and_missing_queues_are_warnings() {
    let env = TestEnv::with_roster("UTC", 10, 2);
    // The queues that org import declared are gone (a broker replaced since), and init-day
    // finds the broker away: it lays out the board and leaves the queues missing.
    env.bare_broker();
    let today = Utc::now().date_naive();
    // A week ago was settled; since then nothing, and a board of three days ago is still in Redis.
    env.ok(&["settle", "--date", &(today - Days::days(7)).to_string()]);
    let stale = (today - Days::days(3)).to_string();
    let away = env
        .cmd()
        .args(["init-day", "--date", &stale])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    assert!(away.status.success());
    let (code, checks) = doctor(&env, &[]);
    assert_eq!(code, 4, "{checks:?}");
    let (st, detail) = status(&checks, "unsettled days");
    assert_eq!(st, "warn");
    assert!(detail.contains(&format!("{stale} (boards in Redis)")), "{detail}");
    assert!(detail.contains("work day, no settle run"), "{detail}");
    let (st, detail) = status(&checks, "queues");
    assert_eq!(st, "warn", "no department has a queue yet");
    assert!(detail.starts_with("0 of 2") && detail.contains("D001"), "{detail}");

    // Settling the waiting days clears the warning.
    for back in 1..=6 {
        env.ok(&["settle", "--date", &(today - Days::days(back)).to_string()]);
    }
    let (_, checks) = doctor(&env, &[]);
    assert_eq!(status(&checks, "unsettled days").0, "ok", "{checks:?}");
}

#[test]
fn broker_file_handles_are_read_from_a_real_management_api() {
    let broker = PrivateBroker::start(400);
    let on_broker = |env: &TestEnv| {
        let cfg = env.file(
            "mgmt.toml",
            &format!("[amqp]\nmanagement_url = \"{}\"\n", broker.management_url()),
        );
        doctor(
            env,
            &[
                ("ATTENDANCE_CONFIG", cfg.to_str().unwrap()),
                ("ATTENDANCE_AMQP_URL", &broker.amqp_url()),
            ],
        )
    };
    let small = TestEnv::with_roster("UTC", 20, 2);
    let (_, checks) = on_broker(&small);
    let (st, detail) = status(&checks, "broker files");
    assert_eq!(st, "ok", "{detail}");
    assert!(
        detail.contains(&format!("atttest{}@localhost: ", broker.amqp)),
        "{detail}"
    );
    // A single node leads every queue it has; the roster's 2 department queues are still to come.
    assert!(
        detail.contains("file handles used, leads ")
            && detail.contains("2 department queue(s) not declared yet counted in"),
        "{detail}"
    );
    assert!(!detail.contains("guest:guest"), "{detail}");

    // 150 quorum queues do not fit in a node limited to 400 open files.
    let big = TestEnv::with_roster("UTC", 200, 150);
    let (code, checks) = on_broker(&big);
    let (st, detail) = status(&checks, "broker files");
    assert_eq!(st, "fail", "{detail}");
    assert!(detail.contains("raise the broker's open-files limit"), "{detail}");
    assert_eq!(code, 3);
}

#[test]
fn a_management_api_that_does_not_answer_is_a_warning_that_hides_its_password() {
    let env = TestEnv::with_roster("UTC", 10, 1);
    sound(&env);
    let dead = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cfg = env.file(
        "doctor.toml",
        &format!("[amqp]\nmanagement_url = \"http://admin:hush@127.0.0.1:{dead}\"\n"),
    );
    let (_, checks) = doctor(&env, &[("ATTENDANCE_CONFIG", cfg.to_str().unwrap())]);
    let (st, detail) = status(&checks, "broker files");
    assert_eq!(st, "warn");
    assert!(detail.starts_with("not read"), "{detail}");
    assert!(!detail.contains("hush"), "{detail}");
    assert!(Path::new(&cfg).exists());

    let bad = env.file("bad.toml", "[amqp]\nmanagement_url = \"ftp://x\"\n");
    let err = env.fails(&["doctor", "--config", bad.to_str().unwrap()], 2);
    assert!(err.contains("amqp.management_url"), "{err}");
}

#[test]
fn events_waiting_with_no_relay_alive_are_a_warning_and_a_live_relay_is_named() {
    let env = TestEnv::with_roster("UTC", 10, 2);
    let (_, checks) = doctor(&env, &[]);
    assert_eq!(status(&checks, "relay").0, "ok");
    assert!(
        status(&checks, "relay").1.starts_with("no relay --follow alive"),
        "{checks:?}"
    );
    assert_eq!(status(&checks, "outbox"), ("ok", "no event waiting in the outboxes"));
    // A check-in while the broker is away, with no relay to hand it to: it waits in its outbox.
    let stranded = env
        .cmd()
        .args(["checkin", "E000002", "--kind", "in"])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    assert!(stranded.status.success());
    let (code, checks) = doctor(&env, &[]);
    let (st, detail) = status(&checks, "outbox");
    assert_eq!(st, "warn", "{checks:?}");
    assert!(
        detail.starts_with("1 event waiting in the outboxes of 1 department and no relay alive"),
        "{detail}"
    );
    assert!(code >= 4, "{checks:?}");
    // A relay --follow sends it and beats its heartbeat: doctor names it alive, nothing waits.
    let mut relay = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "100"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let checks = loop {
        let (_, checks) = doctor(&env, &[]);
        // While the relay is sending, the outbox is "ok" with the event still counted.
        if status(&checks, "outbox") == ("ok", "no event waiting in the outboxes")
            && status(&checks, "relay").1.contains("is alive")
        {
            break checks;
        }
        assert!(Instant::now() < deadline, "{checks:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(status(&checks, "outbox").1, "no event waiting in the outboxes");
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(relay.id() as i32, libc::SIGTERM) };
    assert!(relay.wait().unwrap().success());
}
