//! A RabbitMQ cluster of three nodes, started by the test: `relay --follow` keeps every
//! acknowledged check-in when the node it publishes on, which also leads the department
//! queues, is killed mid-way through a stream of check-ins (the confirms that node
//! gave just before dying were not all honoured, rabbitmq/rabbitmq-server#9208; the relay
//! publishes again what it confirmed within `amqp.republish_horizon_seconds`).
//!
//! Skipped, saying why, where `rabbitmq-server` cannot run; under CI=true that is a failure.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::rabbit::{self, Cluster};
use common::TestEnv;
use serde_json::Value;

const EMPLOYEES: u32 = 240;
const DEPARTMENTS: u32 = 3;

/// Skip (or fail under CI) when no cluster can be started here.
fn cluster_or_skip() -> Option<Cluster> {
    skip_unless_rabbit().then(|| Cluster::start(3, 4096))
}

fn skip_unless_rabbit() -> bool {
    if let Some(why) = rabbit::missing() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must run the broker cluster test: {why}"
        );
        eprintln!("skipped: {why}");
        return false;
    }
    true
}

/// How many of the namespace's department queues each node of `cluster` leads, in node order.
fn leaders_per_node(cluster: &Cluster, ns: &str) -> Vec<usize> {
    let out = cluster.nodes[1].ctl_out(&["list_queues", "name", "leader", "--no-table-headers"]);
    let mut led = vec![0; cluster.nodes.len()];
    for line in out.lines() {
        let mut f = line.split_whitespace();
        if let (Some(name), Some(leader)) = (f.next(), f.next()) {
            if name.starts_with(&format!("{ns}.dept.")) {
                led[cluster.nodes.iter().position(|node| node.node == leader).unwrap()] += 1;
            }
        }
    }
    led
}

/// The node of `cluster` that leads most of the namespace's department queues, and how many.
fn leader_of_departments(cluster: &Cluster, ns: &str) -> (usize, usize) {
    let led = leaders_per_node(cluster, ns);
    let (i, n) = led.iter().enumerate().max_by_key(|(_, n)| **n).expect("nodes");
    assert!(*n > 0, "department queues");
    (i, *n)
}

/// `queues declare` through the first node of the list, which then leads every department
/// queue (the case that lost events: every command reaches the first node first): its index, 0.
fn declare_through_the_first_node(cluster: &Cluster, env: &TestEnv, cfg: &std::path::Path, departments: u32) -> usize {
    env.cmd()
        .args(["queues", "declare"])
        .env("ATTENDANCE_AMQP_URL", cluster.amqp_urls())
        .env("ATTENDANCE_CONFIG", cfg)
        .assert()
        .success();
    let (leader, led) = leader_of_departments(cluster, &env.ns);
    assert_eq!((leader, led), (0, departments as usize), "the first node leads them");
    leader
}

/// Each department's queue read from the nodes but `dead` (`watch-dept --once`): the employees
/// of `expected` missing there, by department, and how many distinct check-ins were shown.
fn missing_from_queues(
    cluster: &Cluster,
    dead: usize,
    env: &TestEnv,
    cfg: &std::path::Path,
    expected: &BTreeMap<String, BTreeSet<String>>,
) -> (BTreeMap<String, usize>, usize) {
    let survivors: Vec<String> = (0..cluster.nodes.len())
        .filter(|i| *i != dead)
        .map(|i| cluster.nodes[i].amqp_url())
        .collect();
    let (mut missing, mut shown_total) = (BTreeMap::new(), 0);
    for (dept, employees) in expected {
        let out = env
            .cmd()
            .args(["watch-dept", dept, "--once", "--json"])
            .env("ATTENDANCE_AMQP_URL", survivors.join(","))
            .env("ATTENDANCE_CONFIG", cfg)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let shown: BTreeSet<String> = common::employee_ids(&String::from_utf8_lossy(&out.stdout))
            .into_iter()
            .collect();
        shown_total += shown.len();
        let lost = employees.iter().filter(|e| !shown.contains(*e)).count();
        eprintln!(
            "{dept}: {} expected, {} in its queue, {lost} missing",
            employees.len(),
            shown.len()
        );
        if lost > 0 {
            missing.insert(dept.clone(), lost);
        }
    }
    (missing, shown_total)
}

