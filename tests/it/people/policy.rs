//! The company's rulebook: policy values set from a date on with `policy set` (owner only,
//! audited), copied to Redis for check-ins, and every day judged by the version in force on it
//! (a check-in, status, settle and a re-settle of a past day). A host's file or environment no
//! longer sets policy: it is refused, and `migrate` imports it once. The binary against the
//! real MySQL and Redis.

use crate::common;

use common::roles::{Grants, Role};
use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// Past work days (a Monday and the Wednesday after); the suite's back-dating bound covers them.
const D0: &str = "2026-11-16";
const D1: &str = "2026-11-18";

/// The rulebook's rows: (key, value, from, before, reason, os_user, db_user).
type Version = (String, String, String, Option<String>, String, String, String);

fn versions(env: &TestEnv) -> Vec<Version> {
    env.mysql()
        .query(
            "SELECT policy_key, value, CAST(from_date AS CHAR), before_value, reason, os_user, db_user \
             FROM policy_versions ORDER BY id",
        )
        .unwrap()
}

/// One key of `policy show --json` (on `date`, or today).
fn shown(env: &TestEnv, key: &str, date: Option<&str>) -> String {
    let mut args = vec!["policy", "show", "--json"];
    if let Some(d) = date {
        args.extend(["--date", d]);
    }
    let v = env.json(&args);
    let k = v["keys"].as_array().unwrap().iter().find(|k| k["key"] == key);
    k.unwrap_or_else(|| panic!("{key} not shown: {v}"))["value"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_policy_variable_or_config_key_is_refused_naming_policy_set_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 3, 1);
    let before = (env.redis_snapshot(), env.count("held_punches"), versions(&env));
    // An employee with a shell widens the replay window for their own back-dated punch.
    let o = env
        .cmd()
        .env("ATTENDANCE_POLICY_REPLAY_WINDOW_MINUTES", "5270400")
        .args([
            "checkin",
            "E000001",
            "--kind",
            "in",
            "--at",
            "2026-11-16T08:00:00+01:00",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("policy.replay_window_minutes (ATTENDANCE_POLICY_REPLAY_WINDOW_MINUTES)")
            && err.contains("attendance policy set"),
        "{err}"
    );
    // A config file's [policy] table, the same.
    let f = env.file("host.toml", "[policy]\ngrace_minutes = 30\n");
    let o = env
        .cmd()
        .env("ATTENDANCE_CONFIG", &f)
        .args(["status", "E000001"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("policy.grace_minutes (file {})", f.display())) && err.contains("attendance policy set"),
        "{err}"
    );
    assert_eq!(
        (env.redis_snapshot(), env.count("held_punches"), versions(&env)),
        before
    );
    // The rulebook still says what the suite set.
    assert_eq!(shown(&env, "policy.grace_minutes", None), "0");
}

#[test]
fn policy_set_by_an_account_other_than_the_owners_is_denied_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 3, 1);
    // The supervisor's documented grants (docs/security.md): the rulebook read-only.
    let sup = Role::create(
        &env,
        "sup",
        &Grants {
            mysql: &[
                "SELECT ON {db}.employees",
                "SELECT ON {db}.supervisors",
                "SELECT ON {db}.attendance",
                "SELECT ON {db}.calendar_days",
                "SELECT ON {db}.leaves",
                "SELECT, INSERT ON {db}.corrections",
                "UPDATE ON {db}.attendance",
                "INSERT ON {db}.punch_log",
                "SELECT ON {db}.policy_versions",
            ],
            ..Grants::default()
        },
    );
    let before = versions(&env);
    let args = [
        "policy",
        "set",
        "policy.replay_window_minutes",
        "5270400",
        "--from",
        D0,
        "--reason",
        "mine",
    ];
    let err = sup.fails(&env, &args, 1);
    assert!(err.contains("denied") && err.contains("policy_versions"), "{err}");
    assert_eq!(versions(&env), before);
    // It may read the rules it is judged by.
    let shown = sup.ok(&env, &["policy", "show", "--json"]);
    assert!(shown.contains("policy.replay_window_minutes"), "{shown}");
    // A value out of the key table's bounds is refused before any store is asked.
    let err = env.fails(
        &[
            "policy",
            "set",
            "policy.grace_minutes",
            "241",
            "--from",
            D0,
            "--reason",
            "x",
        ],
        2,
    );
    assert!(
        err.contains("policy.grace_minutes") && err.contains("0 to 240"),
        "{err}"
    );
    let err = env.fails(
        &[
            "policy",
            "set",
            "redis_url",
            "redis://x/",
            "--from",
            D0,
            "--reason",
            "x",
        ],
        2,
    );
    assert!(err.contains("unknown key 'redis_url'"), "{err}");
    // Rules that would clash on some day from the date on: refused, nothing written.
    env.policy("policy.checkout_from", "17:00", "2027-01-01");
    let err = env.fails(
        &[
            "policy",
            "set",
            "policy.checkin_deadline",
            "17:30",
            "--from",
            D0,
            "--reason",
            "x",
        ],
        2,
    );
    assert!(
        err.contains("policy.checkout_from") && err.contains("2027-01-01"),
        "{err}"
    );
    assert_eq!(versions(&env).len(), before.len() + 1);
}

