//! Settled days checked against what MySQL holds. Regression: a MySQL fail-over to a replica
//! behind by a whole settle lost that day's rows, and the next nightly settle exited 0 and
//! `doctor` named nothing. Settle keeps a record of each settled day's rows in Redis; the
//! nightly settle refuses (exit 6) and `doctor` fails on a day MySQL holds less of, naming it,
//! and `recover` then `settle --date D` restore it. Also: a settle that stops says its run was
//! recorded as failed only when MySQL took that record.

use crate::common;

use super::reconcile::{punch_sent, DAY, TZ};
use common::day::Day;
use common::TestEnv;
use mysql::prelude::Queryable;

/// Every row of DAY as (employee, status, punches), and the day's punch log size.
fn day_in_mysql(env: &TestEnv) -> (Vec<(String, String, String)>, u64) {
    let mut db = env.mysql();
    let rows = db
        .exec(
            "SELECT employee_id, CAST(status AS CHAR), punches FROM attendance WHERE work_date = ? ORDER BY employee_id",
            (DAY,),
        )
        .unwrap();
    let logged: u64 = db
        .exec_first("SELECT COUNT(*) FROM punch_log WHERE work_date = ?", (DAY,))
        .unwrap()
        .unwrap();
    (rows, logged)
}

/// What a promoted replica that missed the day's settle holds: none of its rows, punch log or
/// run records.
fn lose_the_day(env: &TestEnv) {
    let mut db = env.mysql();
    for table in ["attendance", "punch_log", "settle_failures", "settle_runs"] {
        db.exec_drop(format!("DELETE FROM {table} WHERE work_date = ?"), (DAY,))
            .unwrap();
    }
}

#[test]
fn a_settled_day_that_mysql_lost_is_named_by_settle_and_doctor_and_restored_by_recover() {
    let env = TestEnv::with_day(TZ, Day::new(12, 2).import_flags(&["-q"]).init_day(DAY, &["-q"]));
    let people = env.members("D001");
    let (a, b) = (&people[0], &people[1]);
    let first = punch_sent(&env, a, "in", "08:50");
    punch_sent(&env, a, "out", "18:05");
    punch_sent(&env, b, "in", "09:20");

    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(s["rows_written"], 12, "{s}");
    let settled = day_in_mysql(&env);
    assert_eq!(settled.0.len(), 12);
    assert_eq!(settled.1, 3, "three punches logged");
    let (status, detail, code) = env.doctor_check("settled days");
    assert_eq!(status, "ok", "{detail}");
    assert_ne!(code, 3, "nothing failed");

    lose_the_day(&env);
    let redis_before = env.redis_snapshot();

    // The nightly settle names the day, what was expected and what MySQL holds, and what to
    // run; it writes nothing (yesterday too waits for the day to be restored).
    let err = env.fails(&["settle"], 6);
    assert!(err.contains(DAY), "{err}");
    assert!(err.contains("12 rows with 2 punched expected"), "{err}");
    assert!(err.contains("MySQL holds 0 with 0 punched"), "{err}");
    assert!(
        err.contains(&format!("attendance recover --date {DAY}")) && err.contains(&format!("settle --date {DAY}")),
        "{err}"
    );
    assert_eq!(env.count("attendance"), 0, "nothing written");
    assert_eq!(env.count("settle_runs"), 0, "no run started");
    assert_eq!(env.redis_snapshot(), redis_before, "Redis unchanged");
    // `settle --date D` alone, with no board to settle from, refuses the same way.
    let err = env.fails(&["settle", "--date", DAY], 6);
    assert!(err.contains("MySQL holds 0 with 0 punched"), "{err}");
    assert_eq!(env.count("attendance"), 0, "nothing written");

    let (status, detail, code) = env.doctor_check("settled days");
    assert_eq!((code, status.as_str()), (3, "fail"), "{detail}");
    assert!(
        detail.contains(DAY) && detail.contains("12 rows with 2 punched expected"),
        "{detail}"
    );
    assert!(detail.contains(&format!("attendance recover --date {DAY}")), "{detail}");

    // What the line says restores it: the boards back from the journal (the settled day's
    // punch tokens do not make the journal's punches repeats), then the day settled again.
    let r = env.json(&["recover", "--date", DAY, "--idle-ms", "1000", "--json"]);
    assert_eq!(r["was_settled"], true, "{r}");
    assert_eq!(r["restored"], 3, "{r}");
    let s = env.json(&["settle", "--date", DAY, "--json"]);
    assert_eq!(s["rows_written"], 12, "{s}");
    assert_eq!(
        day_in_mysql(&env),
        settled,
        "the same rows and punch log as before the loss"
    );
    let (status, detail, _) = env.doctor_check("settled days");
    assert_eq!(status, "ok", "{detail}");

    // The day's punches are still repeats when a kiosk sends one again.
    let c = env.json(&[
        "checkin",
        a,
        "--kind",
        "in",
        "--at",
        &format!("{DAY}T08:50:00+01:00"),
        "--json",
    ]);
    assert_eq!(c["duplicate"], true, "{c}");
    let logged: u64 = env
        .mysql()
        .exec_first("SELECT COUNT(*) FROM punch_log WHERE event_id = ?", (&first,))
        .unwrap()
        .unwrap();
    assert_eq!(logged, 1, "one punch in the punch log, restored once");
}

