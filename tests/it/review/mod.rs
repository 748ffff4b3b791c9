//! Back-dating needs authority: a punch more than `policy.replay_window_minutes`
//! before the server time at which it is recorded is applied only from a key the keyring lets
//! replay offline punches; from anyone else it is held for review (exit 7) and changes nothing
//! until the employee's supervisor or HR approves it (`review approve`), audited like a
//! correction. Regression: after a real check-in, `checkin E --kind in --at
//! <earlier>T07:55` rewrote the arrival.
//!
//! Times are relative to now, in a fixed-offset company zone chosen so that it is early
//! afternoon there: 07:55 is then hours back on the same work day, whenever the test runs.

use crate::common;

mod bulk;

use std::io::Write;
use std::process::{Output, Stdio};

use chrono::{Duration, NaiveDate, TimeZone, Utc};
use common::{TestEnv, KEY_ID};
use mysql::prelude::Queryable;
use redis::Commands;

/// S1 supervises D1 (A1, A2); S2 supervises D2 (B1); H1 is HR, in D2.
const ROSTER: &str = "employee_id,name,department_id,department_name,role\n\
    S1,Name S1,D1,Dept D1,supervisor\nA1,Name A1,D1,Dept D1,employee\nA2,Name A2,D1,Dept D1,employee\n\
    S2,Name S2,D2,Dept D2,supervisor\nB1,Name B1,D2,Dept D2,employee\nH1,Name H1,D2,Dept D2,hr\n";

fn company() -> TestEnv {
    company_of(ROSTER)
}

/// A company of `roster` in the afternoon zone, under the default replay window (15 minutes)
/// instead of the suite's.
fn company_of(roster: &str) -> TestEnv {
    let env = TestEnv::migrated(&common::afternoon_zone());
    env.policy("policy.replay_window_minutes", "15", "2000-01-01");
    env.import_roster("roster.csv", roster);
    env
}

fn tz(env: &TestEnv) -> chrono_tz::Tz {
    env.tz.parse().unwrap()
}

/// `day` at HH:MM in the company's zone, RFC 3339.
fn local(env: &TestEnv, day: NaiveDate, hh: u32, mm: u32) -> String {
    tz(env)
        .from_local_datetime(&day.and_hms_opt(hh, mm, 0).unwrap())
        .single()
        .unwrap()
        .to_rfc3339()
}

/// The binary (under the company's replay window, 15 minutes), with `extra` settings.
fn run(env: &TestEnv, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let mut c = env.std_cmd();
    for (k, v) in extra {
        c.env(k, v);
    }
    c.args(args).output().unwrap()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out} / {}", stderr(o)))
}

/// `checkin EMP --kind in --at AT --json` from this environment's key (no keyring: it may not
/// replay); requires exit 7 and returns the review id.
fn held(env: &TestEnv, emp: &str, at: &str) -> u64 {
    let o = run(env, &["checkin", emp, "--kind", "in", "--at", at, "--json"], &[]);
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["status"], "held_for_review", "{v}");
    // Its one line says why (how old, the window, the key) and what the owner can do.
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(" min old, past policy.replay_window_minutes (15)")
            && line.contains(&format!("key '{}' may not replay", common::KEY_ID))
            && line.contains("replay = true in signing.keyring_file")
            && line.contains(&format!("runs `attendance review approve {}`", v["review_id"])),
        "{line}"
    );
    v["review_id"].as_u64().unwrap()
}

/// What every store holds of this test.
#[derive(Debug, PartialEq)]
struct Stores {
    /// The namespace's Redis keys and values: boards, outboxes, punch logs.
    redis: Vec<(String, String)>,
    rows: Vec<String>,
    punch_log: u64,
    /// The held punches with their decisions.
    held: Vec<String>,
    /// D1's queue: the supervisor's notifications.
    queue: u32,
}

impl Stores {
    /// Everything but the held punches.
    fn applied(&self) -> (&[(String, String)], &[String], u64, u32) {
        (&self.redis, &self.rows, self.punch_log, self.queue)
    }
}

