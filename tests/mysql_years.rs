//! MySQL for years: reports on their own URL (a replica), the foreign keys V5 dropped and the
//! checks that replace them, monthly partitions, and archiving old days, through the binary
//! on the real MariaDB.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// Two Fridays in two months, long past.
const OCT: &str = "2026-10-30";
const NOV: &str = "2026-11-20";

fn supervisor(env: &TestEnv, dept: &str) -> String {
    env.mysql()
        .exec_first("SELECT employee_id FROM supervisors WHERE department_id = ?", (dept,))
        .unwrap()
        .unwrap()
}

/// Settle `day` with one employee of D001 in at 08:45 and no check-out, then correct the
/// check-out: a row, a correction and a run for the day. Returns the corrected employee.
fn settle_and_correct(env: &TestEnv, day: &str) -> String {
    let sup = supervisor(env, "D001");
    let e = env.members("D001").into_iter().find(|x| *x != sup).unwrap();
    env.punch(&e, "in", &format!("{day}T08:45:00"), true);
    env.ok(&["settle", "--date", day]);
    env.correct_out(&e, day, &sup);
    e
}

/// Rows per table and day, to prove what changed and what did not.
fn census(env: &TestEnv) -> Vec<(String, String, u64)> {
    env.mysql()
        .query(
            "SELECT 'attendance', CAST(work_date AS CHAR), COUNT(*) FROM attendance GROUP BY work_date \
             UNION ALL SELECT 'corrections', CAST(work_date AS CHAR), COUNT(*) FROM corrections GROUP BY work_date \
             UNION ALL SELECT 'punch_log', CAST(work_date AS CHAR), COUNT(*) FROM punch_log GROUP BY work_date \
             UNION ALL SELECT 'settle_runs', CAST(work_date AS CHAR), COUNT(*) FROM settle_runs GROUP BY work_date \
             ORDER BY 1, 2",
        )
        .unwrap()
}

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
    let board = format!("{}:board:{{D001}}:{NOV}", env.ns);
    let _: () = redis::cmd("HSET")
        .arg(&board)
        .arg("GHOST1")
        .arg("i30000")
        .query(&mut env.redis())
        .unwrap();
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

/// The partitions of `attendance`: (name, rows by count).
fn partitions(env: &TestEnv) -> Vec<(String, u64)> {
    let names: Vec<String> = env
        .mysql()
        .query(
            "SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() \
             AND TABLE_NAME = 'attendance' AND PARTITION_NAME IS NOT NULL ORDER BY PARTITION_ORDINAL_POSITION",
        )
        .unwrap();
    names
        .into_iter()
        .map(|p| {
            let n: u64 = env
                .mysql()
                .query_first(format!("SELECT COUNT(*) FROM attendance PARTITION ({p})"))
                .unwrap()
                .unwrap();
            (p, n)
        })
        .collect()
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

/// The records of a CSV file, header first.
fn csv_records(path: &Path) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// Check the five files of an archive before `before` and return them by table.
fn archive_files(dir: &Path, before: &str) -> Vec<Vec<Vec<String>>> {
    [
        "attendance",
        "corrections",
        "settle_runs",
        "settle_failures",
        "punch_log",
    ]
    .iter()
    .map(|t| csv_records(&dir.join(format!("{t}-before-{before}.csv"))))
    .collect()
}

/// `archive --drop` of the days before November into `dir`.
fn archive_drop(dir: &Path) -> Vec<&str> {
    vec![
        "archive",
        "--before",
        "2026-11-01",
        "--out",
        dir.to_str().unwrap(),
        "--drop",
    ]
}

/// `LOAD DATA LOCAL INFILE` of an archive file into its table, as docs/mysql.md shows it.
fn load_back(env: &TestEnv, file: &Path, table: &str) {
    let mut conn = env.mysql();
    conn.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(|name, out| {
        let data = std::fs::read(String::from_utf8_lossy(name).as_ref())?;
        std::io::Write::write_all(out, &data)
    })));
    conn.query_drop(format!(
        "LOAD DATA LOCAL INFILE '{}' INTO TABLE {table} FIELDS TERMINATED BY ',' \
         OPTIONALLY ENCLOSED BY '\"' IGNORE 1 LINES",
        file.display()
    ))
    .unwrap();
}

