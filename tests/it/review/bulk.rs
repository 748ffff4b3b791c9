//! Review in bulk: a kiosk offline all morning holds hundreds of punches, decided in one command
//! by filter (`--dept`, `--date`, `--key`, `--all-pending`), each punch checked by the rules of
//! one at a time and audited on its own row. Regression: 293 held punches took 293 commands.

use std::time::Instant;

use mysql::prelude::Queryable;

use super::{code, company_of, json, local, run, stderr, stores};
use crate::common::{self, TestEnv, KEY_ID};

/// D1's members (A001...) held, D2's (B01...) held, as a kiosk replays a morning.
const D1_HELD: usize = 500;
const D2_HELD: usize = 20;

/// S1 supervises D1 (A001..A500), S2 supervises D2 (B01..B20), H1 is HR (in D2).
fn roster() -> String {
    let mut csv = String::from(
        "employee_id,name,department_id,department_name,role\n\
         S1,Name S1,D1,Dept D1,supervisor\nS2,Name S2,D2,Dept D2,supervisor\nH1,Name H1,D2,Dept D2,hr\n",
    );
    for i in 1..=D1_HELD {
        csv += &format!("A{i:03},Name A{i:03},D1,Dept D1,employee\n");
    }
    for i in 1..=D2_HELD {
        csv += &format!("B{i:02},Name B{i:02},D2,Dept D2,employee\n");
    }
    csv
}

fn members(prefix: &str, n: usize) -> Vec<String> {
    let width = if prefix == "A" { 3 } else { 2 };
    (1..=n).map(|i| format!("{prefix}{i:0width$}")).collect()
}

/// The binary with the keyring deployed (the kiosk's key in it, not allowed to replay: its
/// back-dated punches are held, and its events are verified by every consumer).
fn with_ring(env: &TestEnv, ring: &str, args: &[&str]) -> std::process::Output {
    run(env, args, &[("ATTENDANCE_SIGNING_KEYRING_FILE", ring)])
}

/// Held punches' (status, count).
fn by_status(env: &TestEnv) -> Vec<(String, u64)> {
    env.mysql()
        .query("SELECT status, COUNT(*) FROM held_punches GROUP BY status ORDER BY status")
        .unwrap()
}

