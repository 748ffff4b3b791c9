//! `checkin` and `status` against the real Redis and MySQL: rules, zones, concurrency, errors.

use crate::common;
use common::day::Day;
use common::TestEnv;
use redis::Commands;

/// A past day, so that `--at` is never in the future.
const DAY: &str = "2026-11-02";

#[test]
fn late_on_time_early_and_repeated_punches() {
    let env = TestEnv::with_roster("Europe/Paris", 20, 2);
    // E000001 is D001's supervisor; Paris is UTC+1 in November.
    let on_time = env.json(&["checkin", "E000002", "--at", "2026-11-02T08:59:00+01:00", "--json"]);
    assert_eq!(
        (
            on_time["kind"].as_str(),
            on_time["late"].as_bool(),
            on_time["changed"].as_bool()
        ),
        (Some("in"), Some(false), Some(true))
    );
    let late = env.json(&["checkin", "E000003", "--at", "2026-11-02T08:15:00Z", "--json"]);
    assert_eq!(
        (late["late"].as_bool(), late["late_minutes"].as_u64()),
        (Some(true), Some(15))
    );
    assert_eq!(late["at"], "2026-11-02T09:15:00+01:00");
    // A second scan seconds later is a repeat, not an early check-out.
    let again = env.json(&["checkin", "E000002", "--at", "2026-11-02T09:00:10+01:00", "--json"]);
    assert_eq!(
        (again["kind"].as_str(), again["changed"].as_bool()),
        (Some("in"), Some(false))
    );
    // The very same punch twice: idempotent.
    let dup = env.json(&["checkin", "E000002", "--at", "2026-11-02T09:00:10+01:00", "--json"]);
    assert_eq!(dup["duplicate"], true);
    let early = env.json(&["checkin", "E000002", "--at", "2026-11-02T17:30:00+01:00", "--json"]);
    assert_eq!(
        (early["kind"].as_str(), early["early_minutes"].as_u64()),
        (Some("out"), Some(30))
    );
    let later = env.json(&[
        "checkin",
        "E000002",
        "--kind",
        "out",
        "--at",
        "2026-11-02T18:05:00+01:00",
        "--json",
    ]);
    assert_eq!(
        (later["early"].as_bool(), later["changed"].as_bool()),
        (Some(false), Some(true))
    );
    // An earlier check-out does not replace the last one.
    let earlier = env.json(&[
        "checkin",
        "E000002",
        "--kind",
        "out",
        "--at",
        "2026-11-02T17:45:00+01:00",
        "--json",
    ]);
    assert_eq!(earlier["changed"], false);
    let b = env.board("D001", DAY);
    assert_eq!(b["E000002"], "i32340,i32410,o63000,o65100,o63900");
    let st = env.json(&["status", "E000002", "--date", DAY, "--json"]);
    assert_eq!(st["state"], "out");
    assert_eq!(st["first_in"], "2026-11-02T08:59:00+01:00");
    assert_eq!(st["last_out"], "2026-11-02T18:05:00+01:00");
    assert_eq!(st["early"], false);
    let human = env.ok(&["status", "E000003", "--date", DAY]);
    assert!(human.contains("in at 09:15 (late by 15 min)"), "{human}");
    // Every punch that was not an exact duplicate sent one event to the supervisor, and a
    // confirmed event leaves the outbox.
    let outbox = env.outbox("D001").len();
    assert_eq!(outbox, 0);
    let events = env.ok(&["watch-dept", "D001", "--once", "--json"]);
    assert_eq!(events.lines().count(), 6, "{events}");
}

#[test]
fn a_punch_at_2330_utc_belongs_to_the_next_local_day_far_east() {
    let env = TestEnv::with_roster("Asia/Tokyo", 5, 1);
    let j = env.json(&["checkin", "E000002", "--at", "2026-11-01T23:30:00Z", "--json"]);
    assert_eq!(j["work_date"], DAY);
    assert_eq!(j["late"], false, "08:30 in Tokyo is on time");
    assert_eq!(env.board("D001", DAY)["E000002"], "i30600");
    assert!(env.board("D001", "2026-11-01").is_empty());
}

#[test]
fn a_day_nobody_initialised_still_records_the_punch() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.ok(&["checkin", "E000004", "--at", "2026-11-02T07:00:00Z"]);
    assert_eq!(env.board("D001", DAY).len(), 1);
}