#[test]
fn a_day_is_judged_by_the_version_in_force_on_it_at_settle_and_at_every_re_settle() {
    let env = TestEnv::with_roster(TZ, 3, 1);
    for day in [D0, D1] {
        env.punch("E000001", "in", &format!("{day}T09:10:00"), true);
        env.punch("E000001", "out", &format!("{day}T18:05:00"), true);
    }
    // A grace of 15 minutes from a date still to come changes no day before it.
    env.policy("policy.grace_minutes", "15", "2099-01-01");
    let live = env.json(&["status", "E000001", "--date", D1, "--json"]);
    assert_eq!(
        (live["late"].as_bool(), live["late_minutes"].as_u64()),
        (Some(true), Some(10)),
        "{live}"
    );
    env.ok(&["settle", "--date", D0, "-q"]);
    env.ok(&["settle", "--date", D1, "-q"]);
    // Status and settle agree.
    assert_eq!(env.day_row(D1, "E000001"), "late|10|0");
    assert_eq!(env.day_row(D0, "E000001"), "late|10|0");

    // The same grace from D1 on: D1's settled day is re-settled by it (audited), D0 is not.
    env.policy("policy.grace_minutes", "15", D1);
    assert_eq!(env.day_row(D1, "E000001"), "present|0|0");
    assert_eq!(env.day_row(D0, "E000001"), "late|10|0");
    let settled = env.json(&["status", "E000001", "--date", D1, "--json"]);
    assert_eq!(settled["status"], "present", "{settled}");
    let audit: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT CAST(work_date AS CHAR), old_status, reason FROM corrections WHERE resettled")
        .unwrap();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!((&audit[0].0[..], &audit[0].1[..]), (D1, "late"));
    assert!(
        audit[0].2.contains("policy policy.grace_minutes = 15 from 2026-11-18"),
        "{audit:?}"
    );

    // Any later re-settle (a calendar change of each day) judges each day by its own version,
    // not today's.
    for day in [D0, D1] {
        env.ok(&["calendar", "set", day, "workday", "-q"]);
    }
    assert_eq!(env.day_row(D0, "E000001"), "late|10|0");
    assert_eq!(env.day_row(D1, "E000001"), "present|0|0");
    // And the month sheet's hours follow the rows.
    let report = env.json(&["report", "employee", "E000001", "--from", D0, "--to", D1, "--json"]);
    let statuses: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["work_date"] == D0 || r["work_date"] == D1)
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["late", "present"], "{report}");
}

#[test]
fn a_check_in_today_is_judged_by_todays_version_read_from_redis() {
    let (tz, _) = common::midday_zone();
    let env = TestEnv::with_roster(&tz, 3, 1);
    // A deadline every hour of the midday zone is past; a generous grace from tomorrow on.
    env.policy("policy.checkin_deadline", "03:00", "2000-01-01");
    env.policy("policy.grace_minutes", "240", "2099-01-01");
    assert_eq!(shown(&env, "policy.grace_minutes", None), "0");
    assert_eq!(shown(&env, "policy.grace_minutes", Some("2099-01-01")), "240");
    // The copy in Redis holds the rulebook: a check-in reads it there.
    let copy: Option<String> = redis::cmd("HGET")
        .arg(format!("{}:{{shifts}}", env.ns))
        .arg("rules")
        .query(&mut env.redis())
        .unwrap();
    assert!(
        copy.is_some_and(|c| c.contains("\"policy.grace_minutes\"")),
        "no rulebook copy"
    );
    let v = env.json(&["checkin", "E000001", "--kind", "in", "--json"]);
    assert_eq!(v["status"], "applied", "{v}");
    let live = env.json(&["status", "E000001", "--json"]);
    let first_in = chrono::DateTime::parse_from_rfc3339(live["first_in"].as_str().unwrap()).unwrap();
    let deadline = first_in.date_naive().and_hms_opt(3, 0, 0).unwrap();
    let late = (first_in.naive_local() - deadline).num_minutes();
    assert_eq!(live["late"], true, "{live}");
    assert!(
        (live["late_minutes"].as_i64().unwrap() - late).abs() <= 1,
        "{late}: {live}"
    );
}

