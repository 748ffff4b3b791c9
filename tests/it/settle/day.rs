//! `attendance settle` against the real MySQL and Redis: every status from a crafted day,
//! reruns, kills at chosen points, MySQL away, refused rows, corrections, the next day.

use crate::common;

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
    env.attendance_rows()
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

/// A snapshot of the day's boards only (the roster cache and outboxes aside), live or settle's:
/// a board settle moved out of the live key at its cut-over is the same board.
fn board_snapshot(env: &TestEnv, day: &str) -> Vec<(String, String)> {
    let mut snap: Vec<(String, String)> = env
        .redis_snapshot()
        .into_iter()
        .filter(|(k, _)| k.contains(":board:") && k.ends_with(day))
        .map(|(k, v)| (k.replace(":settle:board:", ":board:"), v))
        .collect();
    snap.sort();
    snap
}

/// Board keys of a day, sorted: the live ones and settle's own (from its cut-over until the
/// day's rows are committed).
fn boards(env: &TestEnv, day: &str) -> Vec<String> {
    env.redis_keys()
        .into_iter()
        .filter(|k| k.contains(":board:") && k.ends_with(day))
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
    env.punch(e(1), "in", "2026-11-20T08:50:00", true);
    env.punch(e(1), "out", "2026-11-20T18:05:00", true);
    env.punch(e(2), "in", "2026-11-20T09:20:00", true);
    env.punch(e(2), "out", "2026-11-20T18:00:00", true);
    env.punch(e(3), "in", "2026-11-20T08:55:00", true);
    env.punch(e(3), "out", "2026-11-20T17:00:00", true);
    env.punch(e(4), "in", "2026-11-20T09:30:00", true);
    env.punch(e(4), "out", "2026-11-20T17:30:00", true);
    env.punch(e(5), "in", "2026-11-20T08:40:00", true);
    env.punch(e(6), "out", "2026-11-20T18:10:00", true);
    env.ok(&["leave", "add", e(7), "2026-11-19", "2026-11-23", "--kind", "sick"]);
    env.ok(&["leave", "add", e(8), DAY, DAY]);
    env.punch(e(8), "in", "2026-11-20T08:45:00", true);
    env.punch(e(8), "out", "2026-11-20T18:00:00", true);
    // The day before is a holiday: nobody is absent, and a punch on it is still kept.
    env.ok(&["calendar", "set", "2026-11-19", "holiday", "--note", "founders' day"]);
    env.punch(e(1), "in", "2026-11-19T10:00:00", true);
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
    assert!(boards(&env, DAY).is_empty(), "the settled day's boards are deleted");
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

/// A day's counts by status as MySQL holds them.
fn stored_counts(env: &TestEnv, day: &str) -> serde_json::Value {
    let counts: Vec<(String, u64)> = env
        .mysql()
        .exec(
            "SELECT CAST(status AS CHAR), COUNT(*) FROM attendance WHERE work_date = ? GROUP BY status",
            (day,),
        )
        .unwrap();
    serde_json::Value::Object(counts.into_iter().map(|(s, n)| (s, n.into())).collect())
}

/// The counts the last run of a day recorded.
fn recorded_counts(env: &TestEnv, day: &str) -> serde_json::Value {
    let counts: String = env
        .mysql()
        .exec_first(
            "SELECT counts FROM settle_runs WHERE work_date = ? ORDER BY id DESC LIMIT 1",
            (day,),
        )
        .unwrap()
        .unwrap();
    serde_json::from_str(&counts).unwrap()
}

#[test]
fn the_counts_a_run_reports_are_those_mysql_holds_fresh_with_a_stray_and_after_a_correction() {
    // A fresh day's counts are summed as the rows are written (no query of the day's rows);
    // a day with a stray, or with rows already stored (a rerun, corrections), asks MySQL.
    let env = TestEnv::with_roster(TZ, 30, 2);
    let (d1, d2) = (members(&env, "D001"), members(&env, "D002"));
    let sup = supervisor(&env, "D001");
    let staff: Vec<&String> = d1.iter().filter(|x| **x != sup).collect();
    env.punch(staff[0], "in", "2026-11-20T08:50:00", true);
    env.punch(staff[0], "out", "2026-11-20T18:05:00", true);
    env.punch(staff[1], "in", "2026-11-20T09:20:00", true);
    env.punch(staff[1], "out", "2026-11-20T18:00:00", true);
    env.punch(staff[2], "in", "2026-11-20T08:40:00", true);
    env.punch(&d2[0], "in", "2026-11-20T08:30:00", true);
    let fresh = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(fresh["counts"], stored_counts(&env, DAY), "{fresh}");
    assert_eq!(recorded_counts(&env, DAY), stored_counts(&env, DAY));
    assert_eq!(fresh["counts"]["missing_checkout"], 2);

    // The next day: a D002 employee's punch on D001's board (a stray, rewritten last).
    let next = "2026-11-23";
    env.punch(staff[0], "in", "2026-11-23T09:40:00", true);
    env.punch(staff[0], "out", "2026-11-23T18:05:00", true);
    env.logged_board_field("D001", next, &d2[1], "i30000");
    let strayed = env.json(&["settle", "--date", next, "--json"]);
    assert_eq!(strayed["counts"], stored_counts(&env, next), "{strayed}");
    assert_eq!(strayed["counts"]["late"], 1);
    assert_eq!(strayed["counts"]["missing_checkout"], 1, "the stray's row counted once");

    // A correction, then a rerun: the corrected row keeps its status, and the counts say so.
    env.correct_out(staff[2], DAY, &sup);
    let rerun = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(rerun["counts"], stored_counts(&env, DAY), "{rerun}");
    assert_eq!(recorded_counts(&env, DAY), stored_counts(&env, DAY));
    assert_eq!(rerun["counts"]["missing_checkout"], 1, "{rerun}");
}

#[test]
fn killed_mid_run_then_rerun_gives_identical_rows_and_never_loses_a_board() {
    let env = TestEnv::with_roster(TZ, 45, 3);
    let cfg = with_config(&env, "[settle]\nbatch_size = 10\n");
    // A third of the company in, some of them late; half of those out.
    let day_of_punches = |env: &TestEnv| {
        let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
        for (i, e) in all.iter().enumerate().step_by(3) {
            env.punch(e, "in", &format!("2026-11-20T08:{:02}:00", 40 + i % 19), true);
            if i % 2 == 0 {
                env.punch(e, "out", "2026-11-20T18:01:00", true);
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
    // Two writers: the other one may have committed a batch or two more by the time the hook
    // sees the second commit, but never the whole day (45 rows).
    let written = env.count("attendance");
    assert!((20..45).contains(&written), "{written} rows");
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
    assert!(boards(&env, DAY).is_empty());
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
        env.punch(e, "in", "2026-11-20T08:45:00", true);
        env.punch(e, "out", "2026-11-20T17:45:00", true);
    }
    let o = env
        .cmd()
        .env("ATTENDANCE_SETTLE_ABORT_AFTER_DELETES", "1")
        .args(["settle", "--date", DAY])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(boards(&env, DAY).len(), 2, "killed after deleting one board of three");
    let written = rows(&env);
    assert_eq!(written.len(), 30);
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(rows(&env), written, "the deleted board's punches come back from MySQL");
    assert!(boards(&env, DAY).is_empty());
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
    env.punch(e, "in", "2026-11-20T08:45:00", true);
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
    env.punch(&d1[1], "in", "2026-11-20T08:45:00", true);
    // A punch on the board of someone MySQL does not know: its row breaks a foreign key.
    env.logged_board_field("D001", DAY, "GHOST1", "i30000");
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
        boards(&env, DAY),
        [env.keys().settle_board("D001", common::date(DAY))],
        "the failed row's board is kept (settle's own copy) for a rerun"
    );
    let report = env.json(&["report", "runs", "--failures", "--format", "json"]);
    assert_eq!(report["rows"][0]["employee_id"], "GHOST1");
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
    env.punch(&e, "in", "2026-11-20T08:45:00", true);
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
    env.act_as(&wrong);
    env.fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let plain = d2.iter().find(|x| **x != wrong).unwrap();
    let a = args(plain);
    env.act_as(plain);
    env.fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    assert_eq!(env.count("corrections"), 0);

    env.act_as(&sup("D001"));
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
    assert_eq!(s["work_date"], yesterday.to_string(), "the default is yesterday");
    assert_eq!(s["next_workday"], tomorrow.to_string());
    assert_eq!(s["next_day"]["employees"], 12);
    assert_eq!(boards(&env, &tomorrow.to_string()).len(), 2);
    assert!(boards(&env, &today.to_string()).is_empty(), "a holiday gets no boards");
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
            let f = env.simulate(DAY, phase);
            env.ok(&["checkin", "--file", f.to_str().unwrap()]);
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

// ---- The cut-over, catch-up and lost days ----

/// A day `n` days back in the company's zone (recent: punches far back may be refused).
fn days_ago(n: i64) -> String {
    let today = chrono::Utc::now().with_timezone(&chrono_tz::Europe::Paris).date_naive();
    (today - chrono::Duration::days(n)).to_string()
}

/// The latest Monday-to-Friday day at least `n` days back (the default policy's work week).
fn workday_ago(n: i64) -> String {
    use chrono::Datelike;
    let mut d = common::date(&days_ago(n));
    while d.weekday().number_from_monday() > 5 {
        d = d.pred_opt().unwrap();
    }
    d.to_string()
}

/// The department's supervisor.
fn supervisor(env: &TestEnv, dept: &str) -> String {
    env.mysql()
        .exec_first("SELECT employee_id FROM supervisors WHERE department_id = ?", (dept,))
        .unwrap()
        .unwrap()
}

/// One stored row's (status, punch history).
fn stored(env: &TestEnv, day: &str, emp: &str) -> (String, String) {
    env.mysql()
        .exec_first(
            "SELECT CAST(status AS CHAR), punches FROM attendance WHERE work_date = ? AND employee_id = ?",
            (day, emp),
        )
        .unwrap()
        .unwrap()
}

/// Settle's own boards of a day, sorted.
fn settle_boards(env: &TestEnv, day: &str) -> Vec<String> {
    boards(env, day)
        .into_iter()
        .filter(|k| k.contains(":settle:"))
        .collect()
}

#[test]
fn check_outs_during_settle_are_all_settled_by_the_next_nightly_run() {
    let env = TestEnv::with_roster(TZ, 160, 4);
    let day = workday_ago(2);
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    for e in &all {
        env.punch(e, "in", &format!("{day}T08:45:00"), true);
    }
    // One row per transaction: the settle lasts long enough for check-outs to land during it.
    let cfg = with_config(&env, "[settle]\nbatch_size = 1\nwriters = 1\n");
    let started = std::sync::atomic::AtomicBool::new(false);
    let (acked, during) = std::thread::scope(|s| {
        let checkouts = s.spawn(|| {
            let mut acked: Vec<(String, String, bool)> = Vec::new();
            for (i, e) in all.iter().enumerate() {
                let at = format!("{day}T18:{:02}:{:02}", i / 60, i % 60);
                let settling = started.load(std::sync::atomic::Ordering::SeqCst);
                let o = env
                    .cmd()
                    .args(["checkin", e, "--kind", "out", "--at", &format!("{at}+01:00"), "-q"])
                    .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
                    .output()
                    .unwrap();
                if o.status.success() {
                    acked.push((e.clone(), at, settling));
                }
            }
            acked
        });
        // Let a few check-outs in first, then settle the day while the rest keep coming.
        while boards(&env, &day).is_empty() || env.outbox_events() < 170 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        started.store(true, std::sync::atomic::Ordering::SeqCst);
        let o = env
            .cmd()
            .env("ATTENDANCE_CONFIG", &cfg)
            .args(["settle", "--date", &day])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let during = env.count("attendance");
        let fresh = boards(&env, &day).len();
        started.store(false, std::sync::atomic::Ordering::SeqCst);
        eprintln!("fresh live boards after the first settle: {fresh}");
        assert!(fresh > 0, "no check-out landed after the cut-over: nothing was tested");
        (checkouts.join().unwrap(), during)
    });
    assert_eq!(during, 160);
    let while_settling = acked.iter().filter(|(_, _, s)| *s).count();
    assert!(
        while_settling > 0,
        "no check-out landed while the day was settled: nothing was tested"
    );
    eprintln!("check-outs acknowledged while settling: {while_settling}");
    assert_eq!(acked.len(), all.len(), "every check-out was acknowledged");

    // The nightly run: yesterday, and the day whose late punches wait on fresh boards.
    let s = env.json(&["settle", "--json"]);
    let days = s["settled_days"].as_array().unwrap();
    assert_eq!(days.first().unwrap(), &serde_json::json!(day), "{s}");
    for (e, at, _) in &acked {
        let (status, punches) = stored(&env, &day, e);
        let utc = chrono::NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M:%S").unwrap() - chrono::Duration::hours(1);
        assert!(
            punches.contains(&format!("out@{}Z", utc.format("%Y-%m-%dT%H:%M:%S"))),
            "{e}'s check-out at {at} (exit 0) is missing: {status} {punches}"
        );
        assert_ne!(status, "missing_checkout", "{e}");
    }
    assert!(boards(&env, &day).is_empty(), "every board of the day is gone");
}

#[test]
fn a_missed_night_is_caught_up_oldest_first() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let (d1, d2, yesterday) = (days_ago(3), days_ago(2), days_ago(1));
    let d = members(&env, "D002");
    env.punch(&d[1], "in", &format!("{d1}T08:40:00"), true);
    env.punch(&d[1], "in", &format!("{d2}T08:41:00"), true);
    env.punch(&d[2], "out", &format!("{d2}T18:30:00"), true);

    let o = env.run(&["settle"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("caught up 3 days: {d1}, {d2}, {yesterday}")),
        "{err}"
    );
    let runs: Vec<String> = env
        .mysql()
        .query("SELECT CAST(work_date AS CHAR) FROM settle_runs ORDER BY id")
        .unwrap();
    assert_eq!(runs, [d1.clone(), d2.clone(), yesterday.clone()], "oldest first");
    assert_eq!(stored(&env, &d1, &d[1]).1, format!("in@{d1}T07:40:00Z"));
    assert_eq!(stored(&env, &d2, &d[2]).1, format!("out@{d2}T17:30:00Z"));
    assert_eq!(env.count("attendance"), 60, "every employee, each day");
    assert!(boards(&env, &d1).is_empty() && boards(&env, &d2).is_empty());
    // The days sets remember no settled day: a second nightly run settles yesterday only.
    let s = env.json(&["settle", "--json"]);
    assert_eq!(s["settled_days"], serde_json::json!([yesterday]));
    assert_eq!(s["work_date"], yesterday);
    assert_eq!(s["earlier"], serde_json::json!([]));
}

#[test]
fn a_late_punch_on_a_settled_day_is_shown_by_status_and_settled_by_the_next_run() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let day = workday_ago(2);
    let sup = supervisor(&env, "D001");
    let d1: Vec<String> = members(&env, "D001").into_iter().filter(|e| *e != sup).collect();
    let (late, fixed) = (&d1[0], &d1[1]);
    env.punch(late, "in", &format!("{day}T08:50:00"), true);
    env.punch(fixed, "in", &format!("{day}T08:55:00"), true);
    env.ok(&["settle", "--date", &day]);
    env.act_as(&sup);
    env.ok(&[
        "correct", fixed, "--date", &day, "--out", "18:00", "--reason", "forgot", "--by", &sup,
    ]);
    assert_eq!(stored(&env, &day, late).0, "missing_checkout");

    // The kiosk was offline: its check-out reaches Redis after the day was settled.
    env.punch(late, "out", &format!("{day}T18:10:00"), true);
    let st = env.json(&["status", late, "--date", &day, "--json"]);
    assert_eq!(st["settled"], true);
    assert_eq!(st["status"], "missing_checkout");
    assert_eq!(st["waiting_punches"][0]["kind"], "out", "{st}");
    assert!(st["waiting_punches"][0]["at"].as_str().unwrap().contains("T18:10:00"));
    let text = env.ok(&["status", late, "--date", &day]);
    assert!(text.contains("not yet settled: out at 18:10"), "{text}");
    // A settled day names the employee, as a live one does (regression: it dropped the name).
    let name: String = env
        .mysql()
        .exec_first("SELECT name FROM employees WHERE id = ?", (late,))
        .unwrap()
        .unwrap();
    assert_eq!(st["employee_name"], name.as_str(), "{st}");
    assert!(text.starts_with(&format!("{late} {name} (D001) on {day}: ")), "{text}");

    let s = env.json(&["settle", "--json"]);
    assert_eq!(s["settled_days"][0], day, "{s}");
    assert_eq!(
        stored(&env, &day, late),
        ("present".to_string(), format!("in@{day}T07:50:00Z,out@{day}T17:10:00Z"))
    );
    let st = env.json(&["status", late, "--date", &day, "--json"]);
    assert_eq!(st["waiting_punches"], serde_json::json!([]));
    let (status, corrected): (String, bool) = env
        .mysql()
        .exec_first(
            "SELECT CAST(status AS CHAR), corrected FROM attendance WHERE work_date = ? AND employee_id = ?",
            (&day, fixed),
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        (status.as_str(), corrected),
        ("present", true),
        "the correction is kept"
    );
}

#[test]
fn a_laid_out_day_with_a_lost_board_is_refused_with_exit_6_until_accepted() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let day = workday_ago(2);
    env.init_day(&day, &[]);
    let laid: (u32, u32) = env
        .mysql()
        .exec_first(
            "SELECT departments, employees FROM day_layouts WHERE work_date = ?",
            (&day,),
        )
        .unwrap()
        .unwrap();
    assert_eq!(laid, (2, 20));
    env.punch(&members(&env, "D001")[1], "in", &format!("{day}T08:40:00"), true);
    env.punch(&members(&env, "D002")[1], "in", &format!("{day}T08:40:00"), true);
    // The day's board of D002 is gone from Redis (a restart without persistence, say).
    let _: () = env.redis().del(env.keys().board("D002", common::date(&day))).unwrap();
    let before = env.redis_snapshot();

    // -q: the shared Redis has no AOF, and its warning line is not settle's error.
    for args in [vec!["settle", "-q", "--date", day.as_str()], vec!["settle", "-q"]] {
        let err = env.fails(&args, 6);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(
            err.starts_with("error: ")
                && err.contains(&format!("attendance recover --date {day}"))
                && err.contains("D002"),
            "{err}"
        );
        assert_eq!(env.redis_snapshot(), before, "nothing changed in Redis");
        assert_eq!(env.count("attendance"), 0, "no row written");
        assert_eq!(env.count("settle_runs"), 0, "no run recorded");
    }

    let s = env.json(&["settle", "--date", &day, "--accept-missing-boards", "--json"]);
    assert_eq!(s["rows_written"], 20);
    let st = statuses(&env, &day);
    assert_eq!(
        st[&members(&env, "D002")[1]],
        "absent",
        "its punch was lost with the board"
    );
    assert_ne!(st[&members(&env, "D001")[1]], "absent");
    // Settled now: its rows are in MySQL, so a rerun is no longer refused.
    env.ok(&["settle", "--date", &day]);
}