#[test]
fn archive_writes_the_old_days_and_drop_deletes_them_with_their_corrections() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    let e = settle_and_correct(&env, OCT);
    settle_and_correct(&env, NOV);
    let before = census(&env);
    // Without --drop: the files, and MySQL unchanged.
    let keep = env.dir.join("keep");
    std::fs::create_dir(&keep).unwrap();
    let r = env.json(&[
        "archive",
        "--before",
        "2026-11-01",
        "--out",
        keep.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["dropped"], false);
    assert_eq!(census(&env), before);
    let files = archive_files(&keep, "2026-11-01");
    let (att, corr, runs, fails) = (&files[0], &files[1], &files[2], &files[3]);
    assert_eq!(att.len(), 21, "header and October's 20 rows");
    assert_eq!(att[0][..3], ["work_date", "employee_id", "department_id"]);
    assert!(att[1..].iter().all(|r| r[0] == OCT));
    let row = att.iter().find(|r| r[1] == e).unwrap();
    assert_eq!((row[3].as_str(), row[9].as_str()), ("present", "1"), "{row:?}");
    assert_eq!(att.iter().filter(|r| r[5] == "\\N").count(), 19, "NULL as \\N: {att:?}");
    assert_eq!(corr.len(), 2);
    assert_eq!((corr[1][1].as_str(), corr[1][2].as_str()), (OCT, e.as_str()));
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1][1], OCT);
    assert_eq!(fails.len(), 1, "only the header");
    let log = &files[4];
    assert_eq!(log.len(), 3, "header, October's check-in and its correction: {log:?}");
    assert!(log[1..].iter().all(|r| r[1] == OCT && r[2] == e), "{log:?}");
    assert_eq!(log[0].last().map(String::as_str), Some("how"));
    let hows: Vec<&str> = log[1..].iter().map(|r| r[9].as_str()).collect();
    assert_eq!(hows, ["live", "corrected"]);
    // The same archive again: refused, nothing overwritten.
    let err = env.fails(
        &["archive", "--before", "2026-11-01", "--out", keep.to_str().unwrap()],
        2,
    );
    assert!(
        err.contains("already exists") && err.trim().lines().count() == 1,
        "{err}"
    );
    assert_eq!(archive_files(&keep, "2026-11-01"), files);
    // With --drop: the same files, and October gone from every table, November whole.
    let gone = env.dir.join("gone");
    std::fs::create_dir(&gone).unwrap();
    env.ok(&archive_drop(&gone));
    assert_eq!(archive_files(&gone, "2026-11-01"), files);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(gone.join("attendance-before-2026-11-01.csv"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "personal data: owner only");
    let census_before_drop = before.clone();
    let expected: Vec<_> = before.into_iter().filter(|(_, day, _)| day.as_str() == NOV).collect();
    assert_eq!(census(&env), expected);
    let orphans: u64 = env
        .mysql()
        .query_first(
            "SELECT COUNT(*) FROM corrections c LEFT JOIN attendance a \
             ON a.work_date = c.work_date AND a.employee_id = c.employee_id WHERE a.employee_id IS NULL",
        )
        .unwrap()
        .unwrap();
    assert_eq!(orphans, 0);
    // The files load back as they are (the documented LOAD DATA): October is whole again.
    for table in ["attendance", "corrections", "settle_runs", "punch_log"] {
        load_back(&env, &gone.join(format!("{table}-before-2026-11-01.csv")), table);
    }
    assert_eq!(census(&env), census_before_drop);
    let leftovers: Vec<String> = std::fs::read_dir(&gone)
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".csv"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn archive_drop_dry_run_counts_what_it_would_write_and_delete_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, OCT);
    settle_and_correct(&env, NOV);
    let before = census(&env);
    let dir = env.dir.join("dry");
    std::fs::create_dir(&dir).unwrap();
    let args = [&archive_drop(&dir)[..], &["--dry-run"]].concat();
    let o = env.cmd().args(&args).output().unwrap();
    let (out, err) = (common::expect_ok(&args, o.clone()), String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("attendance-before-2026-11-01.csv: 20 rows"), "{out}");
    assert!(out.contains("corrections-before-2026-11-01.csv: 1 row\n"), "{out}");
    assert!(
        err.contains("dry run: would archive") && err.contains("delete them from MySQL"),
        "{err}"
    );
    let j = env.json(&[&args[..], &["--json"]].concat());
    assert_eq!(
        (&j["dry_run"], &j["would_drop"], &j["dropped"]),
        (&true.into(), &true.into(), &false.into())
    );
    let rows: Vec<(String, u64)> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["table"].as_str().unwrap().to_string(), f["rows"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        rows,
        [
            ("attendance".to_string(), 20),
            ("corrections".into(), 1),
            ("punch_log".into(), 2),
            ("held_punches".into(), 0),
            ("settle_runs".into(), 1),
            ("settle_failures".into(), 0)
        ]
    );
    // Nothing deleted, no file written.
    assert_eq!(census(&env), before);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn archive_drop_on_a_partitioned_table_drops_the_emptied_partitions() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, OCT);
    let e = settle_and_correct(&env, NOV);
    env.ok(&["db", "partition", "--from", "2026-09", "--months", "4", "-q"]);
    let r = env.json(&[
        "archive",
        "--before",
        "2026-11-01",
        "--out",
        env.dir.to_str().unwrap(),
        "--drop",
        "--json",
    ]);
    let dropped: BTreeSet<&str> = r["partitions_dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(dropped, BTreeSet::from(["p20260901", "p20261001", "p20261101"]), "{r}");
    let names: Vec<String> = partitions(&env).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["p20261201", "p20270101", "pmax"]);
    assert_eq!(env.count("attendance"), 20);
    assert_eq!(archive_files(&env.dir, "2026-11-01")[0].len(), 21);
    // November still settles, corrects and reports.
    env.ok(&["settle", "--date", NOV]);
    let sheet = env.json(&["report", "employee", &e, "--from", NOV, "--to", NOV, "--format", "json"]);
    assert!(sheet.to_string().contains("present"), "{sheet}");
}

