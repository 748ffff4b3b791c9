//! `punch void`: a punch voided by its time or event id never reaches the settled row nor
//! comes back through `recover`, the supervisor is told even when the broker is down, and a
//! void of one's own punch or of no punch is refused and changes nothing. Fixed past dates:
//! tests/common raises the back-dating bound for them.

use crate::common;

// The day, its zone and its stored row are the corrections' (the same undo, audited).
use crate::correct::{row, DAY, TZ};
use common::{strs, TestEnv};
use mysql::prelude::Queryable;

/// The day's value of `emp` on D001's live board.
fn board_value(env: &TestEnv, emp: &str) -> Option<String> {
    env.board("D001", DAY).get(emp).cloned()
}

#[test]
fn a_voided_punch_never_reaches_the_settled_row() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    // A colleague's badge at 07:05 made the day start early: the earliest check-in wins.
    env.punch(&emp, "in", &format!("{DAY}T07:05:00"), true);
    env.punch(&emp, "in", &format!("{DAY}T09:20:00"), true);
    env.punch(&emp, "out", &format!("{DAY}T18:10:00"), true);
    let s = env.json(&["status", &emp, "--date", DAY, "--json"]);
    assert_eq!(s["first_in"], "2026-11-20T07:05:00+01:00", "{s}");
    env.act_as(&sup);

    let v = env.json(&[
        "punch",
        "void",
        &emp,
        "--at",
        &format!("{DAY}T07:05"),
        "--reason",
        "a colleague's badge",
        "--json",
    ]);
    assert_eq!(v["kind"], "in", "{v}");
    assert_eq!(v["by"], sup.as_str(), "{v}");
    assert_eq!(v["first_in"], "2026-11-20T09:20:00+01:00", "{v}");
    let value = board_value(&env, &emp).unwrap();
    assert!(!value.contains("i25500") && value.contains("i33600"), "{value}");
    let s = env.json(&["status", &emp, "--date", DAY, "--json"]);
    assert_eq!(s["first_in"], "2026-11-20T09:20:00+01:00", "{s}");
    assert_eq!(s["late_minutes"], 20, "{s}");

    // Audited: who, the OS account, the punch, the reason.
    let audit: Vec<String> = env
        .mysql()
        .query(
            "SELECT CONCAT_WS('|', work_date, employee_id, department_id, punched_at, kind, voided_by, os_user, reason) \
             FROM punch_voids",
        )
        .unwrap();
    assert_eq!(
        audit,
        vec![format!(
            "2026-11-20|{emp}|D001|2026-11-20 06:05:00|in|{sup}|{}|a colleague's badge",
            TestEnv::os_login()
        )]
    );

    env.ok(&["settle", "--date", DAY]);
    assert_eq!(row(&env, &emp), "late|2026-11-20 08:20:00|2026-11-20 17:10:00|20|0");
    let first: Option<String> = env
        .mysql()
        .exec_first(
            "SELECT CAST(first_in AS CHAR) FROM attendance WHERE work_date = ? AND employee_id = ?",
            (DAY, &emp),
        )
        .unwrap();
    assert_ne!(
        first.as_deref(),
        Some("2026-11-20 06:05:00"),
        "the voided punch never reaches MySQL"
    );
    // The punch log keeps the punch and marks it voided.
    let log: Vec<String> = env
        .mysql()
        .exec(
            "SELECT CONCAT_WS('|', punched_at, kind, how) FROM punch_log WHERE employee_id = ? ORDER BY punched_at, how",
            (&emp,),
        )
        .unwrap();
    assert_eq!(
        log,
        vec![
            "2026-11-20 06:05:00|in|live",
            "2026-11-20 06:05:00|in|voided",
            "2026-11-20 08:20:00|in|live",
            "2026-11-20 17:10:00|out|live",
        ]
    );
}