#[test]
fn killed_after_the_cutover_with_punches_arriving_then_rerun_gives_the_rows_of_an_unbroken_run() {
    let day = workday_ago(2);
    let morning = |env: &TestEnv| {
        let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
        for (i, e) in all.iter().enumerate().step_by(2) {
            env.punch(e, "in", &format!("{day}T08:{:02}:00", 40 + i % 19), true);
        }
    };
    let evening = |env: &TestEnv| {
        let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
        for (i, e) in all.iter().enumerate().step_by(3) {
            env.punch(e, "out", &format!("{day}T17:{:02}:00", 40 + i % 19), true);
        }
        // A repeat of a morning punch: the merge keeps it once.
        env.punch(&all[0], "in", &format!("{day}T08:40:00"), true);
    };
    let env = TestEnv::with_roster(TZ, 30, 3);
    morning(&env);
    let o = env
        .cmd()
        .env("ATTENDANCE_SETTLE_ABORT_AFTER_CUTOVERS", "1")
        .args(["settle", "--date", &day])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(settle_boards(&env, &day).len(), 1, "killed after one cut-over of three");
    assert_eq!(boards(&env, &day).len(), 3);
    assert_eq!(env.count("attendance"), 0);
    // Meanwhile status still sees a punch on the board settle took over (D001, cut over first).
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    let punched = members(&env, "D001")
        .into_iter()
        .find(|m| all.iter().position(|x| x == m).unwrap() % 2 == 0)
        .unwrap();
    let st = env.json(&["status", &punched, "--date", &day, "--json"]);
    assert_eq!(st["state"], "in", "{st}");
    // Punches keep coming: one lands on a fresh live board beside settle's own.
    evening(&env);
    assert_eq!(boards(&env, &day).len(), 4, "a fresh live board beside settle's");

    env.ok(&["settle", "--date", &day]);
    assert!(boards(&env, &day).is_empty());
    let twin = TestEnv::with_roster(TZ, 30, 3);
    morning(&twin);
    evening(&twin);
    twin.ok(&["settle", "--date", &day]);
    assert_eq!(
        rows(&env),
        rows(&twin),
        "killed around the cut-over and rerun == never killed"
    );
}

