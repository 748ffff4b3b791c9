//! `org import` and `org generate` against the real MySQL and Redis.

use crate::common;
use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;

const HEADER: &str = "employee_id,name,department_id,department_name,role\n";

#[test]
fn import_then_reimport_upserts_mysql_and_the_redis_roster() {
    let env = TestEnv::migrated("UTC");
    let f = env.file(
        "a.csv",
        &format!(
            "{HEADER}E1,Ann Lee,D1,Sales,supervisor\nE2,Bob Ray,D1,Sales,employee\nE3,Cy Dee,D2,Legal,supervisor\n"
        ),
    );
    env.ok(&["org", "import", f.to_str().unwrap()]);
    assert_eq!(env.count("employees"), 3);
    assert_eq!(env.count("departments"), 2);
    // Bob moves to Legal and becomes its supervisor; Cy is now a plain employee; a new hire arrives.
    let f = env.file(
        "b.csv",
        &format!(
            "{HEADER}E2,Bob Ray-Smith,D2,Legal,supervisor\nE3,Cy Dee,D2,Legal,employee\nE4,Di Fox,D1,Sales,employee\n"
        ),
    );
    env.ok(&["org", "import", f.to_str().unwrap()]);
    assert_eq!(env.count("employees"), 4);
    let mut db = env.mysql();
    let bob: (String, String, String) = db
        .query_first("SELECT name, department_id, role FROM employees WHERE id = 'E2'")
        .unwrap()
        .unwrap();
    assert_eq!(bob, ("Bob Ray-Smith".into(), "D2".into(), "supervisor".into()));
    let sups: Vec<(String, String)> = db
        .query("SELECT department_id, employee_id FROM supervisors ORDER BY department_id")
        .unwrap();
    assert_eq!(sups, vec![("D1".into(), "E1".into()), ("D2".into(), "E2".into())]);
    let cached: String = env.redis().hget(env.keys().roster("E2"), "E2").unwrap();
    assert_eq!(cached, "D2\tBob Ray-Smith");
}

#[test]
fn a_bad_roster_lists_every_bad_line_and_changes_nothing() {
    let env = TestEnv::migrated("UTC");
    let good = env.file("good.csv", &format!("{HEADER}E1,Ann,D1,Sales,supervisor\n"));
    env.ok(&["org", "import", good.to_str().unwrap()]);
    let before_redis = env.redis_snapshot();
    let bad = env.file(
        "bad.csv",
        &format!(
            "{HEADER}E2,Bob,D1,Sales,employee\nE2,Bob again,D1,Sales,employee\nE3,,D1,Sales,employee\nE4,Di,D1,Sales,boss\nE/5,Ed,D1,Sales,employee\n{},Long,D1,Sales,employee\nE7,Flo\n",
            "E".repeat(33)
        ),
    );
    let err = env.fails(&["org", "import", bad.to_str().unwrap()], 2);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for line in ["line 3", "line 4", "line 5", "line 6", "line 7", "line 8"] {
        assert!(err.contains(line), "{line} not in {err}");
    }
    assert!(!err.contains("line 2:"), "line 2 is good: {err}");
    assert_eq!(env.count("employees"), 1);
    assert_eq!(env.redis_snapshot(), before_redis);
    let missing = env.fails(&["org", "import", "/nonexistent/roster.csv"], 2);
    assert!(missing.contains("cannot open"), "{missing}");
}

#[test]
fn generate_writes_a_roster_with_one_supervisor_per_department() {
    let env = TestEnv::migrated("UTC");
    let out = env.ok(&[
        "org",
        "generate",
        "--employees",
        "3000",
        "--departments",
        "40",
        "--seed",
        "9",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], HEADER.trim());
    assert_eq!(lines.len(), 3001);
    assert_eq!(lines.iter().filter(|l| l.ends_with(",supervisor")).count(), 40);
    // Same seed, same roster.
    assert_eq!(
        out,
        env.ok(&[
            "org",
            "generate",
            "--employees",
            "3000",
            "--departments",
            "40",
            "--seed",
            "9"
        ])
    );
    env.fails(&["org", "generate", "--employees", "3", "--departments", "5"], 2);
}
