//! `attendance settle` against the real MySQL and Redis: every status from a crafted day,
//! reruns, kills at chosen points, MySQL away, refused rows, corrections, the next day.

mod common;

use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;

const TZ: &str = "Europe/Paris";
/// A Friday, long past.
const DAY: &str = "2026-11-20";

/// The active employees of a department, in id order.
fn members(env: &TestEnv, dept: &str) -> Vec<String> {
    env.mysql()
        .exec("SELECT id FROM employees WHERE department_id = ? ORDER BY id", (dept,))
        .unwrap()
}

/// Every attendance row, one string each, in key order.
fn rows(env: &TestEnv) -> Vec<String> {
    env.mysql()
        .query(
            "SELECT CONCAT_WS('|', work_date, employee_id, department_id, status, IFNULL(first_in, '-'), \
             IFNULL(last_out, '-'), late_minutes, early_minutes, punches, corrected) \
             FROM attendance ORDER BY work_date, employee_id",
        )
        .unwrap()
}

/// employee id -> status for one day.
fn statuses(env: &TestEnv, day: &str) -> std::collections::HashMap<String, String> {
    env.mysql()
        .exec(
            "SELECT employee_id, CAST(status AS CHAR) FROM attendance WHERE work_date = ?",
            (day,),
        )
        .unwrap()
        .into_iter()
        .collect()
}

/// A punch made while the broker is down (port 1 is closed): its event waits in the outbox,
/// which settle then drains.
fn punch(env: &TestEnv, emp: &str, kind: &str, local: &str) {
    env.punch(emp, kind, local, true);
}

/// A snapshot of the day's boards only (the roster cache and outboxes aside).
fn board_snapshot(env: &TestEnv, day: &str) -> Vec<(String, String)> {
    let boards = env.board_keys(day);
    env.redis_snapshot()
        .into_iter()
        .filter(|(k, _)| boards.contains(k))
        .collect()
}

fn with_config(env: &TestEnv, toml: &str) -> String {
    env.file("attendance.toml", toml).to_str().unwrap().to_string()
}

#[test]
fn every_status_from_a_crafted_day_and_a_rerun_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 40, 2);
    let d1 = members(&env, "D001");
    let e = |i: usize| d1[i].as_str();
    punch(&env, e(1), "in", "2026-11-20T08:50:00");
    punch(&env, e(1), "out", "2026-11-20T18:05:00");
    punch(&env, e(2), "in", "2026-11-20T09:20:00");
    punch(&env, e(2), "out", "2026-11-20T18:00:00");
    punch(&env, e(3), "in", "2026-11-20T08:55:00");
    punch(&env, e(3), "out", "2026-11-20T17:00:00");
    punch(&env, e(4), "in", "2026-11-20T09:30:00");
    punch(&env, e(4), "out", "2026-11-20T17:30:00");
    punch(&env, e(5), "in", "2026-11-20T08:40:00");
    punch(&env, e(6), "out", "2026-11-20T18:10:00");
    env.ok(&["leave", "add", e(7), "2026-11-19", "2026-11-23", "--kind", "sick"]);
    env.ok(&["leave", "add", e(8), DAY, DAY]);
    punch(&env, e(8), "in", "2026-11-20T08:45:00");
    punch(&env, e(8), "out", "2026-11-20T18:00:00");
    // The day before is a holiday: nobody is absent, and a punch on it is still kept.
    env.ok(&["calendar", "set", "2026-11-19", "holiday", "--note", "founders' day"]);
    punch(&env, e(1), "in", "2026-11-19T10:00:00");
    let outbox_before = env.outbox_events();
    assert!(
        outbox_before > 0,
        "check-ins with the broker down leave events in the outboxes"
    );

    let summary = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(summary["rows_written"], 40);
    assert_eq!(summary["failed"], 0);
    let st = statuses(&env, DAY);
    assert_eq!(st.len(), 40, "one row per active employee");
    let expect = [
        (1, "present"),
        (2, "late"),
        (3, "early_leave"),
        (4, "late_and_early"),
        (5, "missing_checkout"),
        (6, "missing_checkin"),
        (7, "on_leave"),
        (8, "present"),
        (9, "absent"),
    ];
    for (i, status) in expect {
        assert_eq!(st[e(i)], status, "{} ({i})", e(i));
    }
    assert_eq!(summary["counts"]["absent"], 40 - 8);
    let (late, early, first_in, punches): (u32, u32, String, String) = env
        .mysql()
        .exec_first(
            "SELECT late_minutes, early_minutes, CAST(first_in AS CHAR), punches FROM attendance \
             WHERE work_date = ? AND employee_id = ?",
            (DAY, e(4)),
        )
        .unwrap()
        .unwrap();
    assert_eq!((late, early), (30, 30));
    assert_eq!(first_in, "2026-11-20 08:30:00", "stored in UTC");
    assert_eq!(punches, "in@2026-11-20T08:30:00Z,out@2026-11-20T16:30:00Z");
    assert!(env.board_keys(DAY).is_empty(), "the settled day's boards are deleted");
    assert_eq!(summary["outbox"]["sent"], outbox_before, "settle delivers what waited");
    assert_eq!(env.outbox_events(), 0, "each event left its outbox once confirmed");

    let holiday = env.json(&["settle", "--date", "2026-11-19", "--json"]);
    assert_eq!(holiday["workday"], false);
    let st = statuses(&env, "2026-11-19");
    assert!(st.values().all(|s| s == "rest_day"), "{st:?}");
    let kept: String = env
        .mysql()
        .exec_first(
            "SELECT punches FROM attendance WHERE work_date = '2026-11-19' AND employee_id = ?",
            (e(1),),
        )
        .unwrap()
        .unwrap();
    assert_eq!(kept, "in@2026-11-19T09:00:00Z");

    let before = rows(&env);
    env.ok(&["settle", "--date", DAY]);
    env.ok(&["settle", "--date", "2026-11-19"]);
    assert_eq!(rows(&env), before, "a rerun (boards gone) writes the very same rows");
    let runs: Vec<(String, String)> = env
        .mysql()
        .query("SELECT CAST(work_date AS CHAR), CAST(outcome AS CHAR) FROM settle_runs ORDER BY id")
        .unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|(_, o)| o == "ok"), "{runs:?}");
    let status = env.json(&["status", e(5), "--date", DAY, "--json"]);
    assert_eq!(status["status"], "missing_checkout");
    assert_eq!(status["settled"], true);
}