#[test]
fn a_day_before_the_year_1000_is_refused_and_never_blocks_the_nightly_run() {
    // Regression: these panicked in the MySQL client (exit 101), init-day after writing boards.
    let env = TestEnv::with_roster(TZ, 6, 2);
    let before = env.redis_snapshot();
    for args in [["settle", "--date", "0999-12-31"], ["init-day", "--date", "0999-12-31"]] {
        let err = env.fails(&args, 2);
        assert!(err.contains("years 1000 to 9999"), "{err}");
    }
    assert_eq!(env.redis_snapshot(), before);
    // A board of such a day (written before the punch rules refused it) is left out of catch-up.
    let k = env.keys();
    let _: () = env
        .redis()
        .hset(k.board("D001", common::date("0999-01-01")), "E1", "i30000")
        .unwrap();
    let _: () = env.redis().sadd(k.board_days("D001"), "0999-01-01").unwrap();
    let s = env.json(&["settle", "--json"]);
    assert_eq!(s["settled_days"], serde_json::json!([days_ago(1)]));
}

#[test]
fn the_cutover_merges_into_a_board_a_killed_run_left_and_release_keeps_a_fresh_days_entry() {
    use std::collections::HashMap;
    let env = TestEnv::new(TZ);
    let (k, d) = (env.keys(), common::date(&days_ago(2)));
    let depts = vec!["D1".to_string(), "D2".to_string()];
    let mut con = env.redis();
    let mut board = env.board_handle();
    let day = d.to_string();
    // D1: settle's board from a killed run, and a live board that came after it.
    let _: () = con
        .hset_multiple(k.settle_board("D1", d), &[("E1", "i100"), ("E3", "o900")])
        .unwrap();
    let _: () = con
        .hset_multiple(k.board("D1", d), &[("E1", "o500,i100"), ("E2", "")])
        .unwrap();
    // D2: a live board only.
    let _: () = con.hset(k.board("D2", d), "E4", "i200").unwrap();
    let _: () = con.sadd(k.board_days("D1"), &day).unwrap();
    let _: () = con.sadd(k.board_days("D2"), &day).unwrap();

    let moved = board.cut_over(d, &depts, 10, |_| {}).unwrap();
    assert_eq!(moved, 2);
    let d1: HashMap<String, String> = con.hgetall(k.settle_board("D1", d)).unwrap();
    let want: HashMap<String, String> = [("E1", "i100,o500"), ("E2", ""), ("E3", "o900")]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .into();
    assert_eq!(d1, want, "every distinct punch of both boards, once");
    let d2: HashMap<String, String> = con.hgetall(k.settle_board("D2", d)).unwrap();
    assert_eq!(d2["E4"], "i200");
    assert!(!con.exists::<_, bool>(k.board("D1", d)).unwrap());
    assert!(board.without_board(d, &depts).unwrap().is_empty());
    assert_eq!(board.settle_boards(d, &depts).unwrap().entries.len(), 4);

    // A punch lands on a fresh live board of D2 before settle releases the day.
    let _: () = con.hset(k.board("D2", d), "E5", "o300").unwrap();
    let deleted = board.release(d, &depts, 0, 10, |_| {}).unwrap();
    assert_eq!(deleted, 2);
    let days = board.days_with_boards(&depts).unwrap();
    assert_eq!(
        days.into_iter().collect::<Vec<_>>(),
        [d],
        "D2's fresh board keeps the day listed"
    );
    assert!(!con.sismember::<_, _, bool>(k.board_days("D1"), &day).unwrap());
    assert_eq!(board.without_board(d, &depts).unwrap(), ["D1"]);
}

