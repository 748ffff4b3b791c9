//! The roster as a company lives it: employment dates and leavers, imports that say
//! what they did (and `--dry-run`), against the real binary, MySQL, Redis and RabbitMQ.

use crate::common;
use chrono::{Duration, NaiveDate};
use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;

const HEADER: &str = "employee_id,name,department_id,department_name,role";

fn day(d: NaiveDate) -> String {
    d.to_string()
}

/// (employee, status) of every settled row of a day.
fn statuses(env: &TestEnv, d: NaiveDate) -> Vec<(String, String)> {
    env.mysql()
        .exec(
            "SELECT employee_id, CAST(status AS CHAR) FROM attendance WHERE work_date = ? ORDER BY employee_id",
            (d,),
        )
        .unwrap()
}

/// An employee's (active, start_date, end_date) in MySQL.
fn employment(env: &TestEnv, emp: &str) -> (bool, Option<NaiveDate>, Option<NaiveDate>) {
    env.mysql()
        .exec_first(
            "SELECT active, start_date, end_date FROM employees WHERE id = ?",
            (emp,),
        )
        .unwrap()
        .unwrap()
}

fn ids(v: &serde_json::Value) -> Vec<String> {
    v["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_leaver_is_absent_the_day_before_their_end_date_and_not_after_it_and_a_joiner_from_their_start() {
    let env = TestEnv::migrated("UTC");
    let end = env.today() - Duration::days(3);
    let (before, after) = (end - Duration::days(1), end + Duration::days(1));
    // The optional columns in an order of the file's own: named, not placed.
    let f = env.file(
        "roster.csv",
        &format!(
            "{HEADER},end_date,start_date\nE1,Ann,D1,Sales,supervisor,,\nE2,Bob,D1,Sales,employee,,\n\
             E3,Cy,D1,Sales,employee,{end},\nE4,Di,D1,Sales,employee,,{after}\n"
        ),
    );
    env.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
    assert_eq!(employment(&env, "E3"), (true, None, Some(end)));
    assert_eq!(employment(&env, "E4"), (true, Some(after), None));
    // Both days are work days whatever the week day.
    for d in [before, after] {
        env.ok(&["calendar", "set", &day(d), "workday", "-q"]);
    }
    // Laid out: only those employed that day.
    env.ok(&["init-day", "--date", &day(before), "-q"]);
    env.ok(&["init-day", "--date", &day(after), "-q"]);
    let mut laid: Vec<String> = env.board("D1", &day(before)).into_keys().collect();
    laid.sort();
    assert_eq!(laid, ["E1", "E2", "E3"]);
    let mut laid: Vec<String> = env.board("D1", &day(after)).into_keys().collect();
    laid.sort();
    assert_eq!(laid, ["E1", "E2", "E4"]);
    // A punch outside one's dates is refused (exit 1), nothing recorded.
    let at = |d: NaiveDate| format!("{d}T08:50:00Z");
    let err = env.fails(&["checkin", "E3", "--kind", "in", "--at", &at(after)], 1);
    assert!(
        err.contains(&format!("left on {end}")) && err.lines().count() == 1,
        "{err}"
    );
    let err = env.fails(&["checkin", "E4", "--kind", "in", "--at", &at(before)], 1);
    assert!(err.contains(&format!("starts on {after}")), "{err}");
    assert_eq!(env.board("D1", &day(after))["E4"], "", "nothing recorded");
    // A punch file: the leaver's row is refused and listed (exit 4), the others land.
    let punches = env.file(
        "punches.csv",
        &format!("employee_id,kind,at\nE3,in,{}\nE2,in,{}\n", at(after), at(after)),
    );
    let o = env.run(&["checkin", "--file", punches.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("left on"), "{err}");
    assert!(!env.board("D1", &day(after))["E2"].is_empty(), "E2's punch landed");
    // Settled: the leaver is absent on the day before their end date, and has no row after it;
    // the joiner has none before their first day, and is absent on it.
    env.ok(&["settle", "--date", &day(before), "-q"]);
    env.ok(&["settle", "--date", &day(after), "-q"]);
    let row = |e: &str, s: &str| (e.to_string(), s.to_string());
    assert_eq!(
        statuses(&env, before),
        [row("E1", "absent"), row("E2", "absent"), row("E3", "absent")]
    );
    assert_eq!(
        statuses(&env, after),
        [row("E1", "absent"), row("E2", "missing_checkout"), row("E4", "absent")]
    );
}

#[test]
fn a_department_whose_people_all_left_gets_no_board_and_its_day_still_settles() {
    let env = TestEnv::migrated("UTC");
    let end = env.today() - Duration::days(3);
    let after = end + Duration::days(1);
    let f = env.file(
        "roster.csv",
        &format!("{HEADER},end_date\nE1,Ann,D1,Sales,supervisor,\nE2,Bob,D2,Legal,supervisor,{end}\n"),
    );
    env.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
    env.ok(&["calendar", "set", &day(after), "workday", "-q"]);
    env.ok(&["init-day", "--date", &day(after), "-q"]);
    assert!(env.board("D2", &day(after)).is_empty(), "no board for D2");
    // Not taken for a day lost in Redis (exit 6): D2 has nobody to lay out that day.
    env.ok(&["settle", "--date", &day(after), "-q"]);
    assert_eq!(statuses(&env, after), [("E1".to_string(), "absent".to_string())]);
}

#[test]
fn a_full_import_gives_everyone_it_leaves_out_an_end_date_and_a_listed_leaver_comes_back() {
    let env = TestEnv::migrated("UTC");
    let (soon, later) = (env.today() + Duration::days(5), env.today() + Duration::days(10));
    let f = env.file(
        "all.csv",
        &format!(
            "{HEADER},start_date\nE1,Ann,D1,Sales,supervisor,\nE2,Bob,D1,Sales,employee,\n\
             E3,Cy,D1,Sales,employee,\nE4,Di,D1,Sales,employee,{later}\n"
        ),
    );
    env.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
    // --end-date only means something with --full.
    env.fails(&["org", "import", f.to_str().unwrap(), "--end-date", &day(soon)], 2);
    let two = env.file(
        "two.csv",
        &format!("{HEADER}\nE1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\n"),
    );
    let j = env.json(&[
        "org",
        "import",
        two.to_str().unwrap(),
        "--full",
        "--end-date",
        &day(soon),
        "--json",
        "-q",
    ]);
    assert_eq!(j["deactivated"]["count"], 2, "{j}");
    assert_eq!(ids(&j["deactivated"]), ["E3", "E4"]);
    assert_eq!(
        (j["unchanged"].as_u64(), j["end_date"].as_str()),
        (Some(2), Some(day(soon).as_str()))
    );
    // E3 leaves on that day (and may punch until then); E4, who had not started, is off the roster.
    assert_eq!(employment(&env, "E3"), (true, None, Some(soon)));
    assert_eq!(employment(&env, "E4"), (false, Some(later), None));
    let cached: String = env.redis().hget(env.keys().roster("E3"), "E3").unwrap();
    assert_eq!(cached, format!("D1\tCy\t\t{soon}"));
    let gone: Option<String> = env.redis().hget(env.keys().roster("E4"), "E4").unwrap();
    assert_eq!(gone, None);
    env.ok(&["checkin", "E3", "-q"]);
    // Without --end-date: today; an end date further on is brought forward.
    let one = env.file("one.csv", &format!("{HEADER}\nE1,Ann,D1,Sales,supervisor\n"));
    let j = env.json(&["org", "import", one.to_str().unwrap(), "--full", "--json", "-q"]);
    assert_eq!(ids(&j["deactivated"]), ["E2", "E3"], "{j}");
    assert_eq!(employment(&env, "E2"), (true, None, Some(env.today())));
    assert_eq!(employment(&env, "E3"), (true, None, Some(env.today())));
    // A leaver listed again is employed again: their past end date is cleared.
    let past = env.today() - Duration::days(2);
    env.mysql()
        .exec_drop("UPDATE employees SET end_date = ? WHERE id = 'E2'", (past,))
        .unwrap();
    let j = env.json(&["org", "import", two.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(ids(&j["reactivated"]), ["E2"], "{j}");
    assert_eq!(j["changed"]["fields"]["end_date"], 1, "{j}");
    assert_eq!(employment(&env, "E2"), (true, None, None));
}

#[test]
fn an_import_says_who_is_new_changed_which_fields_moved_and_unchanged() {
    let env = TestEnv::migrated("UTC");
    let base = env.file(
        "base.csv",
        &format!(
            "{HEADER}\nE1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\nE3,Cy,D2,Legal,supervisor\n\
             E4,Di,D2,Legal,employee\n"
        ),
    );
    let first = env.json(&["org", "import", base.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(first["new"]["count"], 4, "{first}");
    assert_eq!(first["departments_new"], serde_json::json!(["D1", "D2"]));
    let next = env.file(
        "next.csv",
        &format!(
            "{HEADER}\nE1,Ann,D1,Sales,supervisor\nE2,Bob Ray,D1,Sales,employee\nE3,Cy,D2,Law,supervisor\n\
             E4,Di,D1,Sales,employee\nE5,Ed,D3,Research,supervisor\n"
        ),
    );
    let o = env.run(&["org", "import", next.to_str().unwrap(), "--json"]);
    assert!(o.status.success());
    let said = String::from_utf8_lossy(&o.stderr);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(ids(&j["new"]), ["E5"], "{j}");
    assert_eq!(ids(&j["changed"]), ["E2", "E4"], "{j}");
    assert_eq!(
        j["changed"]["fields"],
        serde_json::json!({"name": 1, "department_id": 1})
    );
    assert_eq!(ids(&j["moved"]), ["E4"], "{j}");
    assert_eq!(
        (j["unchanged"].as_u64(), j["deactivated"]["count"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(j["departments_renamed"], serde_json::json!(["D2"]));
    assert_eq!(j["departments_new"], serde_json::json!(["D3"]));
    assert!(
        said.contains("1 new, 2 changed, 1 moved, 0 reactivated, 0 deactivated, 2 unchanged"),
        "{said}"
    );
    assert!(
        said.contains("changed: E2, E4 (fields: department_id 1, name 1)"),
        "{said}"
    );
    assert!(said.contains("renamed departments: D2"), "{said}");
    // Bad dates refuse the whole file (exit 2), in one line, nothing changed anywhere.
    let (db, redis) = (mysql_snapshot(&env), env.redis_snapshot());
    let bad = env.file(
        "bad.csv",
        &format!("{HEADER},start_date\nE1,Ann,D1,Sales,supervisor,2026-13-01\n"),
    );
    let err = env.fails(&["org", "import", bad.to_str().unwrap()], 2);
    assert!(
        err.contains("line 2: start_date '2026-13-01': expected YYYY-MM-DD"),
        "{err}"
    );
    assert_eq!(
        (mysql_snapshot(&env), env.redis_snapshot()),
        (db, redis),
        "nothing changed"
    );
    let later = day(env.today() + Duration::days(30));
    let starts = env.file(
        "starts.csv",
        &format!("{HEADER},start_date\nE2,Bob Ray,D1,Sales,employee,{later}\n"),
    );
    env.ok(&["org", "import", starts.to_str().unwrap(), "-q"]);
    let (db, redis) = (mysql_snapshot(&env), env.redis_snapshot());
    // An end date before the start date the record holds: refused once applied to the record.
    let ends = env.file(
        "ends.csv",
        &format!("{HEADER},end_date\nE2,Bob Ray,D1,Sales,employee,{}\n", day(env.today())),
    );
    let err = env.fails(&["org", "import", ends.to_str().unwrap()], 2);
    assert!(
        err.contains("would end before they start") && err.contains("E2 ("),
        "{err}"
    );
    assert_eq!(
        (mysql_snapshot(&env), env.redis_snapshot()),
        (db, redis),
        "nothing changed"
    );
    // The same file again: nothing to do, and it says so.
    let again = env.json(&["org", "import", next.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(
        (again["unchanged"].as_u64(), again["changed"]["count"].as_u64()),
        (Some(5), Some(0))
    );
}

/// Every row of the roster's tables, with when each employee row last changed.
fn mysql_snapshot(env: &TestEnv) -> Vec<String> {
    let mut db = env.mysql();
    let mut all: Vec<String> = db
        .query::<mysql::Row, _>(
            "SELECT id, name, department_id, CAST(role AS CHAR), active, login, start_date, end_date, \
             CAST(updated_at AS CHAR) FROM employees ORDER BY id",
        )
        .unwrap()
        .into_iter()
        .map(|r| format!("{:?}", r.unwrap()))
        .collect();
    for q in [
        "SELECT id, name, CAST(updated_at AS CHAR) FROM departments ORDER BY id",
        "SELECT department_id, employee_id FROM supervisors ORDER BY department_id",
    ] {
        all.extend(
            db.query::<mysql::Row, _>(q)
                .unwrap()
                .into_iter()
                .map(|r| format!("{:?}", r.unwrap())),
        );
    }
    all
}

#[test]
fn a_dry_run_says_what_the_import_would_do_and_changes_no_store() {
    let env = TestEnv::migrated("UTC");
    let base = env.file(
        "base.csv",
        &format!("{HEADER}\nE1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\nE3,Cy,D1,Sales,employee\n"),
    );
    env.ok(&["org", "import", base.to_str().unwrap(), "-q"]);
    let (db, redis) = (mysql_snapshot(&env), env.redis_snapshot());
    let cfg = attendance::Config {
        amqp_url: common::AMQP_URL.to_string(),
        namespace: env.ns.clone(),
        ..Default::default()
    };
    let next = env.file(
        "next.csv",
        &format!("{HEADER}\nE1,Ann,D9,New,supervisor\nE2,Bob Ray,D1,Sales,employee\nE4,Di,D1,Sales,employee\n"),
    );
    let end = day(env.today() + Duration::days(30));
    let args = [
        "org",
        "import",
        next.to_str().unwrap(),
        "--full",
        "--end-date",
        &end,
        "--dry-run",
        "--json",
    ];
    let o = env.run(&args);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["dry_run"], true);
    assert_eq!(
        (
            ids(&j["new"]),
            ids(&j["changed"]),
            ids(&j["moved"]),
            ids(&j["deactivated"])
        ),
        (
            vec!["E4".to_string()],
            vec!["E1".into(), "E2".into()],
            vec!["E1".into()],
            vec!["E3".into()]
        )
    );
    assert!(said.contains("dry run, nothing written"), "{said}");
    assert_eq!(mysql_snapshot(&env), db, "MySQL unchanged");
    assert_eq!(env.redis_snapshot(), redis, "Redis unchanged");
    let broker = attendance::broker_state(&cfg, &["D9".to_string()]).unwrap();
    assert_eq!(broker.missing, ["D9"], "no queue declared for the new department");
    // The same import for real does what the dry run said.
    let real = env.json(
        &args[..args.len() - 2]
            .iter()
            .copied()
            .chain(["--json", "-q"])
            .collect::<Vec<_>>(),
    );
    for k in ["new", "changed", "moved", "deactivated", "reactivated"] {
        assert_eq!(real[k], j[k], "{k}");
    }
    assert_eq!(env.count("employees"), 4);
    common::cleanup_amqp(&env.ns, &["D9".to_string()]);
}

#[test]
fn org_list_shows_current_or_departed_employees_and_export_reads_back_unchanged() {
    let env = TestEnv::migrated("UTC");
    let (past, ahead) = (env.today() - Duration::days(3), env.today() + Duration::days(7));
    let f = env.file(
        "roster.csv",
        &format!(
            "{HEADER},login,start_date,end_date\nE1,\"Lee, Ann\",D1,Sales,supervisor,ann,2020-01-06,\n\
             E2,Bob,D1,Sales,employee,,,{past}\nE3,Cy,D2,Legal,supervisor,,{ahead},\nE4,Di,D2,Legal,hr,di.x,,{ahead}\n"
        ),
    );
    env.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
    let listed = |args: &[&str]| -> Vec<String> {
        let j = env.json(&[&["org", "list", "--json"], args].concat());
        j.as_array()
            .unwrap()
            .iter()
            .map(|e| e["employee_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(listed(&[]), ["E1", "E3", "E4"]);
    assert_eq!(listed(&["--inactive"]), ["E2"]);
    assert_eq!(listed(&["--dept", "D2"]), ["E3", "E4"]);
    let j = env.json(&["org", "list", "--json", "--dept", "D1"]);
    assert_eq!(j[0]["department_name"], "Sales");
    assert_eq!(
        (j[0]["login"].as_str(), j[0]["start_date"].as_str()),
        (Some("ann"), Some("2020-01-06"))
    );
    let table = env.ok(&["org", "list", "--inactive"]);
    assert!(
        table.contains("E2") && table.contains(&day(past)) && !table.contains("E1"),
        "{table}"
    );
    env.fails(&["org", "list", "--dept", "D 1"], 2);
    let err = env.fails(&["org", "list", "--dept", "D9"], 1);
    assert!(err.contains("unknown department 'D9'"), "{err}");
    // The export holds everyone on the roster, leavers included, and reads back unchanged,
    // also as the whole roster.
    let out = env.dir.join("export.csv");
    env.ok(&["org", "export", "-o", out.to_str().unwrap(), "-q"]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text, env.ok(&["org", "export"]), "-o and stdout write the same");
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(
        text.starts_with(&format!("{HEADER},login,start_date,end_date\n")),
        "{text}"
    );
    let before = mysql_snapshot(&env);
    let j = env.json(&["org", "import", out.to_str().unwrap(), "--full", "--json", "-q"]);
    assert_eq!(j["unchanged"], 4, "{j}");
    for k in ["new", "changed", "moved", "reactivated", "deactivated"] {
        assert_eq!(j[k]["count"], 0, "{k}: {j}");
    }
    assert_eq!(mysql_snapshot(&env), before, "nothing rewritten");
}
