//! The whole day on a real Redis Cluster (three masters started by the test, or the one given
//! in `ATTENDANCE_TEST_REDIS_CLUSTER`): the same rows as on one node, and a lost master is a
//! clean exit 3. Every step here failed on the single-node code: init-day and bulk check-ins
//! with MOVED, relay finding only one master's outboxes, settle's reads and deletes.

use crate::common;
use common::cluster::Cluster;
use common::day::Day;
use common::TestEnv;

const DAY: &str = "2026-11-02";
const DOWN: &str = common::CLOSED_BROKER;

/// Run the same commands on both environments; require exit 0 and return both outputs.
fn both(envs: &[&TestEnv; 2], args: &[&str]) -> [String; 2] {
    [envs[0].ok(args), envs[1].ok(args)]
}

/// The JSON a command prints, with the fields that differ by run (event ids, clocks) left out.
fn stable(json: &str) -> Vec<serde_json::Value> {
    json.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                for k in ["event_id", "recorded_at", "elapsed_ms", "took_ms"] {
                    o.remove(k);
                }
            }
            v
        })
        .collect()
}

#[test]
fn a_whole_day_on_a_cluster_settles_the_same_rows_as_on_one_node() {
    let cluster = Cluster::given_or_start();
    let single = TestEnv::migrated("UTC");
    let clustered = TestEnv::on_redis("UTC", cluster.url());
    clustered.migrate();
    let envs = [&single, &clustered];

    let roster = single.roster_file(400, 12);
    both(&envs, &["org", "import", roster.to_str().unwrap(), "-q"]);
    // The roster cache is split, so its parts spread over the masters.
    let parts = cluster.keys(&format!("{}:roster:*", clustered.ns));
    assert!(parts.len() > 3, "{parts:?}");
    if cluster.owned() {
        let per_master = cluster.keys_per_master(&format!("{}:*", clustered.ns));
        assert!(
            per_master.iter().all(|n| *n > 0),
            "every master holds keys: {per_master:?}"
        );
    }

    both(&envs, &["init-day", "--date", DAY, "-q"]);
    let boards = cluster.keys(&format!("{}:board:*:{DAY}", clustered.ns));
    assert_eq!(boards.len(), 12, "every department's board, whatever its master");

    // Single check-ins, broker up: published at once.
    for (emp, at) in [
        ("E000001", "07:55:00"),
        ("E000002", "09:20:00"),
        ("E000001", "07:56:00"),
    ] {
        let out = both(&envs, &["checkin", emp, "--at", &format!("{DAY}T{at}Z"), "--json"]);
        assert_eq!(stable(&out[0]), stable(&out[1]), "{emp} {at}");
    }

    // The morning in bulk with the broker down: every event waits in its department's outbox.
    let morning = single.simulate(DAY, "morning");
    let morning = morning.to_str().unwrap();
    for env in envs {
        let o = env
            .cmd()
            .args(["checkin", "--file", morning, "-q"])
            .env("ATTENDANCE_AMQP_URL", DOWN)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let waiting = single.outbox_events();
    assert!(waiting > 300, "{waiting}");
    assert_eq!(cluster.keys(&format!("{}:outbox:*", clustered.ns)).len(), 12);

    // relay finds the outboxes on every master.
    let relayed = both(&envs, &["relay", "--json"]);
    assert_eq!(stable(&relayed[0]), stable(&relayed[1]));
    assert_eq!(stable(&relayed[1])[0]["sent"], waiting);
    assert!(
        cluster.keys(&format!("{}:outbox:*", clustered.ns)).is_empty(),
        "every outbox drained"
    );

    // The supervisor of D001 sees the same events.
    let shown = both(&envs, &["watch-dept", "D001", "--once", "--json"]);
    assert!(!shown[1].is_empty());
    assert_eq!(shown[0].lines().count(), shown[1].lines().count());

    let status = both(&envs, &["status", "E000001", "--date", DAY, "--json"]);
    assert_eq!(stable(&status[0]), stable(&status[1]));

    let evening = single.simulate(DAY, "evening");
    let evening = evening.to_str().unwrap();
    both(&envs, &["checkin", "--file", evening, "-q"]);

    both(&envs, &["settle", "--date", DAY, "-q"]);
    let rows = single.attendance_rows();
    assert_eq!(rows.len(), 400);
    assert!(rows.iter().any(|r| r.contains("|absent|")) && rows.iter().any(|r| r.contains("|present|")));
    assert_eq!(
        clustered.attendance_rows(),
        rows,
        "the same rows on a cluster as on one node"
    );
    assert!(
        cluster.keys(&format!("{}:*board:*", clustered.ns)).is_empty(),
        "settled boards deleted"
    );

    let report = both(&envs, &["report", "day", "--date", DAY, "--format", "csv"]);
    assert_eq!(report[0], report[1]);
}

#[test]
fn a_cluster_that_loses_a_master_fails_with_exit_3_and_settles_nothing() {
    let mut cluster = Cluster::start();
    let env = TestEnv::on_redis("UTC", cluster.url());
    env.day(Day::new(60, 6).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    for emp in ["E000001", "E000011", "E000021", "E000031", "E000041", "E000051"] {
        env.ok(&["checkin", emp, "--at", &format!("{DAY}T08:00:00Z"), "-q"]);
    }

    cluster.kill_master(1);
    let e = env.fails(&["settle", "--date", DAY, "-q"], 3);
    eprintln!("settle with a lost master: {e}");
    assert!(e.starts_with("error: ") && e.trim_end().lines().count() == 1, "{e}");
    assert!(e.contains("Redis"), "{e}");
    assert_eq!(env.count("attendance"), 0, "nothing settled");
    let running: u64 = mysql::prelude::Queryable::query_first(
        &mut env.mysql(),
        "SELECT COUNT(*) FROM settle_runs WHERE outcome = 'running'",
    )
    .unwrap()
    .unwrap();
    assert_eq!(running, 0, "no run left running");

    // A check-in whose department lives on the lost master: exit 3, one line.
    let mut failed = 0;
    for emp in ["E000002", "E000012", "E000022", "E000032", "E000042", "E000052"] {
        let o = env.run(&["checkin", emp, "--at", &format!("{DAY}T08:05:00Z"), "-q"]);
        if !o.status.success() {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(3), "{err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            failed += 1;
        }
    }
    assert!(failed > 0, "some department's board was on the lost master");
}

#[test]
fn a_malformed_cluster_url_is_a_usage_error_naming_the_key() {
    let env = TestEnv::on_redis("UTC", "redis+cluster://127.0.0.1:7000,127.0.0.1");
    let e = env.fails(&["status", "E000001"], 2);
    assert!(e.contains("redis_url"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
}

#[test]
fn scripts_flushed_from_every_node_are_loaded_again_where_they_run() {
    let cluster = Cluster::start();
    let env = TestEnv::on_redis("UTC", cluster.url());
    env.day(Day::new(30, 6).import_flags(&["-q"]));
    cluster.flush_scripts();
    env.init_day(DAY, &["-q"]);
    cluster.flush_scripts();
    env.ok(&["checkin", "E000001", "--at", &format!("{DAY}T08:00:00Z"), "-q"]);
    cluster.flush_scripts();
    let rows: String = (2..=30)
        .map(|i| format!("E{i:06},in,{DAY}T08:10:00Z,kiosk\n"))
        .collect();
    let f = env.file("bulk.csv", &format!("employee_id,kind,at,source\n{rows}"));
    env.ok(&["checkin", "--file", f.to_str().unwrap(), "-q"]);
    env.ok(&["settle", "--date", DAY, "-q"]);
    let rows = env.attendance_rows();
    assert_eq!(rows.len(), 30);
    assert!(
        rows.iter()
            .all(|r| r.contains("|missing_checkout|") && r.contains("|in@")),
        "every punch landed: {rows:?}"
    );
}

#[test]
fn a_following_relay_on_a_cluster_finds_the_outboxes_of_every_master_in_its_round() {
    use std::io::BufRead;
    let cluster = Cluster::given_or_start();
    let env = TestEnv::on_redis("UTC", cluster.url());
    env.day(Day::new(60, 12).import_flags(&["-q"]));
    // One event left by an outage in each of the twelve departments (spread over the masters).
    let mut stranded = 0;
    for d in 1..=12 {
        let emp = env.members(&format!("D{d:03}"))[0].clone();
        env.cmd()
            .args(["checkin", &emp, "--at", "2026-11-02T08:30:00Z", "-q"])
            .env("ATTENDANCE_AMQP_URL", DOWN)
            .env("ATTENDANCE_AMQP_HANDOFF", "false")
            .assert()
            .success();
        stranded += 1;
    }
    let mut child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "60000", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let round: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    // SAFETY: a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert!(child.wait().unwrap().success());
    assert_eq!(
        (&round["departments"], &round["sent"], &round["pending"]),
        (
            &serde_json::json!(12),
            &serde_json::json!(stranded),
            &serde_json::json!(0)
        ),
        "{round}"
    );
    assert_eq!(
        env.ok(&["relay", "--json"]).trim(),
        r#"{"departments":0,"sent":0,"pending":0}"#
    );
}

/// Regression: while a department's slot was being migrated, every
/// check-in of that department failed with exit 3 (TRYAGAIN while its keys were split between
/// the two nodes, ASK, MOVED) until the migration ended.
#[test]
fn a_check_in_waits_for_its_departments_slot_to_finish_moving() {
    let cluster = Cluster::start();
    let env = TestEnv::on_redis("UTC", cluster.url());
    env.day(Day::new(30, 3).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let keys = env.keys();
    let date = common::date(DAY);
    let board = keys.board("D001", date);
    env.ok(&[
        "checkin",
        &env.members("D001")[0],
        "--at",
        &format!("{DAY}T07:50:00Z"),
        "-q",
    ]);
    let to = (cluster.master_of(&board) + 1) % 3;
    let (slot, from) = cluster.start_slot_move(&board, to);
    // The board goes first; the outbox (empty: no key) and the punch log stay behind.
    cluster.migrate(from, to, &[board.clone(), keys.board_days("D001")]);

    let tryagain = || cluster.errors_answered(to, "TRYAGAIN") + cluster.errors_answered(from, "TRYAGAIN");
    let split_before = tryagain();

    let emp = env.members("D001")[1].clone();
    let mut checkin = env
        .std_cmd()
        .args(["checkin", &emp, "--at", &format!("{DAY}T08:00:00Z"), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The migration ends once the check-in has met the split slot more often than redis-rs's
    // own retries would (3 tries, then exit 3), or the check-in has given up.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tryagain() < split_before + 5 && checkin.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < until,
            "the check-in never met the moving slot"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    cluster.finish_slot_move(slot, from, to);
    let o = checkin.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (&v["changed"], &v["notification"]),
        (&true.into(), &"sent".into()),
        "{v}"
    );
    assert_eq!(cluster.master_of(&board), to);
    assert!(
        cluster.hget(&board, &emp).is_some(),
        "recorded on the board, on its new master"
    );
    assert!(
        cluster.hget(&board, &env.members("D001")[0]).is_some(),
        "the earlier punch moved with it"
    );
}
