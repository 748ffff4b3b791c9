//! Work patterns: named shifts assigned per department and per employee, a night
//! shift's punches on the date it started (across midnight and across a DST change), a shift
//! that changes mid-month, part-time days, and settle waiting for a date's last shift.
//! Fixed past dates: tests/common raises the back-dating bound for them.

use crate::common;

use common::TestEnv;
use serde_json::Value;

const TZ: &str = "Europe/Paris";

/// The shifts every test here imports.
const SHIFTS: &str = "name,start,end,late_grace,early_grace,work_days,break,part_time\n\
night,22:00,06:00,10,5,mon-sun,30,false\n\
early,06:00,14:00,0,0,mon-fri,30,false\n\
mornings,09:00,13:00,0,0,mon-fri,0,true\n";

fn set_up(env: &TestEnv, assignments: &str) {
    let shifts = env.file("shifts.csv", SHIFTS);
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
    let a = env.file("assign.csv", &format!("scope,target,from,shift\n{assignments}"));
    env.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
}

#[test]
fn a_night_shift_across_midnight_belongs_to_the_date_it_started() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let team = env.members("D001");
    set_up(&env, "department,D001,2026-11-01,night\n");
    let which = env.json(&["shifts", "which", &team[0], "--date", "2026-11-20", "--json"]);
    assert_eq!(which["shift"], "night", "{which}");
    assert_eq!(which["source"]["by"], "department");
    assert_eq!(which["starts_at"], "2026-11-20T22:00:00+01:00");
    assert_eq!(which["ends_at"], "2026-11-21T06:00:00+01:00");

    let i = env.checkin_json(&team[0], "2026-11-20T21:55:00+01:00", true);
    assert_eq!(
        (i["kind"].as_str(), i["late"].as_bool()),
        (Some("in"), Some(false)),
        "{i}"
    );
    // After midnight, without --kind: a check-out, of the 20th.
    let o = env.checkin_json(&team[0], "2026-11-21T06:02:00+01:00", true);
    assert_eq!(o["work_date"], "2026-11-20", "{o}");
    assert_eq!(
        (o["kind"].as_str(), o["early"].as_bool()),
        (Some("out"), Some(false)),
        "{o}"
    );
    // Late by the shift's own start (22:00, 10 minutes of grace), early by its end.
    let late = env.checkin_json(&team[1], "2026-11-20T22:25:00+01:00", true);
    assert_eq!(late["late_minutes"], 25, "{late}");
    let early = env.checkin_json(&team[1], "2026-11-21T05:00:00+01:00", true);
    assert_eq!(
        (early["work_date"].as_str(), early["early_minutes"].as_u64()),
        (Some("2026-11-20"), Some(60))
    );
    // A punch file follows the shift too: the check-out after midnight is the 20th's.
    let file = env.file(
        "night.csv",
        &format!(
            "employee_id,kind,at\n{0},in,2026-11-20T21:58:00+01:00\n{0},out,2026-11-21T06:01:00+01:00\n",
            team[3]
        ),
    );
    let o = env
        .cmd()
        .args(["checkin", "--file", file.to_str().unwrap(), "-q"])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // status, before settle, judges by the shift too: 25 minutes late, an hour early.
    let live = env.json(&["status", &team[1], "--date", "2026-11-20", "--json"]);
    assert_eq!(
        (live["late_minutes"].as_u64(), live["early_minutes"].as_u64()),
        (Some(25), Some(60)),
        "{live}"
    );
    // The board of the 20th holds both punches of the night: nothing on the 21st's.
    let board = env.board("D001", "2026-11-20");
    assert!(
        board[&team[0]].contains(',') && board[&team[1]].contains(','),
        "{board:?}"
    );
    assert!(env.board("D001", "2026-11-21").is_empty());

    env.ok(&["settle", "--date", "2026-11-20", "-q"]);
    assert_eq!(env.day_row("2026-11-20", &team[0]), "present|0|0");
    assert_eq!(env.day_row("2026-11-20", &team[1]), "late_and_early|25|60");
    assert_eq!(env.day_row("2026-11-20", &team[2]), "absent|0|0");
    assert_eq!(env.day_row("2026-11-20", &team[3]), "present|0|0");
    // A Saturday is a work day of this shift (mon-sun), not of the policy's week.
    env.ok(&["settle", "--date", "2026-11-21", "-q"]);
    assert_eq!(env.day_row("2026-11-21", &team[2]), "absent|0|0");
}

