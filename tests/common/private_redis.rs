//! A redis-server of the test's own, on a free port with its own directory (with or without
//! an append-only file), killed on drop: for the tests that crash, fill or stall a Redis.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::TestEnv;

/// A redis-server of the test's own on a free port, with its own directory.
pub struct PrivateRedis {
    pub port: u16,
    dir: PathBuf,
    aof: bool,
    child: Option<Child>,
}

impl PrivateRedis {
    pub fn start(env: &TestEnv, aof: bool) -> PrivateRedis {
        PrivateRedis::start_in(env.dir.join("redis"), aof)
    }

    /// Started in `dir`, for a test that needs its Redis before its `TestEnv`.
    pub fn start_in(dir: PathBuf, aof: bool) -> PrivateRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = PrivateRedis {
            port,
            dir,
            aof,
            child: None,
        };
        r.spawn();
        r
    }

    pub fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args([
                "--appendonly",
                if self.aof { "yes" } else { "no" },
                "--appendfsync",
                "everysec",
            ])
            .args(["--maxmemory-policy", "noeviction"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.con().is_err() {
            assert!(
                Instant::now() < deadline,
                "private redis on {} did not start",
                self.port
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn con(&self) -> redis::RedisResult<redis::Connection> {
        let mut c = redis::Client::open(self.url())?.get_connection()?;
        redis::cmd("PING").query::<String>(&mut c)?;
        Ok(c)
    }

    /// SIGKILL (no shutdown save, no AOF rewrite), wait for it, start again on the same port/dir.
    pub fn crash_and_restart(&mut self) {
        self.crash();
        self.spawn();
    }

    /// SIGKILL, and wait for it: the port refuses connections until [`PrivateRedis::spawn`].
    pub fn crash(&mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Every key of the namespace with its content, to prove that nothing changed.
    pub fn snapshot(&self, ns: &str) -> Vec<(String, String)> {
        let mut con = self.con().unwrap();
        let mut keys: Vec<String> = redis::cmd("KEYS").arg(format!("{ns}:*")).query(&mut con).unwrap();
        keys.sort();
        keys.into_iter()
            .map(|k| {
                // The content, not DUMP's bytes: a hash table's fields come back from an AOF in
                // another order.
                let kind: String = redis::cmd("TYPE").arg(&k).query(&mut con).unwrap();
                let mut items: Vec<String> = match kind.as_str() {
                    "hash" => redis::cmd("HGETALL")
                        .arg(&k)
                        .query::<Vec<(String, String)>>(&mut con)
                        .unwrap()
                        .into_iter()
                        .map(|(f, v)| format!("{f}={v}"))
                        .collect(),
                    "set" => redis::cmd("SMEMBERS").arg(&k).query(&mut con).unwrap(),
                    "string" => vec![redis::cmd("GET").arg(&k).query(&mut con).unwrap()],
                    // Lists and streams keep their order: their bytes are their content.
                    _ => vec![format!(
                        "{:?}",
                        redis::cmd("DUMP").arg(&k).query::<Option<Vec<u8>>>(&mut con).unwrap()
                    )],
                };
                items.sort();
                (k, format!("{kind} {items:?}"))
            })
            .collect()
    }
    /// Set `maxmemory` (with `noeviction`, a full Redis refuses writes).
    pub fn maxmemory(&self, bytes: u64) {
        let mut c = self.con().unwrap();
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg(bytes)
            .query::<()>(&mut c)
            .unwrap();
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().ok();
            c.wait().ok();
        }
    }
}
