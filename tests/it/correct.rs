//! Undo, audited: `correct` clears a check-in or a check-out and sets a day's
//! status (absent, on leave) by hand; each is a row of the corrections audit with the old and
//! new values, and a bad request changes nothing. Fixed past dates: tests/common raises the
//! back-dating bound for them.

use crate::common;

use common::{strs, TestEnv};
use mysql::prelude::Queryable;

pub(crate) const TZ: &str = "Europe/Paris";
/// A Friday.
pub(crate) const DAY: &str = "2026-11-20";

/// The stored row: status, first in and last out (UTC), late minutes, corrected.
pub(crate) fn row(env: &TestEnv, emp: &str) -> String {
    env.mysql()
        .exec_first(
            "SELECT CONCAT_WS('|', status, IFNULL(first_in, '-'), IFNULL(last_out, '-'), late_minutes, corrected) \
             FROM attendance WHERE work_date = ? AND employee_id = ?",
            (DAY, emp),
        )
        .unwrap()
        .unwrap()
}

/// The audit rows: old and new status and times, and who, oldest first.
fn audit(env: &TestEnv) -> Vec<String> {
    env.mysql()
        .query(
            "SELECT CONCAT_WS('|', old_status, new_status, IFNULL(old_first_in, '-'), IFNULL(new_first_in, '-'), \
             IFNULL(old_last_out, '-'), IFNULL(new_last_out, '-'), corrected_by, reason) FROM corrections ORDER BY id",
        )
        .unwrap()
}

fn correct(emp: &str, what: &[&str], reason: &str) -> Vec<String> {
    let mut args = vec!["correct", emp, "--date", DAY];
    args.extend_from_slice(what);
    args.extend_from_slice(&["--reason", reason]);
    args.into_iter().map(String::from).collect()
}

#[test]
fn correct_clears_a_time_and_sets_a_status_each_audited() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T09:20:00"), true);
    env.punch(&emp, "out", &format!("{DAY}T18:10:00"), true);
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(row(&env, &emp), "late|2026-11-20 08:20:00|2026-11-20 17:10:00|20|0");
    env.act_as(&sup);

    env.ok(&strs(&correct(&emp, &["--clear-in"], "badge used by someone else")));
    assert_eq!(row(&env, &emp), "missing_checkin|-|2026-11-20 17:10:00|0|1");

    env.ok(&strs(&correct(&emp, &["--clear-out"], "same badge")));
    assert_eq!(row(&env, &emp), "absent|-|-|0|1", "no time left: absent");

    let o = env.json(&strs(&{
        let mut a = correct(&emp, &["--status", "leave"], "sick, note came late");
        a.push("--json".into());
        a
    }));
    assert_eq!(o["after"]["status"], "on_leave", "{o}");
    assert_eq!(row(&env, &emp), "on_leave|-|-|0|1");

    assert_eq!(
        audit(&env),
        vec![
            format!("late|missing_checkin|2026-11-20 08:20:00|-|2026-11-20 17:10:00|2026-11-20 17:10:00|{sup}|badge used by someone else"),
            format!("missing_checkin|absent|-|-|2026-11-20 17:10:00|-|{sup}|same badge"),
            format!("absent|on_leave|-|-|-|-|{sup}|sick, note came late"),
        ]
    );

    // A later settle of the day keeps the status set by hand.
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(row(&env, &emp), "on_leave|-|-|0|1");
}

#[test]
fn a_status_set_by_hand_clears_the_times_and_the_audit_keeps_them() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T08:40:00"), true);
    env.ok(&["settle", "--date", DAY]);
    env.act_as(&sup);
    let line = env.ok(&strs(&correct(&emp, &["--status", "absent"], "punched in, never came")));
    assert!(
        line.contains("missing_checkout (in 08:40, out -) -> absent (in -, out -)"),
        "{line}"
    );
    assert_eq!(row(&env, &emp), "absent|-|-|0|1");
    assert_eq!(
        audit(&env),
        vec![format!(
            "missing_checkout|absent|2026-11-20 07:40:00|-|-|-|{sup}|punched in, never came"
        )]
    );
}

#[test]
fn a_bad_clear_or_status_is_a_usage_error_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T08:40:00"), true);
    env.ok(&["settle", "--date", DAY]);
    env.act_as(&sup);
    let before = row(&env, &emp);
    for what in [
        vec!["--clear-in", "--in", "08:00"],
        vec!["--clear-out", "--out", "18:00"],
        vec!["--status", "present"],
        vec!["--status", "absent", "--in", "08:00"],
        vec!["--status", "leave", "--clear-out"],
        vec![],
    ] {
        let err = env.fails(&strs(&correct(&emp, &what, "why")), 2);
        assert!(!err.trim().is_empty(), "{what:?}");
    }
    assert_eq!(row(&env, &emp), before);
    assert_eq!(env.count("corrections"), 0);
    // Nobody clears their own day.
    env.act_as(&emp);
    env.fails(&strs(&correct(&emp, &["--clear-in"], "mine")), 1);
    assert_eq!(row(&env, &emp), before);
    assert_eq!(env.count("corrections"), 0);
}

#[test]
fn a_day_set_on_leave_by_hand_takes_a_kind_that_payroll_counts_and_a_clash_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.ok(&["settle", "--date", DAY]);
    env.act_as(&sup);
    let payroll = |env: &TestEnv| -> serde_json::Value {
        let p = env.json(&["report", "payroll", "--from", DAY, "--to", DAY, "--json"]);
        let rows = p["rows"].as_array().unwrap();
        rows.iter().find(|r| r["employee_id"] == emp.as_str()).unwrap().clone()
    };
    assert_eq!(payroll(&env)["absent_days"], 1);

    env.ok(&strs(&correct(
        &emp,
        &["--status", "leave", "--leave-kind", "sick"],
        "sick note arrived",
    )));
    assert_eq!(row(&env, &emp), "on_leave|-|-|0|1");
    let booked: Vec<String> = env
        .mysql()
        .query("SELECT CONCAT_WS('|', employee_id, from_date, to_date, kind, status, note) FROM leaves")
        .unwrap();
    assert_eq!(
        booked,
        [format!("{emp}|{DAY}|{DAY}|sick|approved|correction: sick note arrived")]
    );
    let line = payroll(&env);
    assert_eq!(
        (line["leave_sick"].as_u64(), line["leave_other"].as_u64()),
        (Some(1), Some(0)),
        "{line}"
    );
    assert_eq!(line["absent_days"], 0);
    // The same kind again books nothing more.
    env.ok(&strs(&correct(
        &emp,
        &["--status", "leave", "--leave-kind", "sick"],
        "again",
    )));
    assert_eq!(env.count("leaves"), 1);

    // Another kind over the booked leave is refused, and nothing changes.
    let (rows, audits) = (env.attendance_rows(), env.count("corrections"));
    let e = env.fails(
        &strs(&correct(
            &emp,
            &["--status", "leave", "--leave-kind", "annual"],
            "no, annual",
        )),
        1,
    );
    assert!(e.contains("already has approved leave of kind sick"), "{e}");
    assert_eq!(
        (env.attendance_rows(), env.count("corrections"), env.count("leaves")),
        (rows, audits, 1)
    );
    // A kind without --status leave is a usage error.
    let e = env.fails(&strs(&correct(&emp, &["--clear-in", "--leave-kind", "sick"], "x")), 2);
    assert!(e.contains("--status"), "{e}");
}