fn stores(env: &TestEnv) -> Stores {
    let held: Vec<String> = env
        .mysql()
        .query(
            "SELECT CONCAT_WS('|', id, employee_id, punched_at, kind, status, IFNULL(decided_by, '-'), \
             IFNULL(reason, '-')) FROM held_punches ORDER BY id",
        )
        .unwrap();
    Stores {
        redis: env.redis_snapshot(),
        rows: env.attendance_rows(),
        punch_log: env.count("punch_log"),
        held,
        queue: common::queue_depth(&format!("{}.dept.D1", env.ns)),
    }
}

/// The day's first check-in of `emp`, as `status --json` says it.
fn first_in(env: &TestEnv, emp: &str, day: NaiveDate) -> String {
    let v = env.json(&["status", emp, "--date", &day.to_string(), "--json"]);
    v["first_in"].as_str().unwrap_or("-").to_string()
}

/// (status, decided_by, os_user, db_user, reason) of a held punch.
fn decision(env: &TestEnv, id: u64) -> (String, String, String, String, String) {
    env.mysql()
        .exec_first(
            "SELECT status, IFNULL(decided_by, ''), IFNULL(os_user, ''), IFNULL(db_user, ''), IFNULL(reason, '') \
             FROM held_punches WHERE id = ?",
            (id,),
        )
        .unwrap()
        .unwrap()
}

#[test]
fn a_backdated_punch_without_replay_authority_is_held_and_changes_nothing() {
    let env = company();
    let day = env.today();
    // The real check-in, stamped with the server's clock.
    env.ok(&["checkin", "A1", "--kind", "in", "-q"]);
    let arrived = first_in(&env, "A1", day);
    let before = stores(&env);
    let id = held(&env, "A1", &local(&env, day, 7, 55));
    let after = stores(&env);
    assert_eq!(
        after.applied(),
        before.applied(),
        "no board, outbox, log or notification change"
    );
    let held_rows = &after.held;
    assert_eq!(held_rows.len(), 1, "{held_rows:?}");
    assert!(held_rows[0].starts_with(&format!("{id}|A1|")) && held_rows[0].contains("|in|pending|"));
    assert_eq!(first_in(&env, "A1", day), arrived, "the day stays at the real arrival");
    // Sent again (a kiosk script retrying): the same held punch, the same id.
    assert_eq!(held(&env, "A1", &local(&env, day, 7, 55)), id);
    assert_eq!(env.count("held_punches"), 1);
    // The list shows it, by date and department, and doctor counts it.
    let o = run(
        &env,
        &["review", "list", "--date", &day.to_string(), "--dept", "D1", "--json"],
        &[],
    );
    let list = json(&o);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(
        (list[0]["review_id"].as_u64(), &list[0]["employee_id"]),
        (Some(id), &serde_json::json!("A1"))
    );
    assert_eq!(list[0]["key_id"], KEY_ID, "the recording key is kept");
    let o = run(&env, &["review", "list", "--dept", "D2", "--json"], &[]);
    assert_eq!(json(&o), serde_json::json!([]));
    let o = run(&env, &["doctor", "--json"], &[]);
    let checks = json(&o)["checks"].clone();
    let reviews = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "reviews")
        .unwrap();
    assert_eq!(reviews["status"], "warn", "{reviews}");
    assert!(
        reviews["detail"].as_str().unwrap().starts_with("1 punch(es) held"),
        "{reviews}"
    );
}

#[test]
fn a_key_the_registry_lets_replay_applies_a_backdated_punch_and_no_other_key_does() {
    let env = company();
    let day = env.today();
    let at = local(&env, day, 7, 55);
    let checkin = |emp: &str, key: &std::path::Path| {
        run(
            &env,
            &["checkin", emp, "--kind", "in", "--at", &at, "--json"],
            &[("ATTENDANCE_SIGNING_KEY_FILE", key.to_str().unwrap())],
        )
    };
    // A registry key without replay: held, as a shared secret's punch is.
    let plain = env.registered_key("kiosk-plain", false);
    let o = checkin("A1", &plain);
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    // A key file that claims the replaying kiosk's id with another private key: refused at
    // the kiosk (exit 1), nothing recorded or held.
    let replaying = env.registered_key("kiosk-replay", true);
    let impostor = env.dir.join("impostor.key");
    env.ok(&[
        "keys",
        "generate",
        "kiosk-replay",
        "--out",
        impostor.to_str().unwrap(),
        "-q",
    ]);
    let o = checkin("A1", &impostor);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not match"), "{}", stderr(&o));
    assert_eq!(env.count("held_punches"), 1);
    assert!(env.board("D1", &day.to_string()).get("A1").is_none_or(|v| v.is_empty()));
    // The kiosk the registry lets replay: applied at once.
    let o = checkin("A2", &replaying);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["status"], "applied");
    assert!(
        first_in(&env, "A2", day).contains("07:55"),
        "{}",
        first_in(&env, "A2", day)
    );
}

