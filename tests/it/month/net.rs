//! The month's own network: a private Redis (append-only, fsync on every write) behind a proxy,
//! and proxies of the harness's own in front of the shared MySQL and RabbitMQ, so that every
//! fault the harness injects (a kill, a cut, a silent server) hits its own connections and
//! instances only, never the shared services. With a private broker (a RabbitMQ node of the
//! month's own), the broker can be killed too; with a private MySQL (a MariaDB of the month's
//! own, the default), so can MySQL. Every command of the month runs through here.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::private_mariadb::PrivateMariadb;
use crate::common::private_redis::PrivateRedis;
use crate::common::rabbit::Node;
use crate::common::stall::{Stall, StallProxy};
use crate::common::{TestEnv, AMQP_URL};

/// How long any one command may take before the harness calls it a hang: the short timeouts
/// below bound every wait far under this.
const HANG: Duration = Duration::from_secs(90);

/// A fault, injected into one command (see [`Net::inject`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Redis killed (SIGKILL) a few milliseconds into the command, restarted after it.
    RedisKill,
    /// The Redis proxy cuts every connection a few milliseconds into the command and refuses
    /// new ones until it ends (a partition).
    RedisCut,
    /// Redis goes silent once the command sends its first script call (a hung server).
    RedisStall,
    /// The broker cut off a few milliseconds into the command, until it ends.
    BrokerCut,
    /// The broker goes silent after the first publish reaches it (no confirm ever comes).
    BrokerStall,
    /// The month's private broker node killed (SIGKILL) a few milliseconds into the command,
    /// started again on the same files after it (only with a private broker).
    BrokerKill,
    /// MySQL cut off a few milliseconds into the command, until it ends.
    MysqlCut,
    /// MySQL goes silent once the command sends its first INSERT.
    MysqlStall,
    /// The month's private MariaDB killed (SIGKILL) a few milliseconds into the command,
    /// started again on the same files after it (only with a private MySQL).
    MysqlKill,
}

impl Fault {
    /// Every fault: those of Redis and the broker first, then MySQL's.
    pub const ALL: [Fault; 9] = [
        Fault::RedisKill,
        Fault::RedisCut,
        Fault::RedisStall,
        Fault::BrokerCut,
        Fault::BrokerStall,
        Fault::BrokerKill,
        Fault::MysqlCut,
        Fault::MysqlStall,
        Fault::MysqlKill,
    ];
    /// The faults of Redis and the broker.
    pub const REDIS_AND_BROKER: &[Fault] = Fault::ALL.split_at(6).0;
}

pub struct Net {
    redis: PrivateRedis,
    /// A RabbitMQ node of the month's own, when it runs on one (a broker can then be killed).
    broker: Option<Node>,
    /// host:port of the broker the proxy forwards to: the private node's, or the shared one.
    broker_at: String,
    /// A MariaDB of the month's own, when it runs on one (MySQL can then be killed); shared
    /// with the month, which keeps it until its environment has dropped its database there.
    mysql: Option<Arc<PrivateMariadb>>,
    /// host:port of the MySQL the proxy forwards to: the private server's, or the shared one.
    mysql_at: String,
    redis_proxy: StallProxy,
    broker_proxy: StallProxy,
    mysql_proxy: StallProxy,
    /// Faults injected so far, for the summary.
    pub injected: Vec<(usize, Fault, String, Option<i32>)>,
}

impl Net {
    pub fn start(env: &TestEnv, private_broker: bool, mysql: Option<Arc<PrivateMariadb>>) -> Net {
        let redis = PrivateRedis::start(env, true);
        always_fsync(&redis);
        let broker = private_broker.then(|| {
            let node = Node::start(false, Some(BROKER_FILES));
            wait_for(&node);
            node
        });
        let broker_at = broker
            .as_ref()
            .map_or("127.0.0.1:5672".to_string(), |n| format!("127.0.0.1:{}", n.amqp));
        let mysql_at = mysql
            .as_ref()
            .map_or("127.0.0.1:3306".to_string(), |m| format!("127.0.0.1:{}", m.port));
        Net {
            redis_proxy: StallProxy::start(&format!("127.0.0.1:{}", redis.port), Stall::never()),
            broker_proxy: StallProxy::start(&broker_at, Stall::never()),
            broker,
            broker_at,
            mysql_proxy: StallProxy::start(&mysql_at, Stall::never()),
            mysql,
            mysql_at,
            redis,
            injected: Vec::new(),
        }
    }

