//! An acknowledgement means replicated. Regression: a fail-over to a replica that was behind
//! lost punches whose check-ins had printed success, and `settle` wrote those
//! employees absent. Settle now checks the day's boards against the journal first and restores
//! what they lost (or refuses, naming `recover`, when the journal cannot be read); `init-day`
//! and `settle` check the persistence of every master of a cluster, not one random node.

use crate::common;

use chrono::Utc;
use common::cluster::Cluster;
use common::day::Day;
use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;

pub(super) const TZ: &str = "Europe/Paris";
/// A Friday in the past (tests/common lifts the back-dating limit for fixed days like this one).
pub(super) const DAY: &str = "2026-11-20";

/// Check `emp` in (or out) at a local time of DAY; the punch is acknowledged and its
/// notification sent (so it is in the journal). Returns its event id.
pub(super) fn punch_sent(env: &TestEnv, emp: &str, kind: &str, hhmm: &str) -> String {
    let at = format!("{DAY}T{hhmm}:00+01:00");
    let c = env.json(&["checkin", emp, "--kind", kind, "--at", &at, "--json"]);
    assert_eq!(c["notification"], "sent", "{c}");
    c["event_id"].as_str().unwrap().to_string()
}

/// (status, first_in in UTC or '-') of `emp`'s row of DAY.
fn row(env: &TestEnv, emp: &str) -> (String, String) {
    env.mysql()
        .exec_first(
            "SELECT CAST(status AS CHAR), IFNULL(CAST(first_in AS CHAR), '-') FROM attendance \
             WHERE work_date = ? AND employee_id = ?",
            (DAY, emp),
        )
        .unwrap()
        .unwrap()
}

