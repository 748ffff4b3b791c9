//! The long-running commands ride out a Redis restart as they ride out a broker's:
//! `relay --follow` and a live `watch-dept`, on a private Redis killed and started
//! again on the same port, say "Redis lost ... reconnecting" and "Redis back", keep running and
//! lose no event. Before, both exited 3 at their first Redis call after the restart.

use crate::common;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::day::Day;
use common::private_redis::PrivateRedis;
use common::{queue_depth, TestEnv};
use redis::Commands;
use serde_json::Value;

/// A broker port nobody listens on: a check-in there leaves its event in the outbox.
const DEAD_BROKER: (&str, &str) = ("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER);

/// A child of the test (relay or watcher), its stdout and stderr in files; killed on drop.
struct Running {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Running {
    fn start(env: &TestEnv, name: &str, args: &[&str]) -> Running {
        let out = env.dir.join(format!("{name}.out"));
        let err = env.dir.join(format!("{name}.err"));
        let child = env
            .std_cmd()
            .args(args)
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        Running { child, out, err }
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap()
    }

    /// Still running: it did not exit on the lost Redis.
    fn assert_running(&mut self) {
        let status = self.child.try_wait().unwrap();
        assert!(status.is_none(), "exited ({status:?}): {}", self.stderr());
    }

    /// SIGTERM, and the exit code.
    fn stop(mut self) -> Option<i32> {
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.child.wait().unwrap().code()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll until `ok` holds; a bound for "does not hang", not a speed check.
fn wait_for(what: &str, p: &mut Running, mut ok: impl FnMut(&mut Running) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok(p) {
        assert!(
            Instant::now() < deadline,
            "{what}: not within 20 s; stderr: {}",
            p.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A private Redis with an append-only file (the roster cache and the outboxes come back
/// with it), and a day of 5 employees in one department on it.
fn setup() -> (PrivateRedis, TestEnv) {
    let dir = std::env::temp_dir().join(format!("att-restart-redis-{}", uuid::Uuid::new_v4().simple()));
    let redis = PrivateRedis::start_in(dir, true);
    let env = TestEnv::on_redis("UTC", &redis.url());
    env.day(Day::new(5, 1).import_flags(&["-q"]));
    (redis, env)
}

/// Kill Redis once its append-only file holds what was written (fsync every second).
fn crash(redis: &mut PrivateRedis) {
    std::thread::sleep(Duration::from_millis(1_500));
    redis.crash_and_restart();
}

fn checkin(env: &TestEnv, emp: &str, extra_env: &[(&str, &str)]) -> Value {
    let o = env
        .cmd()
        .args(["checkin", emp, "--json"])
        .envs(extra_env.iter().copied())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_following_relay_rides_out_a_redis_restart_and_relays_what_the_outboxes_hold() {
    let (mut redis, env) = setup();
    let queue = format!("{}.dept.D001", env.ns);
    let heartbeat = |redis: &PrivateRedis| -> bool {
        redis
            .con()
            .and_then(|mut c| c.exists(env.keys().relay_heartbeat()))
            .unwrap_or(false)
    };
    let mut relay = Running::start(
        &env,
        "relay",
        &["relay", "--follow", "--interval-ms", "60000", "--json"],
    );
    wait_for("the relay's heartbeat", &mut relay, |_| heartbeat(&redis));
    // An event the relay does not know of: no hand-off, no broker for the check-in; the
    // relay's next full round is a minute away.
    let pending = checkin(&env, "E000001", &[DEAD_BROKER, ("ATTENDANCE_AMQP_HANDOFF", "false")]);
    assert_eq!(pending["notification"], "pending", "{pending}");

    crash(&mut redis);
    wait_for("the relay back on the restarted Redis", &mut relay, |r| {
        r.assert_running();
        r.stderr().contains("relay: Redis back")
    });
    // The outbox came back with Redis, and the relay swept it on its new connection.
    wait_for("the pending event in the queue", &mut relay, |_| {
        queue_depth(&queue) == 1
    });
    // A check-in after the restart hands its event to the relay (its heartbeat is back), and
    // cannot publish it itself: only the relay can have sent it.
    wait_for("the relay's heartbeat again", &mut relay, |_| heartbeat(&redis));
    let handed = checkin(&env, "E000002", &[DEAD_BROKER]);
    assert_eq!(handed["notification"], "handed_off", "{handed}");
    wait_for("the handed-off event in the queue", &mut relay, |_| {
        queue_depth(&queue) == 2
    });
    wait_for("both confirmed, so out of the outbox", &mut relay, |_| {
        env.outbox("D001").is_empty()
    });

    let stderr = relay.stderr();
    eprintln!("{stderr}");
    assert!(
        stderr.contains("relay: Redis lost: ") && stderr.contains("; reconnecting"),
        "{stderr}"
    );
    assert_eq!(relay.stop(), Some(0), "stopped cleanly");
}

#[test]
fn a_live_watch_rides_out_a_redis_restart_and_shows_the_next_event() {
    let (mut redis, env) = setup();
    let mut watch = Running::start(&env, "watch", &["watch-dept", "D001", "--json"]);
    let shown = |w: &mut Running| w.stdout().lines().count();
    // The watch declares its queue as it starts: the first event shows that it is consuming.
    let first = checkin(&env, "E000001", &[]);
    assert_eq!(first["notification"], "sent", "{first}");
    wait_for("the first event shown", &mut watch, |w| shown(w) == 1);

    crash(&mut redis);
    let second = checkin(&env, "E000002", &[]);
    assert_eq!(second["notification"], "sent", "{second}");
    wait_for("the event after the restart shown", &mut watch, |w| {
        w.assert_running();
        shown(w) == 2
    });
    let events: Vec<Value> = watch
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[1]["event_id"], second["event_id"]);
    // Remembered as shown on the restarted Redis (the dedup of a watcher started next).
    let remembered: Vec<String> = redis.con().unwrap().smembers(env.keys().shown("D001")).unwrap();
    assert!(
        remembered.contains(&second["event_id"].as_str().unwrap().to_string()),
        "{remembered:?}"
    );

    let stderr = watch.stderr();
    eprintln!("{stderr}");
    assert!(
        stderr.contains("watch-dept: Redis lost: ") && stderr.contains("; reconnecting"),
        "{stderr}"
    );
    assert!(stderr.contains("watch-dept: Redis back"), "{stderr}");
    assert_eq!(watch.stop(), Some(0), "stopped cleanly");
}

#[test]
fn a_following_relay_stopped_while_redis_is_away_ends_cleanly() {
    let (mut redis, env) = setup();
    let mut relay = Running::start(&env, "relay", &["relay", "--follow", "--interval-ms", "60000"]);
    wait_for("the relay's heartbeat", &mut relay, |_| {
        redis
            .con()
            .and_then(|mut c| c.exists(env.keys().relay_heartbeat()))
            .unwrap_or(false)
    });
    redis.crash();
    wait_for("the relay noticing", &mut relay, |r| {
        r.assert_running();
        r.stderr().contains("relay: Redis lost: ")
    });
    let stderr = relay.stderr();
    assert_eq!(
        relay.stop(),
        Some(0),
        "Ctrl-C or SIGTERM is the stop asked for: {stderr}"
    );
    // Started again for the environment's clean-up.
    redis.spawn();
}
