//! Usage, configuration and help: the parts every command shares.

use crate::common;
use common::TestEnv;

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let env = TestEnv::new("UTC");
    let e = env.fails(&["no-such-command"], 2);
    assert_eq!(e.trim(), "error: unrecognized subcommand 'no-such-command'");
    let e = env.fails(&["checkin"], 2);
    assert!(e.starts_with("error: ") && e.trim().lines().count() == 1, "{e}");
    // No command at all: a usage error that lists the commands (clap prints the whole help
    // instead when no flag or variable is given either).
    let e = env.fails(&[], 2);
    assert!(e.contains("checkin") && e.contains("settle"), "{e}");
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

#[test]
fn dates_outside_the_years_1000_to_9999_are_usage_errors_that_change_nothing() {
    // Regression: status/settle/report/leave add/calendar list panicked (exit 101) on 0999-12-31,
    // and init-day / checkin --at accepted year 0 and made boards nothing could settle.
    let env = TestEnv::with_roster("UTC", 20, 2);
    let before = env.redis_snapshot();
    for args in [
        &["status", "E000001", "--date", "0999-12-31"][..],
        &["settle", "--date", "0999-12-31"][..],
        &["report", "day", "--date", "0999-12-31"][..],
        &["report", "employee", "E000001", "--from", "0999-12-01"][..],
        &["leave", "add", "E000001", "0999-12-01", "0999-12-31"][..],
        &["calendar", "list", "--from", "0999-12-01"][..],
        &["calendar", "set", "0999-12-25", "holiday"][..],
        &["init-day", "--date", "0000-01-01"][..],
        &["checkin", "E000001", "--at", "0000-01-01T00:00:00Z"][..],
        &[
            "correct",
            "E000001",
            "--date",
            "0999-12-31",
            "--in",
            "09:00",
            "--reason",
            "x",
            "--by",
            "E000002",
        ][..],
    ] {
        let e = env.fails(args, 2);
        assert!(
            e.starts_with("error: invalid value") && e.contains("1000 to 9999") && e.trim().lines().count() == 1,
            "{args:?}: {e}"
        );
    }
    assert_eq!(env.redis_snapshot(), before);
    assert_eq!((env.count("leaves"), env.count("calendar_days")), (0, 0));
    // The same rule for the rows of a file.
    let f = env.file("old.csv", "date,kind\n0999-12-25,holiday\n");
    let e = env.fails(&["calendar", "import", f.to_str().unwrap()], 2);
    assert!(e.contains("1000 to 9999"), "{e}");
}

#[test]
fn a_bad_format_is_a_usage_error_and_json_is_its_alias() {
    // Regression: --format was a string, and an unknown one could fall back to a table.
    let env = TestEnv::with_roster("UTC", 20, 2);
    env.fails(&["report", "day", "--format", "xml"], 2);
    env.fails(&["report", "day", "--format", "csv", "--json"], 2);
    let json = env.ok(&["report", "day", "--date", "2026-11-27", "--json"]);
    assert_eq!(
        json,
        env.ok(&["report", "day", "--date", "2026-11-27", "--format", "json"])
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["rows"].is_array() && v["totals"].is_null(), "no rows: no totals: {v}");
}

#[test]
fn an_unknown_department_in_a_day_report_is_refused() {
    let env = TestEnv::with_roster("UTC", 20, 2);
    for report in ["day", "absent"] {
        let e = env.fails(&["report", report, "--dept", "D999"], 1);
        assert!(e.contains("unknown department 'D999'"), "{e}");
    }
    env.ok(&["report", "day", "--dept", "D001"]);
}