/// Regression: with a replica behind its master, check-ins that printed
/// success were gone after the fail-over, and settle exited 0 writing them all absent.
#[test]
fn punches_a_fail_over_lost_are_restored_from_the_journal_before_anyone_is_marked_absent() {
    let env = TestEnv::with_day(TZ, Day::new(12, 1).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let (voided, sup) = env.member_and_supervisor();
    let others: Vec<String> = env
        .members("D001")
        .into_iter()
        .filter(|e| *e != sup && *e != voided)
        .collect();
    let (lost, kept) = (&others[0..3], &others[3..5]);
    let board = env.keys().board("D001", common::date(DAY));
    let mut con = env.redis();
    let laid_out: Vec<Option<String>> = lost.iter().map(|e| con.hget(&board, e).unwrap()).collect();

    let mut lost_ids = Vec::new();
    for e in lost {
        lost_ids.push(punch_sent(&env, e, "in", "08:50"));
    }
    lost_ids.push(punch_sent(&env, &lost[0], "out", "18:05"));
    for e in kept {
        punch_sent(&env, e, "in", "08:40");
    }
    // A wrong punch, voided before settle: off the board, still in the journal.
    punch_sent(&env, &voided, "in", "07:05");
    env.act_as(&sup);
    env.ok(&[
        "punch",
        "void",
        &voided,
        "--at",
        &format!("{DAY}T07:05"),
        "--reason",
        "a colleague's badge",
        "-q",
    ]);

    // The promoted replica never received the lost punches: their board fields are as laid
    // out, and their day's punch log lacks them (one script wrote both).
    env.failed_over(DAY);
    for (e, value) in lost.iter().zip(&laid_out) {
        let _: () = con.hset(&board, e, value.clone().unwrap_or_default()).unwrap();
    }
    let plog = env.keys().punch_log("D001", common::date(DAY), "live");
    let removed: u32 = con.hdel(&plog, &lost_ids).unwrap();
    assert_eq!(removed, 4);
    let status = env.json(&["status", &lost[0], "--date", DAY, "--json"]);
    assert!(status["first_in"].is_null(), "the board lost it: {status}");

    let o = env.run(&["settle", "--date", DAY, "--json"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["reconcile"]["status"], "done", "{s}");
    assert_eq!(s["reconcile"]["restored"], 4, "{s}");
    assert_eq!(s["reconcile"]["refused"], 0, "{s}");
    assert!(s["reconcile"]["journaled"].as_u64().unwrap() >= 7, "{s}");
    assert!(
        err.contains("4 acknowledged punch(es) were missing from Redis") && err.contains("restored from the journal"),
        "{err}"
    );

    // Nobody whose punch is in the journal is absent; MySQL holds their first check-in.
    for e in lost {
        let (status, first_in) = row(&env, e);
        assert_eq!(first_in, "2026-11-20 07:50:00", "{e}");
        assert_ne!(status, "absent", "{e}");
    }
    assert_eq!(row(&env, &lost[0]).0, "present");
    for e in kept {
        assert_eq!(row(&env, e).1, "2026-11-20 07:40:00", "{e}");
    }
    // The voided punch stays voided: its punch log still held it.
    assert_eq!(row(&env, &voided), ("absent".into(), "-".into()));
    let how: Vec<String> = env
        .mysql()
        .exec(
            "SELECT CAST(how AS CHAR) FROM punch_log WHERE work_date = ? AND employee_id = ? ORDER BY punched_at",
            (DAY, &lost[0]),
        )
        .unwrap();
    assert_eq!(how, vec!["recovered", "recovered"], "logged as what they are");

    // A rerun finds every journaled punch in MySQL: nothing more to restore, the same rows.
    let before = env.attendance_rows();
    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(s["reconcile"]["restored"], 0, "{s}");
    assert_eq!(env.attendance_rows(), before);
}

/// The journal unreachable: settle refuses (exit 3, a service), names `recover`, and writes
/// nothing; `--no-reconcile` settles the boards as they are, and says so.
#[test]
fn settle_refuses_when_the_journal_cannot_be_read_and_writes_nothing() {
    let env = TestEnv::with_day(TZ, Day::new(10, 2).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let emp = env.members("D001").remove(0);
    punch_sent(&env, &emp, "in", "08:30");
    // A day that must be checked: its Redis is not the one that held it from the start.
    env.failed_over(DAY);
    let redis_before = env.redis_snapshot();
    let broker_down = common::CLOSED_BROKER;
    let o = env
        .cmd()
        .args(["settle", "--date", DAY])
        .env("ATTENDANCE_AMQP_URL", broker_down)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(3), "{err}");
    let line: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(line.len(), 1, "{err}");
    assert!(line[0].contains(&format!("`attendance recover --date {DAY}`")), "{err}");
    assert!(line[0].contains("RabbitMQ"), "{err}");
    assert!(line[0].chars().count() <= 300, "{err}");
    assert_eq!(env.count("attendance"), 0);
    assert_eq!(env.count("settle_runs"), 0);
    assert_eq!(env.redis_snapshot(), redis_before, "Redis unchanged: nothing cut over");

    let o = env
        .cmd()
        .args(["settle", "--date", DAY, "--no-reconcile", "--json"])
        .env("ATTENDANCE_AMQP_URL", broker_down)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["reconcile"]["status"], "skipped", "{s}");
    assert_eq!(row(&env, &emp).1, "2026-11-20 07:30:00");
    assert_eq!(env.count("attendance"), 10);
}

/// Regression: settle read the whole day's journal back every night (about 197,000 events at
/// 100,000 employees, several times the cost of writing the day), though only a restart or a
/// fail-over of Redis loses acknowledged punches. A day the same Redis held from before its
/// first punch is settled without the journal (here: the broker unreachable, still exit 0);
/// `--check-journal` reads it anyway.
#[test]
fn a_day_its_redis_held_throughout_settles_without_reading_the_journal() {
    let env = TestEnv::with_day(TZ, Day::new(10, 2).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let emp = env.members("D001").remove(0);
    punch_sent(&env, &emp, "in", "08:30");
    let broker_down = common::CLOSED_BROKER;
    let redis_before = env.redis_snapshot();
    let o = env
        .cmd()
        .args(["settle", "--date", DAY, "--check-journal"])
        .env("ATTENDANCE_AMQP_URL", broker_down)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(env.count("attendance"), 0);
    assert_eq!(env.redis_snapshot(), redis_before, "nothing cut over");

    let o = env
        .cmd()
        .args(["settle", "--date", DAY, "--json"])
        .env("ATTENDANCE_AMQP_URL", broker_down)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["reconcile"]["status"], "unchanged", "{s}");
    assert_eq!(s["reconcile"]["journaled"], 0, "{s}");
    assert_eq!(row(&env, &emp).1, "2026-11-20 07:30:00");
    assert_eq!(env.count("attendance"), 10);
}

/// A catch-up over two days, one whose Redis held it throughout and one that failed over: only
/// the second is read back, and each says which it was.
#[test]
fn a_catch_up_checks_only_the_day_that_failed_over() {
    let before = "2026-11-19";
    let env = TestEnv::with_day(TZ, Day::new(10, 2).import_flags(&["-q"]).init_day(before, &["-q"]));
    env.ok(&["init-day", "--date", DAY, "-q"]);
    let emp = env.members("D001").remove(0);
    env.json(&[
        "checkin",
        &emp,
        "--kind",
        "in",
        "--at",
        &format!("{before}T08:30:00+01:00"),
        "--json",
    ]);
    punch_sent(&env, &emp, "in", "08:30");
    env.failed_over(DAY);
    let s = env.json(&["settle", "--json"]);
    let mut runs = s["earlier"].as_array().unwrap().clone();
    runs.push(s.clone());
    let of = |day: &str| {
        runs.iter()
            .find(|r| r["work_date"] == day)
            .unwrap_or_else(|| panic!("{s}"))
            .clone()
    };
    assert_eq!(of(before)["reconcile"]["status"], "unchanged", "{s}");
    let checked = of(DAY);
    assert_eq!(checked["reconcile"]["status"], "done", "{s}");
    assert_eq!(
        checked["reconcile"]["journaled"], 1,
        "only the day checked is counted: {s}"
    );
}

/// A layout made once punches of the day were in Redis cannot vouch for them: such a day is
/// checked against the journal (here it cannot be read: exit 3, nothing written).
#[test]
fn a_day_laid_out_after_its_first_punch_is_checked_against_the_journal() {
    let env = TestEnv::with_roster(TZ, 10, 2);
    let emp = env.members("D001").remove(0);
    punch_sent(&env, &emp, "in", "08:30");
    env.ok(&["init-day", "--date", DAY, "-q"]);
    let identity: Option<Option<String>> = env
        .mysql()
        .exec_first("SELECT redis_identity FROM day_layouts WHERE work_date = ?", (DAY,))
        .unwrap();
    assert_eq!(identity, Some(None), "laid out, servers not vouched for");
    let o = env
        .cmd()
        .args(["settle", "--date", DAY])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(s["reconcile"]["status"], "done", "{s}");
    assert_eq!(s["reconcile"]["journaled"], 1, "{s}");
}

/// A real restart, no simulated identity: a private Redis with an append-only file, killed
/// after the day's punches with the last ones missing from what it reloads (edited out, as
/// the last second of an `everysec` file can be). Its new `run_id` makes settle read the
/// journal and restore them.
#[test]
fn after_a_redis_restart_settle_restores_from_the_journal_what_redis_lost() {
    let env = TestEnv::with_roster(TZ, 10, 2);
    let mut redis = common::private_redis::PrivateRedis::start(&env, true);
    let url = redis.url();
    let on_private = |args: &[&str]| {
        let o = env.cmd().args(args).env("ATTENDANCE_REDIS_URL", &url).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    };
    on_private(&["init-day", "--date", DAY, "-q"]);
    let emp = env.members("D001").remove(0);
    let at = format!("{DAY}T08:30:00+01:00");
    let o = on_private(&["checkin", &emp, "--kind", "in", "--at", &at, "--json"]);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["notification"], "sent", "{c}");
    let id = c["event_id"].as_str().unwrap().to_string();
    let board = env.keys().board("D001", common::date(DAY));
    let plog = env.keys().punch_log("D001", common::date(DAY), "live");
    let mut con = redis.con().unwrap();
    let _: () = con.hdel(&board, &emp).unwrap();
    let _: () = con.hdel(&plog, &id).unwrap();
    drop(con);
    redis.crash_and_restart();

    let o = on_private(&["settle", "--date", DAY, "--json"]);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["reconcile"]["status"], "done", "{s}");
    assert_eq!(s["reconcile"]["restored"], 1, "{s}");
    assert_eq!(row(&env, &emp).1, "2026-11-20 07:30:00", "not absent: restored");
}

