//! Who acts: `correct` acts as the employee the roster maps to the operating-system account
//! running it (the roster's `login` column), never as a name typed on the command line.
//! Regression: `--by` was a claim and a supervisor could correct their own
//! day. The tests run as one account (root) and remap it between commands.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
const DAY: &str = "2026-11-20";

/// S1 supervises D1 (A1, A2); S2 supervises D2 (B1); H1 is HR, a member of D2.
fn roster(logins: [&str; 6]) -> String {
    let rows = [
        ("S1", "D1", "supervisor"),
        ("A1", "D1", "employee"),
        ("A2", "D1", "employee"),
        ("S2", "D2", "supervisor"),
        ("B1", "D2", "employee"),
        ("H1", "D2", "hr"),
    ];
    let mut csv = String::from("employee_id,name,department_id,department_name,role,login\n");
    for ((id, dept, role), login) in rows.iter().zip(logins) {
        csv.push_str(&format!("{id},Name {id},{dept},Dept {dept},{role},{login}\n"));
    }
    csv
}

/// A settled day for everyone (S1, A1 and H1 checked in), the roster imported with the given
/// logins.
fn company(logins: [&str; 6]) -> TestEnv {
    let env = TestEnv::migrated(TZ);
    env.import_roster("roster.csv", &roster(logins));
    for e in ["S1", "A1", "H1"] {
        env.punch(e, "in", &format!("{DAY}T08:01:00"), true);
    }
    env.ok(&["settle", "--date", DAY, "-q"]);
    env
}

fn correct<'a>(emp: &'a str, by: Option<&'a str>) -> Vec<&'a str> {
    let mut a = vec![
        "correct",
        emp,
        "--date",
        DAY,
        "--in",
        "07:00",
        "--reason",
        "badge reader",
        "--json",
    ];
    if let Some(by) = by {
        a.extend(["--by", by]);
    }
    a
}

/// What MySQL holds of the day and its corrections.
fn record(env: &TestEnv) -> (Vec<String>, u64) {
    (env.attendance_rows(), env.count("corrections"))
}

fn logins(env: &TestEnv) -> Vec<(String, Option<String>)> {
    env.mysql()
        .query("SELECT id, login FROM employees ORDER BY id")
        .unwrap()
}

