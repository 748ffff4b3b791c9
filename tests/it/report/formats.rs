//! `attendance report`, `calendar` and `leave` against the real MySQL: the three formats of
//! every report agree, calendar files are all or nothing, leave is checked before it lands.

use crate::common;

use common::{csv_cells, TestEnv};
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
const DAY: &str = "2026-11-20";

/// The cells of a comfy-table: header first, then each row; a duration (`7 h 45 min`) as the
/// minutes CSV and JSON hold.
fn table_cells(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with('│'))
        .map(|l| {
            l.trim_matches('│')
                .split('┆')
                .map(|c| minutes_of(c.trim()).map_or_else(|| c.trim().to_string(), |m| m.to_string()))
                .collect()
        })
        .collect()
}

/// `7 h 45 min`, `8 h`, `45 min` as minutes; anything else is not a duration.
fn minutes_of(s: &str) -> Option<u64> {
    let (h, m) = match s.split_once(" h") {
        Some((h, rest)) => (h.parse::<u64>().ok()?, rest.trim()),
        None => (0, s),
    };
    let m = match m.strip_suffix(" min") {
        Some(m) => m.parse::<u64>().ok()?,
        None if m.is_empty() && s.contains(" h") => 0,
        None => return None,
    };
    Some(h * 60 + m)
}

/// A table column's key in JSON (docs/commands.md, "The JSON contract"): one name per concept.
fn json_key(column: &str, header: &[String]) -> String {
    match column {
        "employee" => "employee_id".into(),
        "department" => "department_id".into(),
        "name" if header.iter().any(|c| c == "employee") => "employee_name".into(),
        "name" => "department_name".into(),
        "date" => "work_date".into(),
        "run" => "run_id".into(),
        "written" => "rows_written".into(),
        "started" => "started_at".into(),
        "finished" => "finished_at".into(),
        other => other.replace(' ', "_"),
    }
}

/// A typed JSON value as the table shows it: an instant as its local time (to the minute or the
/// second, as `shown` is), a flag as `yes` or nothing, counts as `status n, ...`.
fn as_shown(v: &serde_json::Value, shown: &str) -> String {
    use serde_json::Value;
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => if *b { "yes" } else { "" }.to_string(),
        Value::Object(m) => m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "),
        Value::String(s) => match chrono::DateTime::parse_from_rfc3339(s) {
            Ok(t) if shown.len() == 5 => t.naive_local().format("%H:%M").to_string(),
            Ok(t) => {
                let local = t.naive_local().format("%Y-%m-%d %H:%M:%S").to_string();
                assert!(shown.starts_with(&local), "{s} is shown as {shown}");
                shown.to_string()
            }
            Err(_) => s.clone(),
        },
        other => other.to_string(),
    }
}

/// JSON rows laid out as the table shows them (header first, the totals last), so that the
/// two can be compared cell by cell.
fn json_cells(v: &serde_json::Value, table: &[Vec<String>]) -> Vec<Vec<String>> {
    let header = &table[0];
    let keys: Vec<String> = header.iter().map(|c| json_key(c, header)).collect();
    let mut out = vec![header.to_vec()];
    let rows = v["rows"].as_array().expect("an object with its rows");
    for (i, row) in rows.iter().enumerate() {
        out.push(
            keys.iter()
                .enumerate()
                .map(|(c, k)| as_shown(&row[k], &table[i + 1][c]))
                .collect(),
        );
    }
    if let Some(totals) = v["totals"].as_object() {
        let shown = table.last().unwrap();
        let mut line = vec!["total".to_string()];
        for (c, k) in keys.iter().enumerate().skip(1) {
            let k = match k.as_str() {
                "weekday" => "days",
                "status" => "counts",
                k => k,
            };
            let cell = match totals.get(k) {
                // The employee report's totals hold the days in the weekday column.
                Some(serde_json::Value::Number(n)) if header[c] == "weekday" => {
                    format!("{n} day{}", if n.as_u64() == Some(1) { "" } else { "s" })
                }
                Some(v) => as_shown(v, &shown[c]),
                None => String::new(),
            };
            line.push(cell);
        }
        out.push(line);
    }
    out
}

