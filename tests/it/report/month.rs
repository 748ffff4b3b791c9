//! `attendance report month` and the hours of `report employee` and `report dept`, against the
//! real services: the month sheet's codes are the settled rows', its totals the sum of the day
//! reports, its hours first-in to last-out minus the break (recomputed here from the rows), and
//! its workbook (read back with calamine) a sheet per department, typed.

use crate::common;

use std::collections::HashMap;

use calamine::{open_workbook, Data, Reader, Xlsx};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use common::{csv_cells, TestEnv};
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// Monday 2 to Wednesday 4 November 2026, Saturday 7, and Wednesday 11 (a holiday here).
const DAYS: [&str; 5] = ["2026-11-02", "2026-11-03", "2026-11-04", "2026-11-07", "2026-11-11"];

/// The whole of November, as --from and --to.
const NOVEMBER: [&str; 4] = ["--from", "2026-11-01", "--to", "2026-11-30"];

/// The month of November set up and settled: who did what is in the comments.
fn november() -> (TestEnv, Vec<String>, Vec<String>) {
    let env = TestEnv::with_roster(TZ, 30, 2);
    let (d1, d2) = (env.members("D001"), env.members("D002"));
    let cal = env.file("cal.csv", "date,kind,note\n2026-11-11,holiday,Armistice\n");
    env.ok(&["calendar", "import", cal.to_str().unwrap()]);
    env.ok(&["leave", "add", &d1[2], "2026-11-03", "2026-11-04", "--kind", "sick"]);
    // d1[0]: on time and overtime on the 2nd, no check-out on the 3rd, two hours on Saturday.
    env.punch(&d1[0], "in", "2026-11-02T08:50:00", false);
    env.punch(&d1[0], "out", "2026-11-02T18:05:00", false);
    env.punch(&d1[0], "in", "2026-11-03T09:40:00", false);
    env.punch(&d1[0], "in", "2026-11-07T10:00:00", false);
    env.punch(&d1[0], "out", "2026-11-07T12:00:00", false);
    // d1[1]: late on the 2nd, leaves in the break on the 4th.
    env.punch(&d1[1], "in", "2026-11-02T09:15:00", false);
    env.punch(&d1[1], "out", "2026-11-02T18:00:00", false);
    env.punch(&d1[1], "in", "2026-11-04T09:00:00", false);
    env.punch(&d1[1], "out", "2026-11-04T13:30:00", false);
    // d2[0]: a morning on the 4th (left early, the break not reached).
    env.punch(&d2[0], "in", "2026-11-04T08:00:00", false);
    env.punch(&d2[0], "out", "2026-11-04T12:00:00", false);
    for day in DAYS {
        env.ok(&["settle", "--date", day]);
    }
    (env, d1, d2)
}

/// The hours rule, written out again: span minus the part of 13:00-14:00 (local) it covers,
/// floored to the minute; overtime past 480 minutes on a work day, all of it on a rest day.
fn expected_hours(date: NaiveDate, fi: NaiveDateTime, lo: NaiveDateTime, workday: bool) -> (i64, i64) {
    let tz: chrono_tz::Tz = TZ.parse().unwrap();
    let local = |h| {
        tz.from_local_datetime(&date.and_time(NaiveTime::from_hms_opt(h, 0, 0).unwrap()))
            .unwrap()
            .naive_utc()
    };
    let (b0, b1) = (local(13), local(14));
    let overlap = (lo.min(b1) - fi.max(b0)).num_seconds().max(0);
    let worked = ((lo - fi).num_seconds() - overlap).max(0) / 60;
    (worked, if workday { (worked - 480).max(0) } else { worked })
}

/// An attendance row: employee, day, status, first in, last out.
type Settled = (String, NaiveDate, String, Option<NaiveDateTime>, Option<NaiveDateTime>);

fn settled(env: &TestEnv) -> Vec<Settled> {
    env.mysql()
        .query("SELECT employee_id, work_date, CAST(status AS CHAR), first_in, last_out FROM attendance")
        .unwrap()
}

/// Each employee's (worked, overtime) minutes, recomputed from the rows.
fn hours_of(rows: &[Settled]) -> HashMap<String, (i64, i64)> {
    let mut hours: HashMap<String, (i64, i64)> = HashMap::new();
    for (e, date, status, fi, lo) in rows {
        if let (Some(fi), Some(lo)) = (fi, lo) {
            let (w, o) = expected_hours(*date, *fi, *lo, status != "rest_day");
            let h = hours.entry(e.clone()).or_default();
            h.0 += w;
            h.1 += o;
        }
    }
    hours
}