/// Regression: a keyring file granted `replay = true` to whatever key its writer named, so a
/// kiosk's user who wrote one applied their back-dated punches unreviewed.
#[test]
fn a_self_written_keyring_granting_replay_grants_nothing() {
    let env = company();
    let day = env.today();
    let at = local(&env, day, 7, 55);
    let mine = env.keyring(&[(KEY_ID, &env.key_secret, true)], &[]);
    let o = run(
        &env,
        &["checkin", "A1", "--kind", "in", "--at", &at, "--json"],
        &[("ATTENDANCE_SIGNING_KEYRING_FILE", mine.to_str().unwrap())],
    );
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    assert_eq!(json(&o)["status"], "held_for_review");
    assert_eq!(env.count("held_punches"), 1);
    assert!(env.board("D1", &day.to_string()).get("A1").is_none_or(|v| v.is_empty()));
    // The same with an Ed25519 key the registry holds without replay.
    let key = env.registered_key("kiosk-7", false);
    let ring = env.keyring(&[("kiosk-7", &common::new_secret(), true)], &[]);
    let o = run(
        &env,
        &["checkin", "A2", "--kind", "in", "--at", &at, "--json"],
        &[
            ("ATTENDANCE_SIGNING_KEY_FILE", key.to_str().unwrap()),
            ("ATTENDANCE_SIGNING_KEYRING_FILE", ring.to_str().unwrap()),
        ],
    );
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    assert_eq!(env.count("held_punches"), 2);
    assert!(env.board("D1", &day.to_string()).get("A2").is_none_or(|v| v.is_empty()));
}

#[test]
fn a_punch_within_the_window_applies_from_any_key() {
    let env = company();
    let at = (Utc::now() - Duration::minutes(10)).to_rfc3339();
    let o = run(&env, &["checkin", "A1", "--kind", "in", "--at", &at, "--json"], &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["status"], "applied");
    assert_eq!(env.count("held_punches"), 0);
    // A window of 0 holds even that punch.
    env.policy("policy.replay_window_minutes", "0", "2000-01-01");
    let o = run(&env, &["checkin", "A2", "--kind", "in", "--at", &at, "--json"], &[]);
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
}

#[test]
fn approving_applies_the_held_punch_as_a_replay_and_is_audited() {
    let env = company();
    let day = env.today();
    env.ok(&["checkin", "A1", "--kind", "in", "-q"]);
    let id = held(&env, "A1", &local(&env, day, 7, 55));
    let queued = common::queue_depth(&format!("{}.dept.D1", env.ns));
    env.act_as("S1");
    let o = run(
        &env,
        &[
            "review",
            "approve",
            &id.to_string(),
            "--reason",
            "kiosk offline",
            "--json",
        ],
        &[],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["decision"].as_str(), v["by"].as_str()),
        (Some("approved"), Some("S1")),
        "{v}"
    );
    assert_eq!(v["applied"]["changed"], true, "{v}");
    assert!(
        first_in(&env, "A1", day).contains("07:55"),
        "the day moved to the approved arrival"
    );
    let (status, by, os_user, db_user, reason) = decision(&env, id);
    assert_eq!(
        (status.as_str(), by.as_str(), reason.as_str()),
        ("approved", "S1", "kiosk offline")
    );
    assert_eq!(os_user, TestEnv::os_login());
    assert!(!db_user.is_empty());
    // The supervisor is told, with the event the kiosk signed when it recorded the punch.
    assert_eq!(common::queue_depth(&format!("{}.dept.D1", env.ns)), queued + 1);
    let event_id: String = env
        .mysql()
        .exec_first("SELECT event_id FROM held_punches WHERE id = ?", (id,))
        .unwrap()
        .unwrap();
    let logged: Option<String> = env
        .redis()
        .hget(env.keys().punch_log("D1", day, "approved"), &event_id)
        .unwrap();
    assert!(
        logged.is_some_and(|r| r.contains(KEY_ID)),
        "logged as approved, signed by the kiosk's key"
    );
    // Decided once: a second approval is refused and changes nothing.
    let before = stores(&env);
    let o = run(&env, &["review", "approve", &id.to_string()], &[]);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("already approved by S1"), "{}", stderr(&o));
    assert_eq!(stores(&env), before);
    assert_eq!(
        json(&run(&env, &["review", "list", "--json"], &[])),
        serde_json::json!([])
    );
}

