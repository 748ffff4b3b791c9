//! Least-privilege MySQL accounts, the audit of who corrects a day, and credentials that never
//! leak: the examples of docs/security.md, run against the real services.

use crate::common;

use std::process::Output;

use common::roles::{Grants, Role};
use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
const DAY: &str = "2026-11-20";
const NEXT: &str = "2026-11-23";

/// A MySQL account of the test's own with `privileges` on its database only, dropped at the
/// end (also when the test fails).
fn account(env: &TestEnv, role: &str, privileges: &str) -> Role {
    let grant = format!("{privileges} ON {{db}}.*");
    Role::create(
        env,
        role,
        &Grants {
            mysql: &[&grant],
            ..Default::default()
        },
    )
}

fn run_as(env: &TestEnv, url: &str, args: &[&str]) -> Output {
    env.cmd().env("ATTENDANCE_MYSQL_URL", url).args(args).output().unwrap()
}

/// A department's supervisor and one of its other members.
fn supervisor_and_member(env: &TestEnv) -> (String, String) {
    let sup: String = env
        .mysql()
        .query_first("SELECT employee_id FROM supervisors WHERE department_id = 'D001'")
        .unwrap()
        .unwrap();
    let member: String = env
        .mysql()
        .exec_first(
            "SELECT id FROM employees WHERE department_id = 'D001' AND id <> ? ORDER BY id LIMIT 1",
            (&sup,),
        )
        .unwrap()
        .unwrap();
    (sup, member)
}

/// Two days with punches (the broker is down: the events wait in the outbox), the first settled
/// and corrected as root.
fn company() -> (TestEnv, String, String) {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let (sup, member) = supervisor_and_member(&env);
    for at in [format!("{DAY}T08:45:00+01:00"), format!("{NEXT}T08:50:00+01:00")] {
        let o = env
            .cmd()
            .args(["checkin", &member, "--kind", "in", "--at", &at, "-q"])
            .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    env.ok(&["settle", "--date", DAY, "-q"]);
    env.act_as(&sup);
    env.ok(&correct_args(&member, &sup, "18:05"));
    (env, sup, member)
}

fn correct_args<'a>(member: &'a str, sup: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "correct",
        member,
        "--date",
        DAY,
        "--out",
        out,
        "--reason",
        "kiosk down",
        "--by",
        sup,
        "--json",
    ]
}

/// Everything MySQL and Redis hold for the test, to prove a refused command changed nothing.
fn stores(env: &TestEnv) -> (Vec<String>, u64, u64, Vec<(String, String)>) {
    let rows: Vec<String> = env
        .mysql()
        .query("SELECT CONCAT_WS('|', work_date, employee_id, status, IFNULL(last_out, '-'), corrected) FROM attendance ORDER BY 1")
        .unwrap();
    (
        rows,
        env.count("corrections"),
        env.count("settle_runs"),
        env.redis_snapshot(),
    )
}

/// `report timesheet` of `member` for DAY's month.
fn timesheet(member: &str) -> Vec<&str> {
    vec!["report", "timesheet", "--employee", member, "--month", &DAY[..7]]
}

/// The timesheet takes the authority `report employee` takes, and no less: an account that may
/// read only what a kiosk reads (the roster, the rows, the shifts, the rulebook) is refused
/// both, by MySQL (exit 1, one line), with nothing printed.
#[test]
fn an_employees_timesheet_is_refused_to_an_account_that_may_not_read_their_report() {
    let (env, _, member) = company();
    let tables = [
        "employees",
        "attendance",
        "shifts",
        "shift_assignments",
        "policy_versions",
    ];
    let grants: Vec<String> = tables.iter().map(|t| format!("SELECT ON {{db}}.{t}")).collect();
    let grants: Vec<&str> = grants.iter().map(String::as_str).collect();
    let kiosk = Role::create(
        &env,
        "kioskread",
        &Grants {
            mysql: &grants,
            ..Default::default()
        },
    );
    let url = kiosk.mysql_url(&env);
    for args in [
        vec!["report", "employee", member.as_str(), "--from", DAY, "--to", DAY],
        timesheet(&member),
    ] {
        let o = run_as(&env, &url, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: MySQL refused: "), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing printed");
    }
}

