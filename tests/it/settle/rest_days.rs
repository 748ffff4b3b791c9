//! A rest day by one's own shift: init-day leaves off the board whoever is employed
//! but whose shift does not work the date, so that the board, `status`, the roll call's counts
//! and `watch-dept` do not show them as "not yet in"; settle still writes their day `rest_day`.
//! Regression: init-day laid out everyone employed, a resting half of a department showing as
//! "not yet in" and counted as expected.

use crate::common;

use common::pty::Pty;
use common::TestEnv;
use mysql::prelude::Queryable;

/// D1: E1 (supervisor) and E2 on the policy, E3 and E4 on weekends; D2: wholly on weekends.
const ROSTER: &str = "employee_id,name,department_id,department_name,role\n\
    E1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\nE3,Cy,D1,Sales,employee\n\
    E4,Di,D1,Sales,employee\nE5,Ed,D2,Legal,supervisor\nE6,Flo,D2,Legal,employee\n";

/// A Wednesday: a work day of the policy, a rest day of `weekends`.
const DAY: &str = "2026-11-18";

fn set_up(env: &TestEnv, weekend_days: &str) {
    env.import_roster("roster.csv", ROSTER);
    let shifts = env.file(
        "shifts.csv",
        &format!("name,start,end,work_days\nweekends,09:00,17:00,\"{weekend_days}\"\n"),
    );
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
    let a = env.file(
        "assign.csv",
        "scope,target,from,shift\nemployee,E3,2026-01-01,weekends\nemployee,E4,2026-01-01,weekends\n\
         department,D2,2026-01-01,weekends\n",
    );
    env.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
}

fn row(env: &TestEnv, emp: &str) -> (String, Option<String>) {
    env.mysql()
        .exec_first(
            "SELECT status, CAST(first_in AS CHAR) FROM attendance WHERE work_date = ? AND employee_id = ?",
            (DAY, emp),
        )
        .unwrap()
        .unwrap_or_else(|| panic!("no row for {emp}"))
}

#[test]
fn those_on_a_rest_day_by_their_shift_are_not_laid_out_nor_expected_and_settle_as_rest_day() {
    let env = TestEnv::migrated("UTC");
    set_up(&env, "sat,sun");
    let laid = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(
        (
            laid["employees"].as_u64(),
            laid["rest_day"].as_u64(),
            laid["departments"].as_u64()
        ),
        (Some(2), Some(4), Some(1)),
        "{laid}"
    );
    let mut fields: Vec<String> = env.board("D1", DAY).into_keys().collect();
    fields.sort();
    assert_eq!(fields, ["E1", "E2"], "the resting half is off D1's board");
    assert!(env.board("D2", DAY).is_empty(), "D2 rests whole: no board");

    let st = env.json(&["status", "E3", "--date", DAY, "--json"]);
    assert_eq!(
        (st["state"].as_str(), st["shift"].as_str()),
        (Some("rest_day"), Some("weekends")),
        "{st}"
    );
    let line = env.ok(&["status", "E3", "--date", DAY]);
    assert!(line.contains("rest day by their shift (weekends: sat,sun)"), "{line}");
    assert_eq!(env.json(&["status", "E2", "--date", DAY, "--json"])["state"], "not_in");

    let counts = env.json(&["report", "now", "--at", &format!("{DAY}T12:00"), "--counts", "--json"]);
    let d1 = &counts["rows"][0];
    assert_eq!(
        (d1["not_yet_in"].as_u64(), d1["on_the_board"].as_u64()),
        (Some(2), Some(2)),
        "only the policy's two are expected: {counts}"
    );

    // E4 comes in anyway: on the board and in, no longer resting.
    env.ok(&["checkin", "E4", "--kind", "in", "--at", &format!("{DAY}T09:00"), "-q"]);
    env.ok(&["checkin", "E4", "--kind", "out", "--at", &format!("{DAY}T17:00"), "-q"]);
    assert_eq!(env.json(&["status", "E4", "--date", DAY, "--json"])["state"], "out");

    // D2 has no board, yet the day is not "lost": nobody there was expected.
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(row(&env, "E2").0, "absent");
    assert_eq!(row(&env, "E3"), ("rest_day".to_string(), None));
    assert_eq!(row(&env, "E6"), ("rest_day".to_string(), None));
    // A day worked off one's shift settles as it always has: rest_day, its hours kept.
    let (status, first_in) = row(&env, "E4");
    assert_eq!(status, "rest_day");
    assert!(
        first_in.is_some_and(|t| t.contains("09:00:00")),
        "E4's check-in is kept"
    );
}

#[test]
fn the_live_screen_counts_only_those_whose_shift_works_today() {
    let env = TestEnv::migrated("UTC");
    env.policy("policy.work_days", "mon,tue,wed,thu,fri,sat,sun", "2000-01-01");
    // `weekends` works every day but today.
    let today = chrono::Utc::now().date_naive();
    let others: Vec<String> = (1..7)
        .map(|d| {
            (today + chrono::Duration::days(d))
                .format("%a")
                .to_string()
                .to_lowercase()
        })
        .collect();
    set_up(&env, &others.join(","));
    let laid = env.json(&["init-day", "--json"]);
    assert_eq!(laid["rest_day"].as_u64(), Some(4), "{laid}");
    assert_eq!(env.json(&["status", "E3", "--json"])["state"], "rest_day");
    let mut c = env.std_cmd();
    c.args(["watch-dept", "D1"]);
    let pty = Pty::spawn(c, 24, 80);
    let rows = pty.wait_for("D1's board", |r| {
        r[0].starts_with("Department D1 |") && r.iter().any(|l| l.contains("| not yet in 2 |"))
    });
    assert!(!rows.iter().any(|r| r.contains("E3") || r.contains("E4")), "{rows:#?}");
}