/// Run a report in all three formats; they must hold the same cells. Returns them.
fn agree(env: &TestEnv, args: &[&str]) -> Vec<Vec<String>> {
    let with = |f: &str| {
        let mut a = args.to_vec();
        a.extend(["--format", f]);
        // Every column: the default table keeps to 80 columns (see `fits_80_columns_...`).
        if f == "table" {
            a.push("--wide");
        }
        env.ok(&a)
    };
    let table = table_cells(&with("table"));
    let csv = csv_cells(&with("csv"));
    let json: serde_json::Value = serde_json::from_str(&with("json")).unwrap();
    assert_eq!(csv, table, "{args:?}: CSV and table differ");
    assert_eq!(json_cells(&json, &table), table, "{args:?}: JSON and table differ");
    table
}

#[test]
fn every_report_agrees_in_table_csv_and_json() {
    let env = TestEnv::with_roster(TZ, 30, 2);
    let d1 = env.members("D001");
    env.punch(&d1[0], "in", "2026-11-20T08:50:00", false);
    env.punch(&d1[0], "out", "2026-11-20T18:05:00", false);
    env.punch(&d1[1], "in", "2026-11-20T09:15:00", false);
    env.punch(&d1[1], "out", "2026-11-20T18:00:00", false);
    env.punch(&d1[0], "in", "2026-11-19T09:40:00", false);
    env.ok(&["settle", "--date", DAY]);
    env.ok(&["settle", "--date", "2026-11-19"]);

    let day = agree(&env, &["report", "day", "--date", DAY]);
    let total = day.last().unwrap();
    assert_eq!(total[0], "total");
    assert_eq!(total[2], "30", "headcount");
    let col = |name: &str| day[0].iter().position(|c| c == name).unwrap();
    assert_eq!(total[col("present")], "1");
    assert_eq!(total[col("late")], "1");
    assert_eq!(total[col("absent")], "28");

    let absent = agree(&env, &["report", "absent", "--date", DAY, "--dept", "D001"]);
    assert_eq!(absent.len() - 1, d1.len() - 2);
    assert!(absent[1..].iter().all(|r| r[2] == "D001"));

    let sheet = agree(
        &env,
        &[
            "report",
            "employee",
            &d1[0],
            "--from",
            "2026-11-01",
            "--to",
            "2026-11-30",
        ],
    );
    assert_eq!(sheet.len(), 4, "header, two days, totals");
    assert_eq!(sheet[1][..5], ["2026-11-19", "Thu", "missing_checkout", "09:40", ""]);
    assert_eq!(sheet[2][..5], ["2026-11-20", "Fri", "present", "08:50", "18:05"]);
    assert_eq!(sheet[3][5], "40", "late minutes summed");

    let dept = agree(&env, &["report", "dept", "D001", "--from", "2026-11-19", "--to", DAY]);
    assert_eq!(dept.len() - 2, d1.len(), "one line per employee, and totals");
    assert_eq!(dept.last().unwrap()[2], (2 * d1.len()).to_string(), "days in total");

    let runs = agree(&env, &["report", "runs"]);
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[1][1], "2026-11-19", "newest first");
    assert_eq!(runs[1][4], "ok");

    env.fails(&["report", "employee", "NOBODY"], 1);
    env.fails(&["report", "dept", "D999"], 1);
    // Regression: an unknown --dept printed an empty day and exited 0.
    for cmd in ["day", "absent"] {
        let err = env.fails(&["report", cmd, "--date", DAY, "--dept", "D999"], 1);
        assert_eq!(err, "error: unknown department 'D999'\n");
    }
    env.fails(&["report", "day", "--date", "2026-02-30"], 2);
}

