//! Signing meets night shifts: a night shift's check-out after midnight is filed under the date
//! the shift started, and every consumer of signed events (the supervisor's queue, `recover`,
//! settle's check against the journal) takes the work date from the employee's shift as the
//! punch did. Regression: consumers compared the event's work date with the punch's local date,
//! so a signed 06:01 check-out of a 22:00-06:00 shift was parked as a forgery, and once the
//! boards were lost the night settled `missing_checkout`. The same holds for a kiosk that signs
//! with an Ed25519 key from the registry, checked by consumers that hold no secret.

use crate::common;

use attendance::{Event, Signer};
use common::{new_secret, publish_to_queue, TestEnv, KEY_ID};
use mysql::prelude::Queryable;
use redis::Commands;
use serde_json::Value;

const TZ: &str = "Europe/Paris";
/// The night of the 20th (a Friday), 22:00 to 06:00 on the 21st.
const NIGHT: &str = "2026-11-20";
const IN_AT: &str = "2026-11-20T21:55:00+01:00";
const OUT_AT: &str = "2026-11-21T06:01:00+01:00";

/// Four employees of D001, all on the night shift from the 1st; a keyring with this
/// environment's key. Returns the environment, the team and the keyring.
fn night_team() -> (TestEnv, Vec<String>, std::path::PathBuf) {
    let env = TestEnv::with_roster(TZ, 4, 1);
    env.assign_night_shift("D001", "2026-11-01");
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let team = env.members("D001");
    (env, team, ring)
}

/// A punch of `emp` at `at`, acknowledged and sent (so on the queue and in the journal);
/// returns its event id, after checking it was filed under the night.
fn punch_sent(env: &TestEnv, emp: &str, kind: &str, at: &str) -> String {
    let c = env.json(&["checkin", emp, "--kind", kind, "--at", at, "--json"]);
    assert_eq!(
        (c["notification"].as_str(), c["work_date"].as_str()),
        (Some("sent"), Some(NIGHT)),
        "{c}"
    );
    c["event_id"].as_str().unwrap().to_string()
}

/// A night check-out of `emp` at OUT_AT filed under `work_date`, signed by `signer`.
fn night_out(id: &str, emp: &str, work_date: &str, signer: &Signer) -> Event {
    let mut ev: Event = serde_json::from_value(serde_json::json!({
        "event_id": id, "employee_id": emp, "employee_name": "X", "department_id": "D001",
        "kind": "out", "at": OUT_AT, "work_date": work_date, "late": false, "early": false,
        "late_minutes": 0, "early_minutes": 0, "changed": true, "source": "kiosk-1",
        "recorded_at": OUT_AT,
    }))
    .unwrap();
    attendance::sign_event(&mut ev, signer).unwrap();
    ev
}

fn with_ring(env: &TestEnv, ring: &std::path::Path, args: &[&str]) -> String {
    common::expect_ok(args, env.with_keyring(ring, args))
}

