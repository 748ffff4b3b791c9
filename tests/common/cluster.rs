//! A Redis Cluster for tests: three masters on free ports, in a temporary folder, started by
//! the test that needs it and stopped when that test ends (its guard's `Drop`, also on a
//! panic). Each test starts its own, so test binaries and threads running in parallel never
//! share one. `ATTENDANCE_TEST_REDIS_CLUSTER=redis+cluster://h:p,...` uses a given cluster
//! instead (its keys are removed by the test's own clean-up, never flushed).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use attendance::ClusterConn;
use redis::ConnectionLike;

pub const GIVEN: &str = "ATTENDANCE_TEST_REDIS_CLUSTER";

pub struct Cluster {
    pub ports: Vec<u16>,
    children: Vec<Option<Child>>,
    dir: Option<PathBuf>,
    url: String,
}

/// `redis-server`; where only Debian's `redis-tools` is installed (a machine whose Redis runs
/// in a container), the same binary under its other name, `redis-check-rdb`, run as the server.
fn server_command() -> Command {
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    if on_path("redis-server") || !on_path("redis-check-rdb") {
        Command::new("redis-server")
    } else {
        let mut c = Command::new("redis-check-rdb");
        c.arg0("redis-server");
        c
    }
}

/// Ports this test process has handed out: a port is free only until its node binds it, and
/// the tests of the one test binary start their clusters (plain, replicated, TLS) in parallel
/// threads.
static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

/// A port free on 127.0.0.1 whose cluster bus port (port + 10000) is free too, and not handed
/// out to another cluster of this process.
pub(super) fn free_port() -> u16 {
    let mut handed = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        // A node's port or its bus port (port + 10000) against every port handed out and its bus.
        let clash = |q: u32| {
            handed
                .iter()
                .map(|&h| u32::from(h))
                .any(|h| h == q || h + 10_000 == q || q + 10_000 == h)
        };
        if p < 50_000
            && !clash(u32::from(p))
            && !clash(u32::from(p) + 10_000)
            && TcpListener::bind(("127.0.0.1", p + 10_000)).is_ok()
        {
            handed.push(p);
            return p;
        }
    }
}

fn wait_for(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < until, "test cluster: {what} within {secs} s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(super) fn node(port: u16) -> redis::RedisResult<redis::Connection> {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))?.get_connection_with_timeout(Duration::from_secs(2))
}

impl Cluster {
    /// The given cluster, or a fresh local one.
    pub fn given_or_start() -> Cluster {
        match std::env::var(GIVEN) {
            Ok(url) if !url.is_empty() => Cluster {
                ports: Vec::new(),
                children: Vec::new(),
                dir: None,
                url,
            },
            _ => Cluster::start(),
        }
    }

    /// Three masters on free ports, no replicas, nothing kept on disk but the temporary
    /// folder's node files (removed at the end).
    pub fn start() -> Cluster {
        Cluster::start_with(0, &[])
    }

    /// Three masters with a replica each (six nodes: the masters are `nodes[0..3]`, as
    /// `redis-cli --cluster create` assigns them), serving the slots they still hold while a
    /// master is down (`cluster-require-full-coverage no`), as a production cluster that
    /// must ride out a fail-over runs.
    pub fn start_replicated() -> Cluster {
        Cluster::start_with(1, &["--cluster-require-full-coverage", "no"])
    }

    /// Three masters with a replica each, and Redis's default `cluster-require-full-coverage
    /// yes`: while a master is down, every node answers CLUSTERDOWN.
    pub fn start_replicated_strict() -> Cluster {
        Cluster::start_with(1, &[])
    }