/// Settle goes a slice of departments at a time: an employee whose punches sit on boards of
/// departments in different slices (moved during the day), and one off the active roster, get
/// the rows a settle of the whole day at once gave (every punch of every board, one row each).
#[test]
fn punches_on_boards_of_departments_far_apart_give_one_row_from_all_of_them() {
    let env = TestEnv::with_roster(TZ, 130, 60);
    let moved = members(&env, "D001").last().unwrap().clone();
    let left = members(&env, "D002").last().unwrap().clone();
    // In at 08:30 on D001's board, out at 18:30 on D060's, where the roster now has them.
    env.logged_board_field("D001", DAY, &moved, "i30600");
    env.logged_board_field("D060", DAY, &moved, "o66600");
    // Left the company during the day, after a check-in on D030's board (not their own).
    env.logged_board_field("D030", DAY, &left, "i31000");
    env.mysql()
        .exec_drop("UPDATE employees SET department_id = 'D060' WHERE id = ?", (&moved,))
        .unwrap();
    env.mysql()
        .exec_drop("UPDATE employees SET active = FALSE WHERE id = ?", (&left,))
        .unwrap();

    env.ok(&["settle", "--date", DAY]);
    let row = |emp: &str| -> (String, String, String) {
        env.mysql()
            .exec_first(
                "SELECT department_id, CAST(status AS CHAR), punches FROM attendance WHERE work_date = ? AND employee_id = ?",
                (DAY, emp),
            )
            .unwrap()
            .unwrap()
    };
    assert_eq!(
        row(&moved),
        (
            "D060".to_string(),
            "present".to_string(),
            "in@2026-11-20T07:30:00Z,out@2026-11-20T17:30:00Z".to_string()
        )
    );
    assert_eq!(
        row(&left),
        (
            "D030".to_string(),
            "missing_checkout".to_string(),
            "in@2026-11-20T07:36:40Z".to_string()
        )
    );
    // Every active employee once, and the one who left.
    assert_eq!(env.count("attendance"), 130);
    assert!(boards(&env, DAY).is_empty());
    let before = rows(&env);
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(rows(&env), before, "a rerun from the stored histories changes nothing");
}