fn num(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("a number: {v}"))
}

#[test]
fn the_month_sheet_holds_the_settled_rows_and_its_totals_are_the_day_reports_summed() {
    let (env, d1, d2) = november();
    let month = env.json(&["report", "month", "--month", "2026-11", "--json"]);
    let rows = month["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 30, "30 lines; the totals are their own object");
    let total = &month["totals"];
    assert!(total.get("department_id").is_none(), "no label in the totals: {total}");

    // Every code is the settled row's status; a day with no row is blank.
    let settled = settled(&env);
    assert_eq!(settled.len(), 30 * DAYS.len());
    let hours = hours_of(&settled);
    for (e, date, status, _, _) in &settled {
        let line = rows.iter().find(|r| r["employee_id"] == e.as_str()).unwrap();
        let code = match status.as_str() {
            "present" => "P",
            "late" => "L",
            "early_leave" => "E",
            "late_and_early" => "LE",
            "missing_checkout" => "MO",
            "missing_checkin" => "MI",
            "absent" => "A",
            "on_leave" => "V",
            "rest_day" if date.to_string() == "2026-11-11" => "H",
            "rest_day" => "R",
            other => panic!("status {other}"),
        };
        assert_eq!(line[date.format("%d").to_string()], code, "{e} {date}");
    }
    for r in &rows[..30] {
        assert_eq!(r["05"], serde_json::Value::Null, "the 5th was never settled: blank");
        let (w, o) = hours
            .get(r["employee_id"].as_str().unwrap())
            .copied()
            .unwrap_or_default();
        assert_eq!(
            (num(&r["worked_minutes"]), num(&r["overtime_minutes"])),
            (w, o),
            "{}",
            r["employee_id"]
        );
    }
    // The figures themselves: 08:50-18:05 less the break is 495 (15 over), and Saturday's
    // two hours are all overtime; 09:00-13:30 loses half the break; a morning keeps its hours.
    let line = |e: &str| rows.iter().find(|r| r["employee_id"] == e).unwrap();
    assert_eq!(
        (
            num(&line(&d1[0])["worked_minutes"]),
            num(&line(&d1[0])["overtime_minutes"])
        ),
        (615, 135)
    );
    assert_eq!(num(&line(&d1[1])["worked_minutes"]), 465 + 240);
    assert_eq!(
        (
            num(&line(&d2[0])["worked_minutes"]),
            num(&line(&d2[0])["overtime_minutes"])
        ),
        (240, 0)
    );
    assert_eq!(line(&d1[2])["03"], "V");
    assert_eq!(num(&line(&d1[2])["leave_days"]), 2);

    // The totals: per day and per column, the day reports summed.
    let came = [
        "present",
        "late",
        "early_leave",
        "late_and_early",
        "missing_checkout",
        "missing_checkin",
    ];
    let (mut present, mut late, mut absent, mut leave) = (0, 0, 0, 0);
    for day in DAYS {
        let report = env.json(&["report", "day", "--date", day, "--json"]);
        let t = report["totals"].clone();
        let c: i64 = came.iter().map(|s| num(&t[*s])).sum();
        assert_eq!(num(&total[&day[8..]]), c, "who came on {day}");
        present += c;
        late += num(&t["late"]) + num(&t["late_and_early"]);
        absent += num(&t["absent"]);
        leave += num(&t["on_leave"]);
    }
    assert_eq!(num(&total["present_days"]), present);
    assert_eq!(num(&total["late_days"]), late);
    assert_eq!(num(&total["absent_days"]), absent);
    assert_eq!(num(&total["leave_days"]), leave);
    // Saturday's two hours are a rest day's (R), not a day present.
    assert_eq!((present, late, leave), (5, 1, 2));
    let all: i64 = hours.values().map(|h| h.0).sum();
    assert_eq!(num(&total["worked_minutes"]), all);

    // CSV holds the JSON's cells; the table shows them, minutes as hours and minutes, with a
    // title above and the legend below.
    let csv = csv_cells(&env.ok(&["report", "month", "--month", "2026-11", "--csv"]));
    assert_eq!(csv.len(), 32);
    let col = |name: &str| csv[0].iter().position(|c| c == name).unwrap();
    let e0 = csv.iter().find(|r| r[1] == d1[0]).unwrap();
    assert_eq!(
        (e0[col("02")].as_str(), e0[col("worked_minutes")].as_str()),
        ("P", "615")
    );
    let text = env.ok(&["report", "month", "--month", "2026-11", "--dept", "D001", "--wide"]);
    assert!(text.starts_with("month sheet, November 2026, D001\n"), "{text}");
    assert!(text.contains("10 h 15 min") && text.contains("2 h 15 min"), "{text}");
    assert!(text.contains("legend: P present, on time"), "{text}");
    assert!(!text.contains(&d2[0]), "only D001");
}

#[test]
fn employee_and_dept_reports_show_hours_and_overtime() {
    let (env, d1, _) = november();
    let days = env.json(&[&["report", "employee", &d1[0]][..], &NOVEMBER, &["--json"]].concat());
    let minutes: Vec<(i64, i64)> = days["rows"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&days["totals"]])
        .map(|d| (num(&d["worked_minutes"]), num(&d["overtime_minutes"])))
        .collect();
    assert_eq!(
        minutes,
        [(495, 15), (0, 0), (0, 0), (120, 120), (0, 0), (615, 135)],
        "four days, holiday, totals"
    );
    let dept = env.json(&[&["report", "dept", "D001"][..], &NOVEMBER, &["--json"]].concat());
    let rows = dept["rows"].as_array().unwrap();
    let e0 = rows.iter().find(|r| r["employee_id"] == d1[0].as_str()).unwrap();
    assert_eq!((num(&e0["worked_minutes"]), num(&e0["overtime_minutes"])), (615, 135));
    let t = &dept["totals"];
    assert_eq!(num(&t["worked_minutes"]), 615 + 465 + 240);
    let text = env.ok(&[&["report", "employee", &d1[0]][..], &NOVEMBER].concat());
    assert!(text.contains("8 h 15 min") && text.contains("10 h 15 min"), "{text}");
}

