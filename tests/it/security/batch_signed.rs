//! Batch signatures (docs/security.md, "Batch signatures"): a bulk check-in with a registry key
//! signs each script call's records once, over their Merkle tree; every consumer checks each
//! record on its own through its audit path, so a night shift, a punch sent twice, a record
//! altered in Redis and a revocation between two batches are judged record by record, as
//! events signed one by one are.

use crate::common;

use common::TestEnv;
use redis::Commands;
use serde_json::Value;

const TZ: &str = "Europe/Paris";
/// A Friday; D001 works the night from 22:00 to 06:00, D002 the day.
const DAY: &str = "2026-11-20";

/// `checkin --file` of `rows` (employee, kind, local time) as the kiosk `key`: its report.
fn bulk(env: &TestEnv, key: &std::path::Path, name: &str, rows: &[(&str, &str, &str)]) -> Value {
    let mut csv = String::from("employee_id,kind,at,source\n");
    for (emp, kind, at) in rows {
        csv += &format!("{emp},{kind},{at},kiosk-1\n");
    }
    let f = env.file(name, &csv);
    let args = ["checkin", "--file", f.to_str().unwrap(), "--json"];
    serde_json::from_str(&common::expect_ok(&args, env.as_kiosk(key, &args))).unwrap()
}

/// What a supervisor with no secret is shown of `dept` (one JSON line an event).
fn shown(env: &TestEnv, dept: &str) -> Vec<Value> {
    let out = common::expect_ok(
        &["watch-dept"],
        env.without_secrets(&["watch-dept", dept, "--once", "--json"]),
    );
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The records of `dept`'s bulk punch log of DAY: event id -> record.
fn bulk_log(env: &TestEnv, dept: &str) -> std::collections::HashMap<String, String> {
    let log = env.keys().punch_log(dept, common::date(DAY), "bulk");
    env.redis().hgetall(log).unwrap()
}

/// The signature field of a version 2 record (the one before the script's suffix).
fn tag(record: &str) -> &str {
    let f: Vec<&str> = record.split('\t').collect();
    f[f.len() - 2]
}

#[test]
fn a_bulk_signed_as_batches_is_shown_and_settles_whole_night_shifts_and_repeats_included() {
    let env = TestEnv::with_roster(TZ, 8, 2);
    env.assign_night_shift("D001", "2026-11-01");
    let (night, day) = (env.members("D001"), env.members("D002"));
    let kiosk = env.registered_key("kiosk-1", false);
    let rows = [
        (night[0].as_str(), "in", "2026-11-20T21:55:00+01:00"),
        (night[0].as_str(), "out", "2026-11-21T06:01:00+01:00"),
        (night[1].as_str(), "in", "2026-11-20T22:10:00+01:00"),
        (day[0].as_str(), "in", "2026-11-20T08:55:00+01:00"),
        (day[0].as_str(), "out", "2026-11-20T18:05:00+01:00"),
        (day[1].as_str(), "in", "2026-11-20T08:40:00+01:00"),
        // Sent twice in the file: one punch.
        (day[1].as_str(), "out", "2026-11-20T18:30:00+01:00"),
        (day[1].as_str(), "out", "2026-11-20T18:30:00+01:00"),
    ];
    let r = bulk(&env, &kiosk, "night.csv", &rows);
    assert_eq!(
        (r["recorded"].as_u64(), r["repeats"].as_u64()),
        (Some(7), Some(1)),
        "{r}"
    );
    // The whole file sent again (a kiosk that did not hear the answer): nothing new.
    let again = bulk(&env, &kiosk, "night-again.csv", &rows);
    assert_eq!(
        (again["recorded"].as_u64(), again["repeats"].as_u64()),
        (Some(0), Some(8)),
        "{again}"
    );
    assert_eq!(again["notifications"]["sent"], 0, "{again}");

    // Each department's records share one batch signature, each with its own path.
    for dept in ["D001", "D002"] {
        let log = bulk_log(&env, dept);
        let tags: Vec<&str> = log.values().map(|r| tag(r)).collect();
        assert!(tags.iter().all(|t| t.starts_with("b1.")), "{log:?}");
        let sigs: std::collections::HashSet<&str> = tags.iter().map(|t| &t[..3 + 86]).collect();
        assert_eq!(sigs.len(), 1, "one signature for {dept}'s batch: {log:?}");
    }
    // A supervisor with no secret is shown every event, the night's check-out under its start.
    let (d1, d2) = (shown(&env, "D001"), shown(&env, "D002"));
    assert_eq!((d1.len(), d2.len()), (3, 4), "{d1:?} {d2:?}");
    for ev in d1.iter().chain(&d2) {
        assert!(ev["sig"].as_str().unwrap().starts_with("b1."), "{ev}");
        assert_eq!(ev["work_date"], DAY, "{ev}");
    }
    assert!(env.parked().is_empty(), "{:?}", env.parked());

    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(
        s["refused_punches"],
        serde_json::json!({"unbacked": 0, "forged": 0}),
        "{s}"
    );
    assert_eq!(s["punches_logged"], 7, "{s}");
    assert_eq!(env.day_row(DAY, &night[0]), "present|0|0");
    assert!(env.day_row(DAY, &night[1]).starts_with("missing_checkout"));
    assert_eq!(env.day_row(DAY, &day[0]), "present|0|0");
    assert_eq!(env.day_row(DAY, &day[1]), "present|0|0");
}

#[test]
fn a_record_altered_in_redis_after_a_bulk_is_refused_alone_and_the_rest_of_its_batch_settles() {
    let env = TestEnv::with_roster(TZ, 8, 2);
    let team = env.members("D002");
    let kiosk = env.registered_key("kiosk-1", false);
    let mut rows = Vec::new();
    for emp in &team {
        rows.push((emp.as_str(), "in", "2026-11-20T08:50:00+01:00"));
        rows.push((emp.as_str(), "out", "2026-11-20T18:10:00+01:00"));
    }
    bulk(&env, &kiosk, "day.csv", &rows);
    // One field of one record: the check-out of team[1] moved an hour later, with a raw client.
    let log = bulk_log(&env, "D002");
    assert!(log.values().all(|r| tag(r).starts_with("b1.")), "{log:?}");
    let (id, record) = log
        .iter()
        .find(|(_, r)| r.starts_with(&format!("2\t{}\t", team[1])) && r.ends_with("o1"))
        .unwrap();
    let mut fields: Vec<String> = record.split('\t').map(str::to_string).collect();
    fields[4] = (fields[4].parse::<i64>().unwrap() + 3600).to_string();
    let key = env.keys().punch_log("D002", common::date(DAY), "bulk");
    let _: () = env.redis().hset(&key, id, fields.join("\t")).unwrap();

    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(
        (
            s["refused_punches"]["forged"].as_u64(),
            s["refused_punches"]["unbacked"].as_u64()
        ),
        (Some(1), Some(1)),
        "the altered record, and the board's check-out it no longer backs: {s}"
    );
    assert_eq!(s["punches_logged"], rows.len() as u64 - 1, "{s}");
    for (i, emp) in team.iter().enumerate() {
        let row = env.day_row(DAY, emp);
        if i == 1 {
            assert!(row.starts_with("missing_checkout"), "judged without it: {row}");
        } else {
            assert_eq!(row, "present|0|0", "{emp}");
        }
    }
}

#[test]
fn a_key_revoked_between_two_bulk_batches_keeps_the_earlier_and_refuses_the_later() {
    let env = TestEnv::with_roster(TZ, 8, 2);
    let team = env.members("D002");
    let kiosk = env.registered_key("kiosk-1", false);
    bulk(
        &env,
        &kiosk,
        "before.csv",
        &[
            (&team[0], "in", "2026-11-20T08:50:00+01:00"),
            (&team[1], "in", "2026-11-20T08:55:00+01:00"),
        ],
    );
    let revoked_at = chrono::Utc::now() + chrono::Duration::seconds(1);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // Signed after the instant the key is revoked from (the leak, noticed later).
    bulk(
        &env,
        &kiosk,
        "after.csv",
        &[
            (&team[0], "out", "2026-11-20T18:10:00+01:00"),
            (&team[2], "in", "2026-11-20T08:45:00+01:00"),
            (&team[3], "in", "2026-11-20T08:45:00+01:00"),
        ],
    );
    let at = revoked_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    env.ok(&["keys", "revoke", "kiosk-1", "--at", &at, "--reason", "leaked", "-q"]);

    let shown: Vec<String> = shown(&env, "D002")
        .iter()
        .map(|e| e["employee_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(shown, [team[0].clone(), team[1].clone()], "the earlier batch alone");
    let parked = env.parked();
    assert_eq!(parked.len(), 3, "{parked:?}");
    assert!(parked.iter().all(|(_, why)| why.contains("revoked")), "{parked:?}");

    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(s["refused_punches"]["forged"], 3, "{s}");
    assert_eq!(s["punches_logged"], 2, "{s}");
    assert!(env.day_row(DAY, &team[0]).starts_with("missing_checkout"));
    assert!(env.day_row(DAY, &team[1]).starts_with("missing_checkout"));
    assert!(env.day_row(DAY, &team[2]).starts_with("absent"));
    assert!(env.day_row(DAY, &team[3]).starts_with("absent"));
}

#[test]
fn recover_restores_a_bulk_signed_as_batches_and_refuses_a_record_moved_under_its_tag() {
    let env = TestEnv::with_roster(TZ, 8, 2);
    let team = env.members("D002");
    let kiosk = env.registered_key("kiosk-1", false);
    let rows: Vec<(&str, &str, &str)> = team
        .iter()
        .map(|e| (e.as_str(), "in", "2026-11-20T08:50:00+01:00"))
        .collect();
    bulk(&env, &kiosk, "day.csv", &rows);
    // A forger who read one event (its batch tag included) moves it an hour earlier, under
    // another id, and hands it to the journal.
    let mut forged = shown(&env, "D002")[0].clone();
    assert!(forged["sig"].as_str().unwrap().starts_with("b1."), "{forged}");
    forged["event_id"] = "f-moved".into();
    forged["at"] = "2026-11-20T07:00:00+01:00".into();
    common::publish_to_queue(&format!("{}.journal", env.ns), &format!("[{forged}]"), "batch-forged");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // Redis lost every key of the namespace, the registry copy with them.
    let keys = env.redis_keys();
    let _: () = redis::cmd("DEL").arg(&keys).query(&mut env.redis()).unwrap();
    let args = ["recover", "--date", DAY, "--json", "--idle-ms", "500"];
    let r: Value = serde_json::from_str(&common::expect_ok(&args, env.without_secrets(&args))).unwrap();
    assert_eq!(
        (r["restored"].as_u64(), r["refused"].as_u64()),
        (Some(team.len() as u64), Some(1)),
        "every punch of the batch back, the moved one refused: {r}"
    );
    let parked = env.parked();
    assert!(
        parked
            .iter()
            .any(|(id, why)| id.contains("forged") || why.contains("bad signature")),
        "{parked:?}"
    );
    let board = env.board("D002", DAY);
    for emp in &team {
        assert_eq!(board[emp], "i31800", "08:50 and nothing else: {board:?}");
    }
}