#[test]
fn a_calendar_file_with_a_bad_line_is_refused_whole() {
    let env = TestEnv::migrated(TZ);
    let bad = env.file(
        "cal.csv",
        "date,kind,note\n2026-12-25,holiday,Christmas\n2026-12-32,holiday,\n2026-12-26,weekend,\n",
    );
    let err = env.fails(&["calendar", "import", bad.to_str().unwrap()], 2);
    assert!(err.contains("line 3") && err.contains("line 4"), "{err}");
    assert_eq!(env.count("calendar_days"), 0, "nothing written");

    let good = env.file(
        "cal.csv",
        "date,kind,note\n2026-12-25,holiday,Christmas\n2026-12-26,workday,stock-taking\n",
    );
    env.ok(&["calendar", "import", good.to_str().unwrap()]);
    let days = env.json(&[
        "calendar",
        "list",
        "--from",
        "2026-12-24",
        "--to",
        "2026-12-27",
        "--json",
    ]);
    let kinds: Vec<(String, String, String)> = days
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap().to_string(),
                d["kind"].as_str().unwrap().to_string(),
                d["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let k = |d: &str, kind: &str, src: &str| (d.to_string(), kind.to_string(), src.to_string());
    assert_eq!(
        kinds,
        [
            k("2026-12-24", "workday", "policy"),
            k("2026-12-25", "holiday", "calendar"),
            k("2026-12-26", "workday", "calendar"),
            // A Sunday: the word settle writes for it (regression: it was "holiday").
            k("2026-12-27", "rest_day", "policy"),
        ]
    );
}

#[test]
fn leave_is_checked_listed_and_cancelled() {
    let env = TestEnv::with_roster(TZ, 5, 1);
    env.fails(&["leave", "add", "NOBODY", "2026-12-01", "2026-12-03"], 1);
    env.fails(&["leave", "add", "E000002", "2026-12-03", "2026-12-01"], 2);
    env.fails(
        &["leave", "add", "E000002", "2026-12-01", "2026-12-03", "--kind", "party"],
        2,
    );
    let sick = [
        "leave",
        "add",
        "E000002",
        "2026-12-01",
        "2026-12-03",
        "--kind",
        "sick",
        "--json",
    ];
    let added = env.json(&sick);
    let id = added["leave_id"].as_u64().unwrap().to_string();
    env.fails(&["leave", "add", "E000002", "2026-12-03", "2026-12-05"], 1);
    let again = env.json(&sick);
    assert_eq!(
        (again["leave_id"].clone(), again["repeat"].clone()),
        (added["leave_id"].clone(), true.into()),
        "a rerun of the same add"
    );
    env.ok(&["leave", "add", "E000003", "2026-12-02", "2026-12-02"]);
    let mine = env.json(&["leave", "list", "--employee", "E000002", "--json"]);
    assert_eq!(mine.as_array().unwrap().len(), 1);
    assert_eq!(mine[0]["kind"], "sick");
    let on_the_2nd = env.json(&["leave", "list", "--from", "2026-12-02", "--to", "2026-12-02", "--json"]);
    assert_eq!(on_the_2nd.as_array().unwrap().len(), 2);
    env.ok(&["leave", "cancel", &id]);
    env.fails(&["leave", "cancel", "999999"], 1);
    let status: String = env
        .mysql()
        .exec_first("SELECT status FROM leaves WHERE id = ?", (&id,))
        .unwrap()
        .unwrap();
    assert_eq!(status, "cancelled");
    // Cancelled leave no longer blocks a new one.
    env.ok(&["leave", "add", "E000002", "2026-12-03", "2026-12-05"]);
}

/// The text tables of a terminal: by default every line of each report's
/// table fits 80 columns, a row to a line, under a title naming the report, its dates and its
/// department; `--wide` shows every column the CSV has.
#[test]
fn every_reports_default_table_fits_80_columns_and_wide_shows_all_columns() {
    let env = TestEnv::with_roster(TZ, 30, 2);
    let d1 = env.members("D001");
    // A long name: cut short in its column, never wrapped, never past the edge (regression:
    // the 80-column month table wrapped every row).
    env.mysql()
        .exec_drop(
            "UPDATE employees SET name = ? WHERE id = ?",
            ("Maximiliana Theodora Wolkenstein-Rodenegg von Hohenberg", &d1[2]),
        )
        .unwrap();
    env.punch(&d1[0], "in", "2026-11-20T08:50:00", false);
    env.punch(&d1[0], "out", "2026-11-20T18:05:00", false);
    env.punch(&d1[1], "in", "2026-11-20T09:15:00", false);
    env.punch(&d1[2], "in", "2026-11-20T09:25:00", false);
    env.punch(&d1[2], "out", "2026-11-20T17:00:00", false);
    env.ok(&["settle", "--date", DAY]);
    let range = ["--from", "2026-11-01", "--to", "2026-11-30"];
    let reports: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["report", "day", "--date", DAY],
            "day report, 2026-11-20, all departments",
        ),
        (
            vec!["report", "absent", "--date", DAY, "--dept", "D001"],
            "absent, 2026-11-20, D001",
        ),
        (
            [&["report", "employee", d1[2].as_str()][..], &range].concat(),
            "2026-11-01 to 2026-11-30",
        ),
        (
            [&["report", "dept", "D001"][..], &range].concat(),
            "department D001, 2026-11-01 to 2026-11-30",
        ),
        (
            vec!["report", "month", "--month", "2026-11"],
            "month sheet, November 2026, all departments",
        ),
        (
            [&["report", "payroll"][..], &range].concat(),
            "payroll, 2026-11-01 to 2026-11-30",
        ),
        (
            vec![
                "report",
                "timesheet",
                "--employee",
                d1[2].as_str(),
                "--month",
                "2026-11",
            ],
            "November 2026",
        ),
        (
            [&["report", "punches", "--dept", "D001"][..], &range].concat(),
            "punches, 2026-11-01 to 2026-11-30, D001",
        ),
    ];
    for (args, title) in &reports {
        // As a terminal of 80 columns runs it.
        let o = env.cmd().env("COLUMNS", "80").args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let first = text.lines().next().unwrap_or_default();
        assert!(first.contains(title), "{args:?}: title {first:?}");
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{args:?}: {} characters:\n{text}",
                line.chars().count()
            );
        }
        assert!(text.lines().count() > 3, "{args:?}: a table\n{text}");
        // A row to a line: as many table lines as the CSV has records.
        let csv = csv_cells(&env.ok(&[&args[..], &["--csv"]].concat()));
        let lines = text.lines().filter(|l| l.starts_with('\u{2502}')).count();
        assert_eq!(lines, csv.len(), "{args:?}: no row wraps\n{text}");
        // --wide: every column of the CSV in the header.
        let wide = env.ok(&[&args[..], &["--wide"]].concat());
        let header = &csv[0];
        let shown = &table_cells(&wide)[0];
        assert_eq!(shown, header, "{args:?}: --wide shows every column");
        assert!(wide.lines().next().unwrap_or_default().contains(title), "{args:?}");
    }
    // The day report keeps the counts that matter, with short headers.
    let day = table_cells(&env.ok(&["report", "day", "--date", DAY]));
    assert_eq!(
        day[0],
        ["dept", "staff", "present", "late", "early", "both", "absent", "leave", "other"]
    );
    assert_eq!(day.last().unwrap()[..4], ["total", "30", "1", "0"]);
}

