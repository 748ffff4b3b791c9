//! `attendance review`: the punches held for review (back-dated past the replay window by a
//! key that may not replay offline punches), approved or rejected by the employee's supervisor
//! or HR, acting as the employee the roster maps to the operating-system account running it.

use anyhow::Result;
use chrono::NaiveDate;

use crate::cli::Ctx;
use crate::cli::{ReviewCommand, ReviewDecision};
use crate::domain::people::roster;
use crate::error::Error;
use crate::ops::checkin::review::{self, Filter, Request};

pub(crate) fn run(ctx: &Ctx, c: ReviewCommand) -> Result<()> {
    match c {
        ReviewCommand::List {
            date,
            dept,
            key,
            all,
            output,
        } => {
            let filter = filter(date, dept.as_deref(), key.as_deref())?;
            let held = review::list(&ctx.cfg, filter, all)?;
            if output.json {
                return crate::output::json(&held);
            }
            let tz = ctx.cfg.timezone;
            let time = |t, f| crate::domain::dates::wall_clock_utc(tz, t, f);
            for h in &held {
                let decided = match (&h.decided_by, h.decided_at) {
                    (Some(by), Some(at)) => format!(
                        " by {by} at {}{}",
                        time(at, "%Y-%m-%d %H:%M"),
                        h.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
                    ),
                    _ => String::new(),
                };
                textln!(
                    "{}  {}  {}  {}  {} {}  recorded {} from {} (key {})  {}{decided}",
                    h.id,
                    h.work_date,
                    h.department_id,
                    h.employee_id,
                    h.kind,
                    time(h.at, "%H:%M:%S"),
                    time(h.recorded_at, "%Y-%m-%d %H:%M:%S"),
                    h.source,
                    h.key_id.as_deref().unwrap_or("none"),
                    h.status.as_str()
                )?;
            }
            ctx.say(format!("{} held punch(es)", held.len()));
            Ok(())
        }
        ReviewCommand::Approve(d) => decide(ctx, d, true),
        ReviewCommand::Reject(d) => decide(ctx, d, false),
    }
}

/// The filters of `list` and of a bulk decision, checked.
pub(super) fn filter<'a>(date: Option<NaiveDate>, dept: Option<&'a str>, key: Option<&'a str>) -> Result<Filter<'a>> {
    if let Some(d) = dept {
        roster::check_id("department id", d)?;
    }
    if let Some(k) = key {
        crate::domain::event::signer::check_key_id(k).map_err(Error::input)?;
    }
    Ok(Filter { date, dept, key })
}

fn decide(ctx: &Ctx, d: ReviewDecision, approve: bool) -> Result<()> {
    let Some(id) = d.id else {
        return super::review_bulk::decide_all(ctx, d, approve);
    };
    if id == 0 {
        return Err(Error::input("a review id is a number from 1 (see `attendance review list`)").into());
    }
    let os_user = crate::ops::lookup::os_user();
    let o = review::decide(
        &ctx.cfg,
        &Request {
            id,
            approve,
            reason: d.reason.as_deref(),
            os_user: &os_user,
        },
    )?;
    if let Some(why) = o.applied.as_ref().and_then(|c| c.pending_because.as_ref()) {
        ctx.say(format!("notification pending ({why}); `attendance relay` will send it"));
    }
    if o.day_settled {
        ctx.say(format!(
            "{} is settled: the punch waits on its board for the next settle, which writes the row again \
             (`attendance settle --date {}` does it now)",
            o.work_date, o.work_date
        ));
    }
    if d.output.json {
        return crate::output::json(&o);
    }
    textln!(
        "review {}: {}'s {} at {} on {} {} by {} (as {} on this machine, {} in MySQL){}",
        o.review_id,
        o.employee_id,
        o.kind,
        o.at,
        o.work_date,
        o.decision.as_str(),
        o.by,
        o.os_user,
        o.db_user,
        match &o.applied {
            Some(c) if c.changed => format!(
                "; the day now: in {}, out {}",
                c.first_in.as_deref().unwrap_or("-"),
                c.last_out.as_deref().unwrap_or("-")
            ),
            Some(_) => "; the day's record did not move".to_string(),
            None => String::new(),
        }
    )?;
    Ok(())
}
