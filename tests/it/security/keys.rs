//! Kiosk keys (docs/security.md, "Keys"): kiosks sign with Ed25519 private keys, the registry of
//! public keys lives in MySQL (owner-only, audited) and is copied to Redis; consumers verify with
//! the copy and hold no secret; a revocation has a time, before which a key's events stay valid.

use crate::common;

use attendance::{Event, Signer};
use common::day::Day;
use common::{publish_to_queue, TestEnv};
use mysql::prelude::Queryable;
use redis::Commands;

const TZ: &str = "Europe/Paris";
/// A Monday.
const DAY: &str = "2026-11-30";
const KIOSK: &str = "kiosk-1";

/// A laid-out day of 6 in D001, and a kiosk whose key is in the registry. Returns the
/// environment, the team and the kiosk's key file.
fn kiosk_day() -> (TestEnv, Vec<String>, std::path::PathBuf) {
    let env = TestEnv::with_day(TZ, Day::new(6, 1).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let key = env.registered_key(KIOSK, false);
    let team = env.members("D001");
    (env, team, key)
}

/// `checkin EMP --kind in --at DAY HH:MM` from the kiosk: its JSON, after checking it was sent.
fn punch(env: &TestEnv, key: &std::path::Path, emp: &str, hhmm: &str) -> serde_json::Value {
    let at = format!("{DAY}T{hhmm}:00+01:00");
    let o = env.as_kiosk(key, &["checkin", emp, "--kind", "in", "--at", &at, "--json"]);
    let c: serde_json::Value = serde_json::from_str(&common::expect_ok(&["checkin"], o)).unwrap();
    assert_eq!(c["notification"], "sent", "{c}");
    c
}

/// The private key in a key file `keys generate` wrote.
fn private_key(key: &std::path::Path) -> String {
    let text = std::fs::read_to_string(key).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    v["private_key"].as_str().unwrap().to_string()
}

/// A private key nobody registered (32 bytes of 7).
const STRANGER: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

/// A check-in event of `emp` at DAY `hhmm`, recorded at `recorded_at`, signed by `signer`.
fn event(id: &str, emp: &str, hhmm: &str, recorded_at: &str, signer: &Signer) -> Event {
    let mut ev: Event = serde_json::from_value(serde_json::json!({
        "event_id": id, "employee_id": emp, "employee_name": "X", "department_id": "D001",
        "kind": "in", "at": format!("{DAY}T{hhmm}:00+01:00"), "work_date": DAY, "late": false,
        "early": false, "late_minutes": 0, "early_minutes": 0, "changed": true, "source": "kiosk-1",
        "recorded_at": recorded_at,
    }))
    .unwrap();
    attendance::sign_event(&mut ev, signer).unwrap();
    ev
}

#[test]
fn a_supervisor_verifies_with_public_keys_alone_and_what_it_reads_signs_nothing() {
    let (env, team, key) = kiosk_day();
    let genuine = punch(&env, &key, &team[0], "08:40");
    let genuine = genuine["event_id"].as_str().unwrap();
    let private = private_key(&key);
    // What the supervisor reads: the registry copy holds the public key, and no store holds
    // the private one.
    let copied: String = env.redis().hget(format!("{}:{{keys}}", env.ns), KIOSK).unwrap();
    let public = copied.split(' ').nth(1).unwrap().to_string();
    assert!(copied.starts_with("ed25519 ") && public != private, "{copied}");
    for (k, v) in env.redis_snapshot() {
        assert!(
            !v.contains(&private) && !k.contains(&private),
            "{k} holds the private key"
        );
    }
    let rows: Vec<String> = env
        .mysql()
        .query("SELECT CONCAT_WS('|', key_id, public_key) FROM signing_keys")
        .unwrap();
    assert_eq!(rows, [format!("{KIOSK}|{public}")]);
    // A key file made of what the supervisor reads records nothing at a kiosk...
    let made = env.file(
        "made.key",
        &format!("key_id = \"{KIOSK}\"\nprivate_key = \"{public}\"\n"),
    );
    let redis_before = env.redis_snapshot();
    let o = env.as_kiosk(&made, &["checkin", &team[1], "--kind", "in", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("does not match the registry"), "{err}");
    assert_eq!(env.redis_snapshot(), redis_before);
    // ... and what it signs with it, or with a key of its own, is refused by a consumer that
    // holds no secret at all.
    let queue = format!("{}.dept.D001", env.ns);
    let recorded = format!("{DAY}T07:45:00.000Z");
    let with_public = Signer::ed25519(KIOSK, &public).unwrap();
    let own = Signer::ed25519("kiosk-9", STRANGER).unwrap();
    for ev in [
        event("f-public", &team[1], "08:45", &recorded, &with_public),
        event("f-unknown", &team[2], "08:45", &recorded, &own),
    ] {
        publish_to_queue(&queue, &serde_json::to_string(&ev).unwrap(), &ev.event_id);
    }
    let o = env.without_secrets(&["watch-dept", "D001", "--once", "--json"]);
    let out = common::expect_ok(&["watch-dept"], o);
    assert_eq!(common::event_ids(&out), [genuine], "{out}");
    let parked = env.parked();
    let ids: Vec<&str> = parked.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["f-public", "f-unknown"], "{parked:?}");
    assert!(parked[0].1.contains("bad signature"), "{parked:?}");
    assert!(parked[1].1.contains("unknown key"), "{parked:?}");
}

#[test]
fn a_revoked_key_records_nothing_at_the_kiosk_and_the_registry_says_who_revoked_it_when() {
    let (env, team, key) = kiosk_day();
    punch(&env, &key, &team[0], "08:40");
    let at = chrono::Utc::now().to_rfc3339();
    // Bad input changes nothing (exit 2); an unknown key is refused (exit 1).
    env.fails(&["keys", "revoke", KIOSK, "--at", "yesterday", "--reason", "x"], 2);
    env.fails(&["keys", "revoke", "kiosk-9", "--at", &at, "--reason", "x"], 1);
    env.fails(
        &[
            "keys",
            "add",
            KIOSK,
            "--public-key",
            env.dir.join("kiosk-1.pub").to_str().unwrap(),
        ],
        1,
    );
    assert_eq!(env.count("signing_key_audit"), 1, "the add alone");
    env.ok(&["keys", "revoke", KIOSK, "--at", &at, "--reason", "laptop stolen", "-q"]);
    let (board, outbox) = (env.board("D001", DAY), env.outbox("D001"));
    let o = env.as_kiosk(&key, &["checkin", &team[1], "--kind", "in", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("revoked"), "{err}");
    assert_eq!((env.board("D001", DAY), env.outbox("D001")), (board, outbox));
    assert_eq!(env.count("held_punches"), 0);
    let list = env.json(&["keys", "list", "--json"]);
    let k = &list[0];
    assert_eq!(
        (k["key_id"].as_str(), k["replay"].as_bool()),
        (Some(KIOSK), Some(false)),
        "{list}"
    );
    assert_eq!(k["revoke_reason"], "laptop stolen", "{list}");
    assert!(k["revoked_by"].as_str().unwrap().starts_with("root@"), "{list}");
    let audit: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT action, db_user, os_user FROM signing_key_audit ORDER BY id")
        .unwrap();
    let login = TestEnv::os_login();
    assert_eq!(
        audit.iter().map(|a| (a.0.as_str(), a.2.as_str())).collect::<Vec<_>>(),
        [("add", login.as_str()), ("revoke", login.as_str())]
    );
    assert!(audit.iter().all(|a| a.1.starts_with("root@")), "{audit:?}");
}

#[test]
fn a_revocation_keeps_the_punches_signed_before_it_when_settle_restores_a_lost_day() {
    let (env, team, key) = kiosk_day();
    let (lost, kept, forged) = (&team[0], &team[1], &team[2]);
    let board_key = env.keys().board("D001", common::date(DAY));
    let mut con = env.redis();
    let laid_out: Option<String> = con.hget(&board_key, lost).unwrap();
    let lost_id = punch(&env, &key, lost, "08:50")["event_id"]
        .as_str()
        .unwrap()
        .to_string();
    punch(&env, &key, kept, "08:40");
    // The key leaks now and is revoked from now on; the thief signs a punch recorded after it
    // and slips it into the journal.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let revoked_at = chrono::Utc::now();
    env.ok(&[
        "keys",
        "revoke",
        KIOSK,
        "--at",
        &revoked_at.to_rfc3339(),
        "--reason",
        "leaked",
        "-q",
    ]);
    let thief = Signer::ed25519(KIOSK, &private_key(&key)).unwrap();
    let after = (revoked_at + chrono::Duration::seconds(2)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let batch = [event("f-after", forged, "08:55", &after, &thief)];
    publish_to_queue(
        &format!("{}.journal", env.ns),
        &serde_json::to_string(&batch).unwrap(),
        "batch-1",
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // Redis lost the genuine punch (a fail-over to a lagging replica) and its registry copy.
    let _: () = con.hset(&board_key, lost, laid_out.unwrap_or_default()).unwrap();
    let plog = env.keys().punch_log("D001", common::date(DAY), "live");
    let removed: u32 = con.hdel(&plog, &lost_id).unwrap();
    assert_eq!(removed, 1);
    let _: () = con.del(format!("{}:{{keys}}", env.ns)).unwrap();
    env.failed_over(DAY);

    let o = env.without_secrets(&["settle", "--date", DAY, "--json"]);
    let s: serde_json::Value = serde_json::from_str(&common::expect_ok(&["settle"], o)).unwrap();
    assert_eq!(
        (s["reconcile"]["restored"].as_u64(), s["reconcile"]["refused"].as_u64()),
        (Some(1), Some(1)),
        "the punch signed before the revocation restored, the one after refused: {s}"
    );
    // Checked in and never out: judged on the punch, not absent.
    assert_eq!(env.day_row(DAY, lost), "missing_checkout|0|0");
    assert_eq!(env.day_row(DAY, kept), "missing_checkout|0|0");
    assert_eq!(env.day_row(DAY, forged), "absent|0|0", "the forgery settles nothing");
}