#[test]
fn verbose_says_the_same_on_every_command_and_hides_passwords() {
    let env = TestEnv::migrated("UTC");
    let o = env
        .cmd()
        .args(["-v", "calendar", "list", "--from", "2026-12-01", "--to", "2026-12-02"])
        .env("ATTENDANCE_AMQP_URL", "amqp://guest:s3cret@127.0.0.1:5672/%2f")
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    // The configuration as `config show` prints it (not a Rust Debug dump).
    assert!(
        err.contains(&format!(
            "namespace = \"{}\"  # environment ATTENDANCE_NAMESPACE",
            env.ns
        )),
        "{err}"
    );
    assert!(
        err.contains("amqp_url = \"amqp://guest:***@127.0.0.1:5672/%2f\""),
        "{err}"
    );
    assert!(!err.contains("Config {"), "{err}");
    assert!(err.contains("done in ") && !err.contains("s3cret"), "{err}");
    // -q wins: nothing but errors.
    let o = env.run(&["-q", "calendar", "list"]);
    assert!(o.status.success() && o.stderr.is_empty());
}

#[test]
fn help_puts_the_connection_options_under_their_own_heading() {
    let env = TestEnv::new("UTC");
    let help = env.ok(&["status", "--help"]);
    let (own, connection) = help.split_once("Connection:").expect("a Connection heading");
    assert!(own.contains("--date") && own.contains("--json"), "{help}");
    assert!(
        !own.contains("--redis-url") && !own.contains("--report-mysql-url"),
        "{help}"
    );
    for flag in [
        "--config",
        "--redis-url",
        "--mysql-url",
        "--report-mysql-url",
        "--amqp-url",
        "--namespace",
        "--timezone",
    ] {
        assert!(connection.contains(flag), "{flag}: {help}");
    }
}

#[test]
fn every_config_key_is_settable_from_the_environment_and_checked_there() {
    let env = TestEnv::with_roster("UTC", 20, 2);
    // Policy is the rulebook's, not the environment's: refused, named with what to run.
    let o = env
        .cmd()
        .args(["checkin", "E000003", "--at", "2026-11-30T08:30:00Z", "--json"])
        .env("ATTENDANCE_POLICY_CHECKIN_DEADLINE", "08:00")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("attendance policy set policy.checkin_deadline"), "{err}");
    env.policy("policy.checkin_deadline", "08:00", "2000-01-01");
    env.policy("policy.max_future_skew_secs", "0", "2000-01-01");
    let o = env
        .cmd()
        .args(["checkin", "E000003", "--at", "2026-11-30T08:30:00Z", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["late"].as_bool(), v["late_minutes"].as_u64()),
        (Some(true), Some(30))
    );
    // Out of bounds: refused (exit 2) and named, not clamped; nothing recorded.
    let before = env.redis_snapshot();
    let o = env
        .cmd()
        .args(["checkin", "E000004"])
        .env("ATTENDANCE_SETTLE_BATCH_SIZE", "10000")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("settle.batch_size (ATTENDANCE_SETTLE_BATCH_SIZE)") && err.contains("1 to 7281"),
        "{err}"
    );
    assert_eq!(env.redis_snapshot(), before);
}

#[test]
fn a_stored_status_the_code_does_not_know_is_an_error_not_absent() {
    // Regression: rows were mapped by column index with defaults; a bad status read as `absent`.
    let env = TestEnv::with_roster("UTC", 20, 2);
    let mut db = env.mysql();
    for sql in [
        "ALTER TABLE attendance MODIFY status VARCHAR(20) NOT NULL",
        "INSERT INTO attendance (work_date, employee_id, department_id, status) \
         SELECT '2026-11-27', id, department_id, 'vacationing' FROM employees WHERE id = 'E000003'",
    ] {
        mysql::prelude::Queryable::query_drop(&mut db, sql).unwrap();
    }
    let e = env.fails(&["status", "E000003", "--date", "2026-11-27", "--json"], 5);
    assert!(
        e.contains("status") && e.contains("vacationing") && !e.contains("absent"),
        "{e}"
    );
}

