//! Values are what they say, and no input crashes the binary (issue 22, points 5 and 6): each
//! odd value is refused in one line naming it (exit 2) and changes nothing in any store; a
//! misspelt variable is a warning naming the setting meant; a closed stderr is not a panic.

mod common;

use std::os::unix::ffi::OsStrExt;

use common::TestEnv;

const TZ: &str = "Europe/Paris";

/// Run and require exit 2 with one error line holding `words`; returns the line.
fn refused(env: &TestEnv, c: &mut std::process::Command, words: &str) -> String {
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{c:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: ") && err.contains(words), "{c:?}: {err}");
    let _ = env;
    err
}

fn stores(env: &TestEnv) -> (Vec<(String, String)>, Vec<String>, u64) {
    (env.redis_snapshot(), env.attendance_rows(), env.count("settle_runs"))
}

#[test]
fn an_environment_value_that_is_not_text_or_is_empty_is_refused_by_name() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let before = stores(&env);
    let punch = ["checkin", "E000002", "--at", "2026-11-20T08:00:00Z"];
    let not_utf8 = std::ffi::OsStr::from_bytes(b"\xff5");
    for var in ["ATTENDANCE_POLICY_GRACE_MINUTES", "ATTENDANCE_REDIS_URL"] {
        let mut c = env.std_cmd();
        c.env(var, not_utf8).args(punch);
        refused(&env, &mut c, &format!("{var} holds bytes that are not UTF-8"));
        let mut c = env.std_cmd();
        c.env(var, "").args(punch);
        refused(&env, &mut c, &format!("{var} is set but empty"));
    }
    let mut c = env.std_cmd();
    c.env("ATTENDANCE_POLICY_WORK_DAYS", "mon,,tue").args(punch);
    refused(&env, &mut c, "policy.work_days (ATTENDANCE_POLICY_WORK_DAYS)");
    assert_eq!(stores(&env), before, "nothing recorded");

    // A misspelt variable: the command runs on the defaults, and says which setting was meant.
    let o = env
        .std_cmd()
        .env("ATTENDANCE_POLCY_GRACE_MINUTES", "10")
        .args(["status", "E000002", "--date", "2026-11-20"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        err.trim(),
        "warning: ATTENDANCE_POLCY_GRACE_MINUTES is not a setting and is ignored; did you mean ATTENDANCE_POLICY_GRACE_MINUTES?"
    );
}

#[test]
fn dates_and_times_are_exactly_what_they_say_and_out_of_range_is_a_usage_error() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let before = stores(&env);
    for date in ["2026-1-1", " 2026-12-01", "2026-12-01 ", "+2026-12-01"] {
        let mut c = env.std_cmd();
        c.args(["status", "E000002", "--date", date]);
        refused(&env, &mut c, "expected YYYY-MM-DD");
    }
    let mut c = env.std_cmd();
    c.args(["checkin", "E000002", "--kind", "out", "--at", "2026-11-30T23:59:60Z"]);
    refused(&env, &mut c, "a leap second (:60) is not accepted: give :59");
    let mut c = env.std_cmd();
    c.args(["checkin", "E000002", "--at", "9999-12-31T23:59:59Z"]);
    refused(&env, &mut c, "at least a day inside the years 1000 to 9999");
    // The last month's partition needs 10000-01-01 as its bound: a usage error, not MySQL's.
    let mut c = env.std_cmd();
    c.args(["db", "partition", "--from", "9999-12", "--months", "1"]);
    refused(&env, &mut c, "goes past 9999-11");
    assert_eq!(stores(&env), before, "nothing recorded");
    let partitioned: Option<String> = {
        use mysql::prelude::Queryable;
        env.mysql()
            .query_first(
                "SELECT partition_name FROM information_schema.partitions \
                 WHERE table_schema = DATABASE() AND table_name = 'attendance' AND partition_name IS NOT NULL LIMIT 1",
            )
            .unwrap()
    };
    assert_eq!(partitioned, None, "the table was left as it was");
}

#[test]
fn no_input_makes_the_binary_abort_or_panic() {
    let env = TestEnv::migrated(TZ);
    // Sizes that would need 34 GB are refused by clap before anything is drawn.
    let mut c = env.std_cmd();
    c.args([
        "org",
        "generate",
        "--employees",
        "4294967295",
        "--departments",
        "4294967295",
    ]);
    refused(&env, &mut c, "4294967295 is not in 1..=10000000");
    // A config that never ends is refused after its first MiB.
    let mut c = env.std_cmd();
    c.args(["status", "E000001", "--config", "/dev/zero"]);
    refused(&env, &mut c, "/dev/zero is larger than 1 MiB");
    // A closed stderr (`... 2>&1 | head -c 100` once head is gone): the error cannot be
    // printed, and the exit code still says usage (2), not a panic (101).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = env
        .std_cmd()
        .args(["status", "E1", "--date", "nonsense"])
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = env
        .std_cmd()
        .args(["status", "E000001", "--date", "2026-11-20"])
        .env("ATTENDANCE_POLCY_GRACE_MINUTES", "1")
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "a warning on a closed stderr, then the unknown employee"
    );
}