#[test]
fn payroll_has_a_line_per_employee_with_leave_by_kind_and_the_rows_hours() {
    let (env, d1, _) = november();
    let lines = env.json(&[&["report", "payroll"][..], &NOVEMBER, &["--json"]].concat());
    assert_eq!(
        lines["totals"],
        serde_json::Value::Null,
        "no totals for an import to trip on"
    );
    let lines = lines["rows"].as_array().unwrap();
    assert_eq!(lines.len(), 30, "one line per employee");
    let rows = settled(&env);
    let hours = hours_of(&rows);
    for l in lines {
        let e = l["employee_id"].as_str().unwrap();
        let (w, o) = hours.get(e).copied().unwrap_or_default();
        assert_eq!((num(&l["worked_minutes"]), num(&l["overtime_minutes"])), (w, o), "{e}");
        let absent = rows.iter().filter(|r| r.0 == e && r.2 == "absent").count() as i64;
        assert_eq!(num(&l["absent_days"]), absent, "{e}");
    }
    let line = |e: &str| lines.iter().find(|l| l["employee_id"] == e).unwrap();
    assert_eq!(
        num(&line(&d1[0])["days_worked"]),
        2,
        "the 2nd and the 3rd; Saturday is overtime"
    );
    assert_eq!(
        (
            num(&line(&d1[0])["worked_minutes"]),
            num(&line(&d1[0])["overtime_minutes"])
        ),
        (615, 135)
    );
    assert_eq!(
        (num(&line(&d1[1])["late_count"]), num(&line(&d1[1])["late_minutes"])),
        (1, 15)
    );
    assert_eq!(
        (num(&line(&d1[2])["leave_sick"]), num(&line(&d1[2])["leave_annual"])),
        (2, 0)
    );
    let csv = csv_cells(&env.ok(&[&["report", "payroll"][..], &NOVEMBER, &["--csv"]].concat()));
    assert_eq!(
        csv[0][..6],
        ["employee", "name", "department", "shift", "days_worked", "absent_days"]
    );
    let e0 = csv.iter().find(|r| r[0] == d1[0]).unwrap();
    let col = |name: &str| csv[0].iter().position(|c| c == name).unwrap();
    assert_eq!(
        ["worked_minutes", "overtime_minutes", "period_closed"].map(|c| e0[col(c)].as_str()),
        ["615", "135", "no"],
        "minutes as numbers, and whether the period is closed"
    );
    let path = env.dir.join("payroll.xlsx");
    let args = [
        &["report", "payroll"][..],
        &NOVEMBER,
        &["--format", "xlsx", "-o", path.to_str().unwrap()],
    ]
    .concat();
    env.ok(&args);
    let mut wb: Xlsx<_> = open_workbook(&path).unwrap();
    let r = wb.worksheet_range("payroll 2026-11-01 2026-11-30").unwrap();
    let row = (1..=30)
        .find(|&i| r.get_value((i, 0)) == Some(&Data::String(d1[0].clone())))
        .unwrap();
    assert_eq!(
        serial(r.get_value((row, 14)).unwrap()),
        615.0 / 1440.0,
        "worked hours, a duration"
    );
}

