//! A shift change for days already settled re-settles them, as a leave or calendar change does
//! (`settle::resettle`): an assignment back-dated over settled days, of an employee or of a
//! department, re-settles the rows it changes up to the target's next assignment, audited in
//! `corrections`, a corrected row kept, in the same transaction as the assignment; one in the
//! future re-settles nothing; a changed shift that judged settled days is refused without
//! `--resettle`, and with it re-judges them. The binary against the real MySQL and Redis.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;
use serde_json::Value;

const TZ: &str = "Europe/Paris";
/// Monday to Wednesday, long past (the suite's back-dating bound is raised for them).
const DAYS: [&str; 3] = ["2026-11-16", "2026-11-17", "2026-11-18"];

const SHIFTS: &str = "name,start,end,late_grace,early_grace,work_days\n\
early,06:00,14:00,0,0,mon-fri\nnight,22:00,06:00,10,5,mon-sun\n";

/// Two departments; everyone in at 08:50 and out at 18:05 (on time by the policy) on `days`,
/// after the assignments `assignments` gives (a CSV body), then every day settled.
fn settled(days: &[&str], assignments: impl FnOnce(&TestEnv) -> String) -> TestEnv {
    let env = TestEnv::with_roster(TZ, 10, 2);
    let shifts = env.file("shifts.csv", SHIFTS);
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
    let assignments = assignments(&env);
    if !assignments.is_empty() {
        assign(&env, &assignments, &["-q"]);
    }
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    // A punch file per day: one command for everyone.
    for day in days {
        let body: String = all
            .iter()
            .map(|e| format!("{e},in,{day}T08:50:00+01:00\n{e},out,{day}T18:05:00+01:00\n"))
            .collect();
        env.punch_file(&body);
        env.ok(&["settle", "--date", day, "-q"]);
    }
    env
}

/// `shifts assign` of a CSV body with `flags`; returns stdout.
fn assign(env: &TestEnv, body: &str, flags: &[&str]) -> String {
    let f = env.file("assign.csv", &format!("scope,target,from,shift\n{body}"));
    let mut args = vec!["shifts", "assign", f.to_str().unwrap()];
    args.extend(flags);
    env.ok(&args)
}

/// Every stored row but those of `skip`.
fn rows_but(env: &TestEnv, skip: &[&String]) -> Vec<String> {
    env.attendance_rows()
        .into_iter()
        .filter(|r| !skip.iter().any(|e| r.contains(&format!("|{e}|"))))
        .collect()
}

/// The re-settle audit rows: employee|day|reason|old|new|by|os user, with who and when set.
fn audits(env: &TestEnv) -> Vec<String> {
    env.mysql()
        .query(
            "SELECT CONCAT_WS('|', employee_id, work_date, reason, old_status, new_status, \
             IFNULL(corrected_by, '-'), os_user) FROM corrections \
             WHERE resettled AND db_user <> '' AND corrected_at IS NOT NULL ORDER BY work_date, employee_id",
        )
        .unwrap()
}

#[test]
fn an_employees_assignment_back_dated_over_settled_days_resettles_their_rows_up_to_their_next_one() {
    // Regression: an assignment back-dated over settled days left their rows judged by the old shift.
    // Their own assignment from Wednesday: the policy again.
    let env = settled(&DAYS, |env| {
        format!("employee,{},{},default\n", env.members("D001")[1], DAYS[2])
    });
    let emp = env.members("D001")[1].clone();
    let hr = env.members("D002")[0].clone();
    env.act_as(&hr);
    let others = rows_but(&env, &[&emp]);
    let before = env.attendance_rows();
    let body = format!("employee,{emp},{},early\n", DAYS[0]);

    // A dry run says what it would re-settle and writes nothing.
    let dry: Value = serde_json::from_str(&assign(&env, &body, &["--dry-run", "--json"])).unwrap();
    assert_eq!((dry["dry_run"].as_bool(), dry["new"].as_u64()), (Some(true), Some(1)));
    assert_eq!(dry["resettled"]["changed"], 2, "{dry}");
    assert_eq!(env.attendance_rows(), before, "a dry run writes nothing");
    assert_eq!(env.count("corrections"), 0);
    assert_eq!(env.count("shift_assignments"), 1);

    let done: Value = serde_json::from_str(&assign(&env, &body, &["--json"])).unwrap();
    let r = &done["resettled"];
    assert_eq!(r["settled_days"], serde_json::json!([DAYS[0], DAYS[1]]), "{r}");
    assert_eq!(r["changed"], 2, "{r}");
    assert_eq!(r["changes"]["present -> late"], 2, "{r}");
    assert_eq!(r["rows"][0]["employee_id"], emp.as_str(), "{r}");
    // 06:00 to 14:00: in at 08:50 is 170 minutes late; Wednesday follows their next one.
    assert_eq!(env.day_row(DAYS[0], &emp), "late|170|0");
    assert_eq!(env.day_row(DAYS[1], &emp), "late|170|0");
    assert_eq!(env.day_row(DAYS[2], &emp), "present|0|0");
    assert_eq!(rows_but(&env, &[&emp]), others, "only their rows change");
    let me = TestEnv::os_login();
    let reason = format!("shift assignment employee {emp} from {}: early", DAYS[0]);
    assert_eq!(
        audits(&env),
        [DAYS[0], DAYS[1]].map(|d| format!("{emp}|{d}|{reason}|present|late|{hr}|{me}"))
    );
    // Not marked corrected: a rerun of settle computes the very rows the re-settle wrote.
    let now = env.attendance_rows();
    assert!(!now.iter().any(|r| r.ends_with("|1")), "{now:?}");
    env.ok(&["settle", "--date", DAYS[0], "-q"]);
    assert_eq!(env.attendance_rows(), now, "settle agrees with the re-settle");
    // The same file again is unchanged: nothing to re-settle.
    let again: Value = serde_json::from_str(&assign(&env, &body, &["--json"])).unwrap();
    assert_eq!(
        (again["unchanged"].as_u64(), again["resettled"]["changed"].as_u64()),
        (Some(1), Some(0))
    );

    // The text says so, as `leave add` does.
    let o = env.run(&[
        "shifts",
        "assign",
        env.file(
            "a.csv",
            &format!("scope,target,from,shift\nemployee,{emp},{},default\n", DAYS[0]),
        )
        .to_str()
        .unwrap(),
    ]);
    assert!(o.status.success());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("re-settled 2 settled days (2 rows): 2 late -> present"),
        "{said}"
    );
    assert_eq!(env.day_row(DAYS[0], &emp), "present|0|0");
}