#[test]
fn an_unmapped_account_is_refused_naming_it_and_changes_nothing() {
    let env = company(["", "", "", "", "", ""]);
    let before = record(&env);
    let err = env.fails(&correct("A1", Some("S1")), 1);
    let me = TestEnv::os_login();
    assert!(
        err.contains(&format!("'{me}'")) && err.contains("not mapped") && err.contains("login"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(record(&env), before);
}

#[test]
fn by_disagreeing_with_the_account_is_refused_and_changes_nothing() {
    let env = company(["", "", "", "", "", ""]);
    env.act_as("A2");
    let before = record(&env);
    // A2's account claims to be S1, A1's supervisor.
    let err = env.fails(&correct("A1", Some("S1")), 1);
    assert!(err.contains("--by S1 disagrees") && err.contains("A2"), "{err}");
    assert_eq!(record(&env), before);
    // A2 as themselves: not A1's supervisor.
    let err = env.fails(&correct("A1", None), 1);
    assert!(err.contains("A2 is neither the supervisor"), "{err}");
    // Another department's supervisor may not either.
    env.act_as("S2");
    env.fails(&correct("A1", Some("S2")), 1);
    assert_eq!(record(&env), before);
}

#[test]
fn nobody_corrects_their_own_day_neither_a_supervisor_nor_hr() {
    let env = company(["", "", "", "", "", ""]);
    let before = record(&env);
    for who in ["S1", "H1"] {
        env.act_as(who);
        let err = env.fails(&correct(who, Some(who)), 1);
        assert!(err.contains("may not correct their own day"), "{err}");
    }
    assert_eq!(record(&env), before);
}

#[test]
fn the_supervisor_corrects_a_member_and_hr_a_supervisor_as_the_roster_maps_the_account() {
    let me = TestEnv::os_login();
    // The account is S1's in the roster file itself.
    let env = company([&me, "", "", "", "", ""]);
    let c = env.json(&correct("A1", None));
    assert_eq!(
        (c["by"].as_str(), c["os_user"].as_str()),
        (Some("S1"), Some(me.as_str()))
    );
    assert_eq!(c["after"]["first_in"], "2026-11-20T07:00:00+01:00", "{c}");
    // A new file gives the account to H1 (taken from S1): HR corrects S1, a supervisor.
    env.import_roster("roster2.csv", &roster(["", "", "", "", "", &me]));
    let c = env.json(&correct("S1", Some("H1")));
    assert_eq!(c["by"], "H1");
    let audit: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT employee_id, corrected_by, os_user FROM corrections ORDER BY id")
        .unwrap();
    assert_eq!(
        audit,
        [
            ("A1".into(), "S1".into(), me.clone()),
            ("S1".into(), "H1".into(), me.clone())
        ]
    );
    let first_in: Vec<(String, String, bool)> = env
        .mysql()
        .query("SELECT employee_id, CAST(first_in AS CHAR), corrected FROM attendance WHERE employee_id IN ('A1', 'S1') ORDER BY 1")
        .unwrap();
    assert_eq!(
        first_in,
        [
            ("A1".into(), "2026-11-20 06:00:00".into(), true),
            ("S1".into(), "2026-11-20 06:00:00".into(), true)
        ]
    );
}

#[test]
fn org_import_keeps_logins_without_the_column_clears_blank_ones_and_refuses_bad_ones() {
    let env = company(["ann", "", "", "bob", "", "hal"]);
    let mapped = vec![
        ("A1".to_string(), None),
        ("A2".into(), None),
        ("B1".into(), None),
        ("H1".into(), Some("hal".to_string())),
        ("S1".into(), Some("ann".into())),
        ("S2".into(), Some("bob".into())),
    ];
    assert_eq!(logins(&env), mapped);
    // No login column: the stored logins stay.
    let plain: String = roster(["", "", "", "", "", ""])
        .lines()
        .map(|l| format!("{}\n", l.rsplit_once(',').unwrap().0))
        .collect();
    env.import_roster("plain.csv", &plain);
    assert_eq!(logins(&env), mapped);
    // Bad logins refuse the whole file, with nothing written.
    for (bad, why) in [
        (["ann", "ann", "", "", "", ""], "login 'ann' is already given on line 2"),
        (["an n", "", "", "", "", ""], "login 'an n' must be"),
        (["-x", "", "", "", "", ""], "login '-x' must be"),
        (["a\u{1b}[2J", "", "", "", "", ""], "login holds the control character"),
    ] {
        let f = env.file("bad.csv", &roster(bad));
        let err = env.fails(&["org", "import", f.to_str().unwrap()], 2);
        assert!(err.contains(why), "{err}");
        assert_eq!(logins(&env), mapped);
    }
    // A blank login clears it; logins can swap between employees in one file.
    env.import_roster("swap.csv", &roster(["bob", "", "", "ann", "", ""]));
    let now = logins(&env);
    assert_eq!(now[3], ("H1".into(), None));
    assert_eq!(now[4], ("S1".into(), Some("bob".into())));
    assert_eq!(now[5], ("S2".into(), Some("ann".into())));
}

/// A throwaway OS account (removed on drop), to run the binary as someone else.
struct OsUser(String);

impl OsUser {
    fn create() -> OsUser {
        let name = format!("attw{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let o = std::process::Command::new("useradd")
            .args([
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                "--user-group",
                &name,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "useradd: {}", String::from_utf8_lossy(&o.stderr));
        OsUser(name)
    }

    /// The binary run under this account's real uid and gid (setpriv), with `env`'s settings.
    fn run(&self, env: &TestEnv, args: &[&str]) -> std::process::Output {
        let cmd = env.std_cmd();
        let mut c = std::process::Command::new("setpriv");
        c.args([
            &format!("--reuid={}", self.0),
            &format!("--regid={}", self.0),
            "--clear-groups",
        ])
        .arg(cmd.get_program())
        .args(args);
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        // A supervisor's account holds no kiosk key (it records no punch): the test's key
        // file is root's alone, as a kiosk's would be.
        c.env_remove("ATTENDANCE_SIGNING_KEY_FILE");
        c.output().unwrap()
    }
}

impl Drop for OsUser {
    fn drop(&mut self) {
        let _ = std::process::Command::new("userdel").arg(&self.0).output();
    }
}

#[test]
fn another_os_account_acts_as_its_own_employee_and_user_variables_change_nothing() {
    if TestEnv::os_login() != "root" {
        // Creating an account and switching to it needs root, which the suite runs as.
        assert!(std::env::var_os("CI").is_none(), "this test must run as root under CI");
        eprintln!("skipped: not root");
        return;
    }
    let sup = OsUser::create();
    let me = TestEnv::os_login();
    // S1's account is the new one; root is B1's, a plain employee.
    let env = company([&sup.0, "", "", "", &me, ""]);
    let before = record(&env);
    // $USER and $LOGNAME are anyone's to set: root stays B1.
    let o = env
        .cmd()
        .args(correct("A1", None))
        .env("USER", &sup.0)
        .env("LOGNAME", &sup.0)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("B1 is neither the supervisor"), "{err}");
    // S1's own account may not correct S1's day.
    let o = sup.run(&env, &correct("S1", None));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(record(&env), before);
    // ... and corrects A1's, as S1, the audit naming the account.
    let o = sup.run(&env, &correct("A1", Some("S1")));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let audit: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT employee_id, corrected_by, os_user FROM corrections")
        .unwrap();
    assert_eq!(audit, [("A1".into(), "S1".into(), sup.0.clone())]);
}
