//! An employee moved to another department by `org import` in the middle of their day keeps
//! that day: status, the evening punch, the supervisor told and the settled row are those of an
//! employee who was never moved. Against the real MySQL, Redis and RabbitMQ.

use crate::common;
use amiquip::Connection;
use common::cluster::Cluster;
use common::{TestEnv, AMQP_URL};
use redis::Commands;
use serde_json::Value;

/// A past Monday, a work day.
const DAY: &str = "2026-11-02";
const HEADER: &str = "employee_id,name,department_id,department_name,role\n";

/// Ann supervises Sales (D1), Cy Legal (D3); Bob is in `bob_in`. (D1 and D3 hash to slots
/// 10106 and 1848: two masters of a three-master cluster.)
fn roster(env: &TestEnv, name: &str, bob_in: &str) -> String {
    let dept_name = if bob_in == "D1" { "Sales" } else { "Legal" };
    let f = env.file(
        name,
        &format!(
            "{HEADER}E1,Ann,D1,Sales,supervisor\nE2,Bob,{bob_in},{dept_name},employee\nE3,Cy,D3,Legal,supervisor\n"
        ),
    );
    f.to_str().unwrap().to_string()
}

/// Take every event of a department's queue (acking them).
fn events(env: &TestEnv, dept: &str) -> Vec<Value> {
    let mut conn = Connection::insecure_open(AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    let mut out = Vec::new();
    while let Some(g) = ch.basic_get(format!("{}.dept.{dept}", env.ns), false).unwrap() {
        out.push(serde_json::from_slice(&g.delivery.body).unwrap());
        g.delivery.ack(&ch).unwrap();
    }
    conn.close().ok();
    out
}

/// An unlabelled punch at a local time of DAY (the board decides in or out). Kept here only
/// to spell DAY's hour in Paris: every punch of this file is on that one day.
fn punch(env: &TestEnv, emp: &str, hhmm: &str) -> Value {
    env.checkin_json(emp, &format!("{DAY}T{hhmm}:00+01:00"), false)
}

/// Bob in Sales, laid out, checked in at 08:50 (Sales's supervisor told).
fn morning(env: &TestEnv) {
    env.ok(&["org", "import", &roster(env, "before.csv", "D1"), "-q"]);
    env.ok(&["init-day", "--date", DAY, "-q"]);
    assert_eq!(punch(env, "E2", "08:50")["kind"], "in");
    let told = events(env, "D1");
    assert_eq!(told.len(), 1);
    assert_eq!(told[0]["kind"], "in");
}

fn status(env: &TestEnv) -> Value {
    env.json(&["status", "E2", "--date", DAY, "--json"])
}

/// Bob moves to Legal after his morning check-in: what he, his supervisors and the record see
/// (through the binary only, so that it runs on one node and on a cluster alike).
fn a_move_after_the_morning(env: &TestEnv) {
    morning(env);
    let imported = env.json(&["org", "import", &roster(env, "after.csv", "D3"), "--json", "-q"]);
    let s = status(env);
    assert_eq!(
        (s["state"].as_str(), s["department_id"].as_str()),
        (Some("in"), Some("D3")),
        "{s}"
    );
    // The evening punch is the check-out, and Legal's supervisor is told of it.
    let out = punch(env, "E2", "18:30");
    assert_eq!(out["kind"], "out", "{out}");
    assert!(
        events(env, "D1").is_empty(),
        "Sales's supervisor keeps only the morning"
    );
    let told = events(env, "D3");
    assert_eq!(told.len(), 1);
    assert_eq!(
        (told[0]["kind"].as_str(), told[0]["late"].as_bool()),
        (Some("out"), Some(false))
    );
    assert_eq!(imported["moves"]["employees"], 1, "{imported}");
    assert_eq!(imported["moves"]["days"], 1, "{imported}");
    assert_eq!(imported["moves"]["days_with_punches"], 1, "{imported}");
    // A second import of the same roster moves nothing.
    let again = env.json(&["org", "import", &roster(env, "after.csv", "D3"), "--json", "-q"]);
    assert_eq!(again["moves"]["employees"], 0, "{again}");
    env.ok(&["settle", "--date", DAY, "-q"]);
    let rows = env.attendance_rows();
    assert_eq!(rows.len(), 3, "{rows:?}");
    let bob: Vec<&str> = rows[1].split('|').collect();
    assert_eq!((bob[1], bob[2], bob[3]), ("E2", "D3", "present"), "{rows:?}");
}

#[test]
fn a_moved_employee_keeps_their_day() {
    let env = TestEnv::migrated("Europe/Paris");
    morning(&env);
    env.ok(&["org", "import", &roster(&env, "after.csv", "D3"), "-q"]);
    // The day is on Legal's board now, and only there.
    assert!(!env.board("D1", DAY).contains_key("E2"));
    assert!(env.board("D3", DAY).get("E2").is_some_and(|v| !v.is_empty()));
    drop(env);
    a_move_after_the_morning(&TestEnv::migrated("Europe/Paris"));
}

/// The two departments' boards on two masters of a Redis Cluster: the move is two scripts, one
/// on each.
#[test]
fn a_move_on_a_cluster_keeps_the_day() {
    let cluster = Cluster::given_or_start();
    let env = TestEnv::on_redis("Europe/Paris", cluster.url());
    env.migrate();
    a_move_after_the_morning(&env);
    if cluster.owned() {
        env.ok(&["init-day", "--date", "2026-11-03", "-q"]);
        let per_master = cluster.keys_per_master(&format!("{}:board:*", env.ns));
        assert_eq!(per_master.iter().filter(|n| **n > 0).count(), 2, "{per_master:?}");
    }
}

#[test]
fn an_import_killed_before_moving_the_day_is_finished_by_its_rerun() {
    let env = TestEnv::migrated("Europe/Paris");
    morning(&env);
    let after = roster(&env, "after.csv", "D3");
    let killed = env
        .cmd()
        .args(["org", "import", &after, "-q"])
        .env("ATTENDANCE_ORG_ABORT_BEFORE_MOVES", "1")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    // The roster says Legal, the day is still on Sales's board: the half-done move.
    assert_eq!(status(&env)["state"], "not_in");
    let rerun = env.json(&["org", "import", &after, "--json", "-q"]);
    assert_eq!(rerun["moves"]["employees"], 1, "{rerun}");
    assert_eq!(rerun["moves"]["days_with_punches"], 1, "{rerun}");
    assert_eq!(status(&env)["state"], "in");
    assert!(!env.board("D1", DAY).contains_key("E2"));
    let journal: std::collections::HashMap<String, String> = env.redis().hgetall(env.keys().moves()).unwrap();
    assert!(journal.is_empty(), "{journal:?}");
}

#[test]
fn a_half_done_move_settles_one_row_under_the_new_department() {
    let env = TestEnv::migrated("Europe/Paris");
    morning(&env);
    import_killed_before_moving(&env, "D3");
    // Stopped between the two steps, by hand: merged into Legal's board, not yet removed from
    // Sales's. Then the evening's check-out lands on Legal's board.
    let keys = env.keys();
    let date = common::date(DAY);
    let mut r = env.redis();
    let morning_value: String = r.hget(keys.board("D1", date), "E2").unwrap();
    let () = r.hset(keys.board("D3", date), "E2", &morning_value).unwrap();
    let () = r.sadd(keys.board_days("D3"), DAY).unwrap();
    assert_eq!(punch(&env, "E2", "18:30")["kind"], "out");
    assert!(env.board("D1", DAY).contains_key("E2"), "still on both boards");
    env.ok(&["settle", "--date", DAY, "-q"]);
    let rows = env.attendance_rows();
    assert_eq!(rows.len(), 3, "one row each: {rows:?}");
    let bob: Vec<&str> = rows[1].split('|').collect();
    assert_eq!((bob[1], bob[2], bob[3]), ("E2", "D3", "present"), "{rows:?}");
    assert_eq!(
        bob[8].split(',').count(),
        2,
        "the morning once, the evening once: {rows:?}"
    );
}

#[test]
fn a_move_cut_short_then_another_move_takes_the_day_to_the_last_department() {
    let env = TestEnv::migrated("Europe/Paris");
    morning(&env);
    import_killed_before_moving(&env, "D3");
    // Moved again before any rerun: the day still on Sales's board follows to D4.
    let again = env.json(&["org", "import", &roster(&env, "last.csv", "D4"), "--json", "-q"]);
    assert_eq!(again["moves"]["employees"], 1, "{again}");
    assert_eq!(again["moves"]["days_with_punches"], 1, "{again}");
    let s = status(&env);
    assert_eq!(
        (s["state"].as_str(), s["department_id"].as_str()),
        (Some("in"), Some("D4")),
        "{s}"
    );
    assert!(!env.board("D1", DAY).contains_key("E2"));
    assert!(!env.board("D3", DAY).contains_key("E2"));
}

/// `org import` moving the employee to `dept`, killed (test hook) once MySQL and the roster
/// cache changed and before any day moved.
fn import_killed_before_moving(env: &TestEnv, dept: &str) {
    let killed = env
        .cmd()
        .args(["org", "import", &roster(env, "after.csv", dept), "-q"])
        .env("ATTENDANCE_ORG_ABORT_BEFORE_MOVES", "1")
        .output()
        .unwrap();
    assert!(!killed.status.success());
}
