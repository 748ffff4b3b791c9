//! TLS servers of a test's own: a throwaway CA and server certificate made with the `openssl`
//! CLI, and a TLS-only redis-server, MariaDB and RabbitMQ node on free ports, each in the
//! test's directory and stopped on drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the openssl CLI is installed");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA of the test's own, and a server certificate it signed for `localhost` and 127.0.0.1.
pub struct Ca {
    pub dir: PathBuf,
    /// The CA's certificate (what a client trusts).
    pub cert: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
}

impl Ca {
    /// A CA named `name` under `dir/name`, with a server certificate of its own.
    pub fn new(dir: &Path, name: &str) -> Ca {
        let dir = dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let subj = format!("/CN=attendance test CA {name}");
        openssl(
            &dir,
            &[
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", "ca.key", "-out", "ca.pem",
                "-subj", &subj,
            ],
        );
        openssl(
            &dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        );
        // clientAuth too: Redis Cluster nodes present it to each other on the cluster bus.
        std::fs::write(
            dir.join("ext.cnf"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n",
        )
        .unwrap();
        openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "ext.cnf",
                "-out",
                "server.pem",
            ],
        );
        // The servers may run as another account (MariaDB as mysql, RabbitMQ as rabbitmq).
        for f in ["ca.pem", "server.pem", "server.key"] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        Ca {
            cert: dir.join("ca.pem"),
            server_cert: dir.join("server.pem"),
            server_key: dir.join("server.key"),
            dir,
        }
    }
}

