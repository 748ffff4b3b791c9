//! A RabbitMQ node of a test's own: free ports, its files in a temporary directory, started
//! detached (as root it runs as the `rabbitmq` user, as scripts/services.sh starts it, sharing
//! its Erlang cookie so that rabbitmqctl reaches it), stopped and removed on drop. The caller
//! waits for it in the way its test needs (`ctl(["wait", ...])`, or its own readiness check).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

/// A port no listener holds now, and not one of `taken`, nor one of the range rabbitmqctl
/// takes for itself (35672-35682: the default distribution port plus 10,000).
fn free_port(taken: &[u16]) -> u16 {
    loop {
        let p = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if !taken.contains(&p) && !(35_672..=35_682).contains(&p) {
            return p;
        }
    }
}

pub fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

pub struct Node {
    pub dir: PathBuf,
    pub node: String,
    pub amqp: u16,
    /// The management API's port, when the node has the plugin.
    pub mgmt: Option<u16>,
    dist: u16,
}

impl Node {
    /// Start the node, with the management plugin if `management`, under `ulimit -n nofile`
    /// if given. Returns once `rabbitmq-server -detached` has; the node may not answer yet.
    pub fn start(management: bool, nofile: Option<u32>) -> Node {
        let mut taken = Vec::new();
        for _ in 0..3 {
            taken.push(free_port(&taken));
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("att-rabbit-{}", &id[..12]));
        std::fs::create_dir_all(&dir).unwrap();
        let n = Node {
            node: format!("att{}@localhost", &id[..12]),
            amqp: taken[0],
            mgmt: management.then_some(taken[1]),
            dist: taken[2],
            dir,
        };
        // Its own config file: the machine's (if any) names the shared broker's listener.
        let mut conf = format!("listeners.tcp.default = 127.0.0.1:{}\n", n.amqp);
        if let Some(m) = n.mgmt {
            conf += &format!("management.tcp.port = {m}\nmanagement.tcp.ip = 127.0.0.1\n");
        }
        std::fs::write(n.dir.join("rabbitmq.conf"), conf).unwrap();
        let plugins = if management {
            "[rabbitmq_management].\n"
        } else {
            "[].\n"
        };
        std::fs::write(n.dir.join("enabled_plugins"), plugins).unwrap();
        n.launch(nofile);
        n
    }

    /// `rabbitmq-server -detached` on this node's files (under `ulimit -n nofile` if given):
    /// its first start, or a start again after [`Node::kill`], on the same ports and data.
    pub fn launch(&self, nofile: Option<u32>) {
        let start = if is_root() {
            Command::new("chown")
                .args(["-R", "rabbitmq:rabbitmq"])
                .arg(&self.dir)
                .status()
                .unwrap();
            "exec setpriv --reuid rabbitmq --regid rabbitmq --init-groups env HOME=/var/lib/rabbitmq \
             /usr/lib/rabbitmq/bin/rabbitmq-server -detached"
        } else {
            "exec rabbitmq-server -detached"
        };
        let script = match nofile {
            Some(limit) => format!("ulimit -n {limit} && {start}"),
            None => start.to_string(),
        };
        let mut c = Command::new("bash");
        c.arg("-c").arg(script);
        self.env(&mut c);
        if !is_root() {
            c.env("HOME", &self.dir);
        }
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "rabbitmq-server: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// The variables that make `rabbitmq-server` and `rabbitmqctl` this node's.
    pub fn env(&self, c: &mut Command) {
        let d = |f: &str| self.dir.join(f);
        c.current_dir(&self.dir)
            .env("RABBITMQ_NODENAME", &self.node)
            .env("RABBITMQ_NODE_PORT", self.amqp.to_string())
            .env("RABBITMQ_DIST_PORT", self.dist.to_string())
            .env("RABBITMQ_MNESIA_BASE", d("mnesia"))
            .env("RABBITMQ_LOG_BASE", d("log"))
            .env("RABBITMQ_CONFIG_FILE", d("rabbitmq.conf"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", d("enabled_plugins"))
            .env("RABBITMQ_PID_FILE", d("pid"));
    }

    /// `rabbitmqctl args` on this node, required to succeed (bounded at 150 s).
    pub fn ctl(&self, args: &[&str]) {
        self.ctl_out(args);
    }

    /// [`Node::ctl`], returning what it printed.
    pub fn ctl_out(&self, args: &[&str]) -> String {
        let mut c = Command::new("timeout");
        c.args(["150", "rabbitmqctl", "-q", "-n", &self.node]).args(args);
        self.env(&mut c);
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "rabbitmqctl {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Kill the node outright (SIGKILL), as a crash or a power cut would.
    pub fn kill(&self) {
        if let Some(pid) = self.pid() {
            // SAFETY: signalling the node this test started, by its own pid file.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }

    pub fn amqp_url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.amqp)
    }

    pub fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.dir.join("pid")).ok()?.trim().parse().ok()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let mut c = Command::new("timeout");
        c.args(["60", "rabbitmqctl", "-q", "-n", &self.node, "stop"]);
        self.env(&mut c);
        let _ = c.output();
        if let Some(pid) = self.pid() {
            // SAFETY: signalling the node this test started, by its own pid file.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `rabbitmq-server` can be run here: the reason it cannot, if not.
pub fn missing() -> Option<String> {
    let found = Command::new("bash")
        .args(["-c", "command -v rabbitmq-server"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        return Some("rabbitmq-server is not installed".into());
    }
    if !is_root() {
        // Nodes of one cluster share an Erlang cookie: as root they run as the `rabbitmq` user,
        // with its cookie, which rabbitmqctl (run as root here) shares too.
        return Some("the nodes run as the rabbitmq user, which needs root".into());
    }
    None
}

/// A RabbitMQ cluster of the test's own: `n` nodes on free ports, each with its own files
/// (RABBITMQ_MNESIA_BASE, RABBITMQ_LOG_BASE under a temporary directory) and name, sharing the
/// `rabbitmq` user's Erlang cookie; the second and later joined to the first. Every node is
/// killed and its files removed on drop.
pub struct Cluster {
    pub nodes: Vec<Node>,
}

impl Cluster {
    pub fn start(n: usize, nofile: u32) -> Cluster {
        Cluster::start_with(n, nofile, false)
    }

    /// The same, each node with the management plugin (its API on `Node::mgmt`).
    pub fn start_managed(n: usize, nofile: u32) -> Cluster {
        Cluster::start_with(n, nofile, true)
    }

    fn start_with(n: usize, nofile: u32, management: bool) -> Cluster {
        let nodes: Vec<Node> = (0..n).map(|_| Node::start(management, Some(nofile))).collect();
        for node in &nodes {
            node.ctl(&["wait", node.dir.join("pid").to_str().unwrap(), "--timeout", "120"]);
        }
        for node in &nodes[1..] {
            node.ctl(&["stop_app"]);
            node.ctl(&["join_cluster", &nodes[0].node]);
            node.ctl(&["start_app"]);
        }
        Cluster { nodes }
    }

    /// Every node's URL, in order, as `amqp_url` takes a list.
    pub fn amqp_urls(&self) -> String {
        self.nodes.iter().map(Node::amqp_url).collect::<Vec<_>>().join(",")
    }
}
