//! `archive`: the old days written to CSV files and, with `--drop`, deleted with their
//! corrections and emptied partitions; bad input, a failure half-way and an account that may
//! not delete leave every row and no file.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::TestEnv;
use mysql::prelude::Queryable;

use super::{census, partitions, settle_and_correct, NOV, OCT, TZ};

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
