//! Times as people type them: `checkin --at HH:MM` is today in the company's
//! zone by the Redis server's clock, `YYYY-MM-DDTHH:MM[:SS]` is the company's zone, RFC 3339
//! keeps its offset; a local time the clocks skip or repeat is refused (exit 2) and changes
//! nothing; lateness reads in hours and minutes in text and stays minutes in JSON.

use crate::common;

use chrono::Duration;
use common::TestEnv;

/// Tokyo: its day differs from UTC's for nine hours of every day, so "today" is the zone's.
const TZ: &str = "Asia/Tokyo";

fn checkin(env: &TestEnv, emp: &str, at: &str) -> String {
    let o = env
        .cmd()
        .args(["checkin", emp, "--kind", "in", "--at", at])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    common::expect_ok(&["checkin", emp, "--at", at], o)
}

#[test]
fn checkin_at_hh_mm_is_today_in_the_company_zone() {
    let env = TestEnv::with_roster(TZ, 3, 1);
    let emp = env.members("D001")[0].clone();
    checkin(&env, &emp, "00:01");
    let today = env.today().to_string();
    let s = env.json(&["status", &emp, "--date", &today, "--json"]);
    assert_eq!(s["first_in"], format!("{today}T00:01:00+09:00"), "{s}");
    let board = env.board("D001", &today);
    assert_eq!(board.get(&emp).map(String::as_str), Some("i60"), "{board:?}");
}

#[test]
fn checkin_at_a_local_time_without_offset_is_the_company_zone_and_lateness_reads_in_hours() {
    let env = TestEnv::with_roster(TZ, 3, 1);
    let emp = env.members("D001")[0].clone();
    let day = (env.today() - Duration::days(1)).to_string();
    let line = checkin(&env, &emp, &format!("{day}T22:42"));
    assert!(line.contains("late by 13 h 42 min"), "{line}");
    let s = env.json(&["status", &emp, "--date", &day, "--json"]);
    assert_eq!(s["first_in"], format!("{day}T22:42:00+09:00"), "{s}");
    assert_eq!(s["late_minutes"], 822, "JSON keeps minutes as a number: {s}");
    // Seconds are taken too, and RFC 3339 keeps its own offset.
    let other = env.members("D001")[1].clone();
    checkin(&env, &other, &format!("{day}T08:10:30"));
    let s = env.json(&["status", &other, "--date", &day, "--json"]);
    assert_eq!(s["first_in"], format!("{day}T08:10:30+09:00"), "{s}");
    let third = env.members("D001")[2].clone();
    checkin(&env, &third, &format!("{day}T00:10:00Z"));
    let s = env.json(&["status", &third, "--date", &day, "--json"]);
    assert_eq!(s["first_in"], format!("{day}T09:10:00+09:00"), "{s}");
}

#[test]
fn a_local_time_the_clocks_skip_or_repeat_is_refused_and_changes_nothing() {
    let env = TestEnv::with_roster("Europe/Paris", 3, 1);
    let emp = env.members("D001")[0].clone();
    let before = env.redis_snapshot();
    let err = env.fails(&["checkin", &emp, "--at", "2026-03-29T02:30"], 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("02:30 does not exist in Europe/Paris on 2026-03-29"),
        "{err}"
    );
    let err = env.fails(&["checkin", &emp, "--at", "2026-10-25T02:30:00"], 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("happens twice") && err.contains("+01:00"), "{err}");
    for bad in ["8.30", "8:30", "2026-10-25 08:30", "25/10/2026T08:30"] {
        let err = env.fails(&["checkin", &emp, "--at", bad], 2);
        assert!(err.contains("HH:MM"), "{bad}: {err}");
    }
    assert!(env.board_keys("2026-03-29").is_empty() && env.board_keys("2026-10-25").is_empty());
    assert_eq!(env.redis_snapshot(), before, "nothing written to Redis");
    assert_eq!(env.outbox_events(), 0);
}