    fn start_with(replicas: usize, extra: &[&str]) -> Cluster {
        let dir = std::env::temp_dir().join(format!("att-cluster-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let ports: Vec<u16> = (0..3 * (1 + replicas)).map(|_| free_port()).collect();
        let node_dir = dir.clone();
        let spawn = move |p: u16| {
            let mut c = server_command();
            c.args([
                "--port",
                &p.to_string(),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
            ])
            .args(["--cluster-config-file", &format!("nodes-{p}.conf")])
            .args(["--cluster-node-timeout", "2000", "--save", "", "--appendonly", "no"])
            .args(extra)
            .arg("--dir")
            .arg(&node_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            // SAFETY: prctl only sets this child's own parent-death signal: a test process
            // killed outright takes its cluster with it.
            unsafe {
                c.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            c.spawn()
                .expect("redis-server on PATH (the cluster tests start their own)")
        };
        let children = ports.iter().map(|&p| Some(spawn(p))).collect();
        // From here on, a failed step stops the nodes and removes the folder (Drop).
        let mut cluster = Cluster {
            url: format!(
                "redis+cluster://{}",
                ports
                    .iter()
                    .map(|p| format!("127.0.0.1:{p}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            ports,
            children,
            dir: Some(dir),
        };
        // A node that exited (its port taken meanwhile by another process) starts again on
        // another port: nothing is created before every node answers.
        for i in 0..cluster.ports.len() {
            let mut restarts = 0;
            let until = Instant::now() + Duration::from_secs(20);
            while !node(cluster.ports[i]).is_ok_and(|mut c| c.check_connection()) {
                let exited = cluster.children[i]
                    .as_mut()
                    .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))));
                if exited && restarts < 3 {
                    restarts += 1;
                    cluster.ports[i] = free_port();
                    cluster.children[i] = Some(spawn(cluster.ports[i]));
                }
                assert!(Instant::now() < until, "test cluster: node {i} answering within 20 s");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        cluster.url = format!(
            "redis+cluster://{}",
            cluster
                .ports
                .iter()
                .map(|p| format!("127.0.0.1:{p}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(cluster.ports.iter().map(|p| format!("127.0.0.1:{p}")))
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()
            .expect("redis-cli on PATH");
        assert!(
            created.status.success(),
            "redis-cli --cluster create: {}",
            String::from_utf8_lossy(&created.stdout)
        );
        for &p in &cluster.ports.clone() {
            wait_for("cluster_state:ok on every node", 30, || {
                node(p)
                    .and_then(|mut c| redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut c))
                    .is_ok_and(|i| i.contains("cluster_state:ok"))
            });
        }
        if replicas > 0 {
            for &p in &cluster.ports[3..] {
                wait_for("every replica in sync", 30, || {
                    node(p)
                        .and_then(|mut c| redis::cmd("INFO").arg("replication").query::<String>(&mut c))
                        .is_ok_and(|i| i.contains("master_link_status:up"))
                });
            }
        }
        // Every node must know every other's slots before a client asks for the map.
        std::thread::sleep(Duration::from_millis(300));
        cluster.children.shrink_to_fit();
        cluster
    }

    /// `redis+cluster://host:port,...`: what `redis_url` takes.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether this test started the cluster (it may then stop a master).
    pub fn owned(&self) -> bool {
        self.dir.is_some()
    }

    /// A cluster connection through the library's own handle.
    pub fn con(&self) -> ClusterConn {
        let cfg = attendance::Config {
            redis_url: self.url.clone(),
            ..Default::default()
        };
        ClusterConn::open(&cfg).unwrap()
    }

    /// The keys of the pattern on each node that is a live master now (in port order), asked of
    /// each node directly (a replica holds copies, a killed node nothing).
    fn keys_by_node(&self, pattern: &str) -> Vec<Vec<String>> {
        self.masters()
            .into_iter()
            .map(|i| {
                redis::cmd("KEYS")
                    .arg(pattern)
                    .query::<Vec<String>>(&mut node(self.ports[i]).unwrap())
                    .unwrap()
            })
            .collect()
    }

    /// The nodes (indices into `ports`) that are running and masters now.
    pub fn masters(&self) -> Vec<usize> {
        (0..self.ports.len())
            .filter(|&i| self.children.get(i).is_none_or(Option::is_some))
            .filter(|&i| self.role(i).0 == "master")
            .collect()
    }

    /// A node's `ROLE`: its role and, for a replica, its master's port.
    fn role(&self, i: usize) -> (String, u16) {
        let v: Vec<redis::Value> = redis::cmd("ROLE").query(&mut node(self.ports[i]).unwrap()).unwrap();
        let role: String = redis::from_redis_value_ref(&v[0]).unwrap();
        let port = match role.as_str() {
            "slave" => redis::from_redis_value_ref(&v[2]).unwrap(),
            _ => 0,
        };
        (role, port)
    }

    /// The node (index) that masters `key`'s slot by the cluster's map, asked of a live master
    /// (during a fail-over, still the dead one).
    pub fn master_of(&self, key: &str) -> usize {
        let mut c = node(self.ports[self.masters()[0]]).unwrap();
        let slot: u16 = redis::cmd("CLUSTER").arg("KEYSLOT").arg(key).query(&mut c).unwrap();
        let ranges: Vec<(u16, u16, (String, u16))> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query::<Vec<redis::Value>>(&mut c)
            .unwrap()
            .into_iter()
            .map(|r| {
                let r: Vec<redis::Value> = redis::from_redis_value(r).unwrap();
                let m: Vec<redis::Value> = redis::from_redis_value_ref(&r[2]).unwrap();
                (
                    redis::from_redis_value_ref(&r[0]).unwrap(),
                    redis::from_redis_value_ref(&r[1]).unwrap(),
                    (
                        redis::from_redis_value_ref(&m[0]).unwrap(),
                        redis::from_redis_value_ref(&m[1]).unwrap(),
                    ),
                )
            })
            .collect();
        let (_, _, (_, port)) = ranges
            .into_iter()
            .find(|(lo, hi, _)| (*lo..=*hi).contains(&slot))
            .unwrap_or_else(|| panic!("slot {slot} of {key} served by no master"));
        self.ports.iter().position(|&p| p == port).unwrap()
    }

    /// The live replica of the master `i`.
    pub fn replica_of(&self, i: usize) -> usize {
        (0..self.ports.len())
            .filter(|&r| r != i && self.children[r].is_some())
            .find(|&r| self.role(r) == ("slave".to_string(), self.ports[i]))
            .unwrap_or_else(|| panic!("no replica of node {i}"))
    }

    /// A field of a hash, asked of the master of its slot directly.
    pub fn hget(&self, key: &str, field: &str) -> Option<String> {
        redis::cmd("HGET")
            .arg(key)
            .arg(field)
            .query(&mut node(self.ports[self.master_of(key)]).unwrap())
            .unwrap()
    }

    /// A field of a hash as node `i` holds it (a replica answers after READONLY).
    pub fn hget_on(&self, i: usize, key: &str, field: &str) -> Option<String> {
        let mut c = node(self.ports[i]).unwrap();
        let _: () = redis::cmd("READONLY").query(&mut c).unwrap();
        redis::cmd("HGET").arg(key).arg(field).query(&mut c).unwrap()
    }

    /// Whether a key exists, asked of its slot's master directly.
    pub fn exists(&self, key: &str) -> bool {
        redis::cmd("EXISTS")
            .arg(key)
            .query::<u32>(&mut node(self.ports[self.master_of(key)]).unwrap())
            .unwrap()
            == 1
    }

    /// A key's time to live in ms (`PTTL`: -2 missing, -1 none), on its slot's master.
    pub fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query(&mut node(self.ports[self.master_of(key)]).unwrap())
            .unwrap()
    }

    /// How many `WAIT` commands node `i` has run (`INFO commandstats`).
    pub fn wait_calls(&self, i: usize) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut node(self.ports[i]).unwrap())
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("cmdstat_wait:calls="))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().unwrap())
    }

    /// A hash's fields, asked of the master of its slot directly.
    pub fn hkeys(&self, key: &str) -> Vec<String> {
        redis::cmd("HKEYS")
            .arg(key)
            .query(&mut node(self.ports[self.master_of(key)]).unwrap())
            .unwrap()
    }

    /// `CONFIG SET` on one node.
    pub fn config_set(&self, i: usize, key: &str, value: &str) {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(key)
            .arg(value)
            .query(&mut node(self.ports[i]).unwrap())
            .unwrap();
    }

    /// Wait until the replica `i` has taken its master's place and every live node's slot map
    /// says so (no killed node serves a slot any more).
    pub fn wait_promoted(&self, i: usize) {
        wait_for("the replica promoted", 60, || self.role(i).0 == "master");
        let dead: Vec<String> = (0..self.ports.len())
            .filter(|&n| self.children[n].is_none())
            .map(|n| format!("{}", self.ports[n]))
            .collect();
        for n in (0..self.ports.len()).filter(|&n| self.children[n].is_some()) {
            wait_for("every node's slot map after the fail-over", 30, || {
                node(self.ports[n])
                    .and_then(|mut c| redis::cmd("CLUSTER").arg("NODES").query::<String>(&mut c))
                    .is_ok_and(|nodes| {
                        // A line's slots follow its first eight fields.
                        nodes
                            .lines()
                            .all(|l| !dead.iter().any(|d| l.contains(&format!(":{d}@"))) || l.split(' ').count() <= 8)
                    })
            });
        }
    }

    /// Every key matching the pattern, on every master: asked of each node directly when the
    /// test started the cluster (not through the code under test).
    pub fn keys(&self, pattern: &str) -> Vec<String> {
        let mut keys = if self.owned() {
            self.keys_by_node(pattern).concat()
        } else {
            self.con().scan_masters(pattern).unwrap()
        };
        keys.sort();
        keys
    }

    /// How many keys of the pattern each live master holds (by port).
    pub fn keys_per_master(&self, pattern: &str) -> Vec<usize> {
        self.keys_by_node(pattern).iter().map(Vec::len).collect()
    }

    /// Empty every node's script cache, as a restart or a fail-over to a fresh replica would.
    pub fn flush_scripts(&self) {
        for p in self.masters().into_iter().map(|i| self.ports[i]) {
            let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut node(p).unwrap()).unwrap();
        }
    }

    /// Freeze a node (SIGSTOP): a replica that stops reading its master's stream, as a slow or
    /// partitioned one would. [`Cluster::resume`] thaws it.
    pub fn pause(&self, i: usize) {
        self.signal(i, libc::SIGSTOP);
    }

    pub fn resume(&self, i: usize) {
        self.signal(i, libc::SIGCONT);
    }

    fn signal(&self, i: usize, sig: libc::c_int) {
        let pid = self.children[i].as_ref().expect("a running node").id();
        // SAFETY: a signal to a child process this test started.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
    }

    /// Stop one node at once (SIGKILL), as a crash would.
    pub fn kill_master(&mut self, i: usize) {
        if let Some(mut c) = self.children[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Delete every key of a namespace, key by key (one slot each).
    pub fn remove_namespace(url: &str, ns: &str) {
        let cfg = attendance::Config {
            redis_url: url.to_string(),
            ..Default::default()
        };
        if let Ok(mut con) = ClusterConn::open(&cfg) {
            for k in con.scan_masters(&format!("{ns}:*")).unwrap_or_default() {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(&k).query(&mut con);
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.children.len() {
            self.kill_master(i);
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
