//! `attendance status`: an employee's own state for a day: from the board, or from MySQL once
//! the day is settled.

use anyhow::Result;
use serde::Serialize;

use super::Ctx;
use crate::board;
use crate::cli::StatusArgs;
use crate::db;
use crate::keys::Keys;
use crate::policy;
use crate::services;

#[derive(Debug, Serialize)]
struct Status {
    employee_id: String,
    employee_name: String,
    department_id: String,
    date: String,
    /// not_in, in or out
    state: &'static str,
    first_in: Option<String>,
    last_out: Option<String>,
    late: bool,
    late_minutes: u32,
    early: bool,
    early_minutes: u32,
}

/// A settled day, as MySQL holds it.
#[derive(Debug, Serialize)]
struct Settled {
    employee_id: String,
    department_id: String,
    date: String,
    settled: bool,
    status: policy::DayStatus,
    first_in: Option<String>,
    last_out: Option<String>,
    late_minutes: u32,
    early_minutes: u32,
    corrected: bool,
}

/// A day before today answers from MySQL once settled; `false` if it is not settled yet.
fn settled(ctx: &Ctx, args: &StatusArgs, date: chrono::NaiveDate) -> Result<bool> {
    let pool = services::mysql(&ctx.cfg)?;
    let Some(r) = db::attendance::row(&mut pool.get_conn()?, date, &args.employee_id)? else {
        return Ok(false);
    };
    let tz = ctx.cfg.timezone;
    let local = |t: Option<chrono::NaiveDateTime>| t.map(|t| t.and_utc().with_timezone(&tz));
    let hhmm = |t: Option<chrono::NaiveDateTime>| local(t).map_or("-".into(), |t| t.format("%H:%M").to_string());
    let s = Settled {
        employee_id: r.employee_id,
        department_id: r.department_id,
        date: date.to_string(),
        settled: true,
        status: r.status,
        first_in: local(r.first_in).map(|t| t.to_rfc3339()),
        last_out: local(r.last_out).map(|t| t.to_rfc3339()),
        late_minutes: r.late_minutes,
        early_minutes: r.early_minutes,
        corrected: r.corrected,
    };
    if args.output.json {
        crate::outln!("{}", serde_json::to_string(&s)?)?;
    } else {
        crate::outln!(
            "{} ({}) on {}: {} (in {}, out {}, late {} min, early {} min){}",
            s.employee_id,
            s.department_id,
            s.date,
            s.status,
            hhmm(r.first_in),
            hhmm(r.last_out),
            s.late_minutes,
            s.early_minutes,
            if s.corrected { ", corrected" } else { "" }
        )?;
    }
    Ok(true)
}

pub fn run(ctx: &Ctx, args: StatusArgs) -> Result<()> {
    crate::roster::check_id("employee id", &args.employee_id)?;
    let date = ctx.date_or_today(args.date);
    if date < ctx.today() && settled(ctx, &args, date)? {
        return Ok(());
    }
    let keys = Keys::new(&ctx.cfg.namespace);
    let mut con = services::redis(&ctx.cfg)?;
    let e = super::resolve_employee(ctx, &mut con, &keys, &args.employee_id)?;
    let rec = board::day_record(&mut con, &keys, &e.department_id, date, &e.id)?.unwrap_or_default();
    let (tz, p) = (ctx.cfg.timezone, &ctx.cfg.policy);
    let late = rec.first_in().map_or(0, |s| policy::late_minutes(p, tz, date, s));
    let early = rec.last_out().map_or(0, |s| policy::early_minutes(p, tz, date, s));
    let hhmm = |s: i64| policy::instant(tz, date, s).format("%H:%M").to_string();
    let s = Status {
        state: match (rec.first_in(), rec.last_out()) {
            (_, Some(_)) => "out",
            (Some(_), None) => "in",
            (None, None) => "not_in",
        },
        first_in: rec.first_in().map(|s| policy::instant(tz, date, s).to_rfc3339()),
        last_out: rec.last_out().map(|s| policy::instant(tz, date, s).to_rfc3339()),
        late: late > 0,
        late_minutes: late,
        early: early > 0,
        early_minutes: early,
        employee_id: e.id,
        employee_name: e.name,
        department_id: e.department_id,
        date: date.to_string(),
    };
    if args.output.json {
        crate::outln!("{}", serde_json::to_string(&s)?)?;
        return Ok(());
    }
    let inn = rec.first_in().map(|t| {
        let how = if late > 0 {
            format!("late by {late} min")
        } else {
            "on time".into()
        };
        format!("in at {} ({how})", hhmm(t))
    });
    let out = rec.last_out().map(|t| {
        let how = if early > 0 {
            format!("early by {early} min")
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
    crate::outln!(
        "{} {} ({}) on {}: {state}",
        s.employee_id,
        s.employee_name,
        s.department_id,
        s.date
    )?;
    Ok(())
}