#[test]
fn archive_refuses_bad_input_with_one_line_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, NOV);
    let before = census(&env);
    let dir = env.dir.join("out");
    std::fs::create_dir(&dir).unwrap();
    // A directory this process cannot write in: mode 0555, or (as root, who ignores modes) /sys.
    let locked = env.dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let locked = if std::fs::write(locked.join("probe"), "").is_ok() {
        std::path::PathBuf::from("/sys")
    } else {
        locked
    };
    let missing = env.dir.join("missing");
    for (args, what) in [
        (
            vec!["--before", "2099-01-01", "--out", dir.to_str().unwrap(), "--drop"],
            "future",
        ),
        (
            vec!["--before", "2026-13-01", "--out", dir.to_str().unwrap(), "--drop"],
            "invalid value '2026-13-01'",
        ),
        (
            vec!["--before", "2026-11-25", "--out", locked.to_str().unwrap(), "--drop"],
            "cannot write",
        ),
        (
            vec!["--before", "2026-11-25", "--out", missing.to_str().unwrap(), "--drop"],
            "no such directory",
        ),
    ] {
        let mut a = vec!["archive"];
        a.extend(args);
        let err = env.fails(&a, 2);
        assert!(
            err.starts_with("error: ") && err.contains(what) && err.trim().lines().count() == 1,
            "{err}"
        );
        assert_eq!(census(&env), before);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no file written");
    }
}

#[test]
fn an_archive_that_fails_half_way_deletes_nothing_and_leaves_no_file() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, OCT);
    let before = census(&env);
    // The last of the four files cannot be created (a directory has its name): the first
    // three are written by then.
    let dir = env.dir.join("out");
    std::fs::create_dir_all(dir.join("settle_failures-before-2026-11-01.csv.partial")).unwrap();
    let err = env.fails(&archive_drop(&dir), 2);
    assert!(
        err.contains("settle_failures") && err.trim().lines().count() == 1,
        "{err}"
    );
    assert_eq!(census(&env), before);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        ["settle_failures-before-2026-11-01.csv.partial"],
        "only the obstacle"
    );
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

/// A MySQL account of this test's own, with only the given privileges on its database;
/// dropped with the guard.
struct Account {
    name: String,
    url: String,
}

impl Account {
    fn new(env: &TestEnv, privileges: &str) -> Account {
        let name = format!("{}_acct", env.ns);
        let mut root = mysql::Conn::new(common::MYSQL_SERVER).unwrap();
        root.query_drop(format!("CREATE USER '{name}'@'127.0.0.1' IDENTIFIED BY 'acct-pw-9'"))
            .unwrap();
        root.query_drop(format!("GRANT {privileges} ON `{}`.* TO '{name}'@'127.0.0.1'", env.db))
            .unwrap();
        let url = format!("mysql://{name}:acct-pw-9@127.0.0.1:3306/{}", env.db);
        Account { name, url }
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        if let Ok(mut root) = mysql::Conn::new(common::MYSQL_SERVER) {
            let _ = root.query_drop(format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.name));
        }
    }
}

#[test]
fn archive_by_an_account_that_may_not_delete_leaves_rows_and_no_file() {
    let env = TestEnv::with_roster(TZ, 20, 2);
    settle_and_correct(&env, OCT);
    env.ok(&["db", "partition", "--from", "2026-10", "--months", "2", "-q"]);
    let before = census(&env);
    let dir = env.dir.join("out");
    std::fs::create_dir(&dir).unwrap();
    let archive = |acct: &Account| {
        env.cmd()
            .env("ATTENDANCE_MYSQL_URL", &acct.url)
            .args(archive_drop(&dir))
            .arg("--json")
            .output()
            .unwrap()
    };
    // SELECT only: the delete is refused; nothing deleted, no file left behind.
    let reader = Account::new(&env, "SELECT");
    let o = archive(&reader);
    let err = String::from_utf8_lossy(&o.stderr);
    // A privilege MySQL refuses is a rule, not a failing service (docs/security.md): exit 1.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("DELETE") && !err.contains("acct-pw-9"), "{err}");
    assert_eq!(census(&env), before);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    drop(reader);
    // SELECT and DELETE, but no LOCK TABLES: the archive stands, the emptied partition stays
    // and the report says why.
    let archivist = Account::new(&env, "SELECT, DELETE");
    let o = archive(&archivist);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["partitions_problem"].as_str().unwrap().contains("denied"), "{r}");
    assert_eq!(env.count("attendance"), 0);
    assert_eq!(archive_files(&dir, "2026-11-01")[0].len(), 21);
    assert!(partitions(&env).iter().any(|(p, _)| p == "p20261101"), "kept");
}