#[test]
fn a_night_shift_across_the_clocks_going_back_is_nine_hours() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let team = env.members("D001");
    set_up(&env, "department,D001,2026-10-01,night\n");
    let which = env.json(&["shifts", "which", &team[0], "--date", "2026-10-24", "--json"]);
    assert_eq!(which["ends_at"], "2026-10-25T06:00:00+01:00", "{which}");
    env.checkin_json(&team[0], "2026-10-24T22:00:00+02:00", true);
    // 02:30 happens twice; 05:30 CET is 8.5 h after 22:00 CEST, still half an hour early.
    let o = env.checkin_json(&team[0], "2026-10-25T05:30:00+01:00", true);
    assert_eq!(o["work_date"], "2026-10-24", "{o}");
    assert_eq!(o["early_minutes"], 30, "{o}");
    env.ok(&["settle", "--date", "2026-10-24", "-q"]);
    assert_eq!(env.day_row("2026-10-24", &team[0]), "early_leave|0|30");
}

#[test]
fn a_night_shift_across_the_clocks_going_forward_is_seven_hours() {
    // Spring 2026 (past: `--at` takes no instant past policy.max_future_skew_secs, at most an
    // hour): 22:00 CET on the 28th to 06:00 CEST on the 29th is 7 hours, 02:00-03:00 skipped.
    let env = TestEnv::with_roster(TZ, 4, 1);
    let team = env.members("D001");
    set_up(&env, "department,D001,2026-03-01,night\n");
    let which = env.json(&["shifts", "which", &team[0], "--date", "2026-03-28", "--json"]);
    assert_eq!(
        (which["starts_at"].as_str(), which["ends_at"].as_str()),
        (Some("2026-03-28T22:00:00+01:00"), Some("2026-03-29T06:00:00+02:00")),
        "{which}"
    );
    let i = env.checkin_json(&team[0], "2026-03-28T21:58:00+01:00", true);
    assert_eq!(
        (i["kind"].as_str(), i["work_date"].as_str(), i["late"].as_bool()),
        (Some("in"), Some("2026-03-28"), Some(false)),
        "{i}"
    );
    // 05:30 CEST is 6.5 hours after 22:00 CET: half an hour early, on the 28th.
    let o = env.checkin_json(&team[0], "2026-03-29T05:30:00+02:00", true);
    assert_eq!(
        (o["kind"].as_str(), o["work_date"].as_str(), o["early_minutes"].as_u64()),
        (Some("out"), Some("2026-03-28"), Some(30)),
        "{o}"
    );
    // 25 minutes late by the shift's start; out at its end, 7 hours later: not early.
    let late = env.checkin_json(&team[1], "2026-03-28T22:25:00+01:00", true);
    assert_eq!(late["late_minutes"], 25, "{late}");
    let out = env.checkin_json(&team[1], "2026-03-29T06:00:00+02:00", true);
    assert_eq!(
        (out["work_date"].as_str(), out["early"].as_bool()),
        (Some("2026-03-28"), Some(false)),
        "{out}"
    );
    assert!(
        env.board("D001", "2026-03-29").is_empty(),
        "nothing on the 29th's board"
    );
    env.ok(&["settle", "--date", "2026-03-28", "-q"]);
    assert_eq!(env.day_row("2026-03-28", &team[0]), "early_leave|0|30");
    assert_eq!(env.day_row("2026-03-28", &team[1]), "late|25|0");
    assert_eq!(env.day_row("2026-03-28", &team[2]), "absent|0|0");
}

#[test]
fn an_employee_whose_shift_changes_mid_month_is_judged_by_each_days_shift() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, _) = env.member_and_supervisor();
    set_up(&env, &format!("employee,{emp},2026-11-16,early\n"));
    let before = env.json(&["shifts", "which", &emp, "--date", "2026-11-13", "--json"]);
    assert_eq!(
        (before["shift"].as_str(), before["source"]["by"].as_str()),
        (Some("default"), Some("default"))
    );
    let after = env.json(&["shifts", "which", &emp, "--date", "2026-11-16", "--json"]);
    assert_eq!(
        (after["shift"].as_str(), after["source"]["from"].as_str()),
        (Some("early"), Some("2026-11-16"))
    );
    // Friday 13th on the policy (09:00-18:00); Monday 16th and Tuesday 17th on 06:00-14:00.
    for (at_in, at_out) in [
        ("2026-11-13T08:50:00+01:00", "2026-11-13T18:05:00+01:00"),
        ("2026-11-16T08:50:00+01:00", "2026-11-16T18:05:00+01:00"),
        ("2026-11-17T05:55:00+01:00", "2026-11-17T14:01:00+01:00"),
    ] {
        env.checkin_json(&emp, at_in, true);
        env.checkin_json(&emp, at_out, true);
    }
    for day in ["2026-11-13", "2026-11-16", "2026-11-17"] {
        env.ok(&["settle", "--date", day, "-q"]);
    }
    assert_eq!(env.day_row("2026-11-13", &emp), "present|0|0");
    assert_eq!(env.day_row("2026-11-16", &emp), "late|170|0");
    assert_eq!(env.day_row("2026-11-17", &emp), "present|0|0");
}