#[test]
fn a_void_of_ones_own_punch_or_of_no_punch_is_refused_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T08:40:00"), true);
    let before = board_value(&env, &emp);
    env.act_as(&emp);
    let err = env.fails(&["punch", "void", &emp, "--at", &format!("{DAY}T08:40")], 1);
    assert!(err.contains("may not void their own punch"), "{err}");
    env.act_as(&sup);
    let err = env.fails(&["punch", "void", &emp, "--at", &format!("{DAY}T08:41")], 1);
    assert!(err.contains("no punch at 08:41:00 on 2026-11-20"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    env.fails(
        &["punch", "void", &emp, "--at", &format!("{DAY}T08:40"), "--kind", "out"],
        1,
    );
    env.fails(&["punch", "void", &emp, "--at", "8.40"], 2);
    env.fails(&["punch", "void", &emp, "--at", "2026-03-29T02:30"], 2);
    assert_eq!(board_value(&env, &emp), before);
    assert_eq!(env.count("punch_voids"), 0);
}

/// The void notice `id` waiting in D001's outbox, as JSON.
fn void_notice(env: &TestEnv, id: &str) -> serde_json::Value {
    let stored = env
        .outbox("D001")
        .get(id)
        .cloned()
        .expect("the void notice waits in the outbox");
    serde_json::from_str(&stored).unwrap()
}

/// A day with a colleague's badge at 07:05 before the employee's own 09:20, both published
/// (so in the journal), and the supervisor at the keyboard: (env, employee, supervisor).
fn lent_badge_day() -> (TestEnv, String, String) {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T07:05:00"), false);
    env.punch(&emp, "in", &format!("{DAY}T09:20:00"), false);
    env.act_as(&sup);
    (env, emp, sup)
}

/// `punch void` of the lent badge's 07:05 check-in.
fn void_0705(emp: &str) -> Vec<String> {
    let at = format!("{DAY}T07:05");
    ["punch", "void", emp, "--at", &at, "--reason", "lent badge"]
        .map(String::from)
        .to_vec()
}

#[test]
fn the_supervisor_is_told_of_a_void_even_when_the_broker_is_down() {
    let (env, emp, sup) = lent_badge_day();
    // The broker down: the void is done, its notice waits in the outbox.
    let out = env
        .cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(void_0705(&emp))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["notification"], "pending", "{v}");
    let id = v["event_id"].as_str().unwrap().to_string();
    assert_eq!(id, format!("void-{}", v["void_id"]));
    let n = void_notice(&env, &id);
    assert_eq!(n["type"], "void", "{n}");
    assert_eq!(
        (n["employee_id"].as_str(), n["kind"].as_str()),
        (Some(emp.as_str()), Some("in"))
    );
    assert_eq!(n["voided_by"], sup.as_str(), "{n}");
    assert!(n["key_id"].is_string() && n["sig"].is_string(), "signed: {n}");

    // The relay sends it; the supervisor's screen shows it after the two check-ins.
    env.ok(&["relay"]);
    assert!(env.outbox("D001").is_empty());
    let shown = env.ok(&["watch-dept", "D001", "--once"]);
    let last = shown.lines().last().unwrap_or_default().to_string();
    let name: String = env
        .mysql()
        .exec_first("SELECT name FROM employees WHERE id = ?", (&emp,))
        .unwrap()
        .unwrap();
    assert_eq!(
        last,
        format!("void: {emp} {name} 2026-11-20 07:05 check-in voided by {sup} (lent badge)"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 3, "{shown}");
    // Shown once: a watcher does not show it again.
    assert_eq!(env.ok(&["watch-dept", "D001", "--once"]), "");
}

#[test]
fn a_punch_is_voided_by_its_event_id() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, sup) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T09:20:00"), true);
    let c = env.json(&[
        "checkin",
        &emp,
        "--kind",
        "in",
        "--at",
        &format!("{DAY}T07:05"),
        "--json",
    ]);
    let event = c["event_id"].as_str().unwrap().to_string();
    env.act_as(&sup);
    let err = env.fails(&["punch", "void", &emp, "--event", "no-such-event"], 1);
    assert!(err.contains("no punch of"), "{err}");
    env.fails(&["punch", "void", &emp, "--event", &event, "--at", "07:05"], 2);
    env.fails(&["punch", "void", &emp], 2);
    assert_eq!(env.count("punch_voids"), 0);
    let v = env.json(&[
        "punch", "void", &emp, "--event", &event, "--reason", "not hers", "--json",
    ]);
    assert_eq!(
        (v["kind"].as_str(), v["at"].as_str()),
        (Some("in"), Some("2026-11-20T07:05:00+01:00")),
        "{v}"
    );
    let value = board_value(&env, &emp).unwrap();
    assert!(!value.contains("i25500") && value.contains("i33600"), "{value}");
}

#[test]
fn recover_does_not_bring_a_voided_punch_back() {
    let (env, emp, _) = lent_badge_day();
    env.ok(&strs(&void_0705(&emp)));
    let rec = env.json(&["recover", "--date", DAY, "--idle-ms", "1000", "--json"]);
    assert_eq!(rec["voided"], 1, "{rec}");
    assert_eq!(rec["already_present"], 1, "{rec}");
    assert_eq!(rec["read"], 2, "{rec}");
    let value = board_value(&env, &emp).unwrap();
    assert!(
        !value.contains("i25500"),
        "the voided punch stays off the board: {value}"
    );
    env.ok(&["settle", "--date", DAY]);
    assert_eq!(row(&env, &emp), "missing_checkout|2026-11-20 08:20:00|-|20|0");
}
