//! Honest settle runs: a settle that committed every row and then
//! failed records its run with those rows and what failed after; MySQL out of space is a
//! failing service (exit 3, one line), never rows counted as failed; an error line is one line
//! of at most 300 characters.

use crate::common;

use chrono::{NaiveDate, Utc};
use common::day::Day;
use common::private_redis::PrivateRedis;
use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "UTC";

fn yesterday() -> NaiveDate {
    Utc::now().date_naive().pred_opt().unwrap()
}

/// The only error line of a failed command: one line, `error: `, at most 300 characters.
fn one_error_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(lines.len(), 1, "one error line: {stderr}");
    assert!(
        lines[0].chars().count() <= 300,
        "{} chars: {}",
        lines[0].chars().count(),
        lines[0]
    );
    lines[0]
}

/// (outcome, rows_written, failed, problem) of every run, oldest first.
fn runs(env: &TestEnv) -> Vec<(String, u64, u64, String)> {
    env.mysql()
        .query("SELECT CAST(outcome AS CHAR), rows_written, failed, problem FROM settle_runs ORDER BY id")
        .unwrap()
}

/// Regression: a settle whose Redis refused writes (OOM) when laying out
/// the next work day left its run `interrupted` with 0 rows, and printed a 2.5 KB "line".
#[test]
fn a_settle_that_fails_after_its_commit_records_the_rows_it_committed_and_what_failed() {
    let dir = std::env::temp_dir().join(format!("att-honest-redis-{}", uuid::Uuid::new_v4().simple()));
    let redis = PrivateRedis::start_in(dir.clone(), false);
    let env = TestEnv::on_redis(TZ, &redis.url());
    let day = yesterday().to_string();
    env.day(Day::new(40, 4).import_flags(&["-q"]).init_day(&day, &["-q"]));

    // Nothing settle does before its commit grows Redis (the cut-over renames, the boards are
    // read): with a limit below what Redis already uses, the first write that needs memory is
    // the next work day's layout, after every row is committed.
    redis.maxmemory(1);
    let o = env.run(&["settle", "--date", &day]);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(3), "a failing Redis: {stderr}");
    let line = one_error_line(&stderr);
    eprintln!("{line}");
    assert!(line.contains("all 40 rows committed"), "{line}");
    assert!(line.contains("failed_after_commit"), "{line}");
    assert!(line.contains("laying out the next work day"), "{line}");
    assert!(line.contains("OOM"), "Redis's own words: {line}");

    assert_eq!(env.count("attendance"), 40, "every row is in MySQL");
    assert_eq!(env.count("settle_failures"), 0);
    let recorded = runs(&env);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let (outcome, rows, failed, problem) = &recorded[0];
    assert_eq!((outcome.as_str(), *rows, *failed), ("failed_after_commit", 40, 0));
    assert!(problem.contains("OOM") && problem.chars().count() <= 300, "{problem}");
    let shown = env.ok(&["report", "runs", "--format", "csv"]);
    assert!(
        shown.contains("failed_after_commit") && shown.contains("OOM"),
        "{shown}"
    );

    // Room again: a rerun finishes the day (the same rows) and lays out the next one.
    redis.maxmemory(0);
    let s = env.json(&["settle", "--date", &day, "--json"]);
    assert_eq!(s["rows_written"], 40);
    assert!(s["next_day"]["employees"].as_u64() == Some(40), "{s}");
    assert_eq!(env.count("attendance"), 40);
    let last = runs(&env).pop().unwrap();
    assert_eq!((last.0.as_str(), last.1, last.3.as_str()), ("ok", 40, ""));
    drop(redis);
    std::fs::remove_dir_all(&dir).ok();
}

/// Regression: MySQL out of space (error 1114, "table is full") was
/// counted as failed rows, one per employee, in `settle_failures`. It is MySQL failing: exit 3,
/// one line saying MySQL is out of space, the run recorded as failed, the boards kept.
#[test]
fn mysql_out_of_space_is_a_failing_service_not_failed_rows() {
    let day = yesterday().to_string();
    let env = TestEnv::with_day(TZ, Day::new(300, 3).import_flags(&["-q"]).init_day(&day, &["-q"]));
    // A table that fills at once, in this test's own database only: a MEMORY table holds at
    // most MAX_ROWS rows and then answers 1114 "The table 'attendance' is full", as a full
    // disk or tablespace does. (No shared disk is filled.)
    env.mysql()
        .query_drop("ALTER TABLE attendance ENGINE=MEMORY MAX_ROWS=10")
        .unwrap();

    let o = env.run(&["settle", "--date", &day]);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(3), "a failing MySQL: {stderr}");
    let line = one_error_line(&stderr);
    eprintln!("{line}");
    assert!(line.contains("MySQL is out of space"), "{line}");
    assert!(line.contains("is full"), "MySQL's own words: {line}");

    assert_eq!(env.count("settle_failures"), 0, "no row counted as failed");
    let recorded = runs(&env);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let (outcome, _, failed, problem) = &recorded[0];
    assert_eq!((outcome.as_str(), *failed), ("failed", 0));
    assert!(problem.contains("MySQL is out of space"), "{problem}");
    // The boards are kept (settle's copies after the cut-over) for the rerun.
    let keys = env.keys();
    let departments: Vec<String> = env.mysql().query("SELECT id FROM departments ORDER BY id").unwrap();
    let mut con = env.redis();
    let mut kept = 0;
    for d in &departments {
        let n: u64 = redis::cmd("HLEN")
            .arg(keys.settle_board(d, yesterday()))
            .query(&mut con)
            .unwrap();
        assert!(n > 0, "{d}'s board is kept");
        kept += n;
    }
    assert_eq!(kept, 300, "every employee's field is still on a board");

    // Space again: the rerun writes every row.
    env.mysql()
        .query_drop("ALTER TABLE attendance ENGINE=InnoDB MAX_ROWS=0")
        .unwrap();
    let s = env.json(&["settle", "--date", &day, "--json"]);
    assert_eq!(s["rows_written"], 300);
    assert_eq!(env.count("attendance"), 300);
    assert_eq!(env.count("settle_failures"), 0);
}
