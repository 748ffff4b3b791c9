//! What work patterns cost (docs/shifts.md): init-day, the bulk check-ins of a morning and an
//! evening, settle and single check-ins of the same company, first with no shift (everyone on
//! the policy), then with `--shifts N` day shifts assigned round-robin to the departments, each
//! on a fresh work day, in the same run.

use std::time::Duration;

use anyhow::Result;

use super::{percentiles, steps, time_one, Bench};

/// One day's figures: init-day, morning and evening bulk check-ins, settle (seconds), and the
/// single check-in processes' median and p99 (ms).
struct Day {
    init: f64,
    morning: f64,
    evening: f64,
    settle: f64,
    single: (f64, f64),
}

fn one_day(b: &mut Bench, day: &str, runs: usize, ids: &[String], offset: usize) -> Result<Day> {
    let secs = |d: Duration| d.as_secs_f64();
    b.quiet("shifts: init-day");
    let init = secs(b.run(&steps::init_day(day))?);
    let morning_file = b.dir.join(format!("shifts-{day}-morning.csv"));
    let evening_file = b.dir.join(format!("shifts-{day}-evening.csv"));
    let (m, e) = (
        morning_file.to_str().expect("utf-8 path"),
        evening_file.to_str().expect("utf-8 path"),
    );
    b.run(&steps::simulate(day, "morning", m))?;
    b.run(&steps::simulate(day, "evening", e))?;
    b.quiet("shifts: the morning");
    let morning = secs(b.run(&["checkin", "--file", m])?);
    b.quiet("shifts: the evening");
    let evening = secs(b.run(&["checkin", "--file", e])?);
    b.quiet("shifts: settle");
    let settle = secs(b.run(&["settle", "--date", day])?);
    let mut single = Vec::with_capacity(runs);
    for i in 0..runs {
        let mut c = b.cmd();
        c.args(["checkin", &ids[((i + offset) * 7919) % ids.len()], "-q"])
            .stdout(std::process::Stdio::null());
        single.push(time_one(c)?);
    }
    std::fs::remove_file(&morning_file)?;
    std::fs::remove_file(&evening_file)?;
    Ok(Day {
        init,
        morning,
        evening,
        settle,
        single: percentiles(&mut single),
    })
}

/// The shifts file: `n` day shifts, 07:00-16:00, 07:30-16:30, ... (grace 5, a 30-minute break).
fn shifts_csv(n: u32) -> String {
    let mut s = String::from("name,start,end,late_grace,early_grace,work_days,break\n");
    for i in 0..n {
        let start = 7 * 60 + 30 * (i % 8);
        let end = start + 9 * 60;
        s.push_str(&format!(
            "s{i},{:02}:{:02},{:02}:{:02},5,5,mon-fri,30\n",
            start / 60,
            start % 60,
            end / 60,
            end % 60
        ));
    }
    s
}

pub(super) fn shift_steps(b: &mut Bench, shifts: u32, runs: usize) -> Result<()> {
    let roster = attendance::parse_roster(std::fs::File::open(b.dir.join("roster.csv"))?)?;
    let ids: Vec<String> = roster.iter().map(|r| r.employee_id.clone()).collect();
    let mut depts: Vec<&str> = roster.iter().map(|r| r.department_id.as_str()).collect();
    depts.sort_unstable();
    depts.dedup();
    // Two fresh work days, the earlier first.
    let mut days = super::signing_steps::fresh_days(2);
    days.reverse();
    let plain = one_day(b, &days[0], runs, &ids, 0)?;

    let file = b.dir.join("shifts.csv");
    std::fs::write(&file, shifts_csv(shifts))?;
    b.run(&["shifts", "import", file.to_str().expect("utf-8 path")])?;
    let mut assign = String::from("scope,target,from,shift\n");
    for (i, d) in depts.iter().enumerate() {
        assign.push_str(&format!("department,{d},{},s{}\n", days[0], i as u32 % shifts));
    }
    let afile = b.dir.join("assign.csv");
    std::fs::write(&afile, assign)?;
    b.run(&["shifts", "assign", afile.to_str().expect("utf-8 path")])?;
    let with = one_day(b, &days[1], runs, &ids, runs)?;
    std::fs::remove_file(&file)?;
    std::fs::remove_file(&afile)?;

    let row = |b: &mut Bench, step: &str, w: f64, p: f64, unit: &str| {
        b.report(
            &format!("{step}, with {shifts} shifts / without"),
            format!("{w:.3} / {p:.3} {unit} = {:.3}x", w / p),
            "the same step without shifts, same run, the day before".into(),
            "<= 1.10x",
        );
    };
    row(b, "init-day", with.init, plain.init, "s");
    row(b, "bulk check-in, a morning", with.morning, plain.morning, "s");
    row(b, "bulk check-in, an evening", with.evening, plain.evening, "s");
    row(b, "settle", with.settle, plain.settle, "s");
    row(b, "single checkin process, median", with.single.0, plain.single.0, "ms");
    b.report(
        "single checkin process p99, with shifts / without",
        format!("{:.2} / {:.2} ms", with.single.1, plain.single.1),
        format!("{runs} runs each"),
        "-",
    );
    Ok(())
}