    /// The broker, straight (not through the proxy): where the checks read the journal.
    pub fn broker_url(&self) -> String {
        self.broker.as_ref().map_or(AMQP_URL.to_string(), Node::amqp_url)
    }

    /// Whether `fault` can be injected here (a broker is killed only when it is the month's own).
    pub fn supports(&self, fault: Fault) -> bool {
        match fault {
            Fault::BrokerKill => self.broker.is_some(),
            Fault::MysqlKill => self.mysql.is_some(),
            _ => true,
        }
    }

    /// MySQL kills so far.
    pub fn mysql_kills(&self) -> usize {
        self.mysql.as_ref().map_or(0, |m| m.kills())
    }

    /// The private Redis, straight (not through the proxy): what the checks read.
    pub fn redis_url(&self) -> String {
        self.redis.url()
    }

    /// The binary with the month's settings: the stores through the proxies, short timeouts
    /// (a silent server is found out in a second or two), the keyring, and `key`
    /// as the key this process signs with.
    pub fn cmd(&self, env: &TestEnv, ring: &Path, key: &Path, args: &[&str]) -> Command {
        let mut c = env.std_cmd();
        let vars = [
            (
                "ATTENDANCE_REDIS_URL",
                format!("redis://127.0.0.1:{}/", self.redis_proxy.port()),
            ),
            // Without prefer_socket=false the client would move to MySQL's Unix socket, past
            // the proxy, and no MySQL fault would reach it.
            (
                "ATTENDANCE_MYSQL_URL",
                format!(
                    "mysql://root@127.0.0.1:{}/{}?prefer_socket=false",
                    self.mysql_proxy.port(),
                    env.db
                ),
            ),
            ("ATTENDANCE_AMQP_URL", self.broker_proxy.amqp_url()),
            ("ATTENDANCE_REDIS_CONNECT_TIMEOUT_MS", "1000".into()),
            ("ATTENDANCE_REDIS_READ_TIMEOUT_MS", "1500".into()),
            ("ATTENDANCE_REDIS_WRITE_TIMEOUT_MS", "1500".into()),
            ("ATTENDANCE_MYSQL_CONNECT_TIMEOUT_MS", "1000".into()),
            ("ATTENDANCE_MYSQL_READ_TIMEOUT_MS", "3000".into()),
            ("ATTENDANCE_MYSQL_WRITE_TIMEOUT_MS", "3000".into()),
            ("ATTENDANCE_AMQP_CONNECT_TIMEOUT_MS", "1000".into()),
            ("ATTENDANCE_AMQP_LOGIN_TIMEOUT_MS", "1500".into()),
            ("ATTENDANCE_AMQP_CONFIRM_TIMEOUT_MS", "800".into()),
            ("ATTENDANCE_AMQP_CHECKIN_CONFIRM_MS", "500".into()),
            ("ATTENDANCE_AMQP_CLOSE_TIMEOUT_MS", "300".into()),
            ("ATTENDANCE_SETTLE_MYSQL_RETRIES", "1".into()),
            ("ATTENDANCE_SETTLE_RETRY_BACKOFF_MS", "50".into()),
        ];
        for (k, v) in vars {
            c.env(k, v);
        }
        c.env("ATTENDANCE_SIGNING_KEYRING_FILE", ring)
            .env("ATTENDANCE_SIGNING_KEY_FILE", key)
            .args(args);
        c
    }

    /// Run a command to its end (a hang past [`HANG`] fails the month).
    pub fn run(&self, mut c: Command) -> Output {
        let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        wait_bounded(child)
    }

    /// Inject `fault`: the command built next (its URLs name the proxies as they are then)
    /// meets it in [`Net::run_faulted`].
    pub fn inject(&mut self, fault: Fault) {
        match fault {
            Fault::RedisStall => self.redis_proxy = self.redis_stall(),
            Fault::BrokerStall => {
                // A basic.publish method frame: class 60, method 40.
                self.broker_proxy = StallProxy::start("127.0.0.1:5672", Stall::when_client_sends(&[0, 60, 0, 40]))
            }
            Fault::MysqlStall => {
                self.mysql_proxy = StallProxy::start(&self.mysql_at, Stall::when_client_sends(b"INSERT"))
            }
            // Kills and cuts strike once the command runs (see run_faulted).
            Fault::RedisKill
            | Fault::BrokerKill
            | Fault::MysqlKill
            | Fault::RedisCut
            | Fault::BrokerCut
            | Fault::MysqlCut => {}
        }
    }

