//! MySQL's schema for years: reports read from their own URL while the main one is away,
//! the employee checks that replace the dropped foreign keys, monthly partitions, and a
//! database that skipped a migration.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;

use super::{partitions, settle_and_correct, supervisor, NOV, OCT, TZ};

/// A closed port on this host: nothing listens once the listener is gone.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_report_reads_from_its_own_url_while_the_main_one_is_unreachable() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, NOV);
    let dead = format!("mysql://root:hunter2@127.0.0.1:{}/{}", closed_port(), env.db);
    let report = |extra: &[&str], vars: &[(&str, &str)]| {
        let mut c = env.cmd();
        c.env("ATTENDANCE_MYSQL_URL", &dead);
        for (k, v) in vars {
            c.env(k, v);
        }
        c.args(["report", "day", "--date", NOV, "--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    };
    // The main URL alone: unreachable, exit 3, no password shown.
    let o = report(&[], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(!err.contains("hunter2") && err.trim().lines().count() == 1, "{err}");
    // The report URL by flag, by variable and by config file: the report comes from it.
    let real = env.mysql_url();
    let cfg = env.file("replica.toml", &format!("report_mysql_url = \"{real}\"\n"));
    for o in [
        report(&["--report-mysql-url", &real], &[]),
        report(&[], &[("ATTENDANCE_REPORT_MYSQL_URL", &real)]),
        report(&[], &[("ATTENDANCE_CONFIG", cfg.to_str().unwrap())]),
    ] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let total = &v["totals"];
        assert_eq!((&total["headcount"], &total["present"]), (&20.into(), &1.into()), "{v}");
    }
    // A report URL that is unreachable: exit 3, its password redacted too.
    let dead_replica = format!("mysql://ro:swordfish@127.0.0.1:{}/{}", closed_port(), env.db);
    let o = env
        .cmd()
        .args(["report", "day", "--date", NOV, "--report-mysql-url", &dead_replica])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(!err.contains("swordfish"), "{err}");
    // Settle never reads the report URL: with a dead one it still settles on the main URL.
    env.cmd()
        .args(["settle", "--date", OCT, "-q", "--report-mysql-url", &dead_replica])
        .assert()
        .success();
}

#[test]
fn without_the_foreign_keys_settle_still_refuses_an_unknown_employee() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let fks: Vec<String> = env
        .mysql()
        .query("SELECT CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() ORDER BY 1")
        .unwrap();
    assert!(!fks.contains(&"attendance_employee_fk".to_string()), "{fks:?}");
    assert!(!fks.contains(&"corrections_row_fk".to_string()), "{fks:?}");
    let e = &env.members("D001")[1];
    env.punch(e, "in", &format!("{NOV}T08:45:00"), true);
    // A punch of someone the roster lacks, with its punch log record (a bare board field is
    // refused before the roster is asked: `settle::forgery`).
    env.logged_board_field("D001", NOV, "GHOST1", "i30000");
    let err = env.fails(&["settle", "--date", NOV], 4);
    assert!(err.contains("GHOST1"), "{err}");
    assert_eq!(env.count("attendance"), 20, "every known employee's row, and no other");
    let ghost: u64 = env
        .mysql()
        .query_first("SELECT COUNT(*) FROM attendance WHERE employee_id = 'GHOST1'")
        .unwrap()
        .unwrap();
    assert_eq!(ghost, 0);
    let reason: String = env
        .mysql()
        .query_first("SELECT reason FROM settle_failures")
        .unwrap()
        .unwrap();
    assert!(reason.contains("unknown employee 'GHOST1'"), "{reason}");
}

#[test]
fn the_employee_check_by_range_finds_exactly_the_known_ids_and_locks_them() {
    // Settle checks a batch's ids by one range read of the primary key, then by id for what the
    // range did not give: the answer must be that of looking every id up, whatever the ids.
    let env = TestEnv::with_roster(TZ, 40, 2);
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    let mut tx_conn = env.mysql();
    let mut tx = tx_conn.start_transaction(mysql::TxOpts::default()).unwrap();
    let check = |tx: &mut mysql::Transaction, ids: &[&str]| {
        let mut u: Vec<String> = attendance::unknown_employees(tx, ids.iter().copied())
            .unwrap()
            .into_iter()
            .collect();
        u.sort();
        u
    };
    // A run of neighbours with gaps, ghosts inside and outside the range, one id padded with a
    // space (equal to a real id under MariaDB's PAD SPACE collation, yet not that id).
    let padded = format!("{} ", all[3]);
    let ids = [
        all[2].as_str(),
        all[5].as_str(),
        all[9].as_str(),
        "A-GHOST",
        "ZZ-GHOST",
        &padded,
    ];
    assert_eq!(
        check(&mut tx, &ids),
        vec!["A-GHOST".to_string(), padded.clone(), "ZZ-GHOST".into()]
    );
    // Ids scattered over more of the roster than the range read takes: found by id.
    let scattered = [all[0].as_str(), all[39].as_str()];
    assert!(check(&mut tx, &scattered).is_empty());
    assert!(check(&mut tx, &[]).is_empty());
    // Every known id stays locked until the transaction ends: deleting one waits.
    let mut other = env.mysql();
    other.query_drop("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
    for id in [&all[5], &all[39]] {
        let e = other
            .exec_drop("DELETE FROM employees WHERE id = ?", (id,))
            .unwrap_err();
        assert!(e.to_string().contains("1205"), "{e}");
    }
    tx.rollback().unwrap();
}

#[test]
fn the_employee_check_knows_ids_that_mariadb_and_rust_order_differently() {
    // The check walks the range beside the batch's ids sorted in Rust. Under PAD SPACE an id
    // ending in a control character sorts before its prefix in MariaDB and after it in Rust:
    // both must still be known, and a ghost still unknown.
    let env = TestEnv::with_roster(TZ, 10, 1);
    let all: Vec<String> = env.mysql().query("SELECT id FROM employees ORDER BY id").unwrap();
    let odd = format!("{}\u{1}", all[3]);
    env.mysql()
        .exec_drop(
            "INSERT INTO employees (id, name, department_id) VALUES (?, 'odd', 'D001')",
            (&odd,),
        )
        .unwrap();
    let mut conn = env.mysql();
    let mut tx = conn.start_transaction(mysql::TxOpts::default()).unwrap();
    let ids = [all[3].as_str(), odd.as_str(), all[4].as_str(), "E-GHOST"];
    let unknown = attendance::unknown_employees(&mut tx, ids).unwrap();
    assert_eq!(unknown.into_iter().collect::<Vec<_>>(), ["E-GHOST"]);
    tx.rollback().unwrap();
}

#[test]
fn a_partitioned_table_settles_corrects_reports_and_takes_more_months() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, OCT);
    let out = env.json(&["db", "partition", "--from", "2026-10", "--months", "3", "--json"]);
    assert_eq!(out.as_array().unwrap().len(), 5, "{out}");
    let p = |n: &[(&str, u64)]| n.iter().map(|(a, b)| (a.to_string(), *b)).collect::<Vec<_>>();
    assert_eq!(
        partitions(&env),
        p(&[
            ("p20261001", 0),
            ("p20261101", 20),
            ("p20261201", 0),
            ("p20270101", 0),
            ("pmax", 0)
        ])
    );
    // Every flow on the partitioned table: settle, correct, rerun, reports.
    let e = settle_and_correct(&env, NOV);
    env.ok(&["settle", "--date", NOV]);
    let status: (String, bool) = env
        .mysql()
        .exec_first(
            "SELECT CAST(status AS CHAR), corrected FROM attendance WHERE work_date = ? AND employee_id = ?",
            (NOV, &e),
        )
        .unwrap()
        .unwrap();
    assert_eq!(status, ("present".into(), true), "the correction survives a rerun");
    assert_eq!(partitions(&env)[2], ("p20261201".into(), 20));
    let sheet = env.json(&["report", "employee", &e, "--from", OCT, "--to", NOV, "--format", "json"]);
    assert!(
        sheet.to_string().contains(NOV) && sheet.to_string().contains(OCT),
        "{sheet}"
    );
    // A correction of a day with no row is refused, with nothing written.
    let sup = supervisor(&env, "D001");
    env.act_as(&sup);
    let a = [
        "correct",
        &e,
        "--date",
        "2026-11-19",
        "--out",
        "18:15",
        "--reason",
        "x",
        "--by",
        &sup,
    ];
    env.fails(&a, 1);
    assert_eq!(env.count("corrections"), 2);
    // More months, before and after: only the partitions they fall into split; rows stay.
    env.ok(&["db", "partition", "--from", "2026-09", "--months", "5", "-q"]);
    env.ok(&["db", "partition", "--from", "2026-09", "--months", "5", "-q"]);
    assert_eq!(
        partitions(&env),
        p(&[
            ("p20260901", 0),
            ("p20261001", 0),
            ("p20261101", 20),
            ("p20261201", 20),
            ("p20270101", 0),
            ("p20270201", 0),
            ("pmax", 0)
        ])
    );
    // A foreign key added back by hand: refused, named, nothing changed.
    let (fresh, fk) = (TestEnv::with_roster(TZ, 4, 1), "attendance_employee_fk");
    fresh
        .mysql()
        .query_drop(format!(
            "ALTER TABLE attendance ADD CONSTRAINT {fk} FOREIGN KEY (employee_id) REFERENCES employees (id)"
        ))
        .unwrap();
    let err = fresh.fails(&["db", "partition", "--from", "2026-01"], 1);
    assert!(
        err.contains(fk) && err.contains("migrate") && err.trim().lines().count() == 1,
        "{err}"
    );
    assert!(partitions(&fresh).is_empty());
    for bad in [["2026-13", "3"], ["2026-01", "0"]] {
        let err = env.fails(&["db", "partition", "--from", bad[0], "--months", bad[1]], 2);
        assert!(err.starts_with("error: ") && err.trim().lines().count() == 1, "{err}");
    }
}

#[test]
fn a_database_that_skipped_a_migration_is_refused_not_passed_over() {
    // Regression: refinery skips, with only a log line, a migration older than the newest
    // applied one; V3 and V4 merged after V5 had been applied would never have run.
    let env = TestEnv::migrated(TZ);
    env.mysql()
        .query_drop("DELETE FROM refinery_schema_history WHERE version = 2")
        .unwrap();
    let err = env.fails(&["migrate"], 1);
    assert!(
        err.starts_with("error: ") && err.contains("V2") && err.trim().lines().count() == 1,
        "{err}"
    );
}
