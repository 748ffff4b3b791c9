//! Leave and calendar changes for a day already settled re-settle the rows they change, by
//! settle's own rule, audited in `corrections` (marked `resettled`): a late sick note, a leave
//! cancelled, a holiday added and removed, a corrected row kept, and bad input that changes
//! nothing. The binary against the real MySQL and Redis.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// A Friday, long past (the suite's back-dating bound is raised for it).
const DAY: &str = "2026-11-20";

/// (status, corrected) of one stored row.
fn row(env: &TestEnv, emp: &str) -> (String, bool) {
    env.mysql()
        .exec_first(
            "SELECT CAST(status AS CHAR), corrected FROM attendance WHERE work_date = ? AND employee_id = ?",
            (DAY, emp),
        )
        .unwrap()
        .unwrap()
}

/// The re-settle audit rows: (employee, reason, old status, new status, by, os user).
fn audits(env: &TestEnv) -> Vec<(String, String, String, String, String, String)> {
    env.mysql()
        .query(
            "SELECT employee_id, reason, old_status, new_status, corrected_by, os_user FROM corrections \
             WHERE resettled ORDER BY id",
        )
        .unwrap()
}

/// The status `report employee` gives for DAY.
fn reported(env: &TestEnv, emp: &str) -> String {
    let v = env.json(&["report", "employee", emp, "--from", DAY, "--to", DAY, "--json"]);
    let day = v["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["work_date"] == DAY));
    day.unwrap_or_else(|| panic!("no row of {DAY}: {v}"))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Five employees in one department; E000001 in and out on time, DAY settled.
fn settled_day() -> TestEnv {
    let env = TestEnv::with_roster(TZ, 5, 1);
    env.punch("E000001", "in", "2026-11-20T08:50:00", true);
    env.punch("E000001", "out", "2026-11-20T18:05:00", true);
    env.ok(&["settle", "--date", DAY, "-q"]);
    env
}

#[test]
fn a_late_sick_note_turns_a_settled_absent_day_into_leave_and_a_cancel_turns_it_back() {
    let env = settled_day();
    env.act_as("E000005");
    assert_eq!(reported(&env, "E000002"), "absent");
    let other_rows = |env: &TestEnv| -> Vec<String> {
        env.attendance_rows()
            .into_iter()
            .filter(|r| !r.contains("|E000002|"))
            .collect()
    };
    let before = other_rows(&env);

    // The sick note runs to the Monday after: the weekend and the Monday are not settled yet.
    let added = env.json(&["leave", "add", "E000002", DAY, "2026-11-23", "--kind", "sick", "--json"]);
    let id = added["leave_id"].as_u64().unwrap().to_string();
    let r = &added["resettled"];
    assert_eq!(r["settled_days"], serde_json::json!([DAY]), "{r}");
    assert_eq!(r["changed"], 1, "{r}");
    assert_eq!(r["changes"]["absent -> on_leave"], 1, "{r}");
    assert_eq!(
        r["counts_at_settle"],
        serde_json::json!(["2026-11-21", "2026-11-22", "2026-11-23"]),
        "{r}"
    );
    assert_eq!(
        row(&env, "E000002"),
        ("on_leave".into(), false),
        "re-settled, not corrected"
    );
    assert_eq!(reported(&env, "E000002"), "on_leave", "the report changes at once");
    assert_eq!(other_rows(&env), before, "only the employee's row changes");
    let me = TestEnv::os_login();
    let reason = format!("leave {id} added (sick)");
    assert_eq!(
        audits(&env),
        [(
            "E000002".into(),
            reason.clone(),
            "absent".into(),
            "on_leave".into(),
            "E000005".into(),
            me.clone()
        )]
    );

    // The same add again is a repeat that finds nothing left to change; a rerun of settle
    // computes the very row the re-settle wrote.
    let again = env.json(&["leave", "add", "E000002", DAY, "2026-11-23", "--kind", "sick", "--json"]);
    assert_eq!(
        (again["repeat"].clone(), again["resettled"]["changed"].clone()),
        (true.into(), 0.into())
    );
    let settled = env.attendance_rows();
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(env.attendance_rows(), settled, "settle agrees with the re-settle");

    // Text says what it did.
    let o = env.run(&["leave", "cancel", &id]);
    assert!(o.status.success());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(&format!("leave {id} cancelled"))
            && said.contains("re-settled 1 settled day of E000002: 1 on_leave -> absent"),
        "{said}"
    );
    assert_eq!(row(&env, "E000002"), ("absent".into(), false));
    assert_eq!(reported(&env, "E000002"), "absent");
    let all = audits(&env);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(
        (all[1].1.as_str(), all[1].2.as_str(), all[1].3.as_str()),
        (format!("leave {id} cancelled (sick)").as_str(), "on_leave", "absent")
    );
    assert_eq!(other_rows(&env), before);
}

#[test]
fn a_holiday_added_for_a_settled_day_resettles_everyone_but_a_corrected_row() {
    let env = settled_day();
    let sup: String = env
        .mysql()
        .exec_first("SELECT employee_id FROM supervisors WHERE department_id = 'D001'", ())
        .unwrap()
        .unwrap();
    let fixed = ["E000002", "E000003", "E000004"]
        .into_iter()
        .find(|e| *e != sup)
        .unwrap();
    env.correct_out(fixed, DAY, &sup);
    let corrected = row(&env, fixed);
    assert!(corrected.1, "{corrected:?}");
    let times = |env: &TestEnv| -> (Option<String>, Option<String>, String) {
        env.mysql()
            .exec_first(
                "SELECT CAST(first_in AS CHAR), CAST(last_out AS CHAR), punches FROM attendance \
                 WHERE work_date = ? AND employee_id = 'E000001'",
                (DAY,),
            )
            .unwrap()
            .unwrap()
    };
    let worked = times(&env);

    let set = env.json(&["calendar", "set", DAY, "holiday", "--note", "snow day", "--json"]);
    let r = &set["resettled"];
    assert_eq!(
        (r["settled_rows"].clone(), r["changed"].clone()),
        (5.into(), 4.into()),
        "{r}"
    );
    assert_eq!(r["changes"]["absent -> rest_day"], 3, "{r}");
    assert_eq!(r["changes"]["present -> rest_day"], 1, "{r}");
    assert_eq!(r["kept_corrected"], 1, "{r}");
    for e in ["E000001", "E000002", "E000003", "E000004", "E000005"] {
        let want = if e == fixed {
            corrected.clone()
        } else {
            ("rest_day".into(), false)
        };
        assert_eq!(row(&env, e), want, "{e}");
    }
    assert_eq!(times(&env), worked, "who worked keeps their times and punches");
    let reasons: Vec<String> = audits(&env).into_iter().map(|a| a.1).collect();
    assert_eq!(reasons, vec![format!("calendar {DAY} set to holiday"); 4]);

    // Unset: the policy's week makes it a Friday at work again; the rows come back.
    let o = env.run(&["calendar", "unset", DAY]);
    assert!(o.status.success());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("re-settled 1 settled day (5 rows): 3 rest_day -> absent, 1 rest_day -> present")
            && said.contains("kept 1 corrected row (a correction wins)"),
        "{said}"
    );
    assert_eq!(row(&env, "E000001"), ("present".into(), false));
    assert_eq!(row(&env, fixed), corrected);
    assert_eq!(audits(&env).len(), 8);
    assert_eq!(env.count("calendar_days"), 0);
}