    /// Run a command built after [`Net::inject`]`(fault)` (a kill or a cut strikes `delay_ms`
    /// into it), then heal the fault; returns what the command did.
    pub fn run_faulted(&mut self, day: usize, fault: Fault, mut c: Command, delay_ms: u64) -> Output {
        // `settle`, `review approve`, ...: the command's name, for the summary.
        let command: Vec<String> = c
            .get_args()
            .take(2)
            .map(|a| a.to_string_lossy().into_owned())
            .enumerate()
            .take_while(|(i, a)| *i == 0 || !(a.starts_with('-') || a.starts_with('E')))
            .map(|(_, a)| a)
            .collect();
        let started = Instant::now();
        let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // A kill or a partition `delay_ms` into the command: at its connect, or in its middle.
        std::thread::sleep(Duration::from_millis(delay_ms));
        match fault {
            Fault::RedisKill => self.redis.crash(),
            Fault::BrokerKill => {
                if let Some(node) = &self.broker {
                    node.kill();
                }
            }
            Fault::MysqlKill => {
                if let Some(m) = &self.mysql {
                    m.kill();
                }
            }
            Fault::RedisCut => self.redis_proxy.cut(),
            Fault::BrokerCut => self.broker_proxy.cut(),
            Fault::MysqlCut => self.mysql_proxy.cut(),
            Fault::RedisStall | Fault::BrokerStall | Fault::MysqlStall => {}
        }
        let out = wait_bounded(child);
        let took = started.elapsed().as_millis();
        self.heal(fault);
        let what = String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string();
        // When it struck against how long the command ran: a kill after its end tested only
        // the restart.
        let when = format!("{} at {delay_ms} of {took} ms", command.join(" "));
        self.injected
            .push((day, fault, format!("{when}: {what}"), out.status.code()));
        out
    }

    fn redis_stall(&self) -> StallProxy {
        StallProxy::start(
            &format!("127.0.0.1:{}", self.redis.port),
            Stall::when_client_sends(b"EVALSHA"),
        )
    }

    /// Undo a fault: restart, restore, or a fresh proxy in place of a silent one.
    fn heal(&mut self, fault: Fault) {
        match fault {
            Fault::RedisKill => {
                self.redis.spawn();
                always_fsync(&self.redis);
            }
            Fault::RedisCut => self.redis_proxy.restore(),
            Fault::RedisStall => {
                self.redis_proxy = StallProxy::start(&format!("127.0.0.1:{}", self.redis.port), Stall::never())
            }
            Fault::BrokerCut => self.broker_proxy.restore(),
            Fault::BrokerStall => self.broker_proxy = StallProxy::start(&self.broker_at, Stall::never()),
            Fault::BrokerKill => {
                if let Some(node) = &self.broker {
                    // The killed node's pid file names a dead process: the start writes anew.
                    std::fs::remove_file(node.dir.join("pid")).ok();
                    node.launch(Some(BROKER_FILES));
                    wait_for(node);
                }
            }
            Fault::MysqlCut => self.mysql_proxy.restore(),
            Fault::MysqlStall => self.mysql_proxy = StallProxy::start(&self.mysql_at, Stall::never()),
            Fault::MysqlKill => {
                if let Some(m) = &self.mysql {
                    m.spawn();
                }
            }
        }
    }
}

/// The private broker's open-files limit: a handful of department queues and the journal.
const BROKER_FILES: u32 = 4096;

/// Wait until the node answers (bounded by rabbitmqctl's own timeout).
fn wait_for(node: &Node) {
    let pid = node.dir.join("pid");
    node.ctl(&["wait", pid.to_str().unwrap(), "--timeout", "120"]);
}

/// An acknowledged punch is on disk before the acknowledgement: the harness tests what a
/// restart keeps, not the one-second window of `appendfsync everysec`.
fn always_fsync(redis: &PrivateRedis) {
    let mut c = redis.con().unwrap();
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendfsync")
        .arg("always")
        .query::<()>(&mut c)
        .unwrap();
}

fn wait_bounded(mut child: std::process::Child) -> Output {
    // Read both pipes on threads so that a chatty command never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).ok();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > HANG {
            child.kill().ok();
            let s = child.wait().unwrap();
            panic!("a command did not end within {HANG:?} (killed: {s:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
    }
}
