//! The worked day, computed by hand and read back: a small company in Berlin over the week the
//! clocks went back in 2025 (a day shift with a 60-minute break, a night shift 22:00-06:00 with
//! 30 minutes across the change, a part-timer, half a day of leave, a holiday worked, a leaver
//! and a joiner), settled by the binary against the real MySQL and Redis, and every figure of
//! `report employee`, the month sheet and payroll compared with the figures written out here.

use crate::common;

use common::TestEnv;
use serde_json::Value;

const TZ: &str = "Europe/Berlin";
/// Wednesday 22 (a holiday) to Sunday 26 October 2025: the clocks went back at 03:00 on the 26th.
const DAYS: [&str; 5] = ["2025-10-22", "2025-10-23", "2025-10-24", "2025-10-25", "2025-10-26"];

const ROSTER: &str = "employee_id,name,department_id,department_name,role,start_date,end_date\n\
    BOSS,Boss,D1,Works,supervisor,,\n\
    DAY,Dana Day,D1,Works,employee,,\n\
    NIGHT,Nils Night,D1,Works,employee,,\n\
    PART,Paula Part,D1,Works,employee,,\n\
    HALF,Hal Half,D1,Works,employee,,\n\
    LEAVER,Lea Leaver,D1,Works,employee,,2025-10-23\n\
    JOINER,Jo Joiner,D1,Works,employee,2025-10-24,\n";

const SHIFTS: &str = "name,start,end,late_grace,early_grace,work_days,break,part_time\n\
    day,08:00,17:00,5,5,mon-fri,60,false\n\
    night,22:00,06:00,10,5,mon-sun,30,false\n\
    part,09:00,13:00,0,0,mon-fri,0,true\n";

/// Every punch, at its instant (CEST is +02:00 until 03:00 on the 26th, CET +01:00 after).
const PUNCHES: &[(&str, &str, &str)] = &[
    // The day shift: a holiday morning, overtime, late past the grace.
    ("DAY", "in", "2025-10-22T09:00:00+02:00"),
    ("DAY", "out", "2025-10-22T13:00:00+02:00"),
    ("DAY", "in", "2025-10-23T07:55:00+02:00"),
    ("DAY", "out", "2025-10-23T17:30:00+02:00"),
    ("DAY", "in", "2025-10-24T08:20:00+02:00"),
    ("DAY", "out", "2025-10-24T17:00:00+02:00"),
    // The night shift: the holiday's night, a plain one, a late one, the long night of the
    // change; none on Sunday's.
    ("NIGHT", "in", "2025-10-22T21:55:00+02:00"),
    ("NIGHT", "out", "2025-10-23T06:05:00+02:00"),
    ("NIGHT", "in", "2025-10-23T22:00:00+02:00"),
    ("NIGHT", "out", "2025-10-24T06:00:00+02:00"),
    ("NIGHT", "in", "2025-10-24T22:20:00+02:00"),
    ("NIGHT", "out", "2025-10-25T06:00:00+02:00"),
    ("NIGHT", "in", "2025-10-25T21:50:00+02:00"),
    ("NIGHT", "out", "2025-10-26T06:00:00+01:00"),
    // The part-timer: a fifth hour, then the four.
    ("PART", "in", "2025-10-23T09:00:00+02:00"),
    ("PART", "out", "2025-10-23T14:00:00+02:00"),
    ("PART", "in", "2025-10-24T09:00:00+02:00"),
    ("PART", "out", "2025-10-24T13:00:00+02:00"),
    // The morning off: in at the middle of the policy's day.
    ("HALF", "in", "2025-10-23T13:30:00+02:00"),
    ("HALF", "out", "2025-10-23T18:00:00+02:00"),
    ("LEAVER", "in", "2025-10-23T09:00:00+02:00"),
    ("LEAVER", "out", "2025-10-23T18:00:00+02:00"),
    ("JOINER", "in", "2025-10-24T09:00:00+02:00"),
    ("JOINER", "out", "2025-10-24T18:30:00+02:00"),
];