/// Wait until `ready` says yes, or fail naming `what` (and its log).
fn wait_for(what: &str, log: &Path, secs: u64, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "{what} did not start: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn accepts(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// A child stopped on drop.
pub struct Server {
    pub port: u16,
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// The command of a redis-server that speaks TLS only (`--port 0`) on `port`, with `ca`'s
/// server certificate, clients not asked for one, nothing kept on disk, its log in `log`.
fn tls_redis_server(ca: &Ca, port: u16, dir: &Path, log: &Path) -> Command {
    let mut c = Command::new("redis-server");
    c.args(["--port", "0", "--tls-port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--tls-cert-file")
        .arg(&ca.server_cert)
        .arg("--tls-key-file")
        .arg(&ca.server_key)
        .arg("--tls-ca-cert-file")
        .arg(&ca.cert)
        .args(["--tls-auth-clients", "no", "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .arg("--logfile")
        .arg(log)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// A redis-server that speaks TLS only (`--port 0`), with `ca`'s server certificate.
pub fn redis(dir: &Path, ca: &Ca) -> Server {
    let dir = dir.join("redis-tls");
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let log = dir.join("log");
    let child = tls_redis_server(ca, port, &dir, &log)
        .spawn()
        .expect("redis-server is installed");
    wait_for("TLS redis-server", &log, 20, || accepts(port));
    Server { port, child }
}

/// A MariaDB of the test's own, with `ca`'s server certificate (TLS offered, root without a
/// password on 127.0.0.1), on a free port; its data directory is under `dir`.
pub fn mariadb(dir: &Path, ca: &Ca) -> Server {
    let dir = dir.join("mariadb-tls");
    let data = dir.join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("mariadb-install-db")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
        .args(user_flag())
        .output()
        .expect("mariadb-install-db is installed");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let port = free_port();
    let log = dir.join("err.log");
    let child = Command::new("mariadbd")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", dir.join("sock").display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--ssl-cert={}", ca.server_cert.display()))
        .arg(format!("--ssl-key={}", ca.server_key.display()))
        .arg(format!("--ssl-ca={}", ca.cert.display()))
        .args(["--skip-log-bin", "--innodb-buffer-pool-size=16M", "--skip-name-resolve"])
        .arg(format!("--log-error={}", log.display()))
        .args(user_flag())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mariadbd is installed");
    wait_for("TLS MariaDB", &log, 60, || accepts(port));
    Server { port, child }
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

/// A RabbitMQ node of the test's own (its own name, Erlang cookie, data and ports), listening
/// for AMQP over TLS only, with `ca`'s server certificate; its process group is ended on drop.
pub struct Broker {
    pub port: u16,
    node: String,
    dir: PathBuf,
    child: Child,
}

impl Broker {
    pub fn start(dir: &Path, ca: &Ca, name: &str) -> Broker {
        use std::os::unix::process::CommandExt;
        let dir = dir.join("rabbitmq-tls");
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let conf = dir.join("rabbitmq.conf");
        std::fs::write(
            &conf,
            format!(
                "listeners.tcp = none\nlisteners.ssl.default = {port}\nssl_options.cacertfile = {}\n\
                 ssl_options.certfile = {}\nssl_options.keyfile = {}\nssl_options.verify = verify_none\n\
                 ssl_options.fail_if_no_peer_cert = false\n",
                ca.cert.display(),
                ca.server_cert.display(),
                ca.server_key.display()
            ),
        )
        .unwrap();
        std::fs::write(dir.join("enabled_plugins"), "[].\n").unwrap();
        let log = dir.join("out.log");
        let child = Command::new("/usr/lib/rabbitmq/bin/rabbitmq-server")
            .current_dir(&dir)
            // Its own cookie (in HOME) and node: the shared broker is never touched.
            .env("HOME", &dir)
            .env("RABBITMQ_NODENAME", format!("{name}@localhost"))
            .env("RABBITMQ_DIST_PORT", free_port().to_string())
            .env("RABBITMQ_CONFIG_FILE", &conf)
            .env("RABBITMQ_ADVANCED_CONFIG_FILE", dir.join("advanced.config"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", dir.join("enabled_plugins"))
            .env("RABBITMQ_MNESIA_BASE", dir.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", dir.join("log"))
            .env("RABBITMQ_PID_FILE", dir.join("pid"))
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("rabbitmq-server is installed");
        let broker = Broker {
            port,
            node: format!("{name}@localhost"),
            dir,
            child,
        };
        wait_for("TLS RabbitMQ node", &log, 90, || accepts(port));
        broker
    }
}

impl Broker {
    /// The messages ready in each queue whose name starts with `prefix`, read with
    /// `rabbitmqctl` (an outside reference) from the node itself.
    pub fn queues(&self, prefix: &str) -> Vec<(String, u64)> {
        let out = Command::new("/usr/lib/rabbitmq/bin/rabbitmqctl")
            .env("HOME", &self.dir)
            .args(["-n", &self.node, "-q", "list_queues", "name", "messages_ready"])
            .output()
            .expect("rabbitmqctl is installed");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut queues: Vec<(String, u64)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(name, _)| name.starts_with(prefix))
            .map(|(name, n)| (name.to_string(), n.trim().parse().unwrap_or(0)))
            .collect();
        queues.sort();
        queues
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        // The script and the Erlang VM it started: the whole group this test created.
        // SAFETY: kill has no preconditions; the group is the child's own.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        self.child.wait().ok();
    }
}

/// `redis-cli` over TLS to 127.0.0.1:`port`, trusting `ca`; stdout. Given a minute at most
/// (`--cluster create` waits for ever on nodes that cannot meet).
pub fn redis_cli(ca: &Ca, port: u16, args: &[&str]) -> String {
    let out = Command::new("timeout")
        .args(["60", "redis-cli", "--tls", "-h", "127.0.0.1", "-p", &port.to_string()])
        .arg("--cacert")
        .arg(&ca.cert)
        .args(args)
        .output()
        .expect("redis-cli is installed");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A 3-master Redis Cluster speaking TLS only, clients and cluster bus alike, with `ca`'s
/// server certificate (it names 127.0.0.1, the address the nodes announce).
pub fn redis_cluster(dir: &Path, ca: &Ca) -> Vec<Server> {
    let dir = dir.join("redis-tls-cluster");
    std::fs::create_dir_all(&dir).unwrap();
    // The ports, and their cluster bus ports (+ 10000), from the one registry of cluster ports
    // of this process: the plain clusters of other tests start beside this one.
    let ports: Vec<u16> = (0..3).map(|_| super::cluster::free_port()).collect();
    let mut nodes = Vec::new();
    for &p in &ports {
        let log = dir.join(format!("{p}.log"));
        let child = tls_redis_server(ca, p, &dir, &log)
            .args(["--tls-cluster", "yes", "--tls-replication", "yes"])
            .args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                &format!("nodes-{p}.conf"),
            ])
            .args(["--cluster-node-timeout", "2000"])
            .spawn()
            .expect("redis-server is installed");
        nodes.push(Server { port: p, child });
        wait_for("TLS cluster node", &log, 20, || accepts(p));
    }
    let mut create = vec!["--cluster", "create"];
    let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    create.extend(addrs.iter().map(String::as_str));
    create.push("--cluster-yes");
    redis_cli(ca, ports[0], &create);
    for &p in &ports {
        wait_for("TLS cluster state ok", &dir.join(format!("{p}.log")), 30, || {
            redis_cli(ca, p, &["CLUSTER", "INFO"]).contains("cluster_state:ok")
        });
    }
    nodes
}