#[test]
fn a_held_punch_of_a_settled_day_is_reported_by_settle_and_approved_into_its_row() {
    let env = company();
    let day = env.today() - Duration::days(1);
    let key = env.registered_key("kiosk-replay", true);
    let replay = [("ATTENDANCE_SIGNING_KEY_FILE", key.to_str().unwrap())];
    let o = run(
        &env,
        &["checkin", "A1", "--kind", "in", "--at", &local(&env, day, 10, 40), "-q"],
        &replay,
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let id = held(&env, "A1", &local(&env, day, 7, 55));
    let o = run(&env, &["settle", "--date", &day.to_string(), "--json"], &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["held_for_review"], 1);
    assert!(
        stderr(&o).contains("1 punch(es) held for review still pending"),
        "{}",
        stderr(&o)
    );
    let row = |env: &TestEnv| {
        let r = env.attendance_rows();
        r.into_iter().find(|r| r.contains("|A1|")).unwrap()
    };
    assert!(
        row(&env).contains(":40:00"),
        "settled at the real arrival: {}",
        row(&env)
    );
    env.act_as("H1");
    let o = run(&env, &["review", "approve", &id.to_string(), "--json"], &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["day_settled"], true);
    assert!(stderr(&o).contains("settle --date"), "{}", stderr(&o));
    let o = run(&env, &["settle", "--date", &day.to_string(), "--json"], &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["held_for_review"], 0);
    assert!(
        row(&env).contains(":55:00"),
        "the approved arrival is in the row: {}",
        row(&env)
    );
    let how: Vec<(String, Option<String>)> = env
        .mysql()
        .query("SELECT how, key_id FROM punch_log WHERE employee_id = 'A1' AND how = 'approved'")
        .unwrap();
    assert_eq!(how, vec![("approved".to_string(), Some(KEY_ID.to_string()))]);
}

#[test]
fn rejecting_needs_a_reason_is_audited_and_changes_nothing() {
    let env = company();
    let id = held(&env, "A1", &local(&env, env.today(), 7, 55));
    env.act_as("S1");
    let before = stores(&env);
    let o = run(&env, &["review", "reject", &id.to_string()], &[]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert_eq!(stores(&env), before);
    let o = run(
        &env,
        &["review", "reject", &id.to_string(), "--reason", "was at home"],
        &[],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(stores(&env).applied(), before.applied());
    let (status, by, _, _, reason) = decision(&env, id);
    assert_eq!(
        (status.as_str(), by.as_str(), reason.as_str()),
        ("rejected", "S1", "was at home")
    );
    let o = run(&env, &["review", "approve", &id.to_string()], &[]);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("already rejected"), "{}", stderr(&o));
}

#[test]
fn nobody_approves_their_own_punch_nor_one_outside_their_authority() {
    let env = company();
    let day = env.today();
    let own = held(&env, "S1", &local(&env, day, 7, 55));
    let other = held(&env, "A1", &local(&env, day, 7, 50));
    let before = stores(&env);
    let refused = |who: &str, id: u64, says: &str| {
        env.act_as(who);
        let o = run(&env, &["review", "approve", &id.to_string()], &[]);
        assert_eq!(code(&o), Some(1), "{who}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{who}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    };
    refused("S1", own, "may not review their own punch");
    refused("A1", other, "may not review their own punch");
    refused("S2", other, "neither the supervisor");
    refused("A2", other, "neither the supervisor");
    assert_eq!(stores(&env), before, "nothing changed");
    // HR approves the supervisor's own punch.
    env.act_as("H1");
    env.ok(&["review", "approve", &own.to_string(), "-q"]);
    assert_eq!(decision(&env, own).0, "approved");
}

#[test]
fn a_bad_review_id_is_one_line_with_its_exit_code_and_changes_nothing() {
    let env = company();
    held(&env, "A1", &local(&env, env.today(), 7, 55));
    env.act_as("S1");
    let before = stores(&env);
    for (id, want) in [("999999", 1), ("0", 2), ("abc", 2), ("-3", 2)] {
        let o = run(&env, &["review", "approve", id], &[]);
        assert_eq!(code(&o), Some(want), "{id}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
    }
    let o = run(&env, &["review", "approve", "999999"], &[]);
    assert!(
        stderr(&o).contains("no punch is held for review with id 999999"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stores(&env), before);
}

#[test]
fn a_punch_file_and_a_punch_stream_hold_their_backdated_rows_and_apply_the_rest() {
    let env = company();
    let day = env.today();
    let now = Utc::now().to_rfc3339();
    let csv = format!(
        "employee_id,kind,at,source\nA1,in,{},gate\nA2,in,{now},gate\n",
        local(&env, day, 7, 55)
    );
    let f = env.file("punches.csv", &csv);
    let o = run(&env, &["checkin", "--file", f.to_str().unwrap(), "--json"], &[]);
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!((v["held"].as_u64(), v["recorded"].as_u64()), (Some(1), Some(1)), "{v}");
    assert_eq!(v["held_for_review"][0]["employee_id"], "A1");
    assert!(env.board("D1", &day.to_string()).get("A1").is_none_or(|v| v.is_empty()));
    assert_eq!(env.count("held_punches"), 1);
    // The same through a stream on stdin: B1's back-dated row is held, the rest applied.
    let csv = format!(
        "employee_id,kind,at,source\nB1,in,{},gate\nS2,in,{now},gate\n",
        local(&env, day, 7, 40)
    );
    let mut c = env.std_cmd();
    c.args(["checkin", "--file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(csv.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), Some(7), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("1 recorded") && out.contains("1 held for review"), "{out}");
    let err = stderr(&o);
    assert!(
        err.contains("held for review (review") && err.contains("min old when recorded"),
        "{err}"
    );
    assert!(
        err.contains("1 of 2 rows held for review: back-dated past policy.replay_window_minutes (15)")
            && err.contains(&format!("key '{}' may not replay (replay = true", common::KEY_ID))
            && err.contains("`attendance review list`, then `review approve`"),
        "{err}"
    );
    assert!(env.board("D2", &day.to_string()).get("B1").is_none_or(|v| v.is_empty()));
    assert_eq!(env.count("held_punches"), 2);
}

#[test]
fn archive_takes_the_held_punches_of_its_days_with_their_decisions() {
    let env = company();
    let day = env.today() - Duration::days(1);
    let id = held(&env, "A1", &local(&env, day, 7, 55));
    env.act_as("S1");
    env.ok(&["review", "reject", &id.to_string(), "--reason", "not on site", "-q"]);
    let out = env.dir.join("archive");
    std::fs::create_dir(&out).unwrap();
    let before = env.today().to_string();
    env.ok(&[
        "archive",
        "--before",
        &before,
        "--out",
        out.to_str().unwrap(),
        "--drop",
        "-q",
    ]);
    let text = std::fs::read_to_string(out.join(format!("held_punches-before-{before}.csv"))).unwrap();
    let rows = common::csv_cells(&text);
    assert_eq!(rows.len(), 2, "a header and the held punch: {text}");
    assert!(rows[1].iter().any(|c| c == "rejected") && rows[1].iter().any(|c| c == "not on site"));
    assert_eq!(env.count("held_punches"), 0);
}
