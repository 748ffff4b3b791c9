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