#[test]
fn bad_input_is_one_line_and_changes_nothing() {
    let env = settled_day();
    let id = env.json(&["leave", "add", "E000003", DAY, DAY, "--json"])["leave_id"]
        .as_u64()
        .unwrap()
        .to_string();
    // The account running it is nobody's login: the audit names the account alone.
    let who: (Option<String>, String) = env
        .mysql()
        .query_first("SELECT corrected_by, os_user FROM corrections WHERE resettled")
        .unwrap()
        .unwrap();
    assert_eq!(who, (None, TestEnv::os_login()));
    let listed = env.json(&["report", "corrections", "--from", DAY, "--to", DAY, "--json"]);
    assert!(
        listed.to_string().contains(&format!("leave {id} added (annual)")),
        "report corrections lists the re-settle: {listed}"
    );
    let state = |env: &TestEnv| {
        (
            env.attendance_rows(),
            env.count("corrections"),
            env.count("leaves"),
            env.count("calendar_days"),
            env.mysql()
                .query::<String, _>("SELECT CAST(status AS CHAR) FROM leaves ORDER BY id")
                .unwrap(),
        )
    };
    let before = state(&env);
    let refused: [(&[&str], i32); 7] = [
        (&["leave", "add", "E000002", "2026-11-31", "2026-12-01"], 2),
        (&["leave", "add", "NOBODY", DAY, DAY], 1),
        (&["leave", "add", "E000003", DAY, DAY, "--kind", "sick"], 1),
        (&["leave", "cancel", "999999"], 1),
        (&["leave", "cancel", "twelve"], 2),
        (&["calendar", "set", "2026-02-30", "holiday"], 2),
        (&["calendar", "unset", "20-11-2026"], 2),
    ];
    for (args, code) in refused {
        let err = env.fails(args, code);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert_eq!(state(&env), before, "{args:?} changed a store");
    }
    // While a settle holds its lock, a change that may re-settle is refused and writes nothing.
    let mut settling = env.mysql();
    let got: Option<i64> = settling
        .query_first("SELECT GET_LOCK(CONCAT('attendance-settle-', MD5(DATABASE())), 0)")
        .unwrap();
    assert_eq!(got, Some(1));
    for args in [
        &["leave", "add", "E000004", DAY, DAY][..],
        &["leave", "cancel", &id],
        &["calendar", "set", DAY, "holiday"],
    ] {
        let err = env.fails(args, 1);
        assert!(err.contains("a settle is running"), "{args:?}: {err}");
        assert_eq!(state(&env), before, "{args:?} changed a store");
    }
    settling
        .query_drop("SELECT RELEASE_LOCK(CONCAT('attendance-settle-', MD5(DATABASE())))")
        .unwrap();
    // A day with no entry: nothing to unset, nothing changed.
    let o = env.json(&["calendar", "unset", DAY, "--json"]);
    assert_eq!(o["was"], serde_json::Value::Null);
    assert_eq!(state(&env), before);
    // The leave's row stays as re-settled.
    assert_eq!(row(&env, "E000003"), ("on_leave".into(), false));
}
