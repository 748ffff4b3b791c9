//! Pay periods: HR closes a month, and then every kind of change to its days (a correction,
//! leave, a calendar day, a shift assignment, a settle) is refused with one line naming the
//! period, exit 1, nothing changed in MySQL; a reopen needs a reason, both are audited, and
//! payroll says whether its period is closed. The binary against the real MySQL and Redis.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// A Friday of the closed month.
const DAY: &str = "2026-11-20";

/// Everything a change to the month could touch, as one comparable value.
fn state(env: &TestEnv) -> (Vec<String>, u64, u64, u64, u64) {
    (
        env.attendance_rows(),
        env.count("leaves"),
        env.count("calendar_days"),
        env.count("shift_assignments"),
        env.count("corrections"),
    )
}

fn period_closed(env: &TestEnv, from: &str, to: &str) -> serde_json::Value {
    let p = env.json(&["report", "payroll", "--from", from, "--to", to, "--json"]);
    p["rows"][0]["period_closed"].clone()
}

#[test]
fn a_closed_pay_period_refuses_every_kind_of_change_until_hr_reopens_it_with_a_reason() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let (emp, sup) = env.member_and_supervisor();
    let hr = env
        .members("D001")
        .into_iter()
        .find(|e| *e != emp && *e != sup)
        .unwrap();
    env.mysql()
        .exec_drop("UPDATE employees SET role = 'hr' WHERE id = ?", (&hr,))
        .unwrap();
    env.punch(&emp, "in", &format!("{DAY}T09:00:00"), true);
    env.punch(&emp, "out", &format!("{DAY}T18:00:00"), true);
    env.ok(&["settle", "--date", DAY, "-q"]);
    let shifts = env.file("s.csv", "name,start,end,work_days\nearly,06:00,14:00,mon-fri\n");
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);

    // Only HR closes.
    env.act_as(&sup);
    let e = env.fails(&["period", "close", "2026-11"], 1);
    assert!(e.contains("only HR"), "{e}");
    assert_eq!(env.count("pay_periods"), 0);
    assert_eq!(period_closed(&env, "2026-11-01", "2026-11-30"), false);

    env.act_as(&hr);
    env.ok(&["period", "close", "2026-11"]);
    assert_eq!(period_closed(&env, "2026-11-01", "2026-11-30"), true);
    assert_eq!(
        period_closed(&env, "2026-10-01", "2026-11-30"),
        false,
        "October is still open"
    );

    let before = state(&env);
    let assign = env.file(
        "a.csv",
        &format!("scope,target,from,shift\nemployee,{emp},2026-11-02,early\n"),
    );
    let correction = vec![
        "correct",
        &emp,
        "--date",
        DAY,
        "--status",
        "absent",
        "--reason",
        "late note",
    ];
    let changes: Vec<Vec<&str>> = vec![
        correction.clone(),
        vec!["leave", "add", &emp, DAY, DAY, "--kind", "sick"],
        vec!["calendar", "set", DAY, "holiday"],
        vec!["shifts", "assign", assign.to_str().unwrap()],
        vec!["settle", "--date", DAY],
        // A rule from a day in the closed month on would judge its settled days again.
        vec![
            "policy",
            "set",
            "policy.grace_minutes",
            "7",
            "--from",
            "2026-11-01",
            "--reason",
            "a kinder grace",
        ],
    ];
    let versions = env.count("policy_versions");
    for args in &changes {
        let e = env.fails(args, 1);
        let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: one error line: {e}");
        assert!(e.contains("pay period 2026-11 is closed"), "{args:?}: {e}");
        assert_eq!(state(&env), before, "{args:?} changed nothing");
        assert_eq!(env.count("policy_versions"), versions, "{args:?}: no rulebook version");
    }
    // A month after it is not closed: leave in December is taken.
    env.ok(&["leave", "add", &emp, "2026-12-01", "2026-12-01"]);

    // A reopen says why; both are audited.
    env.fails(&["period", "reopen", "2026-11"], 2);
    env.ok(&["period", "reopen", "2026-11", "--reason", "sick note came late"]);
    let audit: Vec<String> = env
        .mysql()
        .query("SELECT CONCAT_WS('|', month, action, by_employee, reason) FROM pay_period_audit ORDER BY id")
        .unwrap();
    assert_eq!(
        audit,
        [
            format!("2026-11-01|close|{hr}|"),
            format!("2026-11-01|reopen|{hr}|sick note came late"),
        ]
    );
    env.ok(&correction);
    assert_eq!(env.day_row(DAY, &emp), "absent|0|0");
}

/// Regression: `shifts import --resettle` re-judged a closed month's days, the one change a
/// closed period let through. A night shift moved half an hour earlier with `--resettle` (and
/// its dry run) is now refused with one line naming the period, exit 1, nothing written (rows,
/// the shift, the audit, Redis's copy); reopened, the same import re-settles the night late.
#[test]
fn a_shift_change_that_would_re_settle_a_closed_month_is_refused() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let (emp, _) = env.member_and_supervisor();
    let hr = env.members("D001").into_iter().find(|e| *e != emp).unwrap();
    env.mysql()
        .exec_drop("UPDATE employees SET role = 'hr' WHERE id = ?", (&hr,))
        .unwrap();
    env.assign_night_shift("D001", "2026-11-02");
    // A night across midnight, filed under the date it started.
    env.punch(&emp, "in", &format!("{DAY}T22:00:00"), true);
    env.punch(&emp, "out", "2026-11-21T06:00:00", true);
    env.ok(&["settle", "--date", DAY, "-q"]);
    assert_eq!(env.day_row(DAY, &emp), "present|0|0");
    env.act_as(&hr);
    env.ok(&["period", "close", "2026-11"]);

    let shift = |env: &TestEnv| -> Vec<String> {
        env.mysql()
            .query("SELECT CONCAT_WS('|', name, start_time, end_time, break_minutes) FROM shifts ORDER BY name")
            .unwrap()
    };
    let before = (state(&env), shift(&env), env.redis_snapshot());
    let earlier = env.file(
        "night2.csv",
        "name,start,end,late_grace,early_grace,work_days,break,part_time\n\
         night,21:30,06:00,10,5,mon-sun,30,false\n",
    );
    let import = ["shifts", "import", earlier.to_str().unwrap(), "--resettle"];
    for args in [&import[..], &[&import[..], &["--dry-run"]].concat()] {
        let e = env.fails(args, 1);
        assert_eq!(e.lines().count(), 1, "{args:?}: one line: {e}");
        assert!(
            e.starts_with("error: pay period 2026-11 is closed: no shift change changes it"),
            "{args:?}: {e}"
        );
        let after = (state(&env), shift(&env), env.redis_snapshot());
        assert_eq!(after, before, "{args:?} wrote nothing");
    }

    env.ok(&["period", "reopen", "2026-11", "--reason", "the night starts at 21:30"]);
    env.ok(&[&import[..], &["-q"]].concat());
    assert!(
        shift(&env).iter().any(|s| s.starts_with("night|21:30")),
        "{:?}",
        shift(&env)
    );
    assert_eq!(env.day_row(DAY, &emp), "late|30|0", "the night re-judged");
    assert_eq!(env.count("corrections"), 1, "and audited");
}