#[test]
fn a_part_time_day_worked_is_part_time_on_the_month_sheet() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, _) = env.member_and_supervisor();
    set_up(&env, &format!("employee,{emp},2026-11-01,mornings\n"));
    env.checkin_json(&emp, "2026-11-18T08:58:00+01:00", true);
    let out = env.checkin_json(&emp, "2026-11-18T13:00:00+01:00", true);
    assert_eq!(
        (out["kind"].as_str(), out["early"].as_bool()),
        (Some("out"), Some(false)),
        "{out}"
    );
    env.ok(&["settle", "--date", "2026-11-18", "-q"]);
    assert_eq!(env.day_row("2026-11-18", &emp), "part_time|0|0");
    let sheet = env.ok(&["report", "month", "--month", "2026-11", "--format", "csv"]);
    let line = sheet.lines().find(|l| l.contains(emp.as_str())).unwrap();
    assert!(line.split(',').any(|c| c == "PT"), "{line}");
}

#[test]
fn bad_files_are_refused_whole_with_their_line_numbers_and_change_nothing() {
    let env = TestEnv::with_roster(TZ, 4, 1);
    let bad = env.file(
        "bad.csv",
        "name,start,end\nok,08:00,12:00\nnope,25:00,12:00\nok,09:00,13:00\n",
    );
    let e = env.fails(&["shifts", "import", bad.to_str().unwrap()], 2);
    assert!(
        e.contains("line 3: start must be HH:MM") && e.contains("line 4: ok already given on line 2"),
        "{e}"
    );
    assert_eq!(env.count("shifts"), 0);
    let shifts = env.file("shifts.csv", SHIFTS);
    let dry = env.json(&["shifts", "import", shifts.to_str().unwrap(), "--dry-run", "--json"]);
    assert_eq!((dry["new"].as_u64(), dry["dry_run"].as_bool()), (Some(3), Some(true)));
    assert_eq!(env.count("shifts"), 0, "a dry run writes nothing");
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
    let again = env.json(&["shifts", "import", shifts.to_str().unwrap(), "--json"]);
    assert_eq!(again["unchanged"], 3);
    let a = env.file("a.csv", "scope,target,from,shift\ndepartment,D001,2026-11-01,late\n");
    let e = env.fails(&["shifts", "assign", a.to_str().unwrap()], 2);
    assert!(e.contains("line 2: no shift named 'late'"), "{e}");
    let a = env.file("a.csv", "scope,target,from,shift\ndepartment,D999,2026-11-01,night\n");
    let e = env.fails(&["shifts", "assign", a.to_str().unwrap()], 1);
    assert!(e.contains("unknown department 'D999'"), "{e}");
    assert_eq!(env.count("shift_assignments"), 0);
    // No assignment yet: the Redis copy holds the shifts, nobody follows them.
    let e = env.fails(&["shifts", "which", "E999999", "--json"], 1);
    assert!(e.contains("unknown employee"), "{e}");
}

