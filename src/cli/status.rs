//! `attendance status`: an employee's own state for a day: from the board, or from MySQL once
//! the day is settled.

use anyhow::Result;

use super::Ctx;
use crate::cli::StatusArgs;
use crate::ops::status::{self, Answer, Live, Settled};

pub(crate) fn run(ctx: &Ctx, args: StatusArgs) -> Result<()> {
    let date = ctx.date_or_today(args.date);
    let answer = status::status(&ctx.cfg, &args.employee_id, date, ctx.today())?;
    if let Answer::Settled(Settled { note: Some(note), .. }) = &answer {
        ctx.say(format!("note: could not look for punches not yet settled: {note}"));
    }
    if args.output.json {
        return crate::output::json(&answer);
    }
    let line = match &answer {
        Answer::Live(s) => live_line(s),
        Answer::Settled(s) => settled_line(s),
    };
    textln!("{line}")?;
    Ok(())
}

/// `E000123 Ann Smith (D042) on 2026-11-30: in at 08:55 (on time), out at 18:02 (not early)`.
fn live_line(s: &Live) -> String {
    let hhmm = |t: &str| t[11..16].to_string();
    let inn = s.first_in.as_deref().map(|t| {
        let how = if s.late {
            format!("late by {} min", s.late_minutes)
        } else {
            "on time".into()
        };
        format!("in at {} ({how})", hhmm(t))
    });
    let out = s.last_out.as_deref().map(|t| {
        let how = if s.early {
            format!("early by {} min", s.early_minutes)
        } else {
            "not early".into()
        };
        format!("out at {} ({how})", hhmm(t))
    });
    let state = match (inn, out) {
        (None, None) => "not yet in".to_string(),
        (Some(i), None) => i,
        (None, Some(o)) => format!("{o}, no check-in recorded"),
        (Some(i), Some(o)) => format!("{i}, {o}"),
    };
    format!(
        "{} {} ({}) on {}: {state}",
        s.employee_id, s.employee_name, s.department_id, s.date
    )
}

/// `E000123 (D042) on 2026-11-27: late (in 09:12, out 18:05, late 12 min, early 0 min)`.
fn settled_line(s: &Settled) -> String {
    let hhmm = |t: &Option<String>| t.as_deref().map_or("-".to_string(), |t| t[11..16].to_string());
    let waiting: Vec<String> = s
        .waiting_punches
        .iter()
        .map(|w| format!("{} at {}", w.kind.as_str(), &w.at[11..16]))
        .collect();
    let waiting = if waiting.is_empty() {
        String::new()
    } else {
        format!("; not yet settled: {} (the next settle adds them)", waiting.join(", "))
    };
    format!(
        "{} ({}) on {}: {} (in {}, out {}, late {} min, early {} min){}{waiting}",
        s.employee_id,
        s.department_id,
        s.date,
        s.status,
        hhmm(&s.first_in),
        hhmm(&s.last_out),
        s.late_minutes,
        s.early_minutes,
        if s.corrected { ", corrected" } else { "" }
    )
}