/// Regression (for init-day and settle): the persistence warning read one
/// random node of a cluster, so a master with `appendonly no` went unmentioned most runs.
#[test]
fn init_day_and_settle_warn_of_the_one_master_without_an_append_only_file() {
    let cluster = Cluster::start();
    let env = TestEnv::on_redis("UTC", cluster.url());
    env.day(Day::new(20, 4).import_flags(&["-q"]));
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3);
    for &m in &masters {
        cluster.config_set(m, "appendonly", "yes");
        cluster.config_set(m, "maxmemory-policy", "noeviction");
    }
    let today = Utc::now().date_naive();
    let yesterday = today.pred_opt().unwrap().to_string();
    let init = |flags: &[&str]| {
        let o = env
            .cmd()
            .args(["init-day", "--date", &yesterday])
            .args(flags)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let err = init(&[]);
    assert!(!err.contains("warning: "), "every master has its AOF: {err}");

    let quiet = masters[1];
    cluster.config_set(quiet, "appendonly", "no");
    let named = format!("master 127.0.0.1:{}: Redis has no", cluster.ports[quiet]);
    // Whichever node the client would have asked: every run names the one master.
    for _ in 0..3 {
        let err = init(&[]);
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert_eq!(warnings.len(), 1, "{err}");
        assert!(warnings[0].contains(&named), "{err}");
        for &m in masters.iter().filter(|m| **m != quiet) {
            assert!(!warnings[0].contains(&format!(":{}:", cluster.ports[m])), "{err}");
        }
    }
    assert!(!init(&["-q"]).contains("warning"), "-q silences it");

    let o = env.run(&["settle", "--date", &yesterday]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("warning: ") && l.contains(&named)),
        "{err}"
    );
}

/// A broker with no journal for the namespace (nothing was ever journaled, or it was deleted):
/// nothing to restore from, so settle writes the boards as they are, and says so.
#[test]
fn with_no_journal_on_the_broker_settle_says_it_could_not_check() {
    let env = TestEnv::with_day(TZ, Day::new(6, 1).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    env.bare_broker();
    env.failed_over(DAY);
    let o = env.run(&["settle", "--date", DAY, "--json"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["reconcile"]["status"], "no_journal", "{s}");
    assert!(err.contains("has no journal for this namespace"), "{err}");
    assert_eq!(env.count("attendance"), 6);
}