#[test]
fn a_signed_night_check_out_reaches_the_supervisor_and_forgeries_still_do_not() {
    let (env, team, ring) = night_team();
    let i = punch_sent(&env, &team[0], "in", IN_AT);
    let o = punch_sent(&env, &team[0], "out", OUT_AT);
    let queue = format!("{}.dept.D001", env.ns);
    // Someone else's secret under the kiosk's key id; and the kiosk's own key on a check-out
    // dated the 21st, which the shift files under the 20th.
    let forger = Signer::new(KEY_ID, &new_secret()).unwrap();
    let kiosk = Signer::new(KEY_ID, &env.key_secret).unwrap();
    for ev in [
        night_out("f-forged", &team[1], NIGHT, &forger),
        night_out("f-local-date", &team[1], "2026-11-21", &kiosk),
    ] {
        publish_to_queue(&queue, &serde_json::to_string(&ev).unwrap(), &ev.event_id);
    }
    let shown: Vec<Value> = with_ring(&env, &ring, &["watch-dept", "D001", "--once", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = shown.iter().map(|e| e["event_id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [i.as_str(), o.as_str()],
        "both punches of the night are shown: {shown:?}"
    );
    assert_eq!(shown[1]["work_date"], NIGHT);
    let parked = env.parked();
    let ids: Vec<&str> = parked.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["f-forged", "f-local-date"], "{parked:?}");
    assert!(parked[0].1.contains("bad signature"), "{parked:?}");
    assert!(
        parked[1].1.contains("work date 2026-11-21 does not match its time"),
        "{parked:?}"
    );
}

#[test]
fn recover_restores_a_signed_night_check_out_after_redis_lost_everything() {
    let (env, team, ring) = night_team();
    punch_sent(&env, &team[0], "in", IN_AT);
    punch_sent(&env, &team[0], "out", OUT_AT);
    // A forged check-out in the journal for another night worker.
    let forger = Signer::new(KEY_ID, &new_secret()).unwrap();
    let batch = [night_out("f-forged", &team[1], NIGHT, &forger)];
    publish_to_queue(
        &format!("{}.journal", env.ns),
        &serde_json::to_string(&batch).unwrap(),
        "batch-1",
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // Redis lost every key of the namespace: boards, punch logs, roster cache, shift copy.
    let keys = env.redis_keys();
    let _: () = redis::cmd("DEL").arg(&keys).query(&mut env.redis()).unwrap();

    let out = with_ring(&env, &ring, &["recover", "--date", NIGHT, "--json", "--idle-ms", "500"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (r["restored"].as_u64(), r["refused"].as_u64()),
        (Some(2), Some(1)),
        "both punches of the night back, the forgery refused: {r}"
    );
    let board = env.board("D001", NIGHT);
    assert!(
        board[&team[0]].contains(','),
        "in and out on the night's board: {board:?}"
    );
    let parked = env.parked();
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert!(parked[0].1.contains("bad signature"), "{parked:?}");

    env.ok(&["settle", "--date", NIGHT, "-q"]);
    assert_eq!(env.day_row(NIGHT, &team[0]), "present|0|0");
    assert_eq!(
        env.day_row(NIGHT, &team[1]),
        "absent|0|0",
        "the forgery settles nothing"
    );
}

#[test]
fn settle_restores_a_signed_night_check_out_a_fail_over_lost() {
    let (env, team, _ring) = night_team();
    let board_key = env.keys().board("D001", common::date(NIGHT));
    punch_sent(&env, &team[0], "in", IN_AT);
    let mut con = env.redis();
    let checked_in: String = con.hget(&board_key, &team[0]).unwrap();
    let out_id = punch_sent(&env, &team[0], "out", OUT_AT);
    // The promoted replica had the check-in and never the check-out: its board field as after
    // the check-in, its punch log without the check-out.
    let _: () = con.hset(&board_key, &team[0], &checked_in).unwrap();
    let plog = env.keys().punch_log("D001", common::date(NIGHT), "live");
    let removed: u32 = con.hdel(&plog, &out_id).unwrap();
    assert_eq!(removed, 1);

    let s = env.json(&["settle", "--date", NIGHT, "--json"]);
    assert_eq!(
        (s["reconcile"]["restored"].as_u64(), s["reconcile"]["refused"].as_u64()),
        (Some(1), Some(0)),
        "{s}"
    );
    assert_eq!(env.day_row(NIGHT, &team[0]), "present|0|0");
    let out: Option<String> = env
        .mysql()
        .exec_first(
            "SELECT CAST(last_out AS CHAR) FROM attendance WHERE work_date = ? AND employee_id = ?",
            (NIGHT, &team[0]),
        )
        .unwrap();
    assert_eq!(out.as_deref(), Some("2026-11-21 05:01:00"));
}

/// A private key nobody registered (32 bytes of 7).
const STRANGER: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

#[test]
fn an_ed25519_signed_night_check_out_verifies_everywhere_with_no_secret() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    env.assign_night_shift("D001", "2026-11-01");
    let team = env.members("D001");
    let key = env.registered_key("kiosk-night", false);
    let sent = |emp: &str, kind: &str, at: &str| {
        let args = ["checkin", emp, "--kind", kind, "--at", at, "--json"];
        let c: Value = serde_json::from_str(&common::expect_ok(&args, env.as_kiosk(&key, &args))).unwrap();
        assert_eq!(
            (c["notification"].as_str(), c["work_date"].as_str()),
            (Some("sent"), Some(NIGHT)),
            "{c}"
        );
        c["event_id"].as_str().unwrap().to_string()
    };
    let i = sent(&team[0], "in", IN_AT);
    let o = sent(&team[0], "out", OUT_AT);
    // Another private key under the kiosk's id, on the queue and in the journal.
    let forger = Signer::ed25519("kiosk-night", STRANGER).unwrap();
    let forged = night_out("f-forged", &team[1], NIGHT, &forger);
    let body = serde_json::to_string(&forged).unwrap();
    publish_to_queue(&format!("{}.dept.D001", env.ns), &body, "f-forged");
    publish_to_queue(&format!("{}.journal", env.ns), &format!("[{body}]"), "batch-1");
    let shown = common::expect_ok(
        &["watch-dept"],
        env.without_secrets(&["watch-dept", "D001", "--once", "--json"]),
    );
    assert_eq!(common::event_ids(&shown), [i, o], "both punches of the night: {shown}");
    let parked = env.parked();
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert!(parked[0].1.contains("bad signature"), "{parked:?}");

    std::thread::sleep(std::time::Duration::from_millis(1100));
    // Redis lost every key of the namespace, the registry copy with them.
    let keys = env.redis_keys();
    let _: () = redis::cmd("DEL").arg(&keys).query(&mut env.redis()).unwrap();
    let args = ["recover", "--date", NIGHT, "--json", "--idle-ms", "500"];
    let r: Value = serde_json::from_str(&common::expect_ok(&args, env.without_secrets(&args))).unwrap();
    assert_eq!(
        (r["restored"].as_u64(), r["refused"].as_u64()),
        (Some(2), Some(1)),
        "both punches of the night back, the forgery refused: {r}"
    );
    common::expect_ok(&["settle"], env.without_secrets(&["settle", "--date", NIGHT, "-q"]));
    assert_eq!(env.day_row(NIGHT, &team[0]), "present|0|0");
    assert_eq!(
        env.day_row(NIGHT, &team[1]),
        "absent|0|0",
        "the forgery settles nothing"
    );
}
