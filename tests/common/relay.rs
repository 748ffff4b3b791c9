//! A `relay --follow` as a child process of a test, started once its heartbeat is in Redis and
//! killed when the test ends, and the polling the tests that drive it wait with.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::Commands;

use super::TestEnv;

/// A `relay --follow` child, killed when the test ends, also on a panic.
pub struct Relay(pub Child);

impl Relay {
    /// Start a relay whose full rounds are a minute apart, so that what it publishes in between
    /// comes through the wake-ups; returns once its heartbeat is in Redis.
    pub fn start(env: &TestEnv) -> Relay {
        Relay::start_with(env, &[])
    }

    pub fn start_with(env: &TestEnv, extra_env: &[(&str, &str)]) -> Relay {
        let mut cmd = env.std_cmd();
        cmd.envs(extra_env.iter().copied());
        Relay::spawn(env, cmd)
    }

    /// Start `cmd` (the binary, as some account) as the relay and wait for its heartbeat.
    pub fn spawn(env: &TestEnv, mut cmd: Command) -> Relay {
        let child = cmd
            .args(["relay", "--follow", "--interval-ms", "60000", "--json"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let relay = Relay(child);
        wait_for("the relay's heartbeat", || heartbeat(env));
        relay
    }

    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc::kill(self.0.id() as libc::pid_t, sig) }, 0);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn heartbeat(env: &TestEnv) -> bool {
    env.redis().exists(env.keys().relay_heartbeat()).unwrap()
}

/// Poll until `ok` holds; a bound for "does not hang", not a speed check.
pub fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < deadline, "{what}: not within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}
