//! The month sheet and payroll written a slice of employees at a time
//! (`ATTENDANCE_REPORT_SLICE`): the output is the same bytes whatever the slice, and an
//! employee's line counts their whole week, the days they spent in another department
//! included, even on one department's sheet.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// Monday 16 to Wednesday 18 November 2026.
const DAYS: [&str; 3] = ["2026-11-16", "2026-11-17", "2026-11-18"];

/// 30 employees in 3 departments, a week with a 600-minute weekly threshold and a half day of
/// approved leave, everyone's days settled, D001's first member moved from D002 after Monday
/// (their Monday row is D002's), its second one's Tuesday spent in D003 (whose lines then hold
/// ids far apart, read by their ids), and a whole day of sick leave booked after settle (of an
/// employee of D003, who never came).
/// Returns the first mover.
fn week() -> (TestEnv, String) {
    let env = TestEnv::with_roster(TZ, 30, 3);
    env.policy("policy.overtime_weekly_after", "600", "2026-11-01");
    let (d1, d2) = (env.members("D001"), env.members("D002"));
    env.ok(&[
        "leave",
        "add",
        &d2[1],
        "2026-11-17",
        "2026-11-17",
        "--kind",
        "annual",
        "--half",
        "morning",
    ]);
    let mut body = String::new();
    for (i, e) in d1.iter().chain(&d2).enumerate() {
        for day in DAYS {
            // Some late, some long: the lines differ.
            let (i0, o0) = if i % 3 == 0 {
                ("09:20", "18:40")
            } else {
                ("08:55", "18:05")
            };
            body += &format!("{e},in,{day}T{i0}:00+01:00\n{e},out,{day}T{o0}:00+01:00\n");
        }
    }
    env.punch_file(&body);
    for day in DAYS {
        env.ok(&["settle", "--date", day, "-q"]);
    }
    // D003 never came: its days settled absent, one of them then on sick leave.
    let sick = env.members("D003")[1].clone();
    env.ok(&["leave", "add", &sick, DAYS[2], DAYS[2], "--kind", "sick"]);
    let mover = d1[0].clone();
    for (e, dept, day) in [(&mover, "D002", DAYS[0]), (&d1[1], "D003", DAYS[1])] {
        env.mysql()
            .exec_drop(
                "UPDATE attendance SET department_id = ? WHERE employee_id = ? AND work_date = ?",
                (dept, e, day),
            )
            .unwrap();
    }
    (env, mover)
}

/// stdout of `args`, with `ATTENDANCE_REPORT_SLICE` set to `slice` (unset: `None`); stderr must
/// be empty (an unknown `ATTENDANCE_*` variable is warned about there).
fn sliced(env: &TestEnv, slice: Option<&str>, args: &[&str]) -> String {
    let mut c = env.cmd();
    c.args(args);
    if let Some(s) = slice {
        c.env("ATTENDANCE_REPORT_SLICE", s);
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.is_empty(), "{args:?} slice {slice:?}: {err}");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_month_sheet_and_payroll_read_a_slice_at_a_time_are_the_same_bytes_as_read_whole() {
    let (env, _) = week();
    let month = ["report", "month", "--month", "2026-11"];
    let payroll = ["report", "payroll", "--from", "2026-11-01", "--to", "2026-11-30"];
    for args in [month.as_slice(), payroll.as_slice()] {
        for format in ["csv", "json"] {
            let args = [args, &["--format", format]].concat();
            let whole = sliced(&env, None, &args);
            assert!(whole.contains("E000030"), "{args:?}: {whole}");
            for slice in ["1", "7", "1000"] {
                assert_eq!(sliced(&env, Some(slice), &args), whole, "{args:?} slice {slice}");
            }
            // -o FILE holds the same bytes.
            let path = env.dir.join(format!("out.{format}"));
            sliced(&env, Some("4"), &[&args[..], &["-o", path.to_str().unwrap()]].concat());
            assert_eq!(std::fs::read_to_string(&path).unwrap(), whole, "{args:?} -o");
        }
    }
    // Each line is in the workbook and the table too, which read the same slices whole.
    let csv = sliced(&env, Some("1"), &[&payroll[..], &["--format", "csv"]].concat());
    assert_eq!(
        csv.lines().count(),
        1 + 30,
        "a header and a line per employee with rows"
    );
    let sick = env.members("D003")[1].clone();
    let doc = env.json(&[&payroll[..], &["--json"]].concat());
    let line = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["employee_id"] == sick.as_str())
        .cloned()
        .unwrap();
    assert_eq!(line["leave_sick"].as_f64(), Some(1.0), "the leave's kind: {line}");
    let month_csv = sliced(&env, Some("7"), &[&month[..], &["--format", "csv"]].concat());
    let d3_mover = format!("D003,{},", env.members("D001")[1]);
    assert!(
        month_csv.lines().any(|l| l.starts_with(&d3_mover)),
        "a line in D003 for the day spent there: {month_csv}"
    );
    let bad = env
        .cmd()
        .args(month)
        .args(["--csv"])
        .env("ATTENDANCE_REPORT_SLICE", "0")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "a slice of no one is refused");
    assert!(bad.stdout.is_empty());
}

#[test]
fn a_departments_sheet_counts_the_weekly_threshold_over_days_spent_in_another_department() {
    let (env, mover) = week();
    let all = env.json(&["report", "month", "--month", "2026-11", "--json"]);
    let one = env.json(&["report", "month", "--month", "2026-11", "--dept", "D001", "--json"]);
    let line = |doc: &serde_json::Value, dept: &str| {
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["employee_id"] == mover.as_str() && r["department_id"] == dept)
            .cloned()
            .unwrap_or_else(|| panic!("{mover} in {dept}: {doc}"))
    };
    // 09:20-18:40 less the hour's break: 500 minutes a day, 20 past the shift's 480. Monday in
    // D002 brings 480 regular minutes to the week's 600; Tuesday in D001 crosses it by 360,
    // Wednesday adds 480 more: 380 + 500 of overtime on D001's line (400 had D002's Monday
    // been left out of the week).
    let in_d1 = line(&one, "D001");
    assert_eq!(
        in_d1,
        line(&all, "D001"),
        "the department's sheet reads as the company's"
    );
    assert_eq!(
        (in_d1["worked_minutes"].as_u64(), in_d1["overtime_minutes"].as_u64()),
        (Some(1000), Some(880))
    );
    assert_eq!(line(&all, "D002")["worked_minutes"].as_u64(), Some(500));
}