#[test]
fn init_day_twice_keeps_checkins() {
    let env = TestEnv::with_roster("UTC", 300, 3);
    let first = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(
        (first["employees"].as_u64(), first["laid_out"].as_u64()),
        (Some(300), Some(300))
    );
    env.ok(&["checkin", "E000002", "--at", "2026-11-02T08:00:00Z"]);
    let second = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(second["laid_out"], 0);
    let total: usize = ["D001", "D002", "D003"].iter().map(|d| env.board(d, DAY).len()).sum();
    assert_eq!(total, 300);
    let dept = env.board("D001", DAY);
    assert_eq!(dept["E000002"], "i28800");
    assert_eq!(dept.values().filter(|v| v.is_empty()).count(), dept.len() - 1);
    env.fails(&["init-day", "--date", "2026-13-01"], 2);
}

#[test]
fn fifty_concurrent_scans_of_one_employee_record_one_checkin() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let children: Vec<_> = (0..50)
        .map(|_| {
            env.std_cmd()
                .args(["checkin", "E000003", "--at", "2026-11-02T08:30:00Z", "--json"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<serde_json::Value> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success());
            serde_json::from_slice(&o.stdout).unwrap()
        })
        .collect();
    assert_eq!(outs.iter().filter(|j| j["changed"] == true).count(), 1);
    assert_eq!(outs.iter().filter(|j| j["duplicate"] == true).count(), 49);
    assert_eq!(env.board("D001", DAY)["E000003"], "i30600");
    let outbox = env.outbox("D001").len();
    assert_eq!(outbox, 0, "the one event was sent");
    let events = env.ok(&["watch-dept", "D001", "--once", "--json"]);
    assert_eq!(events.lines().count(), 1, "{events}");
}

#[test]
fn two_hundred_concurrent_checkins_in_one_department_all_land() {
    let env = TestEnv::with_day("UTC", Day::new(200, 1).init_day(DAY, &[]));
    let ids: Vec<String> = (1..=200).map(|i| format!("E{i:06}")).collect();
    for batch in ids.chunks(50) {
        let children: Vec<_> = batch
            .iter()
            .map(|id| {
                env.std_cmd()
                    .args(["checkin", id, "--at", "2026-11-02T08:45:00Z", "-q"])
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            assert!(c.wait_with_output().unwrap().status.success());
        }
    }
    let b = env.board("D001", DAY);
    assert_eq!(b.len(), 200);
    assert!(b.values().all(|v| v == "i31500"), "every check-in landed");
}

#[test]
fn rejections_exit_with_their_code_and_change_nothing() {
    let env = TestEnv::with_day("UTC", Day::new(5, 1).init_day(DAY, &[]));
    let before = env.redis_snapshot();
    let e = env.fails(&["checkin", "NOBODY", "--at", "2026-11-02T08:00:00Z"], 1);
    assert!(
        e.starts_with("error: unknown employee 'NOBODY'") && e.trim().lines().count() == 1,
        "{e}"
    );
    env.fails(&["checkin", "E000002", "--at", "yesterday at nine"], 2);
    // A local time needs the T between day and time (`2026-11-02T08:00:00` is taken in the
    // company's zone, `checkin::typed_times`).
    env.fails(&["checkin", "E000002", "--at", "2026-11-02 08:00:00"], 2);
    env.fails(&["checkin", "E000002", "--kind", "sideways"], 2);
    env.fails(&["checkin", "bad id!"], 2);
    let future = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let e = env.fails(&["checkin", "E000002", "--at", &future], 1);
    assert!(e.contains("future"), "{e}");
    env.fails(&["status", "NOBODY"], 1);
    env.fails(&["status", "E000002", "--date", "02/11/2026"], 2);
    assert_eq!(env.redis_snapshot(), before);
}

#[test]
fn services_unreachable_exit_3_naming_the_service_without_password() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let before = env.redis_snapshot();
    let e = env
        .cmd()
        .args(["checkin", "E000002"])
        .env("ATTENDANCE_REDIS_URL", "redis://:hunter2@127.0.0.1:1/")
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(3));
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains("Redis") && !err.contains("hunter2"), "{err}");
    let e = env
        .cmd()
        .args(["init-day"])
        .env("ATTENDANCE_MYSQL_URL", "mysql://root:hunter2@127.0.0.1:1/x")
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(3));
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains("MySQL") && !err.contains("hunter2"), "{err}");
    assert_eq!(env.redis_snapshot(), before);
}

