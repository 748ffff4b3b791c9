//! Overtime by the company's rulebook, computed by hand and read back: a small company in
//! Berlin (a day shift with a 60-minute break, a night shift 22:00-06:00 with 30 minutes, a
//! part-timer, a holiday worked), whose rulebook from 1 November 2026 counts overtime past the
//! shift plus 10 minutes, rounded down to 15 with a 30-minute minimum, past 1,920 regular
//! minutes a week, rest-day and holiday minutes apart, and from the 16th only once approved.
//! Settled by the binary against the real MySQL and Redis; payroll and the month sheet compared
//! with the paper cell by cell, and the decisions' authority, audit and closed period.

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;
use serde_json::Value;

const TZ: &str = "Europe/Berlin";

const ROSTER: &str = "employee_id,name,department_id,department_name,role,start_date,end_date\n\
    BOSS,Boss,D1,Works,supervisor,,\n\
    DAY,Dana Day,D1,Works,employee,,\n\
    NIGHT,Nils Night,D1,Works,employee,,\n\
    PART,Paula Part,D1,Works,employee,,\n\
    HRP,Hanna Hr,D2,Office,supervisor,,\n\
    OTHER,Otto Other,D3,Stores,supervisor,,\n\
    GONE,Greta Gone,D2,Office,employee,,2026-11-20\n";

const SHIFTS: &str = "name,start,end,late_grace,early_grace,work_days,break,part_time\n\
    day,08:00,17:00,5,5,mon-fri,60,false\n\
    night,22:00,06:00,10,5,mon-fri,30,false\n\
    part,09:00,13:00,0,0,mon-fri,0,true\n";

/// The rulebook's overtime keys, from the 1st; approval from the 16th.
const RULES: [(&str, &str); 5] = [
    ("policy.overtime_daily_after", "shift+10"),
    ("policy.overtime_round_minutes", "15"),
    ("policy.overtime_minimum_minutes", "30"),
    ("policy.overtime_weekly_after", "1920"),
    ("policy.overtime_rest_days_apart", "true"),
];

/// Week 1 is Monday 9 to Sunday 15 November 2026 (Wednesday the 11th a holiday); week 2 starts
/// Monday the 16th, from which overtime needs approval.
const DAYS: [&str; 10] = [
    "2026-11-09",
    "2026-11-10",
    "2026-11-11",
    "2026-11-12",
    "2026-11-13",
    "2026-11-14",
    "2026-11-15",
    "2026-11-16",
    "2026-11-17",
    "2026-11-18",
];

/// Every punch (CET, +01:00).
const PUNCHES: &[(&str, &str, &str)] = &[
    ("DAY", "2026-11-09T08:00", "2026-11-09T17:44"),
    ("DAY", "2026-11-10T08:00", "2026-11-10T17:30"),
    ("DAY", "2026-11-11T09:00", "2026-11-11T13:00"),
    ("DAY", "2026-11-12T08:00", "2026-11-12T19:00"),
    ("DAY", "2026-11-13T08:00", "2026-11-13T17:00"),
    ("DAY", "2026-11-16T08:00", "2026-11-16T18:00"),
    ("DAY", "2026-11-17T08:00", "2026-11-17T18:30"),
    ("DAY", "2026-11-18T08:00", "2026-11-18T17:45"),
    ("NIGHT", "2026-11-09T22:00", "2026-11-10T06:00"),
    ("NIGHT", "2026-11-10T21:50", "2026-11-11T06:20"),
    ("NIGHT", "2026-11-11T22:00", "2026-11-12T06:00"),
    ("NIGHT", "2026-11-12T22:00", "2026-11-13T07:00"),
    ("NIGHT", "2026-11-13T22:00", "2026-11-14T06:00"),
    ("NIGHT", "2026-11-16T22:00", "2026-11-17T06:00"),
    ("PART", "2026-11-09T09:00", "2026-11-09T14:00"),
    ("PART", "2026-11-10T09:00", "2026-11-10T13:20"),
    ("PART", "2026-11-12T09:00", "2026-11-12T13:00"),
    ("PART", "2026-11-13T09:00", "2026-11-13T13:00"),
    ("PART", "2026-11-14T10:00", "2026-11-14T12:00"),
    ("PART", "2026-11-16T09:00", "2026-11-16T13:00"),
];

