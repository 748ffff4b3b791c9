//! Authority ends with employment: whoever acts (`correct`, `review approve`, `punch void`) must
//! be employed on the day they act and on the day they act on, and so must the employee acted
//! on. Regression: a supervisor whose end date had passed still corrected their members' days,
//! approved held punches and voided punches. Dates relative to today; the tests run as one OS
//! account, remapped in the roster (`login`) between commands.

use crate::common;

use chrono::{Duration, NaiveDate};
use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";

/// S1 supervises D1 (A1, A2); S2 supervises D2 (B1). `dates` gives (id, start, end) for those
/// whose employment is bounded.
fn roster(dates: &[(&str, Option<NaiveDate>, Option<NaiveDate>)]) -> String {
    let mut csv = String::from("employee_id,name,department_id,department_name,role,start_date,end_date\n");
    for (id, dept, role) in [
        ("S1", "D1", "supervisor"),
        ("A1", "D1", "employee"),
        ("A2", "D1", "employee"),
        ("S2", "D2", "supervisor"),
        ("B1", "D2", "employee"),
    ] {
        let (s, e) = dates
            .iter()
            .find(|(i, ..)| *i == id)
            .map_or((None, None), |(_, s, e)| (*s, *e));
        let d = |d: Option<NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
        csv += &format!("{id},Name {id},{dept},Dept {dept},{role},{},{}\n", d(s), d(e));
    }
    csv
}

/// Everything the refused commands could have changed.
#[derive(Debug, PartialEq)]
struct Stores {
    redis: Vec<(String, String)>,
    rows: Vec<String>,
    corrections: u64,
    voids: u64,
    held: Vec<String>,
}

fn stores(env: &TestEnv) -> Stores {
    Stores {
        // The day's boards, outboxes and punch logs (the roster cache may be refreshed by any
        // command, and is not what a refusal must leave alone).
        redis: env
            .redis_snapshot()
            .into_iter()
            .filter(|(k, _)| !k.contains(":roster"))
            .collect(),
        rows: env.attendance_rows(),
        corrections: env.count("corrections"),
        voids: env.count("punch_voids"),
        held: env
            .mysql()
            .query("SELECT CONCAT_WS('|', id, CAST(status AS CHAR)) FROM held_punches ORDER BY id")
            .unwrap(),
    }
}

/// A punch back-dated past a 15-minute replay window, held for review: its id.
fn held(env: &TestEnv, emp: &str, at: &str) -> u64 {
    env.policy("policy.replay_window_minutes", "15", "2000-01-01");
    let o = env
        .cmd()
        .args(["checkin", emp, "--kind", "in", "--at", at, "--json"])
        .output()
        .unwrap();
    env.policy("policy.replay_window_minutes", "5270400", "2000-01-01");
    assert_eq!(o.status.code(), Some(7), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["review_id"].as_u64().unwrap()
}

fn correct_args(emp: &str, day: NaiveDate) -> Vec<String> {
    let day = day.to_string();
    [
        "correct",
        emp,
        "--date",
        &day,
        "--in",
        "07:00",
        "--reason",
        "badge reader",
        "-q",
    ]
    .map(String::from)
    .to_vec()
}

fn void_args(emp: &str, at: &str) -> Vec<String> {
    [
        "punch",
        "void",
        emp,
        "--at",
        at,
        "--reason",
        "a colleague's badge",
        "-q",
    ]
    .map(String::from)
    .to_vec()
}

/// Refused with exit 1 and one line that contains `why`.
fn refused(env: &TestEnv, args: &[String], why: &str) {
    let err = env.fails(&common::strs(args), 1);
    assert!(err.contains(why) && err.trim().lines().count() == 1, "{args:?}: {err}");
}

#[test]
fn a_supervisor_past_their_end_date_may_not_correct_review_or_void_and_one_employed_may() {
    let env = TestEnv::migrated(TZ);
    let today = env.today();
    let (day, yesterday) = (today - Duration::days(5), today - Duration::days(1));
    env.import_roster("roster.csv", &roster(&[("S1", None, Some(yesterday))]));
    env.ok(&["calendar", "set", &day.to_string(), "workday", "-q"]);
    env.punch("A1", "in", &format!("{day}T08:01:00"), false);
    env.ok(&["settle", "--date", &day.to_string(), "-q"]);
    let at = format!("{yesterday}T08:00");
    env.punch("A1", "in", &format!("{at}:00"), false);
    let review = held(&env, "A2", &format!("{yesterday}T09:00:00+01:00"));
    let review = review.to_string();

    env.act_as("S1");
    let before = stores(&env);
    let left = format!("S1 left on {yesterday}");
    refused(&env, &correct_args("A1", day), &left);
    refused(&env, &["review", "approve", &review].map(String::from), &left);
    refused(&env, &void_args("A1", &at), &left);
    assert_eq!(stores(&env), before, "a refusal changes nothing");

    // Employed again (the end date cleared): the same three commands go through.
    env.import_roster("again.csv", &roster(&[]));
    env.ok(&common::strs(&correct_args("A1", day)));
    env.ok(&["review", "approve", &review, "-q"]);
    env.ok(&common::strs(&void_args("A1", &at)));
    let after = stores(&env);
    assert_eq!((after.corrections, after.voids), (1, 1));
    assert_eq!(after.held, [format!("{review}|approved")]);
}

#[test]
fn acting_on_a_day_outside_either_ones_employment_is_refused() {
    let env = TestEnv::migrated(TZ);
    let today = env.today();
    let day = today - Duration::days(5);
    env.import_roster("roster.csv", &roster(&[]));
    env.ok(&["calendar", "set", &day.to_string(), "workday", "-q"]);
    for e in ["A2", "B1"] {
        env.punch(e, "in", &format!("{day}T08:01:00"), false);
    }
    env.ok(&["settle", "--date", &day.to_string(), "-q"]);
    // HR learns late that A2 left the day before `day`; S2 joined after it.
    let (left, joined) = (day - Duration::days(1), day + Duration::days(2));
    env.import_roster(
        "dates.csv",
        &roster(&[("A2", None, Some(left)), ("S2", Some(joined), None)]),
    );
    let before = stores(&env);
    env.act_as("S1");
    refused(&env, &correct_args("A2", day), &format!("A2 was not employed on {day}"));
    env.act_as("S2");
    refused(&env, &correct_args("B1", day), &format!("S2 was not employed on {day}"));
    assert_eq!(stores(&env), before, "a refusal changes nothing");
}