/// A zone where it is now between 12:00 and 13:00, so that yesterday's shift of 13:00 to 12:59
/// the next day has not ended yet, whatever time the test runs; one employee on that shift
/// since the day before yesterday. Returns the environment, the employee, yesterday and the
/// day before.
fn yesterdays_shift_still_on() -> (TestEnv, String, String, String) {
    let hour = chrono::Utc::now().format("%H").to_string().parse::<i32>().unwrap();
    let offset = 12 - hour;
    let tz = match offset {
        0 => "Etc/GMT".to_string(),
        o if o > 0 => format!("Etc/GMT-{o}"),
        o => format!("Etc/GMT+{}", -o),
    };
    let env = TestEnv::with_roster(&tz, 4, 1);
    let (emp, _) = env.member_and_supervisor();
    let long = env.file("long.csv", "name,start,end,work_days\nlong,13:00,12:59,mon-sun\n");
    env.ok(&["shifts", "import", long.to_str().unwrap(), "-q"]);
    let today = env.today();
    let yesterday = (today - chrono::Duration::days(1)).to_string();
    let before = (today - chrono::Duration::days(2)).to_string();
    let a = env.file(
        "a.csv",
        &format!("scope,target,from,shift\nemployee,{emp},{before},long\n"),
    );
    env.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
    (env, emp, yesterday, before)
}

#[test]
fn settle_of_a_date_waits_until_its_last_shift_has_ended() {
    let (env, _, yesterday, before) = yesterdays_shift_still_on();
    let e = env.fails(&["settle", "--date", &yesterday], 1);
    assert!(
        e.contains("last shift ends at") && e.contains("settle it after that"),
        "{e}"
    );
    assert_eq!(env.count("attendance"), 0, "nothing written");
    // The day before has ended: it settles.
    env.ok(&["settle", "--date", &before, "-q"]);
    assert!(env.count("attendance") > 0);
}

/// Regression: the nightly settle (no --date) whose only day still waited for a night shift
/// exited 1 with an `error:` line; docs/shifts.md says it leaves the day for the next run.
#[test]
fn nightly_settle_leaves_a_day_whose_last_shift_is_still_on_for_the_next_run() {
    let (env, emp, yesterday, _) = yesterdays_shift_still_on();
    // A colleague on the policy's hours came in yesterday morning: yesterday's board has a punch.
    let (_, sup) = env.member_and_supervisor();
    assert_ne!(emp, sup);
    env.punch(&sup, "in", &format!("{yesterday}T08:50:00"), false);
    let board = env.board("D001", &yesterday);
    assert!(board.get(&sup).is_some_and(|v| !v.is_empty()), "{board:?}");

    let o = env.run(&["settle"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("error:"), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("left for the next run")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].starts_with(&format!("{yesterday} left for the next run: its last shift ends at ")),
        "{err}"
    );
    assert!(!err.contains("settled "), "nothing settled: {err}");
    // Nothing written, nothing taken from Redis: the next run settles the day whole.
    assert_eq!(env.count("attendance"), 0);
    assert_eq!(env.count("settle_runs"), 0);
    assert_eq!(env.board("D001", &yesterday), board);

    let s = env.json(&["settle", "--json"]);
    assert_eq!(s["settled_days"], serde_json::json!([]), "{s}");
    assert_eq!(s["waiting"][0]["work_date"], yesterday.as_str(), "{s}");
    assert!(
        s["waiting"][0]["last_shift_ends"]
            .as_str()
            .unwrap()
            .starts_with(&env.today().to_string()),
        "{s}"
    );
    assert!(s.get("run_id").is_none(), "no run: {s}");
    // `settle --date` of that day is still refused, as documented.
    let e = env.fails(&["settle", "--date", &yesterday], 1);
    assert!(e.contains("settle it after that"), "{e}");
    assert_eq!(env.count("attendance"), 0);
}

