//! `init-day` against the real services: the boards it lays out (whole, by RESTORE, or field by
//! field), the roster cache it rebuilds only when the MySQL roster changed, and the queues it
//! declares only when the broker lacks them.

use crate::common;
use std::collections::HashMap;

use common::day::Day;
use common::TestEnv;
use mysql::prelude::Queryable;
use redis::Commands;

const DAY: &str = "2026-11-02";

/// The DUMP of the hash HSET makes of these fields, each with an empty value (then deleted).
fn hset_twin(env: &TestEnv, fields: &[String]) -> Vec<u8> {
    let mut con = env.redis();
    let twin = format!("{}:twin", env.ns);
    let mut cmd = redis::cmd("HSET");
    cmd.arg(&twin);
    for f in fields {
        cmd.arg(f).arg("");
    }
    let _: u64 = cmd.query(&mut con).unwrap();
    let dump: Vec<u8> = redis::cmd("DUMP").arg(&twin).query(&mut con).unwrap();
    let _: u64 = con.del(&twin).unwrap();
    dump
}

fn dump_and_encoding(env: &TestEnv, key: &str) -> (Vec<u8>, String) {
    let mut con = env.redis();
    let dump: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut con).unwrap();
    let enc: String = redis::cmd("OBJECT").arg("ENCODING").arg(key).query(&mut con).unwrap();
    (dump, enc)
}

#[test]
fn each_new_board_is_the_very_hash_hset_would_have_made() {
    let env = TestEnv::with_roster("UTC", 300, 3);
    let j = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(
        (j["departments"].as_u64(), j["laid_out"].as_u64()),
        (Some(3), Some(300))
    );
    for dept in ["D001", "D002", "D003"] {
        let members = env.members(dept);
        let key = env.keys().board(dept, common::date(DAY));
        let (dump, enc) = dump_and_encoding(&env, &key);
        assert_eq!(enc, "listpack", "{dept}");
        assert_eq!(dump, hset_twin(&env, &members), "{dept}: byte for byte what HSET makes");
        let days: Vec<String> = env.redis().smembers(env.keys().board_days(dept)).unwrap();
        assert_eq!(days, [DAY]);
    }
    // A punch lands on it as on any board.
    env.ok(&["checkin", "E000002", "--at", "2026-11-02T08:00:00Z"]);
    assert_eq!(env.board("D001", DAY)["E000002"], "i28800");
}

#[test]
fn ids_a_listpack_stores_as_numbers_are_laid_out_by_hset_beside_restored_boards() {
    let env = TestEnv::migrated("UTC");
    let roster = env.file(
        "roster.csv",
        "employee_id,name,department_id,department_name,role\n\
         1001,Ada Byron,N1,Numbers,supervisor\n1002,Alan Turing,N1,Numbers,employee\n\
         0042,Grace Hopper,N1,Numbers,employee\nL1,Kurt Goedel,L1,Letters,supervisor\n",
    );
    env.ok(&["org", "import", roster.to_str().unwrap()]);
    let j = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(j["laid_out"], 4);
    for (dept, ids) in [("N1", vec!["0042", "1001", "1002"]), ("L1", vec!["L1"])] {
        let ids: Vec<String> = ids.into_iter().map(String::from).collect();
        let (dump, _) = dump_and_encoding(&env, &env.keys().board(dept, common::date(DAY)));
        assert_eq!(dump, hset_twin(&env, &ids), "{dept}");
    }
}

/// The roster cache as Redis holds it: employee id -> "dept\tname".
fn cache(env: &TestEnv) -> HashMap<String, String> {
    let mut con = env.redis();
    let mut all = HashMap::new();
    for part in 0..attendance::ROSTER_PARTS {
        let h: HashMap<String, String> = con.hgetall(env.keys().roster_part(part)).unwrap();
        all.extend(h);
    }
    all
}

/// The active roster as MySQL holds it, in the cache's form.
fn active_roster(env: &TestEnv) -> HashMap<String, String> {
    let rows: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT id, department_id, name FROM employees WHERE active")
        .unwrap();
    rows.into_iter().map(|(id, d, n)| (id, format!("{d}\t{n}"))).collect()
}