#[test]
fn killed_mid_run_then_rerun_gives_identical_rows_and_never_loses_a_board() {
    let env = TestEnv::with_roster(TZ, 45, 3);
    let cfg = with_config(&env, "[settle]\nbatch_size = 10\n");
    // A third of the company in, some of them late; half of those out.
    let day_of_punches = |env: &TestEnv| {
        let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
        for (i, e) in all.iter().enumerate().step_by(3) {
            punch(env, e, "in", &format!("2026-11-20T08:{:02}:00", 40 + i % 19));
            if i % 2 == 0 {
                punch(env, e, "out", "2026-11-20T18:01:00");
            }
        }
    };
    day_of_punches(&env);
    let boards_before = board_snapshot(&env, DAY);
    assert_eq!(boards_before.len(), 3);

    // Killed (as by kill -9) after two batches: some rows in, every board still there.
    let o = env
        .cmd()
        .env("ATTENDANCE_CONFIG", &cfg)
        .env("ATTENDANCE_SETTLE_ABORT_AFTER_BATCHES", "2")
        .args(["settle", "--date", DAY])
        .output()
        .unwrap();
    assert!(!o.status.success());
    // Two writers: the other one may have committed one more batch by then.
    let written = env.count("attendance");
    assert!((20..=30).contains(&written), "{written} rows");
    assert_eq!(
        board_snapshot(&env, DAY),
        boards_before,
        "nothing deleted before every row is in"
    );

    env.cmd()
        .env("ATTENDANCE_CONFIG", &cfg)
        .args(["settle", "--date", DAY])
        .assert()
        .success();
    let after_rerun = rows(&env);
    assert_eq!(after_rerun.len(), 45);
    assert!(env.board_keys(DAY).is_empty());
    let outcomes: Vec<String> = env
        .mysql()
        .query("SELECT CAST(outcome AS CHAR) FROM settle_runs ORDER BY id")
        .unwrap();
    assert_eq!(outcomes, ["interrupted", "ok"]);

    // The same punches settled in one go, in a twin environment, give the same rows.
    let twin = TestEnv::with_roster(TZ, 45, 3);
    day_of_punches(&twin);
    twin.ok(&["settle", "--date", DAY]);
    assert_eq!(rows(&twin), after_rerun, "killed and rerun == never killed");
}