#[test]
fn five_hundred_held_punches_are_approved_in_one_command_each_checked_and_audited() {
    let env = company_of(&roster());
    let day = env.today();
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let ring = ring.to_str().unwrap().to_string();
    // The kiosk's morning, replayed after it came back: every punch back-dated, so held.
    let at = local(&env, day, 7, 55);
    let mut csv = String::from("employee_id,kind,at,source\n");
    for e in members("A", D1_HELD).iter().chain(&members("B", D2_HELD)) {
        csv += &format!("{e},in,{at},kiosk-3\n");
    }
    let file = env.file("morning.csv", &csv);
    let o = with_ring(&env, &ring, &["checkin", "--file", file.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    assert_eq!(
        by_status(&env),
        vec![("pending".to_string(), (D1_HELD + D2_HELD) as u64)]
    );
    let day_s = day.to_string();
    env.act_as("S1");

    // A dry run counts, by the same rules, and changes nothing.
    let before = stores(&env);
    let o = with_ring(
        &env,
        &ring,
        &["review", "approve", "--all-pending", "--dry-run", "--json"],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["dry_run"], true, "{v}");
    assert_eq!(
        (
            v["matched"].as_u64(),
            v["approved"].as_u64(),
            v["refused_count"].as_u64()
        ),
        (
            Some((D1_HELD + D2_HELD) as u64),
            Some(D1_HELD as u64),
            Some(D2_HELD as u64)
        ),
        "{v}"
    );
    assert_eq!(stores(&env), before, "a dry run changes no store");

    // S1 approves everything pending: D1's 500 in one command, D2's 20 refused (not theirs).
    let started = Instant::now();
    let o = with_ring(
        &env,
        &ring,
        &[
            "review",
            "approve",
            "--all-pending",
            "--reason",
            "kiosk 3 offline",
            "--json",
        ],
    );
    let took = started.elapsed();
    assert_eq!(code(&o), Some(4), "some refused: {}", stderr(&o));
    eprintln!("bulk approval of {D1_HELD} held punches: {took:.2?}");
    let v = json(&o);
    assert_eq!(
        (
            v["approved"].as_u64(),
            v["changed"].as_u64(),
            v["refused_count"].as_u64()
        ),
        (Some(D1_HELD as u64), Some(D1_HELD as u64), Some(D2_HELD as u64)),
        "{v}"
    );
    assert_eq!(v["by"], "S1");
    let refused = v["refused"].as_array().unwrap();
    assert!(
        !refused.is_empty() && refused.iter().all(|r| r["department_id"] == "D2"),
        "{v}"
    );
    assert!(
        refused[0]["reason"]
            .as_str()
            .unwrap()
            .contains("neither the supervisor"),
        "{v}"
    );
    let err = stderr(&o);
    assert!(err.contains("refused: review") && err.contains("20 of 520"), "{err}");
    assert_eq!(v["notifications"]["sent"].as_u64(), Some(D1_HELD as u64), "{v}");

    // Every D1 punch is on its board at the approved arrival; no D2 punch is.
    let board = env.board("D1", &day_s);
    for e in members("A", D1_HELD) {
        assert!(board.get(&e).is_some_and(|v| !v.is_empty()), "{e} on D1's board");
    }
    let d2 = env.board("D2", &day_s);
    assert!(members("B", D2_HELD)
        .iter()
        .all(|e| d2.get(e).is_none_or(|v| v.is_empty())));
    // Each decision audited on its own row: who, as which accounts, why.
    let audit: Vec<(String, String, String, String, String, u64)> = env
        .mysql()
        .query(
            "SELECT status, IFNULL(decided_by, ''), IFNULL(os_user, ''), IFNULL(db_user, ''), \
             IFNULL(reason, ''), COUNT(*) FROM held_punches WHERE decided_at IS NOT NULL OR status <> 'pending' \
             GROUP BY 1, 2, 3, 4, 5",
        )
        .unwrap();
    assert_eq!(audit.len(), 1, "{audit:?}");
    let (status, by, os_user, db_user, reason, n) = &audit[0];
    assert_eq!(
        (status.as_str(), by.as_str(), reason.as_str(), *n),
        ("approved", "S1", "kiosk 3 offline", D1_HELD as u64)
    );
    assert_eq!(*os_user, TestEnv::os_login());
    assert!(!db_user.is_empty());
    let pending: Vec<String> = env
        .mysql()
        .query("SELECT DISTINCT department_id FROM held_punches WHERE status = 'pending'")
        .unwrap();
    assert_eq!(pending, vec!["D2".to_string()], "D2's stay pending, undecided");
    // The supervisor's screen verifies every approved event under the kiosk's key.
    assert_eq!(common::queue_depth(&format!("{}.dept.D1", env.ns)), D1_HELD as u32);
    let o = with_ring(&env, &ring, &["watch-dept", "D1", "--once", "--json"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let shown = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("\"punch\""))
        .count();
    assert_eq!(shown, D1_HELD, "every approved event shown, none parked");

    // HR rejects D2's by the kiosk's key and day: every one, nothing refused, no board moved.
    env.act_as("H1");
    let before = stores(&env).applied().0.to_vec();
    let o = with_ring(
        &env,
        &ring,
        &[
            "review",
            "reject",
            "--key",
            KEY_ID,
            "--date",
            &day_s,
            "--reason",
            "not on site",
            "--json",
        ],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (
            v["matched"].as_u64(),
            v["rejected"].as_u64(),
            v["refused_count"].as_u64()
        ),
        (Some(D2_HELD as u64), Some(D2_HELD as u64), Some(0))
    );
    assert_eq!(stores(&env).applied().0, &before[..], "a rejection moves no board");
    assert_eq!(
        by_status(&env),
        vec![
            ("approved".to_string(), D1_HELD as u64),
            ("rejected".to_string(), D2_HELD as u64)
        ]
    );
    // Nothing left: a second run matches nothing and is done.
    let o = with_ring(&env, &ring, &["review", "approve", "--all-pending", "--json"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["matched"], 0);
}

#[test]
fn a_bulk_decision_that_may_decide_nothing_or_is_malformed_is_one_line_and_changes_nothing() {
    let env = company_of(&roster());
    let day = env.today();
    let at = local(&env, day, 7, 55);
    let csv = format!("employee_id,kind,at,source\nA001,in,{at},kiosk-3\nB01,in,{at},kiosk-3\nS2,in,{at},kiosk-3\n");
    let file = env.file("morning.csv", &csv);
    let o = run(&env, &["checkin", "--file", file.to_str().unwrap(), "-q"], &[]);
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    let before = stores(&env);
    let day_s = day.to_string();
    let one_line = |o: &std::process::Output, want: i32, says: &str| {
        let err = stderr(o);
        assert_eq!(code(o), Some(want), "{err}");
        let last = err.lines().last().unwrap_or("");
        assert!(last.starts_with("error: ") && last.contains(says), "{err}");
    };
    // S2 over D2: B01 is theirs but S2's own punch is not: decided B01, refused S2's (exit 4).
    // Over D1 (none theirs): every one refused, exit 1, nothing changed.
    env.act_as("S2");
    let o = run(&env, &["review", "approve", "--dept", "D1"], &[]);
    one_line(&o, 1, "neither the supervisor");
    assert_eq!(stores(&env), before);
    // Usage: neither an id nor a filter, both, a reject without a reason, a bad filter.
    for (args, says) in [
        (vec!["review", "approve"], "required"),
        (vec!["review", "approve", "1", "--dept", "D1"], "cannot be used with"),
        (
            vec!["review", "approve", "--all-pending", "--dept", "D1"],
            "cannot be used with",
        ),
        (vec!["review", "reject", "--all-pending"], "--reason"),
        (vec!["review", "approve", "--dept", "D 1"], "department id"),
        (vec!["review", "approve", "--key", "a/b"], "key id"),
        (vec!["review", "approve", "--date", "2026-13-01"], "date"),
    ] {
        let o = run(&env, &args, &[]);
        assert_eq!(code(&o), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(stores(&env), before);
    let o = run(
        &env,
        &["review", "approve", "--date", &day_s, "--dept", "D2", "--json"],
        &[],
    );
    one_line(&o, 4, "1 of 2 matching punch(es) refused");
    let v = json(&o);
    assert_eq!(
        (v["approved"].as_u64(), v["refused_count"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    assert!(
        v["refused"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("may not review their own punch"),
        "{v}"
    );
    let decided: Vec<(String, String)> = env
        .mysql()
        .query("SELECT employee_id, status FROM held_punches ORDER BY employee_id")
        .unwrap();
    assert_eq!(
        decided,
        vec![
            ("A001".to_string(), "pending".to_string()),
            ("B01".to_string(), "approved".to_string()),
            ("S2".to_string(), "pending".to_string())
        ]
    );
}
