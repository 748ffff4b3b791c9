//! A punch sent twice is one punch: a kiosk that sends its file again after the nightly settle
//! (the next day too), a single punch sent again, a held punch approved and then sent again,
//! with signing, a night shift and review on. Regression: after settle the board was gone, so
//! the resent file was new to everything: the punch log doubled and supervisors got every punch
//! again under new event ids.

use crate::common;

use chrono::{NaiveDate, TimeZone};
use common::{queue_depth, TestEnv};
use serde_json::Value;

const TZ: &str = "Europe/Paris";
/// A Wednesday; D002 works the night from 22:00 to 06:00.
const DAY: &str = "2026-11-18";
const NEXT: &str = "2026-11-19";

/// Six employees in D001 (days) and D002 (nights from the 1st): returns the environment and the
/// two teams.
fn company() -> (TestEnv, Vec<String>, Vec<String>) {
    let env = TestEnv::with_roster(TZ, 6, 2);
    env.assign_night_shift("D002", "2026-11-01");
    let (days, nights) = (env.members("D001"), env.members("D002"));
    (env, days, nights)
}

/// A kiosk's week-offline file: every employee's check-in and check-out of DAY (the night
/// team's check-out the next morning).
fn kiosk_file(env: &TestEnv, days: &[String], nights: &[String]) -> (std::path::PathBuf, usize) {
    let mut csv = String::from("employee_id,kind,at,source\n");
    for e in days {
        csv += &format!("{e},in,{DAY}T08:55:00+01:00,kiosk-7\n{e},out,{DAY}T18:05:00+01:00,kiosk-7\n");
    }
    for e in nights {
        csv += &format!("{e},in,{DAY}T21:55:00+01:00,kiosk-7\n{e},out,{NEXT}T06:01:00+01:00,kiosk-7\n");
    }
    (env.file("week.csv", &csv), 2 * (days.len() + nights.len()))
}

/// What every store holds of the punches: (punch log rows, distinct event ids in it, rows,
/// D001's and D002's queue depths, events waiting in the outboxes). The journal is written in
/// the same publish as the queues (and settle adds fences of its own to it), so queues that
/// received nothing mean a journal that received no event.
fn stores(env: &TestEnv) -> (u64, u64, Vec<String>, u32, u32, usize) {
    let distinct = env.count("(SELECT DISTINCT event_id FROM punch_log) AS d");
    (
        env.count("punch_log"),
        distinct,
        env.attendance_rows(),
        queue_depth(&format!("{}.dept.D001", env.ns)),
        queue_depth(&format!("{}.dept.D002", env.ns)),
        env.outbox_events(),
    )
}

fn send(env: &TestEnv, file: &std::path::Path) -> Value {
    env.json(&["checkin", "--file", file.to_str().unwrap(), "--json"])
}

#[test]
fn a_file_sent_again_after_settle_and_the_next_day_is_one_punch_everywhere() {
    let (env, days, nights) = company();
    let (file, n) = kiosk_file(&env, &days, &nights);
    let first = send(&env, &file);
    assert_eq!(
        (first["recorded"].as_u64(), first["repeats"].as_u64()),
        (Some(n as u64), Some(0)),
        "{first}"
    );
    // Before settle: the board already knows them.
    let again = send(&env, &file);
    assert_eq!(
        (again["recorded"].as_u64(), again["repeats"].as_u64()),
        (Some(0), Some(n as u64)),
        "{again}"
    );
    env.ok(&["settle", "--date", DAY, "-q"]);
    let settled = stores(&env);
    assert_eq!((settled.0, settled.1), (n as u64, n as u64), "{settled:?}");
    assert_eq!(
        settled.3 + settled.4,
        n as u32,
        "one notification per punch: {settled:?}"
    );
    // After settle: the board is gone, the punches are still known.
    let replay = send(&env, &file);
    assert_eq!(
        (
            replay["recorded"].as_u64(),
            replay["unchanged"].as_u64(),
            replay["repeats"].as_u64()
        ),
        (Some(0), Some(n as u64), Some(n as u64)),
        "{replay}"
    );
    assert_eq!(replay["notifications"]["sent"], 0, "{replay}");
    // The text summary says so too.
    let text = env.ok(&["checkin", "--file", file.to_str().unwrap()]);
    assert!(
        text.contains(&format!("0 recorded, {n} unchanged ({n} repeats)")),
        "{text}"
    );
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(stores(&env), settled, "punch log, rows, queues and outboxes unchanged");
    // The next day settled too, then the same file once more.
    env.ok(&["settle", "--date", NEXT, "-q"]);
    let before = stores(&env);
    let late = send(&env, &file);
    assert_eq!(late["repeats"].as_u64(), Some(n as u64), "{late}");
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(stores(&env), before);
}