#[test]
fn killed_while_deleting_boards_then_rerun_gives_identical_rows() {
    let env = TestEnv::with_roster(TZ, 30, 3);
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    for e in all.iter().step_by(2) {
        punch(&env, e, "in", "2026-11-20T08:45:00");
        punch(&env, e, "out", "2026-11-20T17:45:00");
    }
    let o = env
        .cmd()
        .env("ATTENDANCE_SETTLE_ABORT_AFTER_DELETES", "1")
        .args(["settle", "--date", DAY])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(env.board_keys(DAY).len(), 2, "killed after deleting one board of three");
    let written = rows(&env);
    assert_eq!(written.len(), 30);
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(rows(&env), written, "the deleted board's punches come back from MySQL");
    assert!(env.board_keys(DAY).is_empty());
    let early: u64 = env
        .mysql()
        .query_first("SELECT COUNT(*) FROM attendance WHERE status = 'early_leave'")
        .unwrap()
        .unwrap();
    assert_eq!(early, 15);
}

#[test]
fn mysql_unreachable_leaves_redis_untouched_and_exits_3() {
    let env = TestEnv::with_roster(TZ, 10, 2);
    let e = &members(&env, "D001")[1];
    punch(&env, e, "in", "2026-11-20T08:45:00");
    let before = env.redis_snapshot();
    let cfg = with_config(&env, "[settle]\nmysql_retries = 3\nretry_backoff_ms = 20\n");
    let o = env
        .cmd()
        .env("ATTENDANCE_CONFIG", &cfg)
        .env("ATTENDANCE_MYSQL_URL", "mysql://root@127.0.0.1:1/nowhere")
        .args(["settle", "--date", DAY])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("MySQL") && err.contains("3 attempt"), "{err}");
    assert_eq!(env.redis_snapshot(), before);
    assert_eq!(env.count("attendance"), 0);
}

#[test]
fn a_refused_row_is_recorded_shown_and_exits_4_without_stopping_the_others() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let d1 = members(&env, "D001");
    punch(&env, &d1[1], "in", "2026-11-20T08:45:00");
    // A punch on the board of someone MySQL does not know: its row breaks a foreign key.
    let board = env.keys().board("D001", common::date(DAY));
    let _: () = env.redis().hset(&board, "GHOST1", "i30000").unwrap();
    let err = env.fails(&["settle", "--date", DAY], 4);
    assert!(err.contains("GHOST1"), "the failure is shown: {err}");
    assert_eq!(env.count("attendance"), 20, "every other row is written");
    let (emp, reason): (String, String) = env
        .mysql()
        .query_first("SELECT employee_id, reason FROM settle_failures")
        .unwrap()
        .unwrap();
    assert_eq!(emp, "GHOST1");
    assert!(reason.contains("foreign key"), "{reason}");
    let outcome: String = env
        .mysql()
        .query_first("SELECT CAST(outcome AS CHAR) FROM settle_runs")
        .unwrap()
        .unwrap();
    assert_eq!(outcome, "partial");
    assert_eq!(
        env.board_keys(DAY),
        [board],
        "the failed row's board is kept for a rerun"
    );
    let report = env.json(&["report", "runs", "--failures", "--format", "json"]);
    assert_eq!(report[0]["employee"], "GHOST1");
}

#[test]
fn a_correction_survives_a_rerun_and_the_wrong_supervisor_is_refused() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let (d1, d2) = (members(&env, "D001"), members(&env, "D002"));
    let sup = |dept: &str| -> String {
        env.mysql()
            .exec_first("SELECT employee_id FROM supervisors WHERE department_id = ?", (dept,))
            .unwrap()
            .unwrap()
    };
    let e = d1.iter().find(|x| **x != sup("D001")).unwrap().clone();
    punch(&env, &e, "in", "2026-11-20T08:45:00");
    env.ok(&["settle", "--date", DAY]);
    let args = |by: &str| {
        vec![
            "correct".to_string(),
            e.clone(),
            "--date".into(),
            DAY.into(),
            "--out".into(),
            "18:15".into(),
            "--reason".into(),
            "kiosk down at 18:15".into(),
            "--by".into(),
            by.to_string(),
        ]
    };
    let wrong = sup("D002");
    assert_ne!(wrong, sup("D001"));
    let a: Vec<String> = args(&wrong);
    env.fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let plain = d2.iter().find(|x| **x != wrong).unwrap();
    let a = args(plain);
    env.fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    assert_eq!(env.count("corrections"), 0);

    let mut a = args(&sup("D001"));
    a[5] = "2026-11-21T18:15:00+01:00".into();
    env.fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 2);
    let a = args(&sup("D001"));
    env.ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let row = |env: &TestEnv| -> (String, Option<String>, bool) {
        env.mysql()
            .exec_first(
                "SELECT CAST(status AS CHAR), CAST(last_out AS CHAR), corrected FROM attendance \
                 WHERE work_date = ? AND employee_id = ?",
                (DAY, &e),
            )
            .unwrap()
            .unwrap()
    };
    assert_eq!(row(&env), ("present".into(), Some("2026-11-20 17:15:00".into()), true));
    let audit: (String, String, String, Option<String>, String) = env
        .mysql()
        .query_first("SELECT corrected_by, old_status, new_status, CAST(new_last_out AS CHAR), reason FROM corrections")
        .unwrap()
        .unwrap();
    assert_eq!(
        audit,
        (
            sup("D001"),
            "missing_checkout".into(),
            "present".into(),
            Some("2026-11-20 17:15:00".into()),
            "kiosk down at 18:15".into()
        )
    );
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(
        row(&env),
        ("present".into(), Some("2026-11-20 17:15:00".into()), true),
        "kept by the rerun"
    );
}