/// The runs of the test's database: (id, outcome).
fn runs(env: &TestEnv) -> Vec<(u64, String)> {
    env.mysql()
        .query("SELECT id, CAST(outcome AS CHAR) FROM settle_runs ORDER BY id")
        .unwrap()
}

/// Make MySQL refuse to record a run with any of `outcomes` (a trigger in this test's own
/// database), as a MySQL that died after the rows were committed would.
fn refuse_outcomes(env: &TestEnv, outcomes: &str) {
    let mut db = env.mysql();
    db.query_drop("DROP TRIGGER IF EXISTS refuse_run_record").unwrap();
    db.query_drop(format!(
        "CREATE TRIGGER refuse_run_record BEFORE UPDATE ON settle_runs FOR EACH ROW \
         IF NEW.outcome IN ({outcomes}) THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'record refused'; END IF"
    ))
    .unwrap();
}

/// Regression: a settle whose MySQL died mid-run said "run N recorded as failed" when that
/// record was never written (the restarted primary still showed it `running`).
#[test]
fn a_stopped_settle_says_its_run_was_recorded_only_when_mysql_took_the_record() {
    let env = TestEnv::with_day(TZ, Day::new(6, 1).import_flags(&["-q"]).init_day(DAY, &["-q"]));

    // Finishing the run fails, and so does recording it as failed: the line says so.
    refuse_outcomes(&env, "'ok', 'partial', 'failed_after_commit'");
    let err = env.fails(&["settle", "--date", DAY, "--no-reconcile"], 3);
    assert!(err.contains("all 6 rows committed"), "{err}");
    assert!(err.contains("not recorded as failed_after_commit"), "{err}");
    assert!(!err.contains("recorded as failed_after_commit)"), "{err}");
    let recorded = runs(&env);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].1, "running", "what MySQL holds, as the line says");

    // Only finishing fails: the failure is recorded, and the line says that.
    refuse_outcomes(&env, "'ok', 'partial'");
    let err = env.fails(&["settle", "--date", DAY, "--no-reconcile"], 3);
    let run = runs(&env).pop().unwrap();
    assert!(
        err.contains(&format!("run {}, recorded as failed_after_commit", run.0)),
        "{err}"
    );
    assert_eq!(run.1, "failed_after_commit");

    env.mysql().query_drop("DROP TRIGGER refuse_run_record").unwrap();
    let s = env.json(&["settle", "--date", DAY, "--no-reconcile", "--json"]);
    assert_eq!(s["rows_written"], 6, "{s}");
}
