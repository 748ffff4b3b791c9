//! `attendance status`: an employee's own state for a day: from the board, or from MySQL once
//! the day is settled.

use anyhow::Result;

use chrono_tz::Tz;

use crate::cli::Ctx;
use crate::cli::StatusArgs;
use crate::domain::dates::minutes_text;
use crate::ops::checkin::status::{self, Answer, Live, Settled, State};

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
        Answer::Live(s) => live_line(ctx.cfg.timezone, s),
        Answer::Settled(s) => settled_line(ctx.cfg.timezone, s),
    };
    textln!("{line}")?;
    Ok(())
}

/// `E000123 Ann Smith (D042) on 2026-11-30: in at 08:55 (on time), out at 18:02 (not early)`.
fn live_line(tz: Tz, s: &Live) -> String {
    let inn = s.first_in.as_deref().map(|t| {
        let how = if s.late {
            format!("late by {}", minutes_text(s.late_minutes))
        } else {
            "on time".into()
        };
        format!("in at {} ({how})", hhmm(tz, t))
    });
    let out = s.last_out.as_deref().map(|t| {
        let how = if s.early {
            format!("early by {}", minutes_text(s.early_minutes))
        } else {
            "not early".into()
        };
        format!("out at {} ({how})", hhmm(tz, t))
    });
    let state = match (inn, out) {
        (None, None) if s.state == State::RestDay => {
            format!("rest day by their shift ({}: {})", s.shift, s.shift_days)
        }
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

/// `E000123 Ann Smith (D042) on 2026-11-27: late (in 09:12, out 18:05, late 12 min, early 0 min)`.
fn settled_line(tz: Tz, s: &Settled) -> String {
    let or_dash = |t: &Option<String>| t.as_deref().map_or("-".to_string(), |t| hhmm(tz, t));
    let waiting: Vec<String> = s
        .waiting_punches
        .iter()
        .map(|w| format!("{} at {}", w.kind.as_str(), hhmm(tz, &w.at)))
        .collect();
    let waiting = if waiting.is_empty() {
        String::new()
    } else {
        format!("; not yet settled: {} (the next settle adds them)", waiting.join(", "))
    };
    let name = if s.employee_name.is_empty() {
        String::new()
    } else {
        format!(" {}", s.employee_name)
    };
    format!(
        "{}{name} ({}) on {}: {} (in {}, out {}, late {}, early {}){}{waiting}",
        s.employee_id,
        s.department_id,
        s.date,
        s.status,
        or_dash(&s.first_in),
        or_dash(&s.last_out),
        minutes_text(s.late_minutes),
        minutes_text(s.early_minutes),
        if s.corrected { ", corrected" } else { "" }
    )
}

/// An RFC 3339 instant of the answer as its wall-clock `HH:MM`, with the offset where the day
/// has that time twice (see `domain::dates::wall_clock`).
fn hhmm(tz: Tz, t: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|t| crate::domain::dates::wall_clock(t.with_timezone(&tz), "%H:%M"))
        .unwrap_or_else(|_| t.to_string())
}
