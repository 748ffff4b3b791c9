//! The work calendar through the binary: import from a file or standard input, `--dry-run`
//! that writes nothing, and `calendar list`'s words for each day.

use crate::common;
use std::io::Write;

use common::TestEnv;
use mysql::prelude::Queryable;

/// Every calendar entry, as `day|kind|note`.
fn entries(env: &TestEnv) -> Vec<String> {
    env.mysql()
        .query("SELECT CONCAT_WS('|', day, kind, note) FROM calendar_days ORDER BY day")
        .unwrap()
}

/// `attendance args` with `input` on its standard input.
fn with_stdin(env: &TestEnv, args: &[&str], input: &str) -> std::process::Output {
    let mut child = env
        .std_cmd()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

const FILE: &str =
    "date,kind,note\n2026-12-24,holiday,Eve\n2026-12-25,holiday,Christmas\n2026-12-26,holiday,Boxing day\n";

#[test]
fn calendar_import_dry_run_says_what_would_change_and_writes_nothing() {
    let env = TestEnv::migrated("UTC");
    env.ok(&["calendar", "set", "2026-12-25", "holiday", "--note", "Christmas"]);
    env.ok(&["calendar", "set", "2026-12-26", "workday", "--note", "stocktake"]);
    let before = entries(&env);
    let file = env.file("days.csv", FILE);
    let args = ["calendar", "import", file.to_str().unwrap(), "--dry-run"];
    let o = env.run(&args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let out = common::expect_ok(&args, o);
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "2026-12-24  holiday (new)  Eve",
            "2026-12-26  workday -> holiday  Boxing day"
        ]
    );
    assert!(
        err.contains("dry run: would import 3 calendar days (1 new, 1 changed, 1 unchanged); nothing written"),
        "{err}"
    );
    let j = env.json(&[&args[..], &["--json"]].concat());
    assert_eq!(
        (&j["new"], &j["changed"], &j["unchanged"]),
        (&1.into(), &1.into(), &1.into())
    );
    assert_eq!(j["days"][2]["was"], "workday");
    assert_eq!(entries(&env), before, "a dry run writes nothing");
    // A bad file is refused in a dry run as in a real one.
    let bad = env.file("bad.csv", "date,kind,note\n2026-12-24,feast,x\n");
    env.fails(&["calendar", "import", bad.to_str().unwrap(), "--dry-run"], 2);
    assert_eq!(entries(&env), before);
}

#[test]
fn calendar_import_reads_standard_input_for_a_dash() {
    // Regression: `calendar import -` failed with "cannot open -".
    let env = TestEnv::migrated("UTC");
    let o = with_stdin(&env, &["calendar", "import", "-", "--dry-run"], FILE);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(entries(&env).is_empty());
    let o = with_stdin(&env, &["calendar", "import", "-"], FILE);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("imported 3 calendar days"));
    // A Sunday is a rest day, the word settle writes for it; a calendar entry a holiday.
    let list = env.ok(&["calendar", "list", "--from", "2026-12-26", "--to", "2026-12-27"]);
    let row = |d: &str| list.lines().find(|l| l.contains(d)).unwrap().to_string();
    assert!(
        row("2026-12-27").contains("rest_day") && row("2026-12-27").contains("policy"),
        "{list}"
    );
    assert!(
        row("2026-12-26").contains("holiday") && row("2026-12-26").contains("calendar"),
        "{list}"
    );
    assert_eq!(
        entries(&env),
        [
            "2026-12-24|holiday|Eve",
            "2026-12-25|holiday|Christmas",
            "2026-12-26|holiday|Boxing day"
        ]
    );
}