/// One day on paper: worked, overtime as counted, rest-day minutes apart, pending approval.
type Paper = (u64, u64, u64, u64);

/// Each worker's days on paper, in the order of [`DAYS`] (no approval decided yet).
///
/// - DAY follows `day` (08:00-17:00, break 12:00-13:00, due 480, threshold 490). Monday
///   08:00-17:44 is 584 less 60, 524: 34 past, rounded 30. Tuesday 510: 20 past, rounded 15,
///   under the minimum: 0. The holiday 09:00-13:00 is 180 (its break hour off), apart.
///   Thursday 600: 110 past, 105. Friday 480: the week's regular minutes (490, 490, 490, 480)
///   reach 1,950, 30 past 1,920: 30. Week 2, approval on: Monday 540 (45), Tuesday 570 (80,
///   75), Wednesday 525 (35, 30), all pending.
/// - NIGHT follows `night` (22:00-06:00, break 01:45-02:15, due 450, threshold 460): 450; then
///   21:50-06:20 is 480, 20 past, 0; the holiday's night 450 apart; 22:00-07:00 is 510, 50 past,
///   45; 450. The week's regular 1,820: no weekly overtime. Week 2: 450.
/// - PART follows `part` (09:00-13:00, due 240, threshold 250): 300 is 50 past, 45; 260 is 10,
///   0; 240, 240; Saturday 120, a rest day's minutes apart. Week 2: 240.
fn on_paper(emp: &str) -> [Paper; 10] {
    let z = (0, 0, 0, 0);
    match emp {
        "DAY" => [
            (524, 30, 0, 0),
            (510, 0, 0, 0),
            (180, 0, 180, 0),
            (600, 105, 0, 0),
            (480, 30, 0, 0),
            z,
            z,
            (540, 0, 0, 45),
            (570, 0, 0, 75),
            (525, 0, 0, 30),
        ],
        "NIGHT" => [
            (450, 0, 0, 0),
            (480, 0, 0, 0),
            (450, 0, 450, 0),
            (510, 45, 0, 0),
            (450, 0, 0, 0),
            z,
            z,
            (450, 0, 0, 0),
            z,
            z,
        ],
        "PART" => [
            (300, 45, 0, 0),
            (260, 0, 0, 0),
            z,
            (240, 0, 0, 0),
            (240, 0, 0, 0),
            (120, 0, 120, 0),
            z,
            (240, 0, 0, 0),
            z,
            z,
        ],
        _ => [z; 10],
    }
}

const WORKERS: [&str; 3] = ["DAY", "NIGHT", "PART"];