#[test]
fn the_roster_cache_is_rewritten_only_when_the_roster_changed_and_then_exactly() {
    let env = TestEnv::with_day("UTC", Day::new(60, 3).init_day("2026-11-02", &[]));
    assert_eq!(cache(&env), active_roster(&env));
    // Roster unchanged: the next layout does not write the cache (this entry, wrong on
    // purpose, stays as it is).
    let mut con = env.redis();
    let _: u64 = con
        .hset(env.keys().roster("E000005"), "E000005", "D003\tWrong")
        .unwrap();
    env.init_day("2026-11-03", &[]);
    assert_eq!(cache(&env)["E000005"], "D003\tWrong");

    // A moved, a renamed, a removed and a new employee, written by hand in MySQL.
    let mut db = env.mysql();
    db.query_drop("UPDATE employees SET department_id = 'D002' WHERE id = 'E000002'")
        .unwrap();
    db.query_drop("UPDATE employees SET name = 'Renamed' WHERE id = 'E000004'")
        .unwrap();
    db.query_drop("UPDATE employees SET active = FALSE WHERE id = 'E000003'")
        .unwrap();
    db.query_drop("INSERT INTO employees (id, name, department_id) VALUES ('E000777', 'New Hire', 'D001')")
        .unwrap();
    env.init_day("2026-11-04", &[]);
    let now = cache(&env);
    assert_eq!(now, active_roster(&env));
    assert_eq!(now["E000002"].split('\t').next(), Some("D002"));
    assert!(!now.contains_key("E000003"), "the removed employee left the cache");
    assert_eq!(now["E000777"], "D001\tNew Hire");
    // The removed employee is unknown now, the new one checks in.
    env.fails(&["checkin", "E000003", "--at", "2026-11-04T08:00:00Z"], 1);
    env.ok(&["checkin", "E000777", "--at", "2026-11-04T08:00:00Z"]);
    assert_eq!(env.board("D001", "2026-11-04")["E000777"], "i28800");
    // No half-built parts are left behind.
    assert!(env.redis_keys().iter().all(|k| !k.ends_with(":next")));
}

#[test]
fn a_roster_part_lost_from_redis_or_a_deleted_employee_row_rebuilds_the_cache() {
    let env = TestEnv::with_day("UTC", Day::new(60, 3).init_day("2026-11-02", &[]));
    let part = env.keys().roster("E000010");
    let _: u64 = env.redis().del(&part).unwrap();
    env.init_day("2026-11-03", &[]);
    assert_eq!(cache(&env), active_roster(&env), "the lost part is back");

    // A row deleted by hand changes no timestamp: the count read tells.
    let mut db = env.mysql();
    let gone: String = db
        .query_first("SELECT id FROM employees WHERE id NOT IN (SELECT employee_id FROM supervisors) ORDER BY id")
        .unwrap()
        .unwrap();
    db.exec_drop("DELETE FROM employees WHERE id = ?", (&gone,)).unwrap();
    env.init_day("2026-11-04", &[]);
    assert!(!cache(&env).contains_key(&gone));
    assert_eq!(cache(&env), active_roster(&env));
}

#[test]
fn a_second_run_and_a_checkin_before_the_layout_keep_every_punch() {
    let env = TestEnv::with_roster("UTC", 40, 2);
    // The check-in comes first: its board exists, so the layout adds the other fields.
    env.ok(&["checkin", "E000003", "--at", "2026-11-02T08:10:00Z"]);
    let j = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(j["laid_out"], 39);
    let board = env.board("D001", DAY);
    assert_eq!(board["E000003"], "i29400");
    assert_eq!(board.len(), env.members("D001").len());
    let again = env.json(&["init-day", "--date", DAY, "--json"]);
    assert_eq!(again["laid_out"], 0);
    assert_eq!(env.board("D001", DAY)["E000003"], "i29400");
}