#[test]
fn the_month_workbook_has_a_sheet_per_department_titled_coloured_and_typed() {
    let (env, d1, _) = november();
    let path = env.dir.join("november.xlsx");
    let o = env
        .cmd()
        .env("ATTENDANCE_COMPANY", "Acme")
        .args([
            "report",
            "month",
            "--month",
            "2026-11",
            "--format",
            "xlsx",
            "-o",
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut wb: Xlsx<_> = open_workbook(&path).unwrap();
    assert_eq!(wb.sheet_names(), ["D001", "D002", "legend"]);
    let r = wb.worksheet_range("D001").unwrap();
    let cell = |row: u32, col: u32| r.get_value((row, col)).cloned().unwrap_or(Data::Empty);
    let title = cell(0, 0).to_string();
    assert!(
        title.starts_with("Acme") && title.contains("D001") && title.ends_with("November 2026"),
        "{title}"
    );
    let header: Vec<String> = (0..39).map(|c| cell(1, c).to_string()).collect();
    assert_eq!(header[..5], ["department", "employee", "name", "01", "02"]);
    assert_eq!(header[38], "overtime hours", "readable headers: minutes as hours");
    // Under each date its weekday: 1 November 2026 was a Sunday.
    assert_eq!(cell(2, 3), Data::String("Sun".into()));
    assert_eq!(cell(2, 4), Data::String("Mon".into()));
    let members = d1.len() as u32;
    let row = (3..3 + members)
        .find(|&i| cell(i, 1) == Data::String(d1[0].clone()))
        .unwrap();
    assert_eq!(cell(row, 4), Data::String("P".into()));
    assert_eq!(
        serial(&cell(row, 37)),
        615.0 / 1440.0,
        "minutes are a duration, not text"
    );
    assert_eq!(cell(row, 33), Data::Float(2.0), "counts are numbers");
    let total = 3 + members;
    assert_eq!(cell(total, 0), Data::String("total".into()));
    assert!(
        matches!(cell(total, 33), Data::Float(_)),
        "a total is a number: {:?}",
        cell(total, 33)
    );
    // The header rows and the id columns frozen; the filter over the employees' lines, not the totals.
    let xml = std::process::Command::new("unzip")
        .args(["-p", path.to_str().unwrap(), "xl/worksheets/sheet1.xml"])
        .output()
        .unwrap();
    let xml = String::from_utf8(xml.stdout).unwrap();
    assert!(xml.contains(r#"xSplit="3" ySplit="3""#), "{xml}");
    assert!(
        xml.contains(&format!(r#"<autoFilter ref="A3:AM{}"/>"#, members + 3)),
        "{xml}"
    );
    let legend = wb.worksheet_range("legend").unwrap();
    assert_eq!(legend.get_value((1, 0)), Some(&Data::String("P".into())));
}

/// A cell holding a number: a count, or a duration as Excel holds it (days).
fn serial(d: &Data) -> f64 {
    match d {
        Data::Float(f) => *f,
        Data::Int(n) => *n as f64,
        Data::DateTime(t) => t.as_f64(),
        other => panic!("not a number: {other:?}"),
    }
}

/// A part of an xlsx file (a zip), as text.
fn part(path: &std::path::Path, name: &str) -> String {
    let o = std::process::Command::new("unzip")
        .args(["-p", path.to_str().unwrap(), name])
        .output()
        .unwrap();
    assert!(o.status.success(), "{name} in {}", path.display());
    String::from_utf8(o.stdout).unwrap()
}

/// Regression: the month sheet printed on 35 A4 portrait pages (the names on page 1, the codes
/// on page 3) with minutes as raw integers. The month sheet, payroll and a timesheet now print
/// landscape, one page wide, their title rows and name columns on every page, hours as `[h]:mm`
/// durations (a number format on minutes / 1440, never text).
#[test]
fn the_printed_sheets_are_landscape_one_page_wide_with_titles_and_names_on_every_page_and_hours_as_durations() {
    let (env, d1, _) = november();
    let written = |name: &str, args: &[&str]| {
        let path = env.dir.join(name);
        let mut a = args.to_vec();
        a.extend(["--format", "xlsx", "-o", path.to_str().unwrap()]);
        env.ok(&a);
        path
    };
    let month = written("month.xlsx", &["report", "month", "--month", "2026-11"]);
    let payroll = written("payroll.xlsx", &[&["report", "payroll"][..], &NOVEMBER].concat());
    let sheet = written(
        "timesheet.xlsx",
        &["report", "timesheet", "--employee", &d1[0], "--month", "2026-11"],
    );
    // (file, the sheet's name, its repeated columns and rows)
    let cases = [
        (&month, "D001", "$A:$C", "$1:$3"),
        (&payroll, "payroll 2026-11-01 2026-11-30", "$A:$B", "$1:$1"),
        (&sheet, &*format!("timesheet {}", d1[0]), "$A:$B", "$1:$2"),
    ];
    for (path, name, cols, rows) in cases {
        let xml = part(path, "xl/worksheets/sheet1.xml");
        assert!(
            xml.contains(r#"<pageSetUpPr fitToPage="1"/>"#),
            "{name}: fit to page\n{xml}"
        );
        let setup = xml
            .split("<pageSetup ")
            .nth(1)
            .and_then(|r| r.split("/>").next())
            .unwrap_or_else(|| panic!("{name}: no pageSetup\n{xml}"));
        assert!(setup.contains(r#"orientation="landscape""#), "{name}: {setup}");
        assert!(
            setup.contains(r#"fitToHeight="0""#),
            "{name}: as many pages down as it takes: {setup}"
        );
        assert!(
            !setup.contains("fitToWidth=") || setup.contains(r#"fitToWidth="1""#),
            "{name}: one page wide: {setup}"
        );
        let book = part(path, "xl/workbook.xml");
        let quoted = format!("'{name}'");
        let titles = format!(
            r#"<definedName name="_xlnm.Print_Titles" localSheetId="0">{quoted}!{cols},{quoted}!{rows}</definedName>"#
        );
        assert!(book.contains(&titles), "{name}: {titles}\n{book}");
        let styles = part(path, "xl/styles.xml");
        assert!(
            styles.contains(r#"formatCode="[h]:mm""#),
            "{name}: a duration format\n{styles}"
        );
    }

    // The hours are durations: minutes / 1440, the same minutes as the CSV.
    let mut wb: Xlsx<_> = open_workbook(&payroll).unwrap();
    let r = wb.worksheet_range("payroll 2026-11-01 2026-11-30").unwrap();
    let header: Vec<String> = r.rows().next().unwrap().iter().map(|c| c.to_string()).collect();
    let csv = csv_cells(&env.ok(&[&["report", "payroll", "--csv"][..], &NOVEMBER].concat()));
    let at = |h: &[String], name: &str| {
        h.iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("{name}: {h:?}"))
    };
    let (worked, csv_worked) = (at(&header, "worked_hours"), at(&csv[0], "worked_minutes"));
    assert_eq!(r.rows().count(), csv.len(), "a line per employee, and the header");
    for (x, c) in r.rows().skip(1).zip(&csv[1..]) {
        let minutes: f64 = c[csv_worked].parse().unwrap();
        assert!((serial(&x[worked]) * 1440.0 - minutes).abs() < 1e-6, "{x:?} vs {c:?}");
        assert_eq!(
            x[at(&header, "employee")].to_string(),
            c[0],
            "no title row: the header is row 1"
        );
    }
    let mut wb: Xlsx<_> = open_workbook(&sheet).unwrap();
    let r = wb.worksheet_range(&format!("timesheet {}", d1[0])).unwrap();
    let cell = |row: u32, col: u32| r.get_value((row, col)).cloned().unwrap_or(Data::Empty);
    assert!(cell(0, 0).to_string().contains(&d1[0]), "the title names the employee");
    assert_eq!(cell(1, 7), Data::String("worked_hours".into()));
    // 2 November: 08:50 to 18:05 less the hour of break, 495 minutes; 30 days and the totals.
    assert_eq!(serial(&cell(3, 7)), 495.0 / 1440.0);
    assert_eq!(cell(32, 0), Data::String("total".into()));
    assert_eq!(
        serial(&cell(32, 7)),
        (495.0 + 120.0) / 1440.0,
        "the total is the rows summed"
    );
}

#[test]
fn a_bad_month_or_an_unknown_department_is_refused() {
    let env = TestEnv::migrated(TZ);
    for bad in ["2026-13", "2026-1", "november"] {
        let err = env.fails(&["report", "month", "--month", bad], 2);
        assert!(err.contains("YYYY-MM"), "{err}");
    }
    let err = env.fails(&["report", "month", "--month", "2026-11", "--dept", "D999"], 1);
    assert_eq!(err, "error: unknown department 'D999'\n");
    let text = env.ok(&["report", "month", "--month", "2026-11", "--json"]);
    assert_eq!(text.trim(), r#"{"rows":[],"totals":null}"#);
}
