//! `report now` (issue 24, point 6): who is in right now, per department, from the day's
//! boards in Redis, against the real binary and services.

mod common;
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
    let f = env.file("roster.csv", ROSTER);
    env.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
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
    assert_eq!(csv[0], ["department", "employee", "name", "in since"]);
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