#[test]
fn an_employee_missing_from_the_redis_roster_is_found_in_mysql() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let _: () = env.redis().del(env.keys().roster("E000005")).unwrap();
    env.ok(&["checkin", "E000005", "--at", "2026-11-02T08:00:00Z"]);
    assert_eq!(env.board("D001", DAY)["E000005"], "i28800");
    let cached: String = env.redis().hget(env.keys().roster("E000005"), "E000005").unwrap();
    assert!(cached.starts_with("D001\t"));
}

#[test]
fn status_of_a_day_with_no_punch_says_not_yet_in() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let st = env.json(&["status", "E000004", "--json"]);
    assert_eq!(st["state"], "not_in");
    assert!(env.ok(&["status", "E000004"]).contains("not yet in"));
}

/// Every board that punches write (laid out by init-day, made by a check-in on a day nobody laid
/// out, or by a bulk check-in) is a hash table, whatever the server's hash-max-listpack-entries,
/// with no padding field left behind; a compact board from an older version keeps its punches.
#[test]
fn boards_are_hash_tables_and_old_compact_boards_keep_their_punches() {
    let env = TestEnv::with_roster("UTC", 300, 3);
    let mut con = env.redis();
    let encodings = |day: &str| -> Vec<String> {
        let mut con = env.redis();
        let keys = env.board_keys(day);
        assert!(!keys.is_empty(), "{day} has boards");
        keys.iter()
            .map(|k| {
                let fields: Vec<String> = con.hkeys(k).unwrap();
                assert!(!fields.contains(&"~".to_string()), "{k} keeps no padding");
                redis::cmd("OBJECT").arg("ENCODING").arg(k).query(&mut con).unwrap()
            })
            .collect()
    };
    // A laid-out board may arrive compact (RESTORE); the first punches convert it.
    env.init_day(DAY, &[]);
    let everyone: String = (1..=300)
        .map(|i| format!("E{i:06},in,2026-11-02T07:00:00Z\n"))
        .collect();
    let f = env.file("all.csv", &format!("employee_id,kind,at\n{everyone}"));
    env.ok(&["checkin", "--file", f.to_str().unwrap()]);
    // A day nobody laid out: the check-in makes the board; then a bulk check-in on another.
    env.ok(&["checkin", "E000004", "--at", "2026-11-03T07:00:00Z"]);
    let f = env.file(
        "b.csv",
        "employee_id,kind,at\nE000001,in,2026-11-04T07:00:00Z\nE000002,in,2026-11-04T07:01:00Z\n",
    );
    env.ok(&["checkin", "--file", f.to_str().unwrap()]);
    for day in [DAY, "2026-11-03", "2026-11-04"] {
        assert!(
            encodings(day).iter().all(|e| e == "hashtable"),
            "{day}: {:?}",
            encodings(day)
        );
    }
    // An older version's compact board: E000006's department, with a punch already there for
    // a colleague that is not on the roster (so nothing lays it out again).
    env.ok(&["checkin", "E000006", "--at", "2026-11-05T07:00:00Z"]);
    let key = env.board_keys("2026-11-05").pop().unwrap();
    let _: () = con.del(&key).unwrap();
    let _: () = con.hset_multiple(&key, &[("X1", "i25200"), ("E000006", "")]).unwrap();
    assert_eq!(encodings("2026-11-05"), ["listpack"]);
    env.ok(&["checkin", "E000006", "--at", "2026-11-05T07:30:00Z"]);
    assert_eq!(encodings("2026-11-05"), ["hashtable"]);
    let board: std::collections::HashMap<String, String> = con.hgetall(&key).unwrap();
    assert_eq!(
        (board["X1"].as_str(), board["E000006"].as_str(), board.len()),
        ("i25200", "i27000", 2)
    );
    let laid: usize = env
        .board_keys(DAY)
        .iter()
        .map(|k| con.hlen::<_, usize>(k).unwrap())
        .sum();
    assert_eq!(laid, 300);
}
