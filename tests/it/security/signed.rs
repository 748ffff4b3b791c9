//! Signed events: what nobody holding the keyring recorded is never
//! shown by `watch-dept`, replayed by `recover` or settled; it is parked with its reason.

use crate::common;

use std::path::Path;
use std::time::Duration;

use attendance::{Event, Signer};
use common::{new_secret, publish_to_queue, TestEnv, KEY_ID};
use mysql::prelude::Queryable;
use serde_json::Value;

const DAY: &str = "2026-11-02";

/// The first employee of a department (the roster lists departments in order).
fn first_of(env: &TestEnv, dept: &str) -> String {
    env.mysql()
        .query_first(format!("SELECT MIN(id) FROM employees WHERE department_id = '{dept}'"))
        .unwrap()
        .unwrap()
}

/// An event as a forger writes it (unsigned unless `sign` is given).
fn forged(id: &str, emp: &str, dept: &str, at: &str, late: u32, sign: Option<&Signer>) -> Event {
    let mut ev: Event = serde_json::from_value(serde_json::json!({
        "event_id": id, "employee_id": emp, "employee_name": "X", "department_id": dept,
        "kind": "in", "at": at, "work_date": DAY, "late": late > 0, "early": false,
        "late_minutes": late, "early_minutes": 0, "changed": true, "source": "kiosk-1",
        "recorded_at": at,
    }))
    .unwrap();
    if let Some(s) = sign {
        attendance::sign_event(&mut ev, s).unwrap();
    }
    ev
}

/// Run with the keyring (`signing.keyring_file`) and require exit 0; returns stdout.
fn ok_with_ring(env: &TestEnv, keyring: &Path, args: &[&str]) -> String {
    common::expect_ok(args, env.with_keyring(keyring, args))
}