/// The status counts of a row, summed: every column after the first `skip` (a row's total).
fn counts_sum(row: &[String], skip: usize) -> u64 {
    row[skip..].iter().map(|c| c.parse::<u64>().unwrap()).sum()
}

#[test]
fn the_day_reports_status_counts_add_up_to_its_headcount_late_and_early_included() {
    // Regression: the default table left late_and_early (and four other statuses) out, so its
    // counts fell short of the headcount (by 407 in the demo).
    let env = TestEnv::with_roster(TZ, 30, 2);
    let d1 = env.members("D001");
    let d2 = env.members("D002");
    env.punch(&d1[0], "in", "2026-11-20T08:50:00", false);
    env.punch(&d1[0], "out", "2026-11-20T18:05:00", false);
    // Late and early, twice; late only; missing its check-out.
    for e in [&d1[1], &d2[1]] {
        env.punch(e, "in", "2026-11-20T09:25:00", false);
        env.punch(e, "out", "2026-11-20T17:00:00", false);
    }
    env.punch(&d1[2], "in", "2026-11-20T09:15:00", false);
    env.punch(&d1[2], "out", "2026-11-20T18:00:00", false);
    env.punch(&d1[3], "in", "2026-11-20T08:45:00", false);
    env.ok(&["settle", "--date", DAY]);

    let v = env.json(&["report", "day", "--date", DAY, "--json"]);
    let statuses = |o: &serde_json::Value| -> u64 {
        o.as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !["department_id", "department_name", "headcount"].contains(&k.as_str()))
            .map(|(_, n)| n.as_u64().unwrap())
            .sum()
    };
    for row in v["rows"].as_array().unwrap().iter().chain([&v["totals"]]) {
        assert_eq!(statuses(row), row["headcount"].as_u64().unwrap(), "{row}");
    }
    assert_eq!(v["totals"]["late_and_early"], 2, "{v}");
    assert_eq!(v["totals"]["headcount"], 30);

    // The default table: what it shows adds up too, `other` holding what it leaves out.
    let text = env.ok(&["report", "day", "--date", DAY]);
    let day = table_cells(&text);
    assert_eq!(day[0][1], "staff");
    assert_eq!(day.last().unwrap()[5], "2", "both: late and early\n{text}");
    for row in &day[1..] {
        assert_eq!(counts_sum(row, 2), row[1].parse::<u64>().unwrap(), "{row:?}\n{text}");
    }
    // So does the department report's: each employee's days.
    let text = env.ok(&["report", "dept", "D001", "--from", DAY, "--to", DAY]);
    let dept = table_cells(&text);
    assert_eq!(dept[0][2..], ["days", "present", "late", "absent", "leave", "other"]);
    for row in &dept[1..] {
        assert_eq!(counts_sum(row, 3), row[2].parse::<u64>().unwrap(), "{row:?}\n{text}");
    }
}
