//! Settle's check against the journal fails loudly. Regression: with the broker black-holed
//! during that check, settle waited 2.1 s, took the unanswered lookup for "the broker has no
//! journal for this namespace", settled anyway (exit 0) and wrote absent an employee whose
//! acknowledged punch Redis had lost. A lookup or a read that fails or goes unanswered is now
//! RabbitMQ failing: exit 3, nothing written, the cause in one line; only the broker's answer
//! that there is no journal (`settle::reconcile`'s test of it) settles without the check.
//!
//! Each case runs with the verifiers' keyring deployed, as a site that signs does.

use crate::common;

use std::path::PathBuf;

use common::day::Day;
use common::stall::{Stall, StallProxy};
use common::{TestEnv, KEY_ID};
use mysql::prelude::Queryable;
use redis::Commands;

const TZ: &str = "Europe/Paris";
/// A Friday in the past (tests/common lifts the back-dating limit for fixed days like this one).
const DAY: &str = "2026-11-20";

/// AMQP method frames' class and method ids.
const QUEUE_DECLARE: &[u8] = &[0, 50, 0, 10];
const BASIC_CONSUME: &[u8] = &[0, 60, 0, 20];
const BASIC_PUBLISH: &[u8] = &[0, 60, 0, 40];

/// Short broker timeouts, so that a silent broker costs the test seconds, not minutes.
const AMQP_TIMEOUTS: &str = "[amqp]\nconnect_timeout_ms = 1000\nconfirm_timeout_ms = 800\nclose_timeout_ms = 300\n";

/// A laid-out day of 6 with the keyring deployed, where one employee's acknowledged (and
/// journaled) check-in was lost by Redis, as a fail-over to a lagging replica loses it, and
/// another's is on the board. Returns the environment, the keyring, and (lost, kept).
fn day_with_a_lost_punch() -> (TestEnv, PathBuf, String, String) {
    let env = TestEnv::with_day(TZ, Day::new(6, 1).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let members = env.members("D001");
    let (lost, kept) = (members[0].clone(), members[1].clone());
    let board = env.keys().board("D001", common::date(DAY));
    let mut con = env.redis();
    let laid_out: Option<String> = con.hget(&board, &lost).unwrap();
    let mut ids = Vec::new();
    for (emp, at) in [(&lost, "08:50"), (&kept, "08:40")] {
        let c = env.json(&[
            "checkin",
            emp,
            "--kind",
            "in",
            "--at",
            &format!("{DAY}T{at}:00+01:00"),
            "--json",
        ]);
        assert_eq!(c["notification"], "sent", "{c}");
        ids.push(c["event_id"].as_str().unwrap().to_string());
    }
    // The replica never had the lost punch: its board field as laid out, its punch log without it.
    let _: () = con.hset(&board, &lost, laid_out.unwrap_or_default()).unwrap();
    env.failed_over(DAY);
    let plog = env.keys().punch_log("D001", common::date(DAY), "live");
    let removed: u32 = con.hdel(&plog, &ids[0]).unwrap();
    assert_eq!(removed, 1);
    (env, ring, lost, kept)
}

/// Settle DAY through a proxy that fails as `stall` says: exit 3 with one line naming the
/// journal and `cause`, nothing in MySQL, Redis as it was. Then, on the real broker, settle
/// restores the lost punch: its employee is not absent.
fn settle_fails_loudly_through(stall: Stall, cause: &str) {
    let (env, ring, lost, kept) = day_with_a_lost_punch();
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let redis_before = env.redis_snapshot();
    let proxy = StallProxy::start("127.0.0.1:5672", stall);
    let started = std::time::Instant::now();
    let o = env
        .cmd()
        .args(["settle", "--date", DAY])
        .env("ATTENDANCE_SIGNING_KEYRING_FILE", &ring)
        .env("ATTENDANCE_CONFIG", &cfg)
        .env("ATTENDANCE_AMQP_URL", proxy.amqp_url())
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(proxy.tripped(), "the proxy never saw its trigger: {err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    assert!(
        line.contains(&format!(
            "{DAY}: settle could not check the boards against the journal and wrote nothing"
        )),
        "{err}"
    );
    assert!(line.contains("RabbitMQ") && line.contains(cause), "{err}");
    assert!(!line.contains("no journal"), "not taken for a missing journal: {err}");
    assert!(line.chars().count() <= 300, "{err}");
    assert!(!err.contains("settled "), "{err}");
    // Bounded: the first delivery's wait (5 s), a check (0.8 s), and the connect (1 s) at most.
    assert!(took < std::time::Duration::from_secs(12), "took {took:?}");
    assert_eq!(env.count("attendance"), 0, "no row written");
    assert_eq!(env.count("settle_runs"), 0, "no run recorded");
    assert_eq!(
        env.redis_snapshot(),
        redis_before,
        "the boards are still there, nothing cut over"
    );
    drop(proxy);

    // The broker back: the lost punch is restored from the journal, nobody who punched is absent.
    let o = env.with_keyring(&ring, &["settle", "--date", DAY, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["reconcile"]["status"], "done", "{s}");
    assert_eq!(s["reconcile"]["restored"], 1, "{s}");
    for (emp, first_in) in [(&lost, "2026-11-20 07:50:00"), (&kept, "2026-11-20 07:40:00")] {
        let (status, at): (String, String) = env
            .mysql()
            .exec_first(
                "SELECT CAST(status AS CHAR), IFNULL(CAST(first_in AS CHAR), '-') FROM attendance \
                 WHERE work_date = ? AND employee_id = ?",
                (DAY, emp),
            )
            .unwrap()
            .unwrap();
        assert_ne!(status, "absent", "{emp}");
        assert_eq!(at, first_in, "{emp}");
    }
    assert_eq!(env.count("attendance"), 6);
}

#[test]
fn settle_whose_broker_goes_silent_at_the_journal_lookup_exits_3_and_writes_nothing() {
    // The case seen: the broker black-holed right after the handshake.
    settle_fails_loudly_through(
        Stall::when_client_sends(QUEUE_DECLARE).hold_trigger(),
        "did not answer within",
    );
}

#[test]
fn settle_whose_broker_goes_silent_mid_read_of_the_journal_exits_3_and_writes_nothing() {
    // The consumer starts, part of the first delivery arrives, then nothing: not an end.
    settle_fails_loudly_through(
        Stall::when_client_sends(BASIC_CONSUME).then_pass_server_bytes(200),
        "did not answer within",
    );
}

#[test]
fn settle_whose_broker_is_cut_at_the_journal_lookup_exits_3_and_writes_nothing() {
    settle_fails_loudly_through(
        Stall::when_client_sends(QUEUE_DECLARE).hold_trigger().then_drop(),
        "RabbitMQ is unreachable or failing",
    );
}

#[test]
fn settle_whose_broker_is_cut_mid_read_of_the_journal_exits_3_and_writes_nothing() {
    // Cut when settle appends its fence, the consumer already reading.
    settle_fails_loudly_through(
        Stall::when_client_sends(BASIC_PUBLISH).hold_trigger().then_drop(),
        "RabbitMQ is unreachable or failing",
    );
}