// A regression test too: in about one run of four the surviving nodes refused every publish
// on the relay's connection for minutes after the kill (RabbitMQ 3.10 keeps the dead quorum-queue
// leader on a channel), until the relay learned to open a new connection when a round is refused.
#[test]
fn relay_follow_keeps_every_acknowledged_checkin_when_its_node_that_leads_the_queues_dies() {
    if !skip_unless_rabbit() {
        return;
    }
    // Tries in a row, each on a cluster of its own (scripts/cluster-tries.sh runs ten).
    let tries: usize = std::env::var("ATTENDANCE_TEST_CLUSTER_TRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut failed = Vec::new();
    for t in 1..=tries {
        match leader_killed_under_a_relay() {
            Ok(n) => eprintln!("try {t} of {tries}: all {n} acknowledged check-ins in their queues"),
            Err(why) => {
                eprintln!("try {t} of {tries} failed: {why}");
                failed.push(format!("try {t}: {why}"));
            }
        }
    }
    eprintln!("cluster tries: {} of {tries} passed", tries - failed.len());
    assert!(failed.is_empty(), "{failed:?}");
}

/// One try: a fresh 3-node cluster, `relay --follow` running, check-ins streaming, the node
/// leading the queues killed. The number of acknowledged check-ins, or what went wrong.
fn leader_killed_under_a_relay() -> Result<usize, String> {
    let cluster = Cluster::start(3, 4096);
    let env = TestEnv::with_roster("UTC", EMPLOYEES, DEPARTMENTS);
    let urls = cluster.amqp_urls();
    let cfg = env.file(
        "att.toml",
        "[amqp]\nconnect_timeout_ms = 1000\nclose_timeout_ms = 300\nconfirm_timeout_ms = 3000\n",
    );
    let depts: Vec<String> = (1..=DEPARTMENTS).map(|d| format!("D{d:03}")).collect();
    // The department queues, declared through the first node (as every command connects to
    // the first node of the list first), so it leads them: the case that lost events.
    let leader = declare_through_the_first_node(&cluster, &env, &cfg, DEPARTMENTS);

    let mut relay = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "500"])
        .env("ATTENDANCE_AMQP_URL", &urls)
        .env("ATTENDANCE_CONFIG", &cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = relay.stderr.take().unwrap();
    let said = std::thread::spawn(move || BufReader::new(err).lines().map_while(Result::ok).collect::<Vec<_>>());
    // The relay's heartbeat is up once a check-in hands its event over.
    let up = Instant::now() + Duration::from_secs(30);
    while !env.redis_keys().iter().any(|k| k.contains("relay")) {
        assert!(Instant::now() < up, "the relay never started");
        std::thread::sleep(Duration::from_millis(100));
    }

    // A stream of check-ins, each its own process handing its event to the relay; the node
    // that leads the queues (and carries the relay's connection) is killed a third of the way.
    let mut acknowledged: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut killed_at = None;
    for (i, d) in depts.iter().cycle().take(EMPLOYEES as usize).enumerate() {
        let _ = d;
        if i == EMPLOYEES as usize / 3 {
            cluster.nodes[leader].kill();
            killed_at = Some(Instant::now());
        }
        let emp = format!("E{:06}", i + 1);
        let o = env
            .cmd()
            .args(["checkin", &emp, "--json"])
            .env("ATTENDANCE_AMQP_URL", &urls)
            .env("ATTENDANCE_CONFIG", &cfg)
            .output()
            .unwrap();
        if o.status.success() {
            let c: Value = serde_json::from_slice(&o.stdout).unwrap();
            let dept = c["department_id"].as_str().unwrap().to_string();
            acknowledged.entry(dept).or_default().insert(emp);
        }
    }
    let killed_at = killed_at.expect("killed");
    // The relay empties every outbox on the surviving nodes, within a minute of the kill.
    let drained = killed_at + Duration::from_secs(60);
    while env.outbox_events() > 0 {
        if Instant::now() >= drained {
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(relay.id() as libc::pid_t, libc::SIGKILL) };
            relay.wait().unwrap();
            let said = said.join().unwrap();
            return Err(format!(
                "outboxes not drained: {}; relay said {said:?}",
                env.outbox_events()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "{} check-ins acknowledged, outboxes empty {:.1} s after the kill",
        acknowledged.values().map(BTreeSet::len).sum::<usize>(),
        killed_at.elapsed().as_secs_f64()
    );
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(relay.id() as libc::pid_t, libc::SIGINT) };
    let status = relay.wait().unwrap();
    let said = said.join().unwrap();
    assert!(status.success(), "{status}: {said:?}");
    for line in &said {
        eprintln!("relay: {line}");
    }

    // Every acknowledged check-in is in its department's queue, read from the survivors.
    let (missing, _) = missing_from_queues(&cluster, leader, &env, &cfg, &acknowledged);
    if !missing.is_empty() {
        return Err(format!("acknowledged check-ins missing from their queues: {missing:?}"));
    }
    Ok(acknowledged.values().map(BTreeSet::len).sum())
}

/// `doctor --json` against the cluster (`urls`, its management API `mgmt`): the check `name`'s
/// (status, detail).
fn doctor_on_cluster(env: &TestEnv, urls: &str, mgmt: &str, name: &str) -> (String, String) {
    let vars = [("ATTENDANCE_AMQP_URL", urls), ("ATTENDANCE_AMQP_MANAGEMENT_URL", mgmt)];
    let (status, detail, _) = env.doctor_check_with(&vars, name);
    (status, detail)
}

/// Regression: `doctor` judged every node as if it held all the queues alike, while a
/// quorum queue costs its leader 5 handles and each other member 2, and the leaders may all sit
/// on one node. It reads each node's actual placement now: here every queue is declared through
/// node 1 with no policy to spread them (no management URL for `queues declare`), so node 1
/// leads them all and the others follow them.
#[test]
fn doctor_judges_each_broker_node_by_the_queues_it_leads_and_follows() {
    if !skip_unless_rabbit() {
        return;
    }
    let cluster = Cluster::start_managed(3, 4096);
    let env = TestEnv::with_roster("UTC", 12, 6);
    let urls = cluster.amqp_urls();
    env.cmd()
        .args(["queues", "declare"])
        .env("ATTENDANCE_AMQP_URL", &urls)
        .assert()
        .success();
    let (leader, led) = leader_of_departments(&cluster, &env.ns);
    assert_eq!((leader, led), (0, 6));
    // Its queues: 6 departments, retry, parking and the journal.
    let queues = 9;
    let mgmt = format!("http://guest:guest@127.0.0.1:{}", cluster.nodes[1].mgmt.unwrap());
    // The nodes report their file handles a few seconds after they start.
    let until = Instant::now() + Duration::from_secs(60);
    let detail = loop {
        let (status, detail) = doctor_on_cluster(&env, &urls, &mgmt, "broker files");
        if !detail.contains("no file handle figures yet") {
            assert_eq!(status, "ok", "{detail}");
            break detail;
        }
        assert!(Instant::now() < until, "{detail}");
        std::thread::sleep(Duration::from_secs(1));
    };
    // Each node's part of the detail: (queues led, followed, handles).
    let part = |node: &str| -> (u64, u64, u64) {
        let rest = detail
            .split(&format!("{node}: "))
            .nth(1)
            .unwrap_or_else(|| panic!("{node}: {detail}"));
        let num = |after: &str| -> u64 {
            let tail = rest.split(after).nth(1).unwrap_or_else(|| panic!("{after}: {detail}"));
            tail.split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        (num("leads "), num("and follows "), num(": about "))
    };
    // Node 1 leads every queue; the others follow the quorum ones (the department queues at
    // least), and pay 2 handles for each, against 3 and 1 per other member for the leader.
    let (led, followed, handles) = part(&cluster.nodes[0].node);
    assert_eq!((led, followed), (queues, 0), "{detail}");
    for n in &cluster.nodes[1..] {
        let (l, f, h) = part(&n.node);
        assert_eq!(l, 0, "{detail}");
        assert!(f >= 6, "the department queues at least: {detail}");
        assert_eq!(h, 2 * f, "{detail}");
        assert_eq!(handles, 3 * queues + 2 * f, "two other members of each: {detail}");
    }
    assert!(!detail.contains("guest:guest"), "{detail}");
}

/// Messages ready in each of the namespace's department queues, summed, read through one
/// channel to `url` (a survivor) kept open, so that a look costs one round trip per queue.
fn queued_at(ch: &amiquip::Channel, ns: &str, departments: u32) -> u32 {
    (1..=departments)
        .filter_map(|d| ch.queue_declare_passive(format!("{ns}.dept.D{d:03}")).ok())
        .filter_map(|q| q.declared_message_count())
        .sum()
}

/// A bulk check-in: the node that leads the department queues, and carries the bulk's
/// connections, is killed while it publishes. What the lost connections had confirmed within
/// `amqp.republish_horizon_seconds` goes back to the outboxes (the bulk does not connect again:
/// reconnecting at once to the survivors lost events in 5 of 18 runs, docs/durability.md
/// section 5), and `relay` sends the outboxes from the survivors: every recorded check-in is in
/// its department's queue.
#[test]
fn bulk_checkin_keeps_every_event_when_the_node_that_leads_the_queues_dies_mid_publish() {
    const EMPLOYEES: u32 = 3000;
    const DEPARTMENTS: u32 = 30;
    let Some(cluster) = cluster_or_skip() else { return };
    let env = TestEnv::with_roster("UTC", EMPLOYEES, DEPARTMENTS);
    let urls = cluster.amqp_urls();
    let cfg = env.file(
        "att.toml",
        // A window of 50 confirms: the bulk takes long enough for the test to kill mid-way.
        "[amqp]\nconnect_timeout_ms = 1000\nclose_timeout_ms = 300\nconfirm_timeout_ms = 3000\npublishers = 2\n\
         confirm_window = 50\n",
    );
    let leader = declare_through_the_first_node(&cluster, &env, &cfg, DEPARTMENTS);
    let mut csv = String::from("employee_id,kind,at\n");
    for i in 1..=EMPLOYEES {
        csv.push_str(&format!("E{i:06},in,2026-11-02T08:30:00Z\n"));
    }
    let file = env.file("everyone.csv", &csv);

    let bulk = env
        .std_cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "--json"])
        .env("ATTENDANCE_AMQP_URL", &urls)
        .env("ATTENDANCE_CONFIG", &cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once a third of the events are in their queues (read on node 2).
    let mut watch = amiquip::Connection::insecure_open(&cluster.nodes[1].amqp_url()).unwrap();
    let ch = watch.open_channel(None).unwrap();
    let until = Instant::now() + Duration::from_secs(120);
    while queued_at(&ch, &env.ns, DEPARTMENTS) < EMPLOYEES / 3 {
        assert!(Instant::now() < until, "the bulk never published a third of its events");
        std::thread::sleep(Duration::from_millis(2));
    }
    cluster.nodes[leader].kill();
    drop(ch);
    drop(watch);
    let killed_at = Instant::now();
    let o = bulk.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = &r["notifications"];
    let get = |k: &str| n[k].as_u64().unwrap_or(0);
    assert_eq!(r["recorded"], EMPLOYEES, "{r}");
    assert!(n["problem"].is_string(), "the kill came before the bulk was done: {r}");
    assert_eq!(get("sent") + get("pending"), u64::from(EMPLOYEES), "{r}");
    assert_eq!(env.outbox_events() as u64, get("pending"), "{r}");
    eprintln!("bulk: {n}");

    // `relay` sends the outboxes from the survivors (the first in the list is dead), again
    // while a queue's new leader is not elected yet and the broker refuses its events.
    let drained = killed_at + Duration::from_secs(90);
    let mut relays = 0;
    while env.outbox_events() > 0 {
        assert!(
            Instant::now() < drained,
            "outboxes not drained: {}",
            env.outbox_events()
        );
        let o = env
            .cmd()
            .args(["relay", "--json"])
            .env("ATTENDANCE_AMQP_URL", &urls)
            .env("ATTENDANCE_CONFIG", &cfg)
            .output()
            .unwrap();
        eprintln!("relay: {}", String::from_utf8_lossy(&o.stdout).trim());
        relays += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!(
        "outboxes empty {:.1} s after the kill, after {relays} relay run(s)",
        killed_at.elapsed().as_secs_f64()
    );

    // Every recorded check-in is in its queue, read from the survivors.
    let recorded: BTreeMap<String, BTreeSet<String>> = {
        use mysql::prelude::Queryable;
        let rows: Vec<(String, String)> = env.mysql().query("SELECT id, department_id FROM employees").unwrap();
        rows.into_iter().fold(BTreeMap::new(), |mut m, (e, d)| {
            m.entry(d).or_default().insert(e);
            m
        })
    };
    let (missing, shown_total) = missing_from_queues(&cluster, leader, &env, &cfg, &recorded);
    eprintln!("{shown_total} of {EMPLOYEES} check-ins in their queues");
    assert!(
        missing.is_empty(),
        "recorded check-ins missing from their queues: {missing:?}"
    );
}

/// Regression: `org import` declared every department queue before any policy existed, so every
/// quorum leader sat on the first node of the list (22 of 22), even with `amqp.management_url`
/// set and `queues declare` run next. The import sets the leaders' policy first now, so its
/// queues' leaders spread; a namespace whose queues were declared before any policy keeps them
/// piled up, and `doctor` says so with the command that spreads them.
#[test]
fn org_import_spreads_the_queue_leaders_and_doctor_names_leaders_left_on_one_node() {
    if !skip_unless_rabbit() {
        return;
    }
    let cluster = Cluster::start_managed(3, 4096);
    let urls = cluster.amqp_urls();
    let mgmt = format!("http://guest:guest@127.0.0.1:{}", cluster.nodes[1].mgmt.unwrap());
    let import = |env: &TestEnv, managed: bool| {
        let roster = env.roster_file(24, 12);
        let mut cmd = env.cmd();
        cmd.args(["org", "import", roster.to_str().unwrap(), "-q"])
            .env("ATTENDANCE_AMQP_URL", &urls);
        if managed {
            cmd.env("ATTENDANCE_AMQP_MANAGEMENT_URL", &mgmt);
        }
        cmd.assert().success();
    };
    let leaders_check = |env: &TestEnv| doctor_on_cluster(env, &urls, &mgmt, "queue leaders");

    let spread = TestEnv::migrated("UTC");
    import(&spread, true);
    let led = leaders_per_node(&cluster, &spread.ns);
    eprintln!("org import with the management API: leaders per node {led:?}");
    assert_eq!(led.iter().sum::<usize>(), 12, "{led:?}");
    // Spread as doctor counts it: every node leads some, none more than its share plus a half
    // and one (7 of 12). Not an even 4/4/4: the broker's balanced locator counts leaders as
    // each declaration arrives, and the import declares on several channels at once
    // (regression: 3..=5 each failed on [2, 5, 5] and [2, 6, 4] under load).
    assert!(
        led.iter().all(|&n| (1..=7).contains(&n)),
        "spread over the nodes: {led:?}"
    );
    let (status, detail) = leaders_check(&spread);
    assert_eq!(status, "ok", "{detail}");

    // Declared before any policy (no management API for the import): all on the first node.
    let piled = TestEnv::migrated("UTC");
    import(&piled, false);
    assert_eq!(leaders_per_node(&cluster, &piled.ns), vec![12, 0, 0]);
    let (status, detail) = leaders_check(&piled);
    assert_eq!(status, "warn", "{detail}");
    assert!(
        detail.contains(&format!(
            "quorum queue leaders on {} (a share is",
            cluster.nodes[0].node
        )),
        "{detail}"
    );
    assert!(detail.contains("rabbitmq-queues rebalance quorum"), "{detail}");
    // What the line says spreads them.
    let mut rebalance = std::process::Command::new("rabbitmq-queues");
    cluster.nodes[0].env(&mut rebalance);
    let o = rebalance.args(["rebalance", "quorum"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let led = leaders_per_node(&cluster, &piled.ns);
    eprintln!("after rabbitmq-queues rebalance quorum: {led:?}");
    let (status, detail) = leaders_check(&piled);
    assert_eq!(status, "ok", "{detail}");
    for env in [&spread, &piled] {
        env.cmd()
            .args(["queues", "delete", "--yes", "-q"])
            .env("ATTENDANCE_AMQP_URL", &urls)
            .assert()
            .success();
    }
}
