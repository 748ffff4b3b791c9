//! Usage, configuration and help: the parts every command shares.

mod common;
use common::TestEnv;

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let env = TestEnv::new("UTC");
    env.fails(&["no-such-command"], 2);
    env.fails(&["checkin"], 2);
    let help = env.ok(&["--help"]);
    assert!(help.contains("Exit codes"), "{help}");
    assert!(env.ok(&["checkin", "--help"]).contains("--kind"));
}

#[test]
fn a_bad_config_is_one_line_naming_the_key() {
    let env = TestEnv::new("UTC");
    let f = env.file("bad.toml", "[policy]\ncheckin_deadline = \"nine\"\n");
    let e = env.fails(&["--config", f.to_str().unwrap(), "status", "E1"], 2);
    assert!(
        e.contains("policy.checkin_deadline") && e.trim().lines().count() == 1,
        "{e}"
    );
    let e = env
        .cmd()
        .args(["status", "E1"])
        .env("ATTENDANCE_TIMEZONE", "Mars/Olympus")
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("ATTENDANCE_TIMEZONE"));
}

#[test]
fn migrate_creates_the_database_and_is_idempotent() {
    let env = TestEnv::new("UTC");
    env.ok(&["migrate"]);
    env.ok(&["migrate"]);
    assert_eq!(env.count("employees"), 0);
    let e = env
        .cmd()
        .args(["status", "E1"])
        .env(
            "ATTENDANCE_MYSQL_URL",
            format!("{}{}", common::MYSQL_SERVER, "att_never_made_x"),
        )
        .output()
        .unwrap();
    // An empty roster cache sends status to MySQL, whose missing database is a usage error.
    assert_eq!(e.status.code(), Some(2), "{}", String::from_utf8_lossy(&e.stderr));
}

/// Run with stdout a pipe whose reader is already gone; returns (exit code, stderr).
fn with_closed_stdout(env: &TestEnv, args: &[&str]) -> (Option<i32>, String) {
    let mut child = env
        .std_cmd()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string())
}

#[test]
fn a_closed_stdout_ends_quietly_with_exit_0() {
    // Regression: `attendance report day | head -1` panicked in println! (exit 101).
    let env = TestEnv::migrated("UTC");
    for args in [
        &["org", "generate", "--employees", "50000", "--departments", "50"][..],
        &["calendar", "list", "--from", "2026-01-01", "--to", "2026-12-31"][..],
        &[
            "calendar",
            "list",
            "--from",
            "2026-01-01",
            "--to",
            "2026-12-31",
            "--json",
        ][..],
        &["report", "runs", "--format", "csv"][..],
    ] {
        let (code, err) = with_closed_stdout(&env, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("error"), "{args:?}: {err}");
    }
}

#[test]
fn a_file_that_cannot_be_written_is_an_internal_error_exit_5() {
    let env = TestEnv::new("UTC");
    let bad = env.dir.join("no-such-dir").join("roster.csv");
    let e = env.fails(
        &[
            "org",
            "generate",
            "--employees",
            "10",
            "--departments",
            "2",
            "-o",
            bad.to_str().unwrap(),
        ],
        5,
    );
    assert!(
        e.starts_with("error: cannot create") && e.trim().lines().count() == 1,
        "{e}"
    );
}

#[test]
fn a_bad_value_read_back_from_mysql_is_an_internal_error_exit_5() {
    // A calendar kind the code does not know (a hand-edited table) must not read as anything.
    let env = TestEnv::migrated("UTC");
    let mut db = env.mysql();
    mysql::prelude::Queryable::query_drop(&mut db, "ALTER TABLE calendar_days MODIFY kind VARCHAR(20) NOT NULL")
        .unwrap();
    mysql::prelude::Queryable::query_drop(
        &mut db,
        "INSERT INTO calendar_days (day, kind) VALUES ('2026-12-25', 'feast')",
    )
    .unwrap();
    let e = env.fails(&["calendar", "list", "--from", "2026-12-20", "--to", "2026-12-31"], 5);
    assert!(e.contains("feast") && e.trim().lines().count() == 1, "{e}");
}
