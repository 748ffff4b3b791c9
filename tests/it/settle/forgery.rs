//! Only signed punches settle: a board field or a punch log entry written to Redis by hand (a
//! kiosk's Redis account can `HSET` both) is refused by settle, counted in its summary, in
//! `settle_runs` and by `doctor`, and the employee's day is judged without it; the genuine
//! punches of the same night (an Ed25519 kiosk key from the registry, a night shift's check-out
//! filed under the night's start, a punch sent twice, a key revoked after it signed) settle
//! as before. Regression: settle took any board field as the day.

use crate::common;

use attendance::{record_of, sign_event, Event, Signer};
use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;
use serde_json::Value;

const TZ: &str = "Europe/Paris";
/// A Friday; D001 works the night from 22:00 to 06:00 on the 21st, D002 the day.
const DAY: &str = "2026-11-20";
/// A private key nobody registered (32 bytes of 7).
const STRANGER: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

/// The signer a key file made by `keys generate` holds.
fn signer_of(key: &std::path::Path) -> Signer {
    let text = std::fs::read_to_string(key).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    Signer::ed25519(v["key_id"].as_str().unwrap(), v["private_key"].as_str().unwrap()).unwrap()
}

/// A punch of `emp` in D002 at `at` (local, +01:00) recorded at `recorded_at`, signed by
/// `signer` when given: its whole punch log record, as a forger would write it.
fn record(id: &str, emp: &str, kind: &str, at: &str, recorded_at: &str, signer: Option<&Signer>) -> String {
    let mut ev: Event = serde_json::from_value(serde_json::json!({
        "event_id": id, "employee_id": emp, "employee_name": "X", "department_id": "D002",
        "kind": kind, "at": at, "work_date": DAY, "late": false, "early": false,
        "late_minutes": 0, "early_minutes": 0, "changed": true, "source": "kiosk-1",
        "recorded_at": recorded_at,
    }))
    .unwrap();
    if let Some(s) = signer {
        sign_event(&mut ev, s).unwrap();
    }
    record_of(&ev).unwrap()
}