#[test]
fn a_department_assignment_back_dated_resettles_its_members_but_one_with_their_own_and_a_corrected_row() {
    // Regression: a department's back-dated assignment left its settled rows as they were.
    // D001's supervisor, one member with their own assignment, one whose day is corrected.
    let cast = |env: &TestEnv| -> (String, String, String) {
        let sup: String = env
            .mysql()
            .exec_first("SELECT employee_id FROM supervisors WHERE department_id = 'D001'", ())
            .unwrap()
            .unwrap();
        let mut rest = env.members("D001").into_iter().filter(|e| *e != sup);
        (sup.clone(), rest.next().unwrap(), rest.next().unwrap())
    };
    let env = settled(&DAYS[..2], |env| {
        format!("employee,{},2026-11-01,default\n", cast(env).1)
    });
    let (sup, own, fixed) = cast(&env);
    let team = env.members("D001");
    env.correct_out(&fixed, DAYS[0], &sup);
    let corrected = env.day_row(DAYS[0], &fixed);
    let d002 = env.members("D002");
    let elsewhere = |env: &TestEnv| -> Vec<String> {
        env.attendance_rows()
            .into_iter()
            .filter(|r| r.contains("|D002|"))
            .collect()
    };
    let untouched = elsewhere(&env);
    let corrections = env.count("corrections");

    let o = env.run(&[
        "shifts",
        "assign",
        env.file(
            "a.csv",
            &format!("scope,target,from,shift\ndepartment,D001,{},early\n", DAYS[0]),
        )
        .to_str()
        .unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = &serde_json::from_slice::<Value>(&o.stdout).unwrap()["resettled"];
    // Everyone but the one with their own assignment, on both days; the corrected row once.
    let moved = team.len() - 1;
    assert_eq!(r["settled_rows"], (team.len() * 2) as u64, "{r}");
    assert_eq!(r["changed"], (moved * 2 - 1) as u64, "{r}");
    assert_eq!(r["kept_corrected"], 1, "{r}");
    assert_eq!(r["rows"], serde_json::json!([]), "a department lists no rows");
    for e in &team {
        for day in &DAYS[..2] {
            let want = if *e == own {
                "present|0|0".to_string()
            } else if *e == fixed && *day == DAYS[0] {
                corrected.clone()
            } else {
                "late|170|0".to_string()
            };
            assert_eq!(env.day_row(day, e), want, "{e} on {day}");
        }
    }
    assert_eq!(elsewhere(&env), untouched, "another department's rows stay");
    let reason = format!("shift assignment department D001 from {}: early", DAYS[0]);
    let audit = audits(&env);
    assert_eq!(audit.len(), moved * 2 - 1, "{audit:?}");
    assert!(
        audit
            .iter()
            .all(|a| a.contains(&format!("|{reason}|present|late|{sup}|"))),
        "{audit:?}"
    );
    assert!(!audit
        .iter()
        .any(|a| a.starts_with(&own) || d002.iter().any(|e| a.starts_with(e.as_str()))));

    // An assignment from a day not yet come re-settles nothing.
    let tz: chrono_tz::Tz = TZ.parse().unwrap();
    let later = (chrono::Utc::now().with_timezone(&tz).date_naive() + chrono::Duration::days(10)).to_string();
    let rows = env.attendance_rows();
    let total = env.count("corrections");
    let future: Value =
        serde_json::from_str(&assign(&env, &format!("department,D001,{later},night\n"), &["--json"])).unwrap();
    let r = &future["resettled"];
    assert_eq!(future["new"], 1);
    assert_eq!(
        (
            r["settled_days"].clone(),
            r["changed"].clone(),
            r["counts_at_settle"].clone()
        ),
        (serde_json::json!([]), 0.into(), serde_json::json!([])),
        "{r}"
    );
    assert_eq!(env.attendance_rows(), rows);
    assert_eq!(env.count("corrections"), total);
    assert!(total > corrections);
}

#[test]
fn a_changed_shift_that_judged_settled_days_is_refused_without_resettle_and_rejudges_them_with_it() {
    // Regression: `shifts import` changed a shift's hours and left the settled days it judged
    // as they were, silently.
    let env = settled(&DAYS[..1], |_| {
        "department,D001,2026-11-01,early\ndepartment,D002,2099-01-04,night\n".to_string()
    });
    let team = env.members("D001");
    let was = env.day_row(DAYS[0], &team[0]);
    assert_eq!(was, "late|170|0");
    let state = |env: &TestEnv| {
        (
            env.attendance_rows(),
            env.count("corrections"),
            env.json(&["shifts", "list", "--json"]),
            redis::cmd("HGET")
                .arg(format!("{}:{{shifts}}", env.ns))
                .arg("table")
                .query::<Option<String>>(&mut env.redis())
                .unwrap(),
        )
    };
    let before = state(&env);
    let later = env.file(
        "later.csv",
        "name,start,end,late_grace,early_grace,work_days\nearly,08:00,16:00,0,0,mon-fri\n",
    );
    let later = later.to_str().unwrap();
    for flags in [&[][..], &["--dry-run"]] {
        let mut args = vec!["shifts", "import", later];
        args.extend(flags);
        let e = env.fails(&args, 1);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(
            e.contains("shift early judged settled days (department D001 from 2026-11-01; settled from 2026-11-16)")
                && e.contains("import it under a new name and assign that from the date")
                && e.contains("--resettle"),
            "{e}"
        );
        assert_eq!(state(&env), before, "{flags:?} changed a store");
    }

    // While a settle holds its lock, a change that may re-settle is refused and writes nothing.
    let lock = "CONCAT('attendance-settle-', MD5(DATABASE()))";
    let mut settling = env.mysql();
    let got: Option<i64> = settling.query_first(format!("SELECT GET_LOCK({lock}, 0)")).unwrap();
    assert_eq!(got, Some(1));
    let a = env.file("a.csv", "scope,target,from,shift\ndepartment,D002,2026-11-01,early\n");
    for args in [
        &["shifts", "import", later, "--resettle"][..],
        &["shifts", "assign", a.to_str().unwrap()],
    ] {
        let e = env.fails(args, 1);
        assert!(e.contains("a settle is running"), "{args:?}: {e}");
        assert_eq!(state(&env), before, "{args:?} changed a store");
    }
    settling.query_drop(format!("SELECT RELEASE_LOCK({lock})")).unwrap();

    // Dry run with --resettle: what it would do, nothing written.
    let dry = env.json(&["shifts", "import", later, "--resettle", "--dry-run", "--json"]);
    assert_eq!(dry["resettled"]["changes"]["late -> late"], team.len() as u64, "{dry}");
    assert_eq!(state(&env), before);

    let done = env.json(&["shifts", "import", later, "--resettle", "--json"]);
    assert_eq!(done["changed"], 1, "{done}");
    let r = &done["resettled"];
    assert_eq!(r["reason"], "shift early changed: 06:00-14:00 -> 08:00-16:00", "{r}");
    assert_eq!(r["changed"], team.len() as u64, "{r}");
    // 08:00 to 16:00: in at 08:50 is 50 minutes late.
    for e in &team {
        assert_eq!(env.day_row(DAYS[0], e), "late|50|0", "{e}");
    }
    for e in env.members("D002") {
        assert_eq!(env.day_row(DAYS[0], &e), "present|0|0", "{e}");
    }
    let audit = audits(&env);
    assert_eq!(audit.len(), team.len(), "{audit:?}");
    assert!(audit
        .iter()
        .all(|a| a.contains("|shift early changed: 06:00-14:00 -> 08:00-16:00|late|late|")));
    let (_, _, list, copy) = state(&env);
    assert!(list.to_string().contains("\"start\":\"08:00\""), "{list}");
    assert!(copy.unwrap().contains("08:00"), "Redis's copy follows");

    // A shift that judged no settled day changes without the flag.
    let night = env.file("night.csv", "name,start,end\nnight,21:00,05:00\n");
    let o = env.json(&["shifts", "import", night.to_str().unwrap(), "--json"]);
    assert_eq!(
        (o["changed"].as_u64(), o["resettled"]["settled_rows"].as_u64()),
        (Some(1), Some(0))
    );
}