#[test]
fn settle_lays_out_the_next_work_day_by_the_calendar_and_refuses_today() {
    let env = TestEnv::with_roster(TZ, 12, 2);
    let today = chrono::Utc::now().with_timezone(&chrono_tz::Europe::Paris).date_naive();
    let (yesterday, tomorrow) = (today.pred_opt().unwrap(), today.succ_opt().unwrap());
    env.ok(&["calendar", "set", &today.to_string(), "holiday"]);
    env.ok(&["calendar", "set", &tomorrow.to_string(), "workday"]);
    let s = env.json(&["settle", "--json"]);
    assert_eq!(s["date"], yesterday.to_string(), "the default is yesterday");
    assert_eq!(s["next_workday"], tomorrow.to_string());
    assert_eq!(s["next_day"]["employees"], 12);
    assert_eq!(env.board_keys(&tomorrow.to_string()).len(), 2);
    assert!(
        env.board_keys(&today.to_string()).is_empty(),
        "a holiday gets no boards"
    );
    env.fails(&["settle", "--date", &today.to_string()], 1);
}

#[test]
fn a_second_settle_while_one_runs_is_refused() {
    let env = TestEnv::with_roster(TZ, 5, 1);
    // Hold the lock a running settle holds.
    let mut running = env.mysql();
    let got: Option<i64> = running
        .query_first("SELECT GET_LOCK(CONCAT('attendance-settle-', MD5(DATABASE())), 0)")
        .unwrap();
    assert_eq!(got, Some(1));
    let err = env.fails(&["settle", "--date", DAY], 1);
    assert!(err.contains("another settle"), "{err}");
    assert_eq!(env.count("attendance"), 0);
    drop(running);
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(env.count("attendance"), 5);
}

#[test]
fn kill_9_mid_write_then_rerun_gives_the_rows_of_an_unbroken_run() {
    // A simulated day: the same roster and seed give the same punches in any environment.
    let simulated_day = |env: &TestEnv| {
        for phase in ["morning", "evening"] {
            let f = env.dir.join(format!("{phase}.csv"));
            let f = f.to_str().unwrap();
            env.ok(&["simulate", "--date", DAY, "--phase", phase, "-o", f]);
            env.ok(&["checkin", "--file", f]);
        }
    };
    let env = TestEnv::with_roster(TZ, 300, 4);
    simulated_day(&env);
    let boards_before = board_snapshot(&env, DAY);
    // One row per transaction, so the run lasts long enough to be caught half-way.
    let cfg = with_config(&env, "[settle]\nbatch_size = 1\nwriters = 1\n");
    let mut child = env
        .std_cmd()
        .env("ATTENDANCE_CONFIG", &cfg)
        .args(["settle", "--date", DAY])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    while env.count("attendance") == 0 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let at_kill = env.count("attendance");
    assert!(
        at_kill < 300,
        "the run ended before the kill ({at_kill} rows): nothing was tested"
    );
    assert_eq!(
        board_snapshot(&env, DAY),
        boards_before,
        "no board deleted by a killed run"
    );

    env.ok(&["settle", "--date", DAY]);
    let rerun = rows(&env);
    assert_eq!(rerun.len(), 300);
    // The same day settled without a kill.
    let twin = TestEnv::with_roster(TZ, 300, 4);
    simulated_day(&twin);
    twin.ok(&["settle", "--date", DAY]);
    assert_eq!(rows(&twin), rerun);
}
