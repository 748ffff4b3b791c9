//! A MariaDB server of the test's own (`mariadbd` on a free port, its data directory made by
//! `mariadb-install-db` in a folder of its own), that a test may kill (SIGKILL) and start
//! again on the same files: what a crashed database keeps, and how the product meets it.
//! Root has no password on 127.0.0.1, as on the shared server. Shared between the harness's
//! fault injector and whoever must outlive the test environment (its database is dropped on
//! the server on the environment's drop), so it lives behind an `Arc`; killed and its folder
//! removed on the last drop.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct PrivateMariadb {
    pub port: u16,
    dir: PathBuf,
    child: Mutex<Option<Child>>,
    /// Kills so far.
    kills: Mutex<usize>,
}

impl PrivateMariadb {
    /// A fresh data directory, and the server started on it (about 3 s here).
    pub fn start() -> PrivateMariadb {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("att-mariadb-{}", &id[..12]));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .args(user_flag())
            .output()
            .expect("mariadb-install-db is installed");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let m = PrivateMariadb {
            port,
            dir,
            child: Mutex::new(None),
            kills: Mutex::new(0),
        };
        m.spawn();
        m
    }

    /// `mysql://root@127.0.0.1:PORT/`: a server URL, to which a database name is added.
    pub fn server_url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/", self.port)
    }

    /// Start the server on its data directory (after a kill: InnoDB's crash recovery runs
    /// first) and wait until it answers a query.
    pub fn spawn(&self) {
        let mut child = self.child.lock().unwrap();
        assert!(child.is_none(), "the private MariaDB is running already");
        let c = Command::new("mariadbd")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.join("data").display()))
            .arg(format!("--socket={}", self.dir.join("sock").display()))
            .arg(format!("--port={}", self.port))
            .arg("--bind-address=127.0.0.1")
            .args(["--skip-log-bin", "--innodb-buffer-pool-size=32M", "--skip-name-resolve"])
            // Every commit on disk before it is acknowledged (the default, said here because a
            // kill tests exactly that).
            .arg("--innodb-flush-log-at-trx-commit=1")
            .arg(format!("--log-error={}", self.dir.join("err.log").display()))
            .args(user_flag())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mariadbd is installed");
        *child = Some(c);
        drop(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.answers() {
            assert!(
                Instant::now() < deadline,
                "the private MariaDB on {} did not start: {}",
                self.port,
                std::fs::read_to_string(self.dir.join("err.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL, and wait for the process to be gone (no shutdown: what is not on disk is lost).
    pub fn kill(&self) {
        if let Some(mut c) = self.child.lock().unwrap().take() {
            c.kill().ok();
            c.wait().ok();
            *self.kills.lock().unwrap() += 1;
        }
    }

    /// Kills so far.
    pub fn kills(&self) -> usize {
        *self.kills.lock().unwrap()
    }

    fn answers(&self) -> bool {
        mysql::Conn::new(self.server_url().as_str())
            .and_then(|mut c| mysql::prelude::Queryable::query_drop(&mut c, "SELECT 1"))
            .is_ok()
    }
}

impl Drop for PrivateMariadb {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.lock().unwrap().take() {
            c.kill().ok();
            c.wait().ok();
        }
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// MariaDB refuses to run as root unless told which account to run as.
fn user_flag() -> Vec<String> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        vec!["--user=root".to_string()]
    } else {
        Vec::new()
    }
}
