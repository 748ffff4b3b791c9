//! `report now`: who is in right now, per department, from the day's
//! boards in Redis, against the real binary and services.

use crate::common;
use common::TestEnv;

const ROSTER: &str = "employee_id,name,department_id,department_name,role\n\
    E1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\nE4,Di,D1,Sales,employee\n\
    E3,Cy,D2,Legal,supervisor\nE5,Ed,D3,Research,supervisor\n";

fn column(rows: &serde_json::Value, key: &str) -> Vec<String> {
    rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[key].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn report_now_lists_who_is_in_per_department_with_counts() {
    let env = TestEnv::migrated("UTC");
    env.import_roster("roster.csv", ROSTER);
    env.ok(&["init-day", "-q"]);
    // In: E1 and E3. Came and went: E2. Not yet in: E4 and E5.
    for (e, kind) in [("E1", "in"), ("E2", "in"), ("E2", "out"), ("E3", "in")] {
        env.ok(&["checkin", e, "--kind", kind, "-q"]);
    }
    let o = env.run(&["report", "now", "--json"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(column(&rows, "employee_id"), ["E1", "E3"], "{rows}");
    assert_eq!(column(&rows, "department_id"), ["D1", "D2"]);
    assert_eq!(column(&rows, "employee_name"), ["Ann", "Cy"]);
    assert!(rows["rows"][0]["in_since"].as_str().unwrap().contains(':'), "{rows}");
    assert!(said.contains("2 in right now, in 2 of 3 department(s)"), "{said}");
    let counts = env.json(&["report", "now", "--counts", "--json"]);
    let d1 = &counts["rows"][0];
    assert_eq!(d1["department_id"], "D1");
    assert_eq!(
        (
            d1["in"].as_i64(),
            d1["out"].as_i64(),
            d1["not_yet_in"].as_i64(),
            d1["on_the_board"].as_i64()
        ),
        (Some(1), Some(1), Some(1), Some(3)),
        "{counts}"
    );
    assert_eq!(
        (
            counts["rows"][2]["in"].as_i64(),
            counts["rows"][2]["not_yet_in"].as_i64()
        ),
        (Some(0), Some(1))
    );
    let csv = common::csv_cells(&env.ok(&["report", "now", "--dept", "D2", "--csv"]));
    assert_eq!(csv.len(), 2, "{csv:?}");
    assert_eq!(csv[0], ["department", "employee", "name", "date", "in since"]);
    assert_eq!(csv[1][..3], ["D2", "E3", "Cy"]);
    // An unknown department is refused, as by every report.
    let err = env.fails(&["report", "now", "--dept", "D9"], 1);
    assert!(err.contains("unknown department 'D9'"), "{err}");
    env.fails(&["report", "now", "--csv", "--json"], 2);
    // E1 goes out: the roll call follows the board.
    env.ok(&["checkin", "E1", "--kind", "out", "-q"]);
    let rows = env.json(&["report", "now", "--json"]);
    assert_eq!(column(&rows, "employee_id"), ["E3"]);
}

/// The roll call taken at 02:00 finds the night shift, in since 22:00 on the day before's
/// board (its work date), and not the day worker who forgot to check out; past the shift's end
/// and the night cutoff, nobody of that night. Regression: the roll call read today's boards
/// only and missed everyone working the night.
#[test]
fn a_roll_call_at_two_in_the_morning_lists_the_night_shift_on_the_day_before() {
    let env = TestEnv::migrated("Europe/Paris");
    env.import_roster("roster.csv", ROSTER);
    let shifts = env.file("shifts.csv", "name,start,end,work_days\nnight,22:00,06:00,mon-sun\n");
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
    let a = env.file(
        "assign.csv",
        "scope,target,from,shift\ndepartment,D1,2026-11-01,night\n",
    );
    env.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
    for day in ["2026-11-20", "2026-11-21"] {
        env.ok(&["init-day", "--date", day, "-q"]);
    }
    for (e, kind, at) in [
        // D1 on nights: E1 and E2 in at 22:00, E4 in and gone by 01:30; E1 leaves at 06:03,
        // after the roll call.
        ("E1", "in", "2026-11-20T21:55"),
        ("E2", "in", "2026-11-20T22:05"),
        ("E4", "in", "2026-11-20T22:00"),
        ("E4", "out", "2026-11-21T01:30"),
        ("E1", "out", "2026-11-21T06:03"),
        // D2 on the policy: E3 never checked out on the 20th.
        ("E3", "in", "2026-11-20T08:55"),
    ] {
        env.ok(&["checkin", e, "--kind", kind, "--at", at, "-q"]);
    }
    let o = env.run(&["report", "now", "--at", "2026-11-21T02:00", "--json"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(column(&rows, "employee_id"), ["E1", "E2"], "{rows}");
    assert_eq!(column(&rows, "work_date"), ["2026-11-20", "2026-11-20"]);
    assert_eq!(column(&rows, "department_id"), ["D1", "D1"]);
    assert_eq!(rows["rows"][0]["in_since"], "2026-11-20T21:55:00+01:00");
    assert!(
        said.contains("2 in right now (2 on a shift that began on 2026-11-20), in 1 of 3 department(s), as of 2026-11-21 02:00:00"),
        "{said}"
    );
    let counts = env.json(&["report", "now", "--at", "2026-11-21T02:00", "--counts", "--json"]);
    let d1 = &counts["rows"][0];
    assert_eq!(
        (
            d1["in"].as_u64(),
            d1["from_the_day_before"].as_u64(),
            d1["not_yet_in"].as_u64()
        ),
        (Some(2), Some(2), Some(3)),
        "{counts}"
    );
    let csv = common::csv_cells(&env.ok(&["report", "now", "--at", "2026-11-21T02:00", "--csv"]));
    assert_eq!(csv[0], ["department", "employee", "name", "date", "in since"]);
    assert_eq!(csv[1][..4], ["D1", "E1", "Ann", "2026-11-20"]);
    // At 10:00 the night (06:00, and 4 hours' cutoff) is over: E2, never out, is not counted.
    let later = env.json(&["report", "now", "--at", "2026-11-21T10:00", "--json"]);
    assert!(later["rows"].as_array().unwrap().is_empty(), "{later}");
    // --at is bounded like a back-dated punch: neither in the future nor past the window.
    let err = env.fails(&["report", "now", "--at", "2099-01-01T00:00"], 1);
    assert!(err.contains("a roll call at") && err.contains("in the future"), "{err}");
    env.fails(&["report", "now", "--at", "25:00"], 2);
}