/// A first settle of a day loads its rows with LOAD DATA, which skips a row already there: the
/// loader says so (the writer then upserts the batch) and never touches that row itself.
#[test]
fn loading_rows_over_a_row_already_there_says_so_and_keeps_that_row() {
    use attendance::{load_fresh, DayRow};
    use attendance::{DayOutcome, DayStatus};
    let env = TestEnv::with_roster(TZ, 4, 1);
    let ids = members(&env, "D001");
    let mut conn = env.mysql();
    conn.exec_drop(
        "INSERT INTO attendance (work_date, employee_id, department_id, status, punches, corrected) \
         VALUES (?, ?, 'D001', 'present', '', TRUE)",
        (DAY, &ids[0]),
    )
    .unwrap();
    let absent = |id: &str| DayRow {
        employee_id: id.into(),
        department_id: "D001".into(),
        outcome: DayOutcome {
            status: DayStatus::Absent,
            late_minutes: 0,
            early_minutes: 0,
        },
        first_in: None,
        last_out: None,
        punches: vec![],
    };
    let mut load = |day: &str, rows: &[DayRow]| {
        let mut tx = conn.start_transaction(mysql::TxOpts::default()).unwrap();
        let clean = load_fresh(&mut tx, common::date(day), rows.iter()).unwrap();
        tx.commit().unwrap();
        clean
    };
    assert!(
        !load(DAY, &[absent(&ids[0]), absent(&ids[1])]),
        "a row was already there"
    );
    assert!(
        load("2026-11-19", &[absent(&ids[2]), absent(&ids[3])]),
        "a day with no rows"
    );
    let s = statuses(&env, DAY);
    assert_eq!((s[&ids[0]].as_str(), s[&ids[1]].as_str()), ("present", "absent"));
    assert_eq!(statuses(&env, "2026-11-19").len(), 2);
}
