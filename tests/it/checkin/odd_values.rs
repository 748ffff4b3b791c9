//! Values are what they say, and no input crashes the binary: each
//! odd value is refused in one line naming it (exit 2) and changes nothing in any store; a
//! misspelt variable is a warning naming the setting meant; a closed stderr is not a panic.

use crate::common;

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

    // A misspelt rule's variable: the command runs on the rulebook, and says where rules are set.
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
        "warning: ATTENDANCE_POLCY_GRACE_MINUTES is not a setting and is ignored; the company's rules are the rulebook's: `attendance policy set policy.grace_minutes VALUE --from DATE --reason R`"
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
    // clap's own errors quote a bad value by its first 80 characters too.
    let long = "9".repeat(5_000);
    let mut c = env.std_cmd();
    c.args(["status", "E000002", "--date", &long]);
    let err = refused(&env, &mut c, "(4920 more characters)");
    assert!(err.len() < 300, "{err}");
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

/// The peak resident memory of `attendance args` in KiB (GNU time), with its exit code and stderr.
fn peak_rss(env: &TestEnv, args: &[&str]) -> (u64, Option<i32>, String) {
    let report = env.dir.join("rss");
    let o = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(assert_cmd::cargo::cargo_bin("attendance"))
        .args(args)
        .envs(
            env.std_cmd()
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .output()
        .unwrap();
    let kib = std::fs::read_to_string(&report)
        .unwrap()
        .trim()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    (kib, o.status.code(), String::from_utf8_lossy(&o.stderr).to_string())
}

#[test]
fn an_endless_or_oversized_input_is_refused_in_bounded_memory_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let before = stores(&env);
    for (args, what) in [
        (
            &["org", "import", "/dev/zero"][..],
            "roster: cannot read the header: line 1 is longer than 64 KiB",
        ),
        (
            &["calendar", "import", "/dev/zero"],
            "calendar: cannot read the header: line 1 is longer than 64 KiB",
        ),
        (
            &["checkin", "--file", "/dev/zero"],
            "punches: cannot read the header: line 1 is longer than 64 KiB",
        ),
    ] {
        let (kib, code, err) = peak_rss(&env, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(what), "{args:?}: {err}");
        eprintln!("{args:?}: peak RSS {kib} KiB");
        assert!(kib < 64 * 1024, "{args:?} used {kib} KiB on /dev/zero");
    }
    // A long line in the middle of a file: refused whole, naming the line.
    let long = env.file(
        "long.csv",
        &format!(
            "date,kind,note\n2026-12-24,holiday,eve\n2026-12-25,holiday,{}\n",
            "x".repeat(70_000)
        ),
    );
    let err = env.fails(&["calendar", "import", long.to_str().unwrap()], 2);
    assert!(err.contains("line 3 is longer than 64 KiB"), "{err}");
    // More rows than a calendar may hold.
    let mut rows = String::from("date,kind\n");
    let mut d = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).unwrap();
    for _ in 0..10_001 {
        rows += &format!("{d},holiday\n");
        d = d.succ_opt().unwrap();
    }
    let many = env.file("many.csv", &rows);
    let err = env.fails(&["calendar", "import", many.to_str().unwrap()], 2);
    assert!(err.contains("more than 10000 rows"), "{err}");
    // A 60,000-character id (within the line bound) is named by its first 80 characters.
    let huge = format!("employee_id,kind,at\n{},in,2026-11-20T08:00:00Z\n", "E".repeat(60_000));
    let file = env.file("huge.csv", &huge);
    let o = env.run(&["checkin", "--file", file.to_str().unwrap(), "--json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!(
            "invalid employee_id '{}... (59920 more characters)'",
            "E".repeat(80)
        )),
        "{}",
        &out[..out.len().min(500)]
    );
    assert!(
        out.len() < 2_000,
        "the refusal quotes a bounded part: {} bytes",
        out.len()
    );
    assert_eq!(stores(&env), before, "nothing recorded");
}

#[test]
fn a_roster_or_calendar_with_many_bad_lines_names_the_first_and_writes_every_one_to_errors() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let before = (stores(&env), env.members("D001"));
    let mut roster = String::from("employee_id,name,department_id,department_name,role\n");
    let mut calendar = String::from("date,kind\n");
    for i in 0..5_000 {
        roster += &format!("E9{i:05},Name,D001,Dept,boss\n");
        calendar += &format!("2027-13-{:02},holiday\n", i % 28 + 1);
    }
    for (args, file, content) in [
        (["org", "import"], "roster.csv", &roster),
        (["calendar", "import"], "calendar.csv", &calendar),
    ] {
        let input = env.file(file, content);
        let errors = env.dir.join(format!("{file}.errors"));
        let o = env.run(&[
            args[0],
            args[1],
            input.to_str().unwrap(),
            "--errors",
            errors.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.trim_end().chars().count() <= 300 && err.contains("5000 bad line(s)"),
            "{err}"
        );
        assert!(
            err.contains(&format!("every bad line is in {}", errors.display())),
            "{err}"
        );
        let written = std::fs::read_to_string(&errors).unwrap();
        assert_eq!(written.lines().count(), 5_001, "a header and every bad line");
        assert!(written.starts_with("line,reason\n2,"), "{}", &written[..80]);
    }
    assert_eq!((stores(&env), env.members("D001")), before, "nothing imported");
}