#[test]
fn a_single_punch_sent_again_after_settle_is_a_repeat() {
    let (env, days, _) = company();
    let at = format!("{DAY}T08:55:00+01:00");
    let first = env.json(&["checkin", &days[0], "--kind", "in", "--at", &at, "--json"]);
    assert_eq!(first["notification"], "sent", "{first}");
    env.ok(&["settle", "--date", DAY, "-q"]);
    let settled = stores(&env);
    assert_eq!((settled.0, settled.3), (1, 1), "{settled:?}");
    let again = env.json(&["checkin", &days[0], "--kind", "in", "--at", &at, "--json"]);
    assert_eq!(
        (&again["duplicate"], &again["notification"]),
        (&Value::Bool(true), &Value::from("none")),
        "{again}"
    );
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(stores(&env), settled);
    // Unlabelled, the same instant resolves to the same kind: the same punch.
    env.ok(&["checkin", &days[0], "--at", &at, "-q"]);
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(stores(&env), settled);
}

#[test]
fn a_held_punch_approved_then_sent_again_after_settle_is_one_punch() {
    let env = TestEnv::migrated(&common::afternoon_zone());
    env.import_roster(
        "roster.csv",
        "employee_id,name,department_id,department_name,role\n\
         S1,Name S1,D1,Dept D1,supervisor\nA1,Name A1,D1,Dept D1,employee\n",
    );
    let tz: chrono_tz::Tz = env.tz.parse().unwrap();
    // Yesterday (a past day, so it can be settled) at 07:55.
    let day: NaiveDate = env.today().pred_opt().unwrap();
    let at = tz
        .from_local_datetime(&day.and_hms_opt(7, 55, 0).unwrap())
        .single()
        .unwrap()
        .to_rfc3339();
    let file = env.file("held.csv", &format!("employee_id,kind,at,source\nA1,in,{at},kiosk-2\n"));
    // The default replay window (15 minutes): yesterday's 07:55 is held for review.
    env.policy("policy.replay_window_minutes", "15", "2000-01-01");
    let run = |args: &[&str]| env.std_cmd().args(args).output().unwrap();
    let o = run(&["checkin", "--file", file.to_str().unwrap(), "--json"]);
    let held: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(held["held"], 1, "{held}");
    let id = held["held_for_review"][0]["review_id"].as_u64().unwrap().to_string();
    env.act_as("S1");
    let o = run(&["review", "approve", &id, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    env.ok(&["settle", "--date", &day.to_string(), "-q"]);
    let log = env.count("punch_log");
    let queue = queue_depth(&format!("{}.dept.D1", env.ns));
    let rows = env.attendance_rows();
    assert_eq!((log, queue), (1, 1));
    // The kiosk sends it again, with and without the authority to replay (the suite's window).
    run(&["checkin", "--file", file.to_str().unwrap(), "--json"]);
    env.policy("policy.replay_window_minutes", "5270400", "2000-01-01");
    let replay = send(&env, &file);
    assert_eq!(replay["repeats"], 1, "{replay}");
    env.ok(&["settle", "--date", &day.to_string(), "-q"]);
    assert_eq!(
        (
            env.count("punch_log"),
            queue_depth(&format!("{}.dept.D1", env.ns)),
            env.attendance_rows()
        ),
        (log, queue, rows)
    );
    assert_eq!(env.count("held_punches"), 1);
}