/// The company set up with its rulebook, punched, and the days `settled`.
fn company(settled: &[&str]) -> TestEnv {
    let env = TestEnv::migrated(TZ);
    env.import_roster("roster.csv", ROSTER);
    env.mysql()
        .exec_drop("UPDATE employees SET role = 'hr' WHERE id IN ('HRP', 'GONE')", ())
        .unwrap();
    env.work_rules(
        SHIFTS,
        "scope,target,from,shift\nemployee,DAY,2026-10-01,day\n\
         employee,NIGHT,2026-10-01,night\nemployee,PART,2026-10-01,part\n",
        "date,kind,note\n2026-11-11,holiday,Works holiday\n",
    );
    for (key, value) in RULES {
        env.policy(key, value, "2026-11-01");
    }
    env.policy("policy.overtime_needs_approval", "true", "2026-11-16");
    let body: String = PUNCHES
        .iter()
        .map(|(e, i, o)| format!("{e},in,{i}:00+01:00\n{e},out,{o}:00+01:00\n"))
        .collect();
    env.punch_file(&body);
    for day in settled {
        env.ok(&["settle", "--date", day, "-q"]);
    }
    env
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// Payroll's line of `emp` for `from..=to`.
fn payroll(env: &TestEnv, from: &str, to: &str, emp: &str) -> Value {
    let p = env.json(&["report", "payroll", "--from", from, "--to", to, "--json"]);
    p["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["employee_id"] == emp)
        .unwrap_or_else(|| panic!("{emp} in payroll: {p}"))
        .clone()
}

/// (worked, overtime, rest-day, pending) of a payroll line or a sum of paper days.
fn minutes(line: &Value) -> Paper {
    (
        num(&line["worked_minutes"]),
        num(&line["overtime_minutes"]),
        num(&line["rest_day_minutes"]),
        num(&line["overtime_pending_minutes"]),
    )
}

fn sum(days: &[Paper]) -> Paper {
    days.iter()
        .fold((0, 0, 0, 0), |a, d| (a.0 + d.0, a.1 + d.1, a.2 + d.2, a.3 + d.3))
}

/// The rulebook version ids of the overtime keys (`policy history`): the last of the 1st's,
/// and approval's.
fn versions(env: &TestEnv) -> (u64, u64) {
    let ids: Vec<u64> = env
        .mysql()
        .query("SELECT id FROM policy_versions WHERE policy_key LIKE 'policy.overtime%' ORDER BY id")
        .unwrap();
    (ids[ids.len() - 2], ids[ids.len() - 1])
}

#[test]
fn overtime_counts_by_the_rulebooks_thresholds_rounding_minimum_week_and_rest_days_as_on_paper() {
    let env = company(&DAYS);
    let month = env.json(&["report", "month", "--month", "2026-11", "--json"]);
    let (first, approval) = versions(&env);
    for emp in WORKERS {
        let paper = on_paper(emp);
        let line = payroll(&env, "2026-11-01", "2026-11-30", emp);
        assert_eq!(minutes(&line), sum(&paper), "{emp}: the month in payroll: {line}");
        assert_eq!(
            line["rulebook_version"],
            format!("{first},{approval}"),
            "{emp}: the versions payroll used"
        );
        // The month sheet counts the same week and rules.
        let sheet = month["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["employee_id"] == emp)
            .unwrap();
        let p = sum(&paper);
        assert_eq!(
            (num(&sheet["worked_minutes"]), num(&sheet["overtime_minutes"])),
            (p.0, p.1),
            "{emp} on the month sheet"
        );
        // Day by day: a payroll of one day is that day's paper, its week before it counted.
        for (i, day) in DAYS.iter().enumerate() {
            let one = payroll(&env, day, day, emp);
            assert_eq!(minutes(&one), paper[i], "{emp} on {day}");
        }
        // From the holiday on: the week's Monday and Tuesday count toward its threshold only.
        let from_wed = payroll(&env, "2026-11-11", "2026-11-15", emp);
        assert_eq!(minutes(&from_wed), sum(&paper[2..7]), "{emp} from Wednesday");
        assert_eq!(from_wed["rulebook_version"], first.to_string(), "{emp}");
    }
    // The rules' keys are shown by `policy show`, each with its value in force.
    let shown = env.ok(&["policy", "show", "--date", "2026-11-16"]);
    for (key, value) in RULES.iter().chain(&[("policy.overtime_needs_approval", "true")]) {
        let line = shown
            .lines()
            .find(|l| l.contains(key))
            .unwrap_or_else(|| panic!("{key}: {shown}"));
        assert!(line.contains(value), "{key} = {value}: {line}");
    }
}

/// `overtime approve|reject` run by the account mapped to `by`.
fn decide(env: &TestEnv, by: &str, verb: &str, emp: &str, day: &str) -> std::process::Output {
    env.act_as(by);
    env.run(&[
        "overtime",
        verb,
        "--employee",
        emp,
        "--date",
        day,
        "--reason",
        "asked for",
    ])
}

fn decisions(env: &TestEnv) -> Vec<String> {
    env.mysql()
        .query(
            "SELECT CONCAT_WS('|', employee_id, work_date, decision, by_employee, reason, os_user = '' , \
             db_user <> '') FROM overtime_decisions ORDER BY id",
        )
        .unwrap()
}

#[test]
fn overtime_that_needs_approval_is_pending_counts_once_approved_and_stays_nothing_once_rejected() {
    let env = company(&DAYS[7..]);
    let paper = on_paper("DAY");
    let line = payroll(&env, "2026-11-16", "2026-11-30", "DAY");
    assert_eq!(minutes(&line), sum(&paper[7..]), "all pending: {line}");
    assert_eq!(num(&line["overtime_pending_minutes"]), 45 + 75 + 30);

    let o = decide(&env, "BOSS", "approve", "DAY", DAYS[7]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = decide(&env, "HRP", "reject", "DAY", DAYS[8]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = payroll(&env, "2026-11-16", "2026-11-30", "DAY");
    assert_eq!(
        minutes(&line),
        (540 + 570 + 525, 45, 0, 30),
        "approved counts, rejected is nothing, the rest still pending: {line}"
    );
    let month = env.json(&["report", "month", "--month", "2026-11", "--json"]);
    let sheet = month["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["employee_id"] == "DAY")
        .unwrap();
    assert_eq!(
        num(&sheet["overtime_minutes"]),
        45,
        "the month sheet counts what payroll does"
    );
    assert_eq!(
        decisions(&env),
        [
            "DAY|2026-11-16|approved|BOSS|asked for|0|1",
            "DAY|2026-11-17|rejected|HRP|asked for|0|1",
        ],
        "each decision audited: who, as which accounts, why"
    );
    // A later decision stands: the rejected day approved after all.
    let o = decide(&env, "BOSS", "approve", "DAY", DAYS[8]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = payroll(&env, "2026-11-16", "2026-11-30", "DAY");
    assert_eq!(num(&line["overtime_minutes"]), 45 + 75);
    assert_eq!(decisions(&env).len(), 3);
}

#[test]
fn only_the_supervisor_or_hr_in_employment_decides_on_overtime_and_never_in_a_closed_period() {
    let env = company(&DAYS[7..]);
    let refused = |by: &str, emp: &str, day: &str, why: &str| {
        let before = (decisions(&env), env.attendance_rows());
        let o = decide(&env, by, "approve", emp, day);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(1), "{by} on {emp}'s {day}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "one line: {err}");
        assert!(err.contains(why), "{by} on {emp}'s {day}: {err}");
        assert_eq!((decisions(&env), env.attendance_rows()), before, "nothing written");
    };
    refused(
        "OTHER",
        "DAY",
        DAYS[7],
        "neither the supervisor of DAY's department nor HR",
    );
    refused("PART", "DAY", DAYS[7], "neither the supervisor");
    refused("DAY", "DAY", DAYS[7], "may not decide on their own overtime");
    refused("GONE", "DAY", DAYS[7], "left on 2026-11-20");
    refused(
        "BOSS",
        "DAY",
        "2026-11-13",
        "policy.overtime_needs_approval is off on 2026-11-13",
    );
    refused("BOSS", "DAY", "2026-11-19", "no settled row");

    // HR closes November: no decision changes it.
    env.act_as("HRP");
    env.ok(&["period", "close", "2026-11", "-q"]);
    refused("BOSS", "DAY", DAYS[7], "pay period 2026-11 is closed");
    let line = payroll(&env, "2026-11-16", "2026-11-30", "DAY");
    assert_eq!(num(&line["overtime_pending_minutes"]), 150, "{line}");
    assert_eq!(line["period_closed"], true);

    // Reopened, the supervisor decides for the whole department's day at once.
    env.act_as("HRP");
    env.ok(&["period", "reopen", "2026-11", "--reason", "overtime to approve", "-q"]);
    env.act_as("BOSS");
    env.ok(&["overtime", "approve", "--dept", "D1", "--date", DAYS[7]]);
    let d = decisions(&env);
    assert_eq!(d.len(), 3, "DAY, NIGHT and PART, not the supervisor's own: {d:?}");
    assert!(d.iter().all(|r| r.contains("|2026-11-16|approved|BOSS|")), "{d:?}");
    assert_eq!(
        num(&payroll(&env, "2026-11-16", "2026-11-30", "DAY")["overtime_minutes"]),
        45
    );
}