/// One day worked out on paper: the month sheet's code, late, worked and overtime minutes.
type Paper = (&'static str, u64, u64, u64);

/// Each employee's days, on paper (`None`: no row, outside their employment).
///
/// - DAY follows `day` (08:00-17:00, break 12:00-13:00, grace 5): the holiday's 09:00-13:00 is
///   240 less the hour of break, 180, all overtime; 07:55-17:30 is 575 less 60, 515, 35 past
///   the 480 due; in at 08:20 is 20 late, 520 less 60, 460.
/// - NIGHT follows `night` (22:00-06:00, break 30 centred on 02:00, grace 10): the holiday's
///   21:55-06:05 is 490 less 30, 460, all overtime; 22:00-06:00 is 450; in at 22:20 is 20 late
///   and 430; the night of the change is nine real hours: 21:50 CEST to 06:00 CET is 550 less
///   30, 520, 10 past the 510 due (540 less 30). Sunday's night has no punch: absent.
/// - PART follows `part` (09:00-13:00, no break, part time): 09:00-14:00 is 300, 60 past the 240;
///   09:00-13:00 is 240.
/// - HALF follows the policy (09:00-18:00, break 13:00-14:00): the morning off, judged on
///   13:30-18:00, due 270 less its 30 minutes of break, 240, and worked 240; sick on Friday.
/// - LEAVER works their last day, 09:00-18:00, 480; no row after it. JOINER starts Friday:
///   09:00-18:30 is 510, 30 over; no row before.
fn on_paper(emp: &str) -> [Option<Paper>; 5] {
    match emp {
        "DAY" => [
            Some(("H", 0, 180, 180)),
            Some(("P", 0, 515, 35)),
            Some(("L", 20, 460, 0)),
            Some(("R", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
        ],
        "NIGHT" => [
            Some(("H", 0, 460, 460)),
            Some(("P", 0, 450, 0)),
            Some(("L", 20, 430, 0)),
            Some(("P", 0, 520, 10)),
            Some(("A", 0, 0, 0)),
        ],
        "PART" => [
            Some(("H", 0, 0, 0)),
            Some(("PT", 0, 300, 60)),
            Some(("PT", 0, 240, 0)),
            Some(("R", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
        ],
        "HALF" => [
            Some(("H", 0, 0, 0)),
            Some(("HV", 0, 240, 0)),
            Some(("V", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
        ],
        "LEAVER" => [Some(("H", 0, 0, 0)), Some(("P", 0, 480, 0)), None, None, None],
        "JOINER" => [
            None,
            None,
            Some(("P", 0, 510, 30)),
            Some(("R", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
        ],
        "BOSS" => [
            Some(("H", 0, 0, 0)),
            Some(("A", 0, 0, 0)),
            Some(("A", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
            Some(("R", 0, 0, 0)),
        ],
        other => panic!("no paper for {other}"),
    }
}

const STAFF: [&str; 7] = ["BOSS", "DAY", "NIGHT", "PART", "HALF", "LEAVER", "JOINER"];

/// The company set up, punched and settled, day by day.
fn company() -> TestEnv {
    let env = TestEnv::migrated(TZ);
    env.import_roster("roster.csv", ROSTER);
    env.work_rules(
        SHIFTS,
        "scope,target,from,shift\nemployee,DAY,2025-10-01,day\n\
         employee,NIGHT,2025-10-01,night\nemployee,PART,2025-10-01,part\n",
        "date,kind,note\n2025-10-22,holiday,Works holiday\n",
    );
    env.ok(&[
        "leave",
        "add",
        "HALF",
        "2025-10-23",
        "2025-10-23",
        "--kind",
        "annual",
        "--half",
        "morning",
    ]);
    env.ok(&["leave", "add", "HALF", "2025-10-24", "2025-10-24", "--kind", "sick"]);
    let body: String = PUNCHES.iter().map(|(e, k, at)| format!("{e},{k},{at}\n")).collect();
    env.punch_file(&body);
    for day in DAYS {
        env.ok(&["settle", "--date", day, "-q"]);
    }
    env
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// The month sheet's code of a status, as `report month` shows it.
fn code_of(status: &str, date: &str) -> &'static str {
    match status {
        "present" => "P",
        "late" => "L",
        "absent" => "A",
        "on_leave" => "V",
        "half_day_leave" => "HV",
        "part_time" => "PT",
        "rest_day" if date == DAYS[0] => "H",
        "rest_day" => "R",
        other => panic!("status {other} on {date}"),
    }
}

#[test]
fn every_day_of_a_hand_computed_week_reads_the_same_in_the_employee_report_month_sheet_and_payroll() {
    let env = company();
    let month = env.json(&["report", "month", "--month", "2025-10", "--json"]);
    let payroll = env.json(&[
        "report",
        "payroll",
        "--from",
        "2025-10-01",
        "--to",
        "2025-10-31",
        "--json",
    ]);
    for emp in STAFF {
        let paper = on_paper(emp);
        // Day by day, from `report employee` (the stored row and the hours read from it).
        let report = env.json(&["report", "employee", emp, "--from", DAYS[0], "--to", DAYS[4], "--json"]);
        let mut seen = Vec::new();
        for r in report["rows"].as_array().unwrap() {
            let date = r["work_date"].as_str().unwrap();
            let i = DAYS.iter().position(|d| *d == date).unwrap();
            seen.push(i);
            let status = r["status"].as_str().unwrap();
            let got = (
                code_of(status, date),
                num(&r["late_minutes"]),
                num(&r["worked_minutes"]),
                num(&r["overtime_minutes"]),
            );
            assert_eq!(Some(got), paper[i], "{emp} on {date}: {r}");
        }
        let want: Vec<usize> = (0..5).filter(|i| paper[*i].is_some()).collect();
        assert_eq!(seen, want, "{emp}: a row for each day of their employment, no other");

        // The month sheet: each day's code and the week's minutes.
        let line = month["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["employee_id"] == emp)
            .unwrap_or_else(|| panic!("{emp} on the month sheet"));
        for (i, day) in DAYS.iter().enumerate() {
            let cell = &line[&day[8..]];
            match paper[i] {
                Some((code, ..)) => assert_eq!(cell, code, "{emp} on {day}"),
                None => assert_eq!(cell, &Value::Null, "{emp} on {day}: blank outside employment"),
            }
        }
        let worked: u64 = paper.iter().flatten().map(|p| p.2).sum();
        let overtime: u64 = paper.iter().flatten().map(|p| p.3).sum();
        assert_eq!(
            (num(&line["worked_minutes"]), num(&line["overtime_minutes"])),
            (worked, overtime),
            "{emp} on the month sheet"
        );

        // Payroll: the same minutes, days worked and absent.
        let pay = payroll["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["employee_id"] == emp)
            .unwrap();
        assert_eq!(
            (num(&pay["worked_minutes"]), num(&pay["overtime_minutes"])),
            (worked, overtime),
            "{emp} in payroll"
        );
        // Days in halves: half a day of leave is half a day worked.
        let halves = |of: &[&str]| -> f64 {
            let n = paper.iter().flatten().filter(|p| of.contains(&p.0));
            n.map(|p| if p.0 == "HV" { 0.5 } else { 1.0 }).sum()
        };
        let days = |key: &str| pay[key].as_f64().unwrap_or_else(|| panic!("{key}: {pay}"));
        assert_eq!(
            (days("days_worked"), days("absent_days")),
            (halves(&["P", "L", "PT", "HV"]), halves(&["A"])),
            "{emp} in payroll"
        );
        // Leave by kind: HALF's morning off is annual, Friday sick.
        let (annual, sick) = if emp == "HALF" { (0.5, 1.0) } else { (0.0, 0.0) };
        assert_eq!(
            (days("leave_annual"), days("leave_sick")),
            (annual, sick),
            "{emp} in payroll"
        );
        let shift = match emp {
            "DAY" => "day",
            "NIGHT" => "night",
            "PART" => "part",
            _ => "default",
        };
        assert_eq!(pay["shift"], shift, "{emp}: the shift payroll used");
    }
}

/// Minutes of unpaid break each day's span covered, on paper: `day`'s 12:00-13:00 is inside
/// each of DAY's spans; `night`'s 30 minutes centred on 02:00 (the real middle of the long
/// night too) inside each night worked; the policy's 13:00-14:00 half inside HALF's 13:30-18:00
/// and whole inside LEAVER's and JOINER's days; PART's shift has none.
fn breaks_on_paper(emp: &str) -> [u64; 5] {
    match emp {
        "DAY" => [60, 60, 60, 0, 0],
        "NIGHT" => [30, 30, 30, 30, 0],
        "HALF" => [0, 30, 0, 0, 0],
        "LEAVER" => [0, 60, 0, 0, 0],
        "JOINER" => [0, 0, 60, 0, 0],
        _ => [0; 5],
    }
}

/// `report timesheet --employee EMP --month 2025-10`, then `more`.
fn timesheet_args<'a>(emp: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    [
        &["report", "timesheet", "--employee", emp, "--month", "2025-10"][..],
        more,
    ]
    .concat()
}

/// The October timesheet of `emp`, as JSON.
fn timesheet(env: &TestEnv, emp: &str) -> Value {
    env.json(&timesheet_args(emp, &["--json"]))
}

#[test]
fn each_employees_timesheet_reads_the_hand_computed_days_with_their_punches_and_totals_that_add_up() {
    let env = company();
    for emp in STAFF {
        let sheet = timesheet(&env, emp);
        let rows = sheet["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 31, "{emp}: a row for every day of October");
        assert_eq!(rows[0]["work_date"], "2025-10-01");
        assert_eq!(rows[25]["weekday"], "Sun", "{emp}: 26 October 2025 was a Sunday");
        let paper = on_paper(emp);
        let breaks = breaks_on_paper(emp);
        for (i, r) in rows.iter().enumerate() {
            let date = r["work_date"].as_str().unwrap();
            let Some(k) = DAYS.iter().position(|d| *d == date) else {
                assert_eq!(r["status"], Value::Null, "{emp} on {date}: not settled, blank: {r}");
                assert_eq!(r["worked_minutes"], Value::Null, "{emp} on {date}: {r}");
                continue;
            };
            assert_eq!(i + 1, date[8..].parse::<usize>().unwrap());
            match paper[k] {
                None => {
                    assert_eq!(r["status"], Value::Null, "{emp} on {date}: outside employment: {r}");
                    assert_eq!(r["shift"], Value::Null, "{emp} on {date}: no shift outside employment");
                }
                Some((code, late, worked, overtime)) => {
                    let status = r["status"].as_str().unwrap();
                    assert_eq!(code_of(status, date), code, "{emp} on {date}: {r}");
                    assert_eq!(
                        (
                            num(&r["late_minutes"]),
                            num(&r["worked_minutes"]),
                            num(&r["overtime_minutes"]),
                            num(&r["break_minutes"])
                        ),
                        (late, worked, overtime, breaks[k]),
                        "{emp} on {date}: {r}"
                    );
                }
            }
        }
        // Each punch, with when and how it came (a punch file: bulk), under its work date.
        let punched: Vec<(String, String, String)> = rows
            .iter()
            .flat_map(|r| r["punches"].as_array().unwrap().clone())
            .map(|p| {
                (
                    p["kind"].as_str().unwrap().to_string(),
                    p["at"].as_str().unwrap().to_string(),
                    p["how"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want: Vec<(String, String, String)> = PUNCHES
            .iter()
            .filter(|(e, ..)| *e == emp)
            .map(|(_, k, at)| (k.to_string(), at.to_string(), "bulk".to_string()))
            .collect();
        assert_eq!(punched, want, "{emp}: every punch, in order");

        // The totals are the rows summed: minutes, days by status, leave by kind.
        let totals = &sheet["totals"];
        for col in [
            "break_minutes",
            "worked_minutes",
            "late_minutes",
            "early_minutes",
            "overtime_minutes",
        ] {
            let sum: u64 = rows.iter().filter_map(|r| r[col].as_u64()).sum();
            assert_eq!(num(&totals[col]), sum, "{emp}: {col} total");
        }
        let days = rows.iter().filter(|r| !r["status"].is_null()).count() as u64;
        assert_eq!(num(&totals["days"]), days, "{emp}");
        let counted: u64 = totals["counts"].as_object().unwrap().values().map(num).sum();
        assert_eq!(counted, days, "{emp}: every day counted once by its status");
        let worked: u64 = paper.iter().flatten().map(|p| p.2).sum();
        assert_eq!(num(&totals["worked_minutes"]), worked, "{emp}: the week's minutes");
    }

    // The night shift's long night: its shift, and the check-out after the clocks went back.
    let night = timesheet(&env, "NIGHT");
    let long = &night["rows"][24];
    assert_eq!(long["shift"], "night");
    assert_eq!(long["first_in"], "2025-10-25T21:50:00+02:00");
    assert_eq!(long["last_out"], "2025-10-26T06:00:00+01:00");
    // Half a day of leave and a day of sick leave, by kind; the leave in the totals in days.
    let half = timesheet(&env, "HALF");
    assert_eq!(
        (
            half["rows"][22]["leave_kind"].clone(),
            half["rows"][22]["leave_half"].clone()
        ),
        (Value::from("annual"), Value::from("morning"))
    );
    assert_eq!(half["rows"][23]["leave_kind"], "sick");
    assert_eq!(
        half["totals"]["leave_kind"],
        serde_json::json!({"annual": 0.5, "sick": 1})
    );
    // The leaver's days after leaving are blank, with no shift.
    let leaver = timesheet(&env, "LEAVER");
    assert_eq!(leaver["rows"][23]["shift"], Value::Null);
    assert_eq!(leaver["rows"][22]["shift"], "default");

    // CSV holds the same rows and totals; the table keeps to 80 columns under its title.
    let csv = common::csv_cells(&env.ok(&timesheet_args("NIGHT", &["--csv"])));
    assert_eq!(csv.len(), 33, "header, 31 days, totals");
    assert_eq!(csv[25][..3], ["2025-10-25", "Sat", "night"]);
    assert_eq!(csv[25][5], "in 21:50 bulk, out 06:00 bulk");
    assert_eq!(csv[32][0], "total");
    let text = env.ok(&timesheet_args("NIGHT", &[]));
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("timesheet, October 2025, D1, NIGHT Nils Night"),
        "{text}"
    );
    for line in text.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} characters:\n{text}",
            line.chars().count()
        );
    }
    assert_eq!(
        env.ok(&timesheet_args("NIGHT", &["--format", "text"])),
        text,
        "text is the table"
    );

    // An unknown employee is refused, a month that is not YYYY-MM is a usage error.
    let e = env.fails(
        &["report", "timesheet", "--employee", "NOBODY", "--month", "2025-10"],
        1,
    );
    assert_eq!(e, "error: unknown employee 'NOBODY'\n");
    env.fails(&["report", "timesheet", "--employee", "DAY", "--month", "2025-13"], 2);
}