#[test]
fn the_history_keeps_who_set_each_version_when_why_and_the_value_before_and_after() {
    let env = TestEnv::with_roster(TZ, 3, 1);
    let before = versions(&env).len();
    env.ok(&[
        "policy",
        "set",
        "policy.grace_minutes",
        "5",
        "--from",
        D0,
        "--reason",
        "union agreement",
    ]);
    env.ok(&[
        "policy",
        "set",
        "policy.grace_minutes",
        "10",
        "--from",
        D1,
        "--reason",
        "winter",
    ]);
    env.ok(&[
        "policy",
        "set",
        "policy.work_days",
        "mon, tue,wed,thu,fri,sat",
        "--from",
        D1,
        "--reason",
        "six days",
    ]);
    let rows = versions(&env);
    assert_eq!(rows.len(), before + 3);
    let me = TestEnv::os_login();
    let new = &rows[before..];
    assert_eq!(
        new.iter()
            .map(|r| (&r.0[..], &r.1[..], &r.2[..], r.3.as_deref(), &r.4[..]))
            .collect::<Vec<_>>(),
        [
            ("policy.grace_minutes", "5", D0, Some("0"), "union agreement"),
            ("policy.grace_minutes", "10", D1, Some("5"), "winter"),
            (
                "policy.work_days",
                "mon,tue,wed,thu,fri,sat",
                D1,
                Some("mon,tue,wed,thu,fri"),
                "six days"
            ),
        ]
    );
    assert!(new.iter().all(|r| r.5 == me && r.6.starts_with("root@")), "{new:?}");
    let history = env.json(&["policy", "history", "--json"]);
    let last = &history.as_array().unwrap()[before + 2];
    assert_eq!(
        (&last["key"], &last["before"], &last["value"]),
        (
            &"policy.work_days".into(),
            &"mon,tue,wed,thu,fri".into(),
            &"mon,tue,wed,thu,fri,sat".into()
        ),
        "{last}"
    );
    assert!(last["set_at"].is_string() && last["os_user"] == me.as_str(), "{last}");
    assert_eq!(shown(&env, "policy.grace_minutes", Some("2026-11-17")), "5");
    assert_eq!(shown(&env, "policy.grace_minutes", Some(D1)), "10");
}

#[test]
fn migrate_imports_a_hosts_policy_values_once_as_the_first_version() {
    let env = TestEnv::new(TZ);
    let o = env
        .cmd()
        .env("ATTENDANCE_POLICY_GRACE_MINUTES", "7")
        .args(["migrate"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("imported 1 policy value(s)") && err.contains("ATTENDANCE_POLICY_GRACE_MINUTES"),
        "{err}"
    );
    let rows = versions(&env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (&rows[0].0[..], &rows[0].1[..], &rows[0].2[..]),
        ("policy.grace_minutes", "7", "1000-01-01")
    );
    assert!(rows[0].4.contains("ATTENDANCE_POLICY_GRACE_MINUTES"), "{rows:?}");
    assert_eq!(shown(&env, "policy.grace_minutes", Some(D0)), "7");
    // Once: a second import is refused, the rulebook as it was.
    let o = env
        .cmd()
        .env("ATTENDANCE_POLICY_GRACE_MINUTES", "9")
        .args(["migrate"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("attendance policy set"), "{err}");
    assert_eq!(versions(&env), rows);
    // Without the variables, migrate is what it was: idempotent, importing nothing.
    env.ok(&["migrate"]);
    assert_eq!(versions(&env), rows);
}
