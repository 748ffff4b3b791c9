//! Text is data, never control: a name holding terminal escapes that
//! is already in MySQL is shown escaped by every text output; free text with a control
//! character is refused at the door and changes nothing; a CSV report never hands a
//! spreadsheet a formula unless `--csv-raw` asks for it.

use crate::common;

use amiquip::{AmqpProperties, Connection, Publish};
use common::{csv_cells, queue_depth, TestEnv, AMQP_URL};
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
const DAY: &str = "2026-11-20";

/// ESC[2J (clear the screen), BEL, CR with a fake error after it, U+202E (right-to-left
/// override) and OSC 52 (set the terminal's clipboard).
const HOSTILE: &str = "Eve\u{1b}[2J\u{7}\rerror: database corrupted\u{202e}evil\u{1b}]52;c;cm0gLXJm\u{7}";
/// The same, as every text output shows it.
const SHOWN: &str = "Eve\\u{1b}[2J\\u{7}\\u{d}error: database corrupted\\u{202e}evil\\u{1b}]52;c;cm0gLXJm\\u{7}";

/// Whether `c` is one of the characters no text output may print raw.
fn control(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Require `bytes` (a command's stdout or stderr) to hold no control character but newlines.
fn inert(what: &str, bytes: &[u8]) -> String {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    if let Some(c) = text.chars().find(|&c| control(c)) {
        panic!("{what}: raw {c:?} in {text:?}");
    }
    text
}

/// Run, require exit 0 and inert stdout and stderr; returns stdout.
fn shown(env: &TestEnv, args: &[&str]) -> String {
    let o = env.run(args);
    let err = inert(&format!("{args:?} stderr"), &o.stderr);
    assert!(o.status.success(), "{args:?}: {err}");
    inert(&format!("{args:?} stdout"), &o.stdout)
}

/// Every employee row and every department row, as one string each.
fn roster_rows(env: &TestEnv) -> Vec<String> {
    let mut rows: Vec<String> = env
        .mysql()
        .query("SELECT CONCAT_WS('|', id, name, department_id, role, active) FROM employees ORDER BY id")
        .unwrap();
    let depts: Vec<String> = env
        .mysql()
        .query("SELECT CONCAT_WS('|', id, name) FROM departments ORDER BY id")
        .unwrap();
    rows.extend(depts);
    rows
}

#[test]
fn a_hostile_name_already_stored_is_shown_escaped_everywhere() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let eve = env.members("D001")[0].clone();
    // Straight into the database: `org import` now refuses such a name.
    env.mysql()
        .exec_drop("UPDATE employees SET name = ? WHERE id = ?", (HOSTILE, &eve))
        .unwrap();
    // The layout sees the roster changed and rebuilds the Redis roster cache from MySQL.
    env.init_day(DAY, &["-q"]);

    let at = "2026-11-20T09:10:00+01:00";
    let out = shown(&env, &["checkin", &eve, "--kind", "in", "--at", at]);
    assert!(out.contains(SHOWN), "checkin: {out}");
    let out = shown(&env, &["status", &eve, "--date", DAY]);
    assert!(out.contains(SHOWN), "status: {out}");
    let out = shown(&env, &["watch-dept", "D001", "--once"]);
    assert!(out.contains(SHOWN), "watch-dept --once: {out}");
    // `--json` stays as serde escapes it: the name comes back whole.
    let status = env.json(&["status", &eve, "--date", DAY, "--json"]);
    assert_eq!(status["employee_name"], HOSTILE);

    shown(&env, &["settle", "--date", DAY, "-q"]);
    let range = ["--from", DAY, "--to", DAY];
    let table = shown(&env, &[&["report", "dept", "D001", "--wide"][..], &range].concat());
    assert!(table.contains(SHOWN), "report dept: {table}");
    // In 80 columns the name is cut short in its column, still inert.
    let narrow = shown(&env, &[&["report", "dept", "D001"][..], &range].concat());
    assert!(
        !narrow.contains('\u{1b}') && narrow.contains("Eve\\u{1b}[2J"),
        "{narrow}"
    );
    let csv = shown(
        &env,
        &[&["report", "dept", "D001", "--format", "csv"][..], &range].concat(),
    );
    let cells = csv_cells(&csv);
    let row = cells.iter().find(|r| r[0] == eve).expect("eve's row");
    assert_eq!(row[1], SHOWN);
    let raw = shown(
        &env,
        &[&["report", "dept", "D001", "--format", "csv", "--csv-raw"][..], &range].concat(),
    );
    assert!(
        raw.contains(SHOWN),
        "--csv-raw still shows control characters escaped: {raw}"
    );
    let json = env.ok(&[&["report", "dept", "D001", "--json"][..], &range].concat());
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["employee_name"] == HOSTILE));

    // An error line quoting a bad id from the command line.
    let o = env.run(&["status", "E\u{1b}[2J\rerror: x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = inert("status's error line", &o.stderr);
    assert!(err.contains("E\\u{1b}[2J\\u{d}error: x"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn free_text_with_a_control_character_is_refused_at_the_door_and_changes_nothing() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let members = env.members("D001");
    let before = (roster_rows(&env), env.redis_snapshot());

    let good = roster_rows(&env)
        .iter()
        .find(|r| r.starts_with(&members[1]))
        .cloned()
        .unwrap();
    let good: Vec<&str> = good.split('|').collect();
    for (row, field, bad) in [
        (
            format!("{},Mal\u{1b}[2Jlory,D001,Dept,employee", members[0]),
            "name",
            "\\u{1b}",
        ),
        (
            format!("{},Mallory,D001,Dept\u{202e},employee", members[0]),
            "department_name",
            "\\u{202e}",
        ),
        (
            format!("{},Mal\u{7}lory,D001,Dept,employee", members[0]),
            "name",
            "\\u{7}",
        ),
        (
            format!("{},\"Mal\rlory\",D001,Dept,employee", members[0]),
            "name",
            "\\u{d}",
        ),
        (
            format!("{},Mal\u{9b}lory,D001,Dept,employee", members[0]),
            "name",
            "\\u{9b}",
        ),
        // A NUL: C0 like the rest, never stored.
        (
            format!("{},Mal\u{0}lory,D001,Dept,employee", members[0]),
            "name",
            "\\u{0}",
        ),
        (
            "E\u{1b}1,Mallory,D001,Dept,employee".to_string(),
            "employee_id",
            "\\u{1b}",
        ),
    ] {
        let dept_name: String = env
            .mysql()
            .query_first("SELECT name FROM departments WHERE id = 'D001'")
            .unwrap()
            .unwrap();
        let row = row.replace("Dept", &dept_name);
        let file = env.file(
            "hostile.csv",
            &format!(
                "employee_id,name,department_id,department_name,role\n{},{},D001,{dept_name},employee\n{row}\n",
                good[0], good[1]
            ),
        );
        let o = env.run(&["org", "import", file.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{row:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = inert("org import's error line", &o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(
            err.contains(&format!("{field} holds the control character {bad}")),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }

    let eve = &members[0];
    for (args, what) in [
        (vec!["leave", "add", eve, DAY, DAY, "--note", "ok\u{7}"], "note"),
        (vec!["leave", "add", eve, DAY, DAY, "--note", "two\nlines"], "note"),
        (
            vec![
                "correct",
                eve,
                "--date",
                DAY,
                "--out",
                "18:15",
                "--reason",
                "kiosk\rerror: x",
                "--by",
                eve,
            ],
            "--reason",
        ),
        (vec!["checkin", eve, "--source", "kiosk\u{1b}[2J"], "--source"),
    ] {
        let o = env.run(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = inert("error line", &o.stderr);
        assert!(err.contains(&format!("{what} holds the control character")), "{err}");
    }
    assert_eq!((roster_rows(&env), env.redis_snapshot()), before, "nothing stored");
    assert_eq!(env.count("leaves"), 0);
    assert_eq!(env.count("corrections"), 0);
}

#[test]
fn csv_reports_write_formulas_as_text_and_numbers_as_numbers() {
    let env = TestEnv::migrated(TZ);
    let names = [
        "=HYPERLINK(\"http://x\",\"y\")",
        "=cmd|' /C calc'!A0",
        "+1+1",
        "-2+3",
        "@SUM(1+1)",
    ];
    let mut roster = String::from("employee_id,name,department_id,department_name,role\n");
    roster += "S1,Sam,D001,Ops,supervisor\n";
    for (i, n) in names.iter().enumerate() {
        roster += &format!("E{i},\"{}\",D001,Ops,employee\n", n.replace('"', "\"\""));
    }
    let file = env.file("roster.csv", &roster);
    env.ok(&["org", "import", file.to_str().unwrap(), "-q"]);
    env.init_day(DAY, &["-q"]);
    env.punch("E0", "in", "2026-11-20T09:12:00", false);
    env.ok(&["settle", "--date", DAY, "-q"]);

    let range = ["--from", DAY, "--to", DAY];
    let csv = env.ok(&[&["report", "dept", "D001", "--format", "csv"][..], &range].concat());
    let cells = csv_cells(&csv);
    let col = |name: &str| cells[0].iter().position(|c| c == name).unwrap();
    for (i, n) in names.iter().enumerate() {
        let row = cells.iter().find(|r| r[0] == format!("E{i}")).unwrap();
        assert_eq!(row[col("name")], format!("'{n}"), "{csv}");
        assert_eq!(row[col("days")], "1", "a count stays a number");
    }
    let e0 = cells.iter().find(|r| r[0] == "E0").unwrap();
    assert_eq!(e0[col("late_minutes")], "12", "minutes stay a number");
    assert_eq!(cells.last().unwrap()[col("days")], "6");

    let raw = env.ok(&[&["report", "dept", "D001", "--format", "csv", "--csv-raw"][..], &range].concat());
    let cells = csv_cells(&raw);
    for (i, n) in names.iter().enumerate() {
        let row = cells.iter().find(|r| r[0] == format!("E{i}")).unwrap();
        assert_eq!(row[1], *n, "--csv-raw writes the name as stored");
    }
    // The table and JSON show names as they are: only CSV is read by spreadsheets.
    let json = env.ok(&[&["report", "dept", "D001", "--json"][..], &range].concat());
    assert!(json.contains("\"+1+1\""), "{json}");
}

#[test]
fn a_parked_hostile_body_is_listed_escaped_by_dlq_list() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.bare_broker();
    let cfg = env.file("att.toml", "[amqp]\nretry_delay_ms = 100\nmax_retries = 2\n");
    let cfg = cfg.to_str().unwrap();
    let watch = ["watch-dept", "D001", "--once", "--config", cfg];
    shown(&env, &watch);
    let mut conn = Connection::insecure_open(AMQP_URL).unwrap();
    let props = AmqpProperties::default()
        .with_message_id("bad\u{1b}[2J".into())
        .with_delivery_mode(2);
    let body = "{\u{1b}[2J\rerror: x\u{202e}";
    conn.open_channel(None)
        .unwrap()
        .basic_publish(
            "",
            Publish::with_properties(body.as_bytes(), format!("{}.dept.D001", env.ns), props),
        )
        .unwrap();
    conn.close().unwrap();
    // Each rejection is a status line on stderr quoting the body: inert too (`shown`).
    let parking = format!("{}.parking", env.ns);
    let mut runs = 0;
    while queue_depth(&parking) == 0 {
        runs += 1;
        assert!(runs < 30, "never parked");
        shown(&env, &watch);
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let listed = shown(&env, &["dlq", "list", "--config", cfg]);
    assert!(listed.contains("bad\\u{1b}[2J"), "{listed}");
    assert!(listed.contains("{\\u{1b}[2J\\u{d}error: x\\u{202e}"), "{listed}");
    // JSON keeps the body as it is.
    let json = env.json(&["dlq", "list", "--json", "--config", cfg]);
    assert_eq!(json[0]["body"], body);
}