#[test]
fn concurrent_overlapping_leave_for_one_employee_lands_once() {
    // The overlap rule and the insert are one transaction: of eight overlapping requests racing
    // for one employee, exactly one is recorded and the others are refused (exit 1).
    let env = TestEnv::with_roster("UTC", 20, 2);
    let children: Vec<_> = (1..=8)
        .map(|i| {
            env.std_cmd()
                .args(["leave", "add", "E000003", &format!("2026-12-{:02}", i), "2026-12-20"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<Option<i32>> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code())
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == Some(0)).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == Some(1)).count(), 7, "{codes:?}");
    assert_eq!(env.count("leaves"), 1);
    // The very same leave again is a repeat that prints its id; an unknown employee is refused.
    let listed = env.json(&["leave", "list", "--json"]);
    let l = &listed[0];
    let again = env.json(&[
        "leave",
        "add",
        "E000003",
        l["from"].as_str().unwrap(),
        "2026-12-20",
        "--json",
    ]);
    assert_eq!(
        (again["leave_id"].clone(), again["repeat"].as_bool()),
        (l["leave_id"].clone(), Some(true))
    );
    env.fails(&["leave", "add", "E999999", "2026-12-01", "2026-12-02"], 1);
    assert_eq!(env.count("leaves"), 1);
}

#[test]
fn sigterm_stops_a_following_relay_cleanly() {
    // Signals come through signal-hook now (not unsafe libc::signal): systemd's SIGTERM ends
    // `relay --follow` between two rounds with its summary and exit 0.
    let env = TestEnv::migrated("UTC");
    let child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "100"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("relay: stopped"), "{err}");
}

#[test]
fn a_config_file_is_found_where_admins_look_and_v_shows_it_without_its_passwords() {
    let env = TestEnv::migrated("UTC");
    // $XDG_CONFIG_HOME/attendance/config.toml (the test's folder is its XDG_CONFIG_HOME).
    std::fs::create_dir_all(env.dir.join("attendance")).unwrap();
    let found = env.dir.join("attendance").join("config.toml");
    std::fs::write(&found, "[settle]\nwriters = 3\n").unwrap();
    let o = env.run(&["-v", "calendar", "list", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("# config file: {}", found.display())), "{err}");
    assert!(
        err.contains(&format!("writers = 3  # file {}", found.display())),
        "{err}"
    );
    // A file named by ATTENDANCE_CONFIG wins over the one found.
    let named = env.file("named.toml", "[settle]\nwriters = 4\n");
    let o = env
        .cmd()
        .env("ATTENDANCE_CONFIG", &named)
        .args(["-v", "calendar", "list", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("writers = 4  # file"), "{err}");
    // -v shows the URLs with every password hidden, a query-string one too.
    let url = format!("{}?password=hunter2", env.mysql_url());
    let o = env
        .cmd()
        .env("ATTENDANCE_MYSQL_URL", &url)
        .args(["-v", "calendar", "list", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("hunter2") && err.contains("password=***"), "{err}");
}

#[test]
fn version_names_the_release_and_the_git_commit() {
    // Regression: `--version` said only 0.1.0.
    let env = TestEnv::new("UTC");
    let v = env.ok(&["--version"]);
    let commit = v
        .trim()
        .strip_prefix(concat!("attendance ", env!("CARGO_PKG_VERSION"), " (commit "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{v}"));
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        // Built in this checkout: the commit it was built from (build.rs reruns when HEAD moves).
        Some(head) => assert_eq!(commit, head),
        None => assert_eq!(commit, "unknown"),
    }
}

#[test]
fn queues_help_names_every_subcommand_and_counts_of_one_are_singular() {
    let env = TestEnv::migrated("UTC");
    // Regression: the summary of `queues` named declare and purge, not delete.
    let help = env.ok(&["queues", "--help"]);
    let about = help.lines().next().unwrap();
    assert!(
        ["declare", "purge", "delete"].iter().all(|c| about.contains(c)),
        "{help}"
    );
    // Regression: "imported 1 employees in 1 departments".
    let roster = env.file(
        "one.csv",
        "employee_id,name,department_id,department_name,role\nE1,Ann,D1,Sales,supervisor\n",
    );
    let o = env.run(&["org", "import", roster.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("imported 1 employee in 1 department (1 supervisor)"),
        "{err}"
    );
}
