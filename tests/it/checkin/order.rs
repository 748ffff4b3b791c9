//! A punch's kind never depends on arrival order. The same unlabelled
//! punches sent through `checkin` in two orders give the same answers, status, events to the
//! supervisor's queue and settled row.

use crate::common;
use common::TestEnv;
use serde_json::Value;

/// A Monday, long past (the test environment raises the back-dating bound).
const DAY: &str = "2026-11-02";

/// Punch each local time (`HH:MM`, Europe/Paris, UTC+1 in November) without `--kind`, in the
/// order given; returns each punch's answer as (local time, kind, late minutes, early minutes),
/// sorted by time.
fn punch_in_order(env: &TestEnv, emp: &str, times: &[&str]) -> Vec<(String, String, u64, u64)> {
    let mut answers: Vec<_> = times
        .iter()
        .map(|t| {
            let at = format!("{DAY}T{t}:00+01:00");
            let j = env.json(&["checkin", emp, "--at", &at, "--json"]);
            (
                t.to_string(),
                j["kind"].as_str().unwrap().to_string(),
                j["late_minutes"].as_u64().unwrap(),
                j["early_minutes"].as_u64().unwrap(),
            )
        })
        .collect();
    answers.sort();
    answers
}

/// What `status` says of an employee's day, without their id and name.
fn status(env: &TestEnv, emp: &str) -> Vec<Value> {
    let j = env.json(&["status", emp, "--date", DAY, "--json"]);
    ["state", "first_in", "last_out", "late_minutes", "early_minutes"]
        .iter()
        .map(|k| j[k].clone())
        .collect()
}

/// The events the supervisor was told, per employee: (at, kind, late, early), sorted.
fn events(env: &TestEnv) -> std::collections::HashMap<String, Vec<String>> {
    let mut per: std::collections::HashMap<String, Vec<String>> = Default::default();
    for line in env.ok(&["watch-dept", "D001", "--once", "--json"]).lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        per.entry(e["employee_id"].as_str().unwrap().to_string())
            .or_default()
            .push(format!(
                "{} {} late {} early {}",
                e["at"], e["kind"], e["late_minutes"], e["early_minutes"]
            ));
    }
    for v in per.values_mut() {
        v.sort();
    }
    per
}

/// Each settled row without its employee id.
fn settled(env: &TestEnv) -> std::collections::HashMap<String, String> {
    env.attendance_rows()
        .into_iter()
        .map(|r| {
            let cells: Vec<&str> = r.split('|').collect();
            (cells[1].to_string(), [&cells[..1], &cells[2..]].concat().join("|"))
        })
        .collect()
}

/// Regression: an offline kiosk replaying 18:30 before 08:00 made 18:30 a check-in
/// ("in, late 570 min" to the supervisor) and settled `missing_checkout`; shuffled punches from
/// 08:00 to 16:10 stored 16:10 as a check-in. Failed on the old script, which gave an unlabelled
/// punch its kind from what was already on the board.
#[test]
fn the_same_unlabelled_punches_in_any_order_give_the_same_day() {
    let env = TestEnv::with_roster("Europe/Paris", 6, 1);
    let evening = [("E000002", ["08:00", "18:30"]), ("E000003", ["18:30", "08:00"])];
    let day = ["08:00", "09:10", "10:20", "11:30", "12:40", "13:50", "15:00", "16:10"];
    let shuffled = ["16:10", "09:10", "13:50", "08:00", "12:40", "15:00", "10:20", "11:30"];

    let a = punch_in_order(&env, evening[0].0, &evening[0].1);
    let b = punch_in_order(&env, evening[1].0, &evening[1].1);
    assert_eq!(a, b, "each punch gets the same answer in either order");
    assert_eq!(
        b,
        vec![
            ("08:00".into(), "in".into(), 0, 0),
            ("18:30".into(), "out".into(), 0, 0)
        ]
    );
    let c = punch_in_order(&env, "E000004", &day);
    let d = punch_in_order(&env, "E000005", &shuffled);
    assert_eq!(c, d);
    assert_eq!(d.last().unwrap().1, "out", "16:10 is a check-out: {d:?}");

    assert_eq!(status(&env, "E000002"), status(&env, "E000003"));
    assert_eq!(status(&env, "E000004"), status(&env, "E000005"));
    assert_eq!(status(&env, "E000003")[0], "out");

    let told = events(&env);
    assert_eq!(told["E000002"], told["E000003"]);
    assert_eq!(told["E000004"], told["E000005"]);
    assert_eq!(told["E000003"].len(), 2, "{told:?}");

    env.ok(&["settle", "--date", DAY]);
    let rows = settled(&env);
    assert_eq!(rows["E000002"], rows["E000003"]);
    assert_eq!(rows["E000004"], rows["E000005"]);
    assert!(rows["E000003"].contains("|present|"), "{}", rows["E000003"]);
    assert!(rows["E000005"].contains("|early_leave|"), "{}", rows["E000005"]);
}
