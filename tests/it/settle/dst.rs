//! The two nights a year the clocks change: a time printed in text on the
//! day the clocks go back shows its offset where the wall clock alone is ambiguous, and a time
//! the clocks skip is refused by `correct` instead of becoming another time in silence.
//! Fixed past dates: tests/common raises the back-dating bound for them.

use crate::common;

use common::{strs, TestEnv};
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// 03:00 CEST becomes 02:00 CET: 02:30 happens twice.
const FALL_BACK: &str = "2026-10-25";
/// 02:00 CET becomes 03:00 CEST: 02:30 never happens.
const SPRING_FORWARD: &str = "2026-03-29";

/// A punch at an exact instant, its notification left pending (no broker needed here).
fn punch_at(env: &TestEnv, emp: &str, kind: &str, at: &str) {
    let o = env
        .cmd()
        .args(["checkin", emp, "--kind", kind, "--at", at, "-q"])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The stored row of a day: status, first in and last out (UTC), corrected.
fn row(env: &TestEnv, day: &str, emp: &str) -> String {
    env.mysql()
        .exec_first(
            "SELECT CONCAT_WS('|', status, IFNULL(first_in, '-'), IFNULL(last_out, '-'), corrected) \
             FROM attendance WHERE work_date = ? AND employee_id = ?",
            (day, emp),
        )
        .unwrap()
        .unwrap()
}

#[test]
fn the_hour_the_clocks_go_back_shows_its_offsets_in_status_and_reports() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, _) = env.member_and_supervisor();
    // A night worker in at the first 02:30, out at the second: an hour, not zero minutes.
    punch_at(&env, &emp, "in", &format!("{FALL_BACK}T02:30:00+02:00"));
    punch_at(&env, &emp, "out", &format!("{FALL_BACK}T02:30:00+01:00"));

    let live = env.ok(&["status", &emp, "--date", FALL_BACK]);
    assert!(
        live.contains("in at 02:30+02:00") && live.contains("out at 02:30+01:00"),
        "{live}"
    );

    env.ok(&["settle", "--date", FALL_BACK]);
    let settled = env.ok(&["status", &emp, "--date", FALL_BACK]);
    assert!(settled.contains("in 02:30+02:00, out 02:30+01:00"), "{settled}");
    let report = env.ok(&["report", "employee", &emp, "--from", FALL_BACK, "--to", FALL_BACK]);
    assert!(
        report.contains("02:30+02:00") && report.contains("02:30+01:00"),
        "{report}"
    );
    // An hour that happens once keeps its plain form.
    punch_at(&env, &emp, "in", "2026-11-02T08:10:00+01:00");
    let plain = env.ok(&["status", &emp, "--date", "2026-11-02"]);
    assert!(plain.contains("in at 08:10 ("), "{plain}");
}

#[test]
fn a_correction_to_a_time_the_clocks_skip_or_repeat_is_refused_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    for day in [SPRING_FORWARD, FALL_BACK] {
        punch_at(&env, &emp, "in", &format!("{day}T00:10:00Z"));
        env.ok(&["settle", "--date", day]);
    }
    let before = [row(&env, SPRING_FORWARD, &emp), row(&env, FALL_BACK, &emp)];
    env.act_as(&sup);
    let correct = |day: &str, out: &str| -> Vec<String> {
        vec![
            "correct".to_string(),
            emp.clone(),
            "--date".into(),
            day.into(),
            "--out".into(),
            out.into(),
            "--reason".into(),
            "kiosk was down".into(),
            "--by".into(),
            sup.clone(),
        ]
    };

    let skipped = correct(SPRING_FORWARD, "02:30");
    let err = env.fails(&strs(&skipped), 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("02:30 does not exist in Europe/Paris on 2026-03-29"),
        "{err}"
    );

    let twice = correct(FALL_BACK, "02:30");
    let err = env.fails(&strs(&twice), 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("happens twice") && err.contains("+01:00"), "{err}");

    assert_eq!([row(&env, SPRING_FORWARD, &emp), row(&env, FALL_BACK, &emp)], before);
    assert_eq!(env.count("corrections"), 0);

    // With its offset, the repeated hour is a time like any other.
    let meant = correct(FALL_BACK, &format!("{FALL_BACK}T02:30:00+01:00"));
    env.ok(&strs(&meant));
    assert!(
        row(&env, FALL_BACK, &emp).contains("2026-10-25 01:30:00"),
        "{}",
        row(&env, FALL_BACK, &emp)
    );
}