/// `watch-dept DEPT --once --json` with the keyring: the events shown, one JSON each.
fn watch(env: &TestEnv, keyring: &Path, dept: &str) -> Vec<Value> {
    ok_with_ring(env, keyring, &["watch-dept", dept, "--once", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `recover --date DAY --json` with the keyring: its report.
fn recover(env: &TestEnv, keyring: &Path) -> Value {
    let out = ok_with_ring(env, keyring, &["recover", "--date", DAY, "--json", "--idle-ms", "500"]);
    serde_json::from_str(&out).unwrap()
}

fn reason_of<'a>(parked: &'a [(String, String)], id: &str) -> &'a str {
    &parked
        .iter()
        .find(|(i, _)| i == id)
        .unwrap_or_else(|| panic!("{id} not parked: {parked:?}"))
        .1
}

#[test]
fn a_forged_journal_batch_is_refused_by_recover_and_parked_and_never_settled() {
    // Regression: an unsigned batch in the journal became settled rows.
    let env = TestEnv::with_roster("UTC", 4, 2);
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let (e1, e2) = (first_of(&env, "D001"), first_of(&env, "D002"));
    let late = format!("{DAY}T21:22:00Z");
    env.ok(&["checkin", &e1, "--at", &late, "--kind", "in", "-q"]);
    let valid_other_key = Signer::new("someone-else", &new_secret()).unwrap();
    let batch = [
        forged("f-ontime", &e1, "D001", &format!("{DAY}T07:00:00Z"), 0, None),
        forged("f-d777", &e2, "D777", &format!("{DAY}T07:00:00Z"), 0, None),
        forged("f-e999", "E999", "D001", &format!("{DAY}T07:00:00Z"), 0, None),
        forged(
            "f-badkey",
            &e1,
            "D001",
            &format!("{DAY}T06:45:00Z"),
            0,
            Some(&valid_other_key),
        ),
    ];
    publish_to_queue(
        &format!("{}.journal", env.ns),
        &serde_json::to_string(&batch).unwrap(),
        "batch-1",
    );
    std::thread::sleep(Duration::from_millis(1100));
    let r = recover(&env, &ring);
    assert_eq!(r["refused"], 4, "{r}");
    assert_eq!(r["already_present"], 1, "the real punch: {r}");
    let board = env.board("D001", DAY);
    assert_eq!(board.get(&e1).map(String::as_str), Some("i76920"), "{board:?}");
    assert!(!board.contains_key("E999"), "{board:?}");
    assert!(env.redis_keys().iter().all(|k| !k.contains("D777")));
    let parked = env.parked();
    assert!(reason_of(&parked, "f-ontime").contains("unsigned"), "{parked:?}");
    assert!(reason_of(&parked, "f-d777").contains("unsigned"), "{parked:?}");
    assert!(reason_of(&parked, "f-badkey").contains("unknown key"), "{parked:?}");
    env.ok(&["settle", "--date", DAY, "-q"]);
    let rows = env.attendance_rows();
    assert!(
        rows.iter().all(|r| !r.contains("E999") && !r.contains("D777")),
        "{rows:?}"
    );
    let mine = rows.iter().find(|r| r.contains(&e1)).unwrap();
    assert!(mine.contains("21:22:00"), "the late arrival stands: {mine}");
}

#[test]
fn watch_dept_shows_signed_events_only_and_parks_forgeries_with_their_reason() {
    // Regression: a message published straight to the department queue
    // was shown, unknown employees and other departments' people included.
    let env = TestEnv::with_roster("UTC", 4, 2);
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let (e1, e2) = (first_of(&env, "D001"), first_of(&env, "D002"));
    let real = env.json(&["checkin", &e1, "--at", &format!("{DAY}T08:00:00Z"), "--json"]);
    let queue = format!("{}.dept.D001", env.ns);
    let valid = Signer::new(KEY_ID, &env.key_secret).unwrap();
    let at = format!("{DAY}T08:30:00Z");
    for ev in [
        forged("f-unsigned", &e1, "D001", &at, 0, None),
        // Signed with the valid key, but the roster contradicts them.
        forged("f-unknown", "E999", "D001", &at, 0, Some(&valid)),
        forged("f-other", &e2, "D002", &at, 0, Some(&valid)),
        forged("f-moved", &e2, "D001", &at, 0, Some(&valid)),
        forged("f-date", &e1, "D001", "2026-11-03T08:30:00Z", 0, Some(&valid)),
    ] {
        publish_to_queue(&queue, &serde_json::to_string(&ev).unwrap(), &ev.event_id);
    }
    let shown = watch(&env, &ring, "D001");
    let ids: Vec<&str> = shown.iter().map(|e| e["event_id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [real["event_id"].as_str().unwrap()],
        "only the real punch is shown"
    );
    assert_eq!(shown[0]["key_id"], KEY_ID);
    let parked = env.parked();
    assert_eq!(parked.len(), 5, "{parked:?}");
    assert!(reason_of(&parked, "f-unsigned").contains("unsigned event"));
    assert!(reason_of(&parked, "f-unknown").contains("unknown employee"));
    assert!(reason_of(&parked, "f-other").contains("on D001's queue"));
    assert!(reason_of(&parked, "f-moved").contains("is in D002"));
    assert!(reason_of(&parked, "f-date").contains("work date"));
    assert_eq!(watch(&env, &ring, "D001").len(), 0, "parked, not redelivered");
    // doctor counts them, by class.
    let o = env.with_keyring(&ring, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let signing = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "signing")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(signing["status"], "warn", "{signing}");
    let detail = signing["detail"].as_str().unwrap();
    assert!(
        detail.contains("5 event(s) refused") && detail.contains("roster 4, unsigned 1"),
        "{detail}"
    );
    // dlq replay with the keyring puts none of them back.
    let o = env.with_keyring(&ring, &["dlq", "replay", "--all"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not replayed: f-unsigned (unsigned event)"), "{err}");
    assert_eq!(env.parked().len(), 5, "still parked");
}

#[test]
fn a_moved_employees_earlier_check_in_is_shown_to_the_old_department() {
    // Regression: the roster check took the department of now, so a check-in made
    // in D001 before `org import` moved the employee to D002 was parked as a forgery.
    let env = TestEnv::with_roster("UTC", 6, 3);
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let (moved, never) = (first_of(&env, "D001"), first_of(&env, "D003"));
    let real = env.json(&["checkin", &moved, "--at", &format!("{DAY}T08:00:00Z"), "--json"]);
    let row = format!(
        "{}{moved},Moved Person,D002,Support 1,employee\n",
        "employee_id,name,department_id,department_name,role\n"
    );
    env.ok(&["org", "import", env.file("moved.csv", &row).to_str().unwrap(), "-q"]);
    assert_eq!(first_of(&env, "D002"), moved, "the roster says D002 now");
    // Signed with the valid key, for a department its employee was never in.
    let valid = Signer::new(KEY_ID, &env.key_secret).unwrap();
    let ev = forged("f-never", &never, "D001", &format!("{DAY}T08:30:00Z"), 0, Some(&valid));
    publish_to_queue(
        &format!("{}.dept.D001", env.ns),
        &serde_json::to_string(&ev).unwrap(),
        "f-never",
    );
    let shown: Vec<Value> = watch(&env, &ring, "D001");
    let ids: Vec<&str> = shown.iter().map(|e| e["event_id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [real["event_id"].as_str().unwrap()],
        "the check-in made in D001 is shown"
    );
    let parked = env.parked();
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert!(
        reason_of(&parked, "f-never").contains(&format!("is in D003, and was not in \"D001\" on {DAY}")),
        "{parked:?}"
    );
    // recover replays it too (the journal holds it), and the day settles as one row, under D002.
    let r = recover(&env, &ring);
    assert_eq!((r["refused"].as_u64(), r["read"].as_u64()), (Some(0), Some(1)), "{r}");
    env.ok(&["settle", "--date", DAY, "-q"]);
    let rows: Vec<String> = env
        .attendance_rows()
        .into_iter()
        .filter(|r| r.contains(&moved))
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(
        rows[0].contains("|D002|") && rows[0].contains(&format!("|{DAY} 08:00:00|")),
        "{rows:?}"
    );
}

#[test]
fn the_relay_does_not_publish_an_outbox_entry_it_cannot_verify() {
    let env = TestEnv::with_roster("UTC", 4, 1);
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    // A real punch left pending (the broker was down), and an entry written straight into the
    // outbox by someone with Redis access.
    env.punch("E000001", "in", &format!("{DAY}T08:00:00"), true);
    let fake = forged("f-outbox", "E000002", "D001", &format!("{DAY}T07:00:00Z"), 0, None);
    let mut con = env.redis();
    let _: () = redis::cmd("HSET")
        .arg(env.keys().outbox("D001"))
        .arg("f-outbox")
        .arg(attendance::record_of(&fake).unwrap())
        .query(&mut con)
        .unwrap();
    let o = env.with_keyring(&ring, &["relay", "--json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("f-outbox") && out.contains("refused: unsigned event"),
        "{out}"
    );
    let outbox = env.outbox("D001");
    assert_eq!(outbox.keys().collect::<Vec<_>>(), ["f-outbox"], "the real one went out");
    let shown = watch(&env, &ring, "D001");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["employee_id"], "E000001");
}

#[test]
fn a_revoked_key_is_refused_and_two_keys_are_accepted_by_id() {
    let env = TestEnv::with_roster("UTC", 4, 1);
    let (secret2, secret3) = (new_secret(), new_secret());
    let key = |id: &str, s: &str| env.file(&format!("{id}.key"), &format!("key_id = \"{id}\"\nsecret = \"{s}\"\n"));
    let (k2, k3) = (key("kiosk-2", &secret2), key("kiosk-3", &secret3));
    let punch = |key: &Path, emp: &str| {
        let o = env
            .cmd()
            .env("ATTENDANCE_SIGNING_KEY_FILE", key)
            .args(["checkin", emp, "--at", &format!("{DAY}T08:00:00Z"), "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["event_id"].as_str().unwrap().to_string()
    };
    let a = punch(&env.dir.join("signing.key"), "E000001");
    let b = punch(&k2, "E000002");
    let c = punch(&k3, "E000003");
    // Rotation: the old key and the new one are both in the keyring; kiosk-3 was revoked.
    let ring = env.keyring(
        &[
            (KEY_ID, &env.key_secret, false),
            ("kiosk-2", &secret2, true),
            ("kiosk-3", &secret3, false),
        ],
        &["kiosk-3"],
    );
    let shown: Vec<String> = watch(&env, &ring, "D001")
        .iter()
        .map(|e| e["event_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(shown, [a, b]);
    let parked = env.parked();
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert!(
        reason_of(&parked, &c).contains("revoked key id \"kiosk-3\""),
        "{parked:?}"
    );
}

#[test]
fn a_key_file_others_can_read_is_refused_in_one_line() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new("UTC");
    let key = env.dir.join("signing.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = env.fails(&["checkin", "E000001"], 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("signing.key_file") && !err.contains(&env.key_secret),
        "{err}"
    );
}

/// An event signed as builds before the 128-bit tag signed it, written here from the format's
/// description (docs/security.md), not through the library: the whole HMAC-SHA256, base64
/// without padding, over the first format's canonical text.
fn signed_in_the_first_format(mut ev: Event, secret: &str) -> Event {
    use base64::Engine;
    use hmac::Mac;
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let secs = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap();
    let recorded = ev.recorded_at.clone().unwrap();
    let text = format!(
        "attendance-event-v1\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
        q(&ev.event_id),
        q(&ev.employee_id),
        q(&ev.employee_name),
        q(&ev.department_id),
        ev.work_date,
        secs(&ev.at).timestamp(),
        ev.kind,
        ev.late_minutes,
        ev.early_minutes,
        q(&ev.source),
        secs(&recorded).timestamp_millis(),
        q(KEY_ID),
    );
    let key = base64::engine::general_purpose::STANDARD.decode(secret).unwrap();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(text.as_bytes());
    let sig = base64::engine::general_purpose::STANDARD_NO_PAD.encode(mac.finalize().into_bytes());
    assert_eq!(sig.len(), 43);
    ev.key_id = Some(KEY_ID.into());
    ev.sig = Some(sig);
    ev
}

#[test]
fn events_signed_in_the_first_format_pass_in_the_migration_period_and_tampered_ones_do_not() {
    // Events an older build signed (the 256-bit MAC) still sit in outboxes, queues and the
    // journal at the upgrade: with signing.accept_v1_signatures_until they are relayed, shown
    // and recovered; altered, or after the period, they are refused.
    let env = TestEnv::with_roster("UTC", 6, 1);
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let old = |id: &str, emp: &str, at: &str| {
        signed_in_the_first_format(
            forged(id, emp, "D001", &format!("{DAY}T{at}Z"), 0, None),
            &env.key_secret,
        )
    };
    let in_period = |args: &[&str]| {
        let o = env
            .cmd()
            .env("ATTENDANCE_SIGNING_KEYRING_FILE", &ring)
            .env("ATTENDANCE_SIGNING_ACCEPT_V1_SIGNATURES_UNTIL", DAY)
            .args(args)
            .output()
            .unwrap();
        common::expect_ok(args, o)
    };
    // In an outbox, as the older build's punch script left it (record version 2, long tag).
    let in_outbox = old("v1-outbox", "E000001", "07:50:00");
    let mut con = env.redis();
    let _: () = redis::cmd("HSET")
        .arg(env.keys().outbox("D001"))
        .arg("v1-outbox")
        .arg(attendance::record_of(&in_outbox).unwrap())
        .query(&mut con)
        .unwrap();
    // On the department's queue, published before the upgrade; and one altered since.
    let queued = old("v1-queued", "E000002", "07:55:00");
    let mut altered = old("v1-altered", "E000003", "09:40:00");
    altered.at = format!("{DAY}T07:40:00Z");
    let queue = format!("{}.dept.D001", env.ns);
    for ev in [&queued, &altered] {
        publish_to_queue(&queue, &serde_json::to_string(ev).unwrap(), &ev.event_id);
    }
    let relayed: Value = serde_json::from_str(&in_period(&["relay", "--json"])).unwrap();
    assert!(env.outbox("D001").is_empty(), "relayed: {relayed}");
    let shown = in_period(&["watch-dept", "D001", "--once", "--json"]);
    let ids = common::event_ids(&shown);
    assert_eq!(ids, ["v1-queued", "v1-outbox"], "{shown}");
    let parked = env.parked();
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert!(reason_of(&parked, "v1-altered").contains("bad signature"), "{parked:?}");
    // The journal has the relayed one: recover puts it on the board.
    let out = in_period(&["recover", "--date", DAY, "--json", "--idle-ms", "500"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((r["read"].as_u64(), r["refused"].as_u64()), (Some(1), Some(0)), "{r}");
    assert_eq!(
        env.board("D001", DAY).get("E000001").map(String::as_str),
        Some("i28200"),
        "07:50 replayed"
    );
    // After the period (no date set): the same format is refused, and says why.
    let late = old("v1-after", "E000004", "08:00:00");
    publish_to_queue(&queue, &serde_json::to_string(&late).unwrap(), "v1-after");
    assert!(watch(&env, &ring, "D001").is_empty());
    let parked = env.parked();
    assert!(
        reason_of(&parked, "v1-after").contains("signed in the first format"),
        "{parked:?}"
    );
}