#[test]
fn forged_board_fields_and_punch_log_entries_are_refused_and_the_signed_night_settles() {
    let env = TestEnv::with_roster(TZ, 8, 2);
    env.assign_night_shift("D001", "2026-11-01");
    let (night, day) = (env.members("D001"), env.members("D002"));
    let kiosk = env.registered_key("kiosk-1", true);
    let old = env.registered_key("kiosk-old", false);
    let punch = |key: &std::path::Path, emp: &str, kind: &str, at: &str| -> Value {
        let args = ["checkin", emp, "--kind", kind, "--at", at, "--json"];
        serde_json::from_str(&common::expect_ok(&args, env.as_kiosk(key, &args))).unwrap()
    };
    // The genuine night: a check-in, and a check-out after midnight filed under the night's
    // start, sent twice (a kiosk that did not hear the answer).
    punch(&kiosk, &night[0], "in", "2026-11-20T21:55:00+01:00");
    let out = punch(&kiosk, &night[0], "out", "2026-11-21T06:01:00+01:00");
    assert_eq!(out["work_date"], DAY, "{out}");
    let again = punch(&kiosk, &night[0], "out", "2026-11-21T06:01:00+01:00");
    assert_eq!(again["duplicate"], true, "one punch: {again}");
    // A genuine day worker, and one who checked in with a key revoked later on.
    punch(&kiosk, &day[0], "in", "2026-11-20T08:55:00+01:00");
    punch(&kiosk, &day[0], "out", "2026-11-20T18:05:00+01:00");
    punch(&old, &day[1], "in", "2026-11-20T08:50:00+01:00");
    let revoked_at = chrono::Utc::now() + chrono::Duration::seconds(1);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.ok(&[
        "keys",
        "revoke",
        "kiosk-old",
        "--at",
        &revoked_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "--reason",
        "leaked",
        "-q",
    ]);

    // The forgeries, with a raw Redis client: a colleague's whole day with no record behind
    // it; a check-out signed by the revoked key after its revocation; an unsigned record and
    // one signed by a key nobody registered, each with its board token.
    let date = common::date(DAY);
    let (board, log) = (
        env.keys().board("D002", date),
        env.keys().punch_log("D002", date, "live"),
    );
    let mut con = env.redis();
    let _: () = con.hset(&board, &day[2], "i32400,o64800").unwrap();
    let after = (revoked_at + chrono::Duration::minutes(1)).to_rfc3339();
    let forged = [
        ("f-revoked", &day[1], "o64800", signer_of(&old).into()),
        ("f-unsigned", &day[3], "i31500", None),
        (
            "f-stranger",
            &day[3],
            "o65000",
            Some(Signer::ed25519("kiosk-1", STRANGER).unwrap()),
        ),
    ];
    for (id, emp, tok, signer) in &forged {
        let (kind, secs) = match tok.strip_prefix('i') {
            Some(secs) => ("in", secs),
            None => ("out", &tok[1..]),
        };
        let secs: i64 = secs.parse().unwrap();
        let at = format!("{DAY}T{:02}:{:02}:00+01:00", secs / 3600, secs % 3600 / 60);
        let _: () = con
            .hset(&log, *id, record(id, emp, kind, &at, &after, signer.as_ref()))
            .unwrap();
        let cur: Option<String> = con.hget(&board, *emp).unwrap();
        let value = match cur.filter(|c| !c.is_empty()) {
            Some(c) => format!("{c},{tok}"),
            None => tok.to_string(),
        };
        let _: () = con.hset(&board, *emp, value).unwrap();
    }

    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(
        (
            s["refused_punches"]["unbacked"].as_u64(),
            s["refused_punches"]["forged"].as_u64()
        ),
        (Some(5), Some(3)),
        "two tokens of the raw field, one of each forged record; three forged records: {s}"
    );
    assert!(
        s["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "signature checks: verifying"),
        "the checks' own time is shown: {s}"
    );
    // The genuine days as they were signed; the forged ones judged without the forgeries.
    assert_eq!(env.day_row(DAY, &night[0]), "present|0|0");
    assert_eq!(env.day_row(DAY, &day[0]), "present|0|0");
    assert!(
        env.day_row(DAY, &day[1]).starts_with("missing_checkout"),
        "the check-in signed before the revocation stands, the check-out after it does not: {}",
        env.day_row(DAY, &day[1])
    );
    assert!(
        env.day_row(DAY, &day[2]).starts_with("absent"),
        "{}",
        env.day_row(DAY, &day[2])
    );
    assert!(
        env.day_row(DAY, &day[3]).starts_with("absent"),
        "{}",
        env.day_row(DAY, &day[3])
    );
    // MySQL's punch log holds the five genuine punches and no forged entry.
    let mut db = env.mysql();
    let logged: Vec<String> = db
        .exec(
            "SELECT event_id FROM punch_log WHERE work_date = ? ORDER BY event_id",
            (DAY,),
        )
        .unwrap();
    assert_eq!(logged.len(), 5, "{logged:?}");
    assert!(!logged.iter().any(|id| id.starts_with("f-")), "{logged:?}");
    let refused: Option<u64> = db
        .exec_first("SELECT refused_punches FROM settle_runs WHERE work_date = ?", (DAY,))
        .unwrap();
    assert_eq!(refused, Some(8));
    let doctor = String::from_utf8(env.run(&["doctor"]).stdout).unwrap();
    let line = doctor
        .lines()
        .find(|l| l.contains("refused punches"))
        .unwrap_or_else(|| panic!("doctor names the refused punches: {doctor}"));
    assert!(line.contains(&format!("({DAY}): 8")), "{line}");
}

#[test]
fn a_day_of_signed_punches_settles_whole_and_refuses_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let kiosk = env.registered_key("kiosk-1", false);
    let team = env.members("D001");
    for (emp, kind, at) in [
        (&team[0], "in", "2026-11-20T08:55:00+01:00"),
        (&team[0], "out", "2026-11-20T18:05:00+01:00"),
        (&team[1], "in", "2026-11-20T09:20:00+01:00"),
    ] {
        let args = ["checkin", emp, "--kind", kind, "--at", at, "-q"];
        common::expect_ok(&args, env.as_kiosk(&kiosk, &args));
    }
    // This host's own key (the suite's shared secret) beside the registry's.
    env.ok(&[
        "checkin",
        &team[2],
        "--kind",
        "in",
        "--at",
        "2026-11-20T08:40:00+01:00",
        "-q",
    ]);
    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(
        s["refused_punches"],
        serde_json::json!({"unbacked": 0, "forged": 0}),
        "{s}"
    );
    assert_eq!(env.day_row(DAY, &team[0]), "present|0|0");
    assert_eq!(env.day_row(DAY, &team[1]), "missing_checkout|20|0");
    assert!(env.day_row(DAY, &team[2]).starts_with("missing_checkout"));
    assert_eq!(s["punches_logged"], 4, "{s}");
}