#[test]
fn a_read_only_account_runs_every_report_and_is_refused_by_settle_and_correct() {
    let (env, sup, member) = company();
    let ro = account(&env, "ro", "SELECT");
    let url = ro.mysql_url(&env);
    let range = ["--from", DAY, "--to", DAY];
    let reports: Vec<Vec<&str>> = vec![
        vec!["report", "day", "--date", DAY],
        vec!["report", "day", "--date", DAY, "--dept", "D001"],
        vec!["report", "absent", "--date", DAY],
        [&["report", "employee", member.as_str()][..], &range].concat(),
        [&["report", "dept", "D001"][..], &range].concat(),
        timesheet(&member),
        [&["report", "corrections"][..], &range].concat(),
        vec!["report", "runs"],
        vec!["report", "runs", "--failures"],
    ];
    for args in &reports {
        let o = run_as(&env, &url, args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
    let before = stores(&env);
    // -q: the shared Redis may have no persistence, and its warning is a second stderr line.
    for args in [
        vec!["settle", "--date", NEXT, "-q"],
        correct_args(&member, &sup, "18:30"),
    ] {
        let o = run_as(&env, &url, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: MySQL refused: ")
                && err.contains("command denied")
                && err.contains(&ro.user)
                && err.contains("docs/security.md"),
            "{err}"
        );
        assert!(!err.contains(ro.password()), "{err}");
        assert_eq!(stores(&env), before, "{args:?} changed nothing");
    }
}

#[test]
fn the_jobs_account_settles_and_corrects_and_the_audit_names_the_os_and_mysql_accounts() {
    let (env, sup, member) = company();
    let jobs = account(&env, "jobs", "SELECT, INSERT, UPDATE, DELETE");
    let url = jobs.mysql_url(&env);
    let o = run_as(&env, &url, &["settle", "--date", NEXT, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run_as(&env, &url, &correct_args(&member, &sup, "18:30"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let me = String::from_utf8(std::process::Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    assert_eq!(c["os_user"], me.trim());
    assert!(
        c["db_user"].as_str().unwrap().starts_with(&format!("{}@", jobs.user)),
        "{c}"
    );
    assert_eq!(
        c["after"]["last_out"], "2026-11-20T18:30:00+01:00",
        "an instant with its offset"
    );

    // Who acted is the employee mapped to the OS account; the audit also keeps that account
    // and the MySQL one, and the report shows them.
    let listed = env.json(&["report", "corrections", "--from", DAY, "--to", DAY, "--format", "json"]);
    let listed = listed["rows"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert!(
        listed[0]["db_user"].as_str().unwrap().starts_with("root@"),
        "{listed:?}"
    );
    assert_eq!(listed[1]["by"], sup.as_str());
    assert_eq!(listed[1]["os_user"], me.trim());
    assert_eq!(listed[1]["db_user"], c["db_user"]);
    assert_eq!(
        listed[1]["out"],
        serde_json::json!({"before": "2026-11-20T18:05:00+01:00", "after": "2026-11-20T18:30:00+01:00"})
    );
    env.fails(&["report", "corrections", "--employee", "NOBODY"], 1);
}

#[test]
fn malformed_urls_never_print_their_password() {
    let env = TestEnv::migrated("UTC");
    let secret = "Hunter2Pw";
    let bad = [
        format!("root:{secret}@127.0.0.1/x"),
        format!("mysql://root:{secret}/x@127.0.0.1:1/x"),
        format!("redis://root:{secret}/x@127.0.0.1:1/x"),
        format!("amqp://root:{secret}/x@127.0.0.1:1/x"),
        format!("root:{secret}/x@127.0.0.1:1"),
    ];
    for url in &bad {
        for var in ["ATTENDANCE_MYSQL_URL", "ATTENDANCE_REDIS_URL", "ATTENDANCE_AMQP_URL"] {
            for args in [&["report", "day"][..], &["status", "E000001"], &["relay"], &["settle"]] {
                let o = env.cmd().env(var, url).args(args).output().unwrap();
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(!err.contains(secret), "{var}={url} {args:?}: {err}");
                assert!(!String::from_utf8_lossy(&o.stdout).contains(secret));
                // A command that needs no such service (a report and Redis) runs as usual.
                if !o.status.success() {
                    assert!(err.starts_with("error: ") && err.lines().count() == 1, "{err}");
                }
            }
        }
        // The same from a config file.
        let cfg = env.file("att.toml", &format!("mysql_url = \"{url}\"\n"));
        let o = env
            .cmd()
            .env_remove("ATTENDANCE_MYSQL_URL")
            .args(["report", "day", "--config", cfg.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!err.contains(secret), "{err}");
    }
}

/// Set a file's mode (what an administrator's `chmod` would leave).
fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_config_file_others_can_rewrite_or_read_with_a_password_in_it_is_refused() {
    let env = TestEnv::with_roster(TZ, 5, 1);
    let account = account(&env, "reader", "SELECT");
    let cfg = env.file("att.toml", &format!("mysql_url = \"{}\"\n", account.mysql_url(&env)));
    let with = |cfg: &std::path::Path, args: &[&str]| {
        env.cmd()
            .env_remove("ATTENDANCE_MYSQL_URL")
            .env("ATTENDANCE_CONFIG", cfg)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(with(&cfg, &["report", "day"]).status.success(), "mode 0600 is fine");

    let before = stores(&env);
    chmod(&cfg, 0o644);
    for args in [
        &["report", "day"][..],
        &["checkin", "E000002", "--at", "2026-11-20T08:00:00Z"],
    ] {
        let o = with(&cfg, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("holds a password and can be read by group or others (mode 0644)"),
            "{err}"
        );
        assert!(
            err.contains("chmod go-rwx") && !err.contains(account.password()),
            "{err}"
        );
    }
    assert_eq!(stores(&env), before, "a refused config changes nothing");

    // Without a password a readable file is fine, but one that others may write never is:
    // whoever rewrites it chooses where the punches go.
    let plain = env.file("plain.toml", &format!("mysql_url = \"{}\"\n", env.mysql_url()));
    chmod(&plain, 0o644);
    assert!(with(&plain, &["report", "day"]).status.success());
    chmod(&plain, 0o666);
    let o = with(&plain, &["report", "day"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("can be written by group or others (mode 0666)"), "{err}");
}

#[test]
fn passwords_come_from_private_files_named_in_the_config() {
    let env = TestEnv::with_roster(TZ, 5, 1);
    let account = account(&env, "jobs", "SELECT");
    let pw = env.file("mysql.pw", &format!("{}\n", account.password()));
    let no_pw_url = format!("mysql://{}@127.0.0.1:3306/{}", account.user, env.db);
    let cfg = env.file(
        "att.toml",
        &format!(
            "mysql_url = \"{no_pw_url}\"\nmysql_password_file = \"{}\"\n",
            pw.display()
        ),
    );
    let run = |envs: &[(&str, &str)], args: &[&str]| {
        let mut c = env.cmd();
        c.env_remove("ATTENDANCE_MYSQL_URL").env("ATTENDANCE_CONFIG", &cfg);
        for (k, v) in envs {
            c.env(k, v);
        }
        c.args(args).output().unwrap()
    };
    let o = run(&[], &["report", "day", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The environment names the file as well as the config does.
    let o = env
        .cmd()
        .env("ATTENDANCE_MYSQL_URL", &no_pw_url)
        .env("ATTENDANCE_MYSQL_PASSWORD_FILE", &pw)
        .args(["report", "day"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The password reaches the server: a wrong one is MySQL's refusal (exit 3), not ours.
    let wrong = env.file("wrong.pw", "not-the-password\n");
    let o = run(
        &[("ATTENDANCE_MYSQL_PASSWORD_FILE", wrong.to_str().unwrap())],
        &["report", "day"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));

    // Refused in one line, exit 2: a password file others can read, and two passwords at once.
    chmod(&pw, 0o640);
    let o = run(&[], &["report", "day"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!((o.status.code(), err.lines().count()), (Some(2), 1), "{err}");
    assert!(
        err.contains("mysql_password_file") && err.contains("mode 0640"),
        "{err}"
    );
    chmod(&pw, 0o600);
    let o = run(
        &[("ATTENDANCE_MYSQL_URL", &account.mysql_url(&env))],
        &["report", "day"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("give it once") && !err.contains(account.password()),
        "{err}"
    );

    // The broker's password too: the check-in's event is sent with it.
    let amqp_pw = env.file("amqp.pw", "guest\n");
    let o = env
        .cmd()
        .env("ATTENDANCE_AMQP_URL", "amqp://guest@127.0.0.1:5672/%2f")
        .env("ATTENDANCE_AMQP_PASSWORD_FILE", &amqp_pw)
        .args(["checkin", "E000002", "--at", "2026-11-20T08:00:00Z", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["notification"], "sent", "{c}");
}