#[test]
fn an_absence_alert_goes_out_per_department_and_shift_at_the_shifts_own_start() {
    use common::relay::Relay;
    let (zone, offset) = common::midday_zone();
    let env = TestEnv::migrated(&zone);
    let local = chrono::Utc::now() + chrono::Duration::hours(offset);
    let start = (local - chrono::Duration::minutes(2)).format("%H:%M").to_string();
    let end = (local + chrono::Duration::hours(3)).format("%H:%M").to_string();
    // The policy's own start is late in the evening: its alert is not due yet.
    env.policy("policy.checkout_from", "23:55", "2000-01-01");
    env.policy("policy.checkin_deadline", "23:50", "2000-01-01");
    env.policy("policy.work_days", "mon,tue,wed,thu,fri,sat,sun", "2000-01-01");
    let roster = env.file(
        "roster.csv",
        "employee_id,name,department_id,department_name,role\n\
         E1,Ann,D1,Sales,supervisor\nE2,Bob,D1,Sales,employee\nE3,Cy,D1,Sales,employee\n\
         E4,Di,D2,Legal,supervisor\n",
    );
    env.ok(&["org", "import", roster.to_str().unwrap(), "-q"]);
    let shifts = env.file(
        "s.csv",
        &format!("name,start,end,work_days\nnow,{start},{end},mon-sun\n"),
    );
    env.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
    let today = local.date_naive().to_string();
    let a = env.file(
        "a.csv",
        &format!("scope,target,from,shift\nemployee,E1,{today},now\nemployee,E2,{today},now\n"),
    );
    env.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
    env.ok(&["init-day", "-q"]);
    env.ok(&["checkin", "E1", "--kind", "in", "-q"]);
    env.ok(&["queues", "declare", "-q"]);
    env.ok(&["watch-dept", "D1", "--once", "-q"]);
    env.policy("policy.absence_alerts", "true", "2000-01-01");
    let relay = Relay::start_with(&env, &[]);
    let mark = format!("{}:alert:{{D1}}:{today}:now", env.ns);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let sent = || {
        redis::cmd("GET")
            .arg(&mark)
            .query::<Option<String>>(&mut env.redis())
            .unwrap()
            .as_deref()
            == Some("sent")
    };
    while !sent() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut r = relay;
    r.signal(libc::SIGTERM);
    let mut said = String::new();
    std::io::Read::read_to_string(&mut r.0.stderr.take().unwrap(), &mut said).unwrap();
    r.0.wait().unwrap();
    assert!(sent(), "the shift's alert was not sent within 15 s: {said}");
    let shown = env.ok(&["watch-dept", "D1", "--once", "--json", "-q"]);
    let alerts: Vec<Value> = shown.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        alerts.len(),
        1,
        "one alert, the shift's; the policy's is not due: {shown}"
    );
    assert_eq!(alerts[0]["event_id"], format!("absence:D1:{today}:now").as_str());
    assert_eq!(
        alerts[0]["missing"][0]["employee_id"], "E2",
        "E1 came, E3 is on the policy"
    );
    assert_eq!(alerts[0]["expected"], 2);
    // D2 (on the policy alone) had nothing due.
    let d2: Option<String> = redis::cmd("GET")
        .arg(format!("{}:alert:{{D2}}:{today}:default", env.ns))
        .query(&mut env.redis())
        .unwrap();
    assert_eq!(d2, None);
}

#[test]
fn half_day_leave_is_judged_on_the_other_half_only() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let team = env.members("D001");
    let day = "2026-11-19";
    // Morning off: due at 13:30 (the middle of 09:00-18:00), not at 09:00.
    env.ok(&["leave", "add", &team[0], day, day, "--half", "morning", "-q"]);
    env.checkin_json(&team[0], "2026-11-19T13:20:00+01:00", true);
    env.checkin_json(&team[0], "2026-11-19T18:01:00+01:00", true);
    // Afternoon off: done at 13:30, in at 09:00.
    let added = env.json(&["leave", "add", &team[1], day, day, "--half", "afternoon", "--json"]);
    assert_eq!(added["half"], "afternoon", "{added}");
    env.checkin_json(&team[1], "2026-11-19T08:55:00+01:00", true);
    env.checkin_json(&team[1], "2026-11-19T13:31:00+01:00", true);
    // Morning off, but in only at 14:00: late for the afternoon, by 30 minutes. (Labelled: an
    // unlabelled punch is read by the shift's split, which knows no leave; docs/shifts.md.)
    env.ok(&["leave", "add", &team[2], day, day, "--half", "morning", "-q"]);
    env.punch(&team[2], "in", "2026-11-19T14:00:00", true);
    env.checkin_json(&team[2], "2026-11-19T18:00:00+01:00", true);
    // Half a day off and never came: absent (for the half that was due).
    env.ok(&["leave", "add", &team[3], day, day, "--half", "afternoon", "-q"]);
    env.ok(&["settle", "--date", day, "-q"]);
    assert_eq!(env.day_row(day, &team[0]), "half_day_leave|0|0");
    assert_eq!(env.day_row(day, &team[1]), "half_day_leave|0|0");
    assert_eq!(env.day_row(day, &team[2]), "late|30|0");
    assert_eq!(env.day_row(day, &team[3]), "absent|0|0");
    let sheet = env.ok(&["report", "month", "--month", "2026-11", "--format", "csv"]);
    let line = sheet.lines().find(|l| l.contains(team[0].as_str())).unwrap();
    assert!(line.split(',').any(|c| c == "HV"), "{line}");
}
