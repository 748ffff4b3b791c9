//! The journal holds every acknowledged punch once, though publishing is at least once: an
//! event whose confirms were lost (the broker took the publishes, the replies never came back)
//! is published again by the next drain to its department queue, but journaled again only if
//! the journal does not hold it (docs/durability.md, "Each event once in the journal").
//!
//! A proxy in front of the shared broker forwards every publish and loses every reply from a
//! chosen publish on (tests/common/stall.rs, `then_lose_replies`).

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::stall::{Stall, StallProxy};
use common::{TestEnv, AMQP_URL};
use serde_json::Value;

/// basic.publish's class and method ids.
const BASIC_PUBLISH: &[u8] = &[0, 60, 0, 40];

const AMQP_TIMEOUTS: &str = "[amqp]\nconnect_timeout_ms = 1000\ncheckin_confirm_ms = 500\n\
                             confirm_timeout_ms = 800\nclose_timeout_ms = 300\n";

/// Run `args` with the broker reached through `proxy` and the short timeouts; its JSON output
/// (the exit code checked against `code`).
fn via(env: &TestEnv, proxy: &StallProxy, args: &[&str], code: i32) -> Value {
    let cfg = env.file("att.toml", AMQP_TIMEOUTS);
    let o = env
        .cmd()
        .args(args)
        .env("ATTENDANCE_AMQP_URL", proxy.amqp_url())
        .env("ATTENDANCE_CONFIG", cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(proxy.tripped(), "the proxy saw its trigger");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// Every event id of the journal, each once (the test fails naming any held twice).
fn journaled_once(env: &TestEnv) -> BTreeSet<String> {
    let copies = common::journal::copies(AMQP_URL, &env.ns, Duration::from_millis(1_500));
    assert_eq!(common::journal::doubled(&copies), [], "events journaled more than once");
    copies.into_keys().collect()
}

/// What the supervisors' queues hold of `depts` (each event shown once by the watcher).
fn queued(env: &TestEnv, depts: &[&str]) -> BTreeSet<String> {
    depts.iter().flat_map(|d| env.shown_ids(d)).collect()
}

/// A check-in through a proxy that passes every publish to the broker and loses every reply:
/// the event is in its queue and in the journal, but unconfirmed, so still in its outbox
/// (`notification: pending`). Returns the proxy (kept for the test's life) and the event id.
fn checkin_with_its_confirms_lost(env: &TestEnv) -> (StallProxy, String) {
    let proxy = StallProxy::start(
        "127.0.0.1:5672",
        Stall::when_client_sends(BASIC_PUBLISH).then_lose_replies(),
    );
    let c = via(
        env,
        &proxy,
        &["checkin", "E000002", "--at", "2026-11-02T08:30:00Z", "--json"],
        0,
    );
    assert_eq!(c["notification"], "pending", "{c}");
    let id = c["event_id"].as_str().unwrap().to_string();
    (proxy, id)
}

#[test]
fn a_checkin_whose_confirms_were_lost_is_journaled_once_when_relay_sends_it_again() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let (_proxy, id) = checkin_with_its_confirms_lost(&env);
    assert_eq!(env.outbox("D001").len(), 1, "unconfirmed: it stays in the outbox");
    // The broker took both of its messages: the queue's and the journal batch's.
    assert_eq!(journaled_once(&env), BTreeSet::from([id.clone()]));
    let r = env.json(&["relay", "--json"]);
    assert_eq!(
        (&r["sent"], &r["pending"], &r["already_journaled"]),
        (&1.into(), &0.into(), &1.into()),
        "{r}"
    );
    assert!(env.outbox("D001").is_empty());
    assert_eq!(journaled_once(&env), BTreeSet::from([id.clone()]));
    assert_eq!(env.shown_ids("D001"), [id]);
}

#[test]
fn a_bulk_whose_confirms_were_lost_journals_each_punch_once_after_a_rerun_and_a_relay() {
    let env = TestEnv::with_roster("UTC", 60, 3);
    let mut csv = String::from("employee_id,kind,at\n");
    for e in env
        .members("D001")
        .iter()
        .chain(&env.members("D002"))
        .chain(&env.members("D003"))
    {
        csv.push_str(&format!("{e},in,2026-11-02T08:30:00Z\n{e},out,2026-11-02T17:30:00Z\n"));
    }
    let file = env.file("punches.csv", &csv);
    let file = file.to_str().unwrap();
    let punches = csv.lines().count() - 1;
    // The first 30 publishes are confirmed; the broker takes the rest, but no confirm returns.
    let proxy = StallProxy::start(
        "127.0.0.1:5672",
        Stall::when_client_sends(BASIC_PUBLISH).nth(30).then_lose_replies(),
    );
    let b = via(&env, &proxy, &["checkin", "--file", file, "--json"], 0);
    assert_eq!(b["recorded"], punches, "{b}");
    let pending = b["notifications"]["pending"].as_u64().unwrap();
    assert!(pending > 0, "confirms were lost: {b}");
    let before = journaled_once(&env);
    assert!(!before.is_empty(), "the broker journaled what it took: {b}");
    // The same file again, straight to the broker: every row a repeat, and the outboxes drained.
    let again = env.json(&["checkin", "--file", file, "--json"]);
    assert_eq!(again["repeats"], punches, "{again}");
    assert_eq!(again["notifications"]["pending"], 0, "{again}");
    let already = again["notifications"]["already_journaled"].as_u64().unwrap_or(0);
    assert!(already > 0, "what the broker took was not journaled again: {again}");
    assert_eq!(env.json(&["relay", "--json"])["sent"], 0);
    let journal = journaled_once(&env);
    assert_eq!(journal.len(), punches, "every punch journaled");
    assert!(before.is_subset(&journal));
    assert_eq!(queued(&env, &["D001", "D002", "D003"]), journal, "every punch queued");
}

#[test]
fn a_relay_whose_confirms_were_lost_leaves_each_event_once_in_the_journal() {
    let env = TestEnv::with_roster("UTC", 20, 2);
    let mut lines = String::new();
    for e in env.members("D001").iter().chain(&env.members("D002")) {
        lines.push_str(&format!("{e},in,2026-11-02T08:30:00Z\n"));
    }
    env.punch_file(&lines);
    let punches = lines.lines().count();
    assert_eq!(env.outbox_events(), punches);
    // The relay's first publish is its journal read's fence; from its first event on, the
    // broker takes everything and confirms nothing.
    let proxy = StallProxy::start(
        "127.0.0.1:5672",
        Stall::when_client_sends(BASIC_PUBLISH).nth(2).then_lose_replies(),
    );
    let r = via(&env, &proxy, &["relay", "--json"], 4);
    assert_eq!((&r["sent"], &r["pending"]), (&0.into(), &punches.into()), "{r}");
    let r = env.json(&["relay", "--json"]);
    assert_eq!((&r["sent"], &r["pending"]), (&punches.into(), &0.into()), "{r}");
    assert!(r["already_journaled"].as_u64().unwrap_or(0) > 0, "{r}");
    let journal = journaled_once(&env);
    assert_eq!(journal.len(), punches, "every punch journaled");
    assert_eq!(queued(&env, &["D001", "D002"]), journal);
}

#[test]
fn a_following_relay_journals_once_what_a_checkin_whose_confirms_were_lost_left() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let (_proxy, id) = checkin_with_its_confirms_lost(&env);
    // A round takes an event younger than 5 s for a check-in's own publish still on its way
    // (published without a look at the journal): this one is older by then.
    std::thread::sleep(Duration::from_millis(5_500));
    let relay = common::relay::Relay::start(&env);
    common::relay::wait_for("the relay's first round", || env.outbox("D001").is_empty());
    drop(relay);
    assert_eq!(journaled_once(&env), BTreeSet::from([id.clone()]));
    assert_eq!(env.shown_ids("D001"), [id]);
}
