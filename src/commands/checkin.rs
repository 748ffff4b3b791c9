//! `attendance checkin`: record one punch on the board and queue its event for the supervisor.

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::Ctx;
use crate::board::{self, Punch, PunchRules};
use crate::cli::CheckinArgs;
use crate::error::Error;
use crate::event::Kind;
use crate::keys::Keys;
use crate::notify::{self, Connecting, Publisher};
use crate::services::RedisConn;
use crate::{policy, services};

/// Parse `--at`: RFC 3339 with an offset, or a usage error.
pub fn parse_at(s: &str) -> Result<DateTime<Utc>, Error> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            Error::input(format!(
                "invalid --at '{s}': expected RFC 3339, such as 2026-11-30T08:55:00+01:00"
            ))
        })
}

/// Refuse a punch further in the future than the allowed clock skew.
pub fn check_not_future(at: DateTime<Utc>, now: DateTime<Utc>, skew_secs: u32) -> Result<(), Error> {
    if (at - now).num_seconds() > i64::from(skew_secs) {
        return Err(Error::refused(format!(
            "punch at {} is in the future (now {}; at most {skew_secs}s of clock skew allowed)",
            at.to_rfc3339(),
            now.to_rfc3339()
        )));
    }
    Ok(())
}

pub fn run(ctx: &Ctx, args: CheckinArgs) -> Result<()> {
    if let Some(file) = args.file.as_deref() {
        return super::checkin_bulk::run(ctx, file, args.json);
    }
    let employee_id = args
        .employee_id
        .as_deref()
        .ok_or_else(|| Error::input("an employee id or --file is needed"))?;
    crate::roster::check_id("employee id", employee_id)?;
    let kind: Option<Kind> = args
        .kind
        .as_deref()
        .map(|k| k.parse().map_err(Error::input))
        .transpose()?;
    let now = Utc::now();
    let at = match args.at.as_deref() {
        Some(s) => parse_at(s)?,
        None => now,
    };
    check_not_future(at, now, ctx.cfg.policy.max_future_skew_secs)?;
    // The broker handshake runs while Redis records the punch: it is most of the publish's cost.
    let connecting = Publisher::connect_in_background(&ctx.cfg);
    let keys = Keys::new(&ctx.cfg.namespace);
    let mut con = services::redis(&ctx.cfg)?;
    let employee = super::resolve_employee(ctx, &mut con, &keys, employee_id)?;
    let tz = ctx.cfg.timezone;
    let p = Punch::new(employee, kind, at, &args.source, &ctx.cfg.policy, tz);
    let o = board::punch(&mut con, &keys, PunchRules::new(&ctx.cfg.policy, tz), &p)?;
    let late = if o.kind == Kind::In {
        p.facts.late_minutes_if_in
    } else {
        0
    };
    let early = if o.kind == Kind::Out {
        p.facts.early_minutes_if_out
    } else {
        0
    };
    let notification = if o.event_json.is_some() {
        notify(ctx, &mut con, &keys, &p, connecting)
    } else {
        "none"
    };
    let local = at.with_timezone(&tz);
    if args.json {
        let v = serde_json::json!({
            "employee_id": p.employee.id,
            "employee_name": p.employee.name,
            "department_id": p.employee.department_id,
            "work_date": p.facts.work_date.to_string(),
            "kind": o.kind,
            "at": local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
            "late": late > 0,
            "late_minutes": late,
            "early": early > 0,
            "early_minutes": early,
            "changed": o.changed,
            "duplicate": o.duplicate,
            "first_in": o.first_in.map(|s| policy::instant(tz, p.facts.work_date, s).to_rfc3339()),
            "last_out": o.last_out.map(|s| policy::instant(tz, p.facts.work_date, s).to_rfc3339()),
            "event_id": o.event_json.as_ref().map(|_| &p.event_id),
            "notification": notification,
        });
        println!("{v}");
    } else {
        let what = match o.kind {
            Kind::In => "checked in",
            Kind::Out => "checked out",
        };
        let note = match (late, early, o.changed) {
            (_, _, false) => " (repeat: record unchanged)".to_string(),
            (l, _, true) if l > 0 => format!(" (late by {l} min)"),
            (_, e, true) if e > 0 => format!(" (early by {e} min)"),
            _ => String::new(),
        };
        let pending = if notification == "pending" {
            "; supervisor notification pending"
        } else {
            ""
        };
        println!(
            "{} {} {what} at {} on {}{note}{pending}",
            p.employee.id,
            p.employee.name,
            local.format("%H:%M:%S"),
            p.facts.work_date
        );
    }
    Ok(())
}

/// Publish the punch's event (the punch itself is already recorded, so nothing here fails
/// the check-in): "sent" once confirmed, "pending" if it stays in the outbox. A punch that
/// made no event (an exact duplicate) says "none" and does not come here.
fn notify(ctx: &Ctx, con: &mut RedisConn, keys: &Keys, p: &Punch, connecting: Connecting) -> &'static str {
    let sent = connecting.wait().and_then(|mut publisher| {
        publisher.set_confirm_timeout_ms(ctx.cfg.amqp.checkin_confirm_ms);
        notify::send_punch(publisher, con, keys, &p.employee.department_id, &p.event_id)
    });
    match sent {
        Ok(true) => "sent",
        Ok(false) => {
            ctx.out
                .status("notification pending: the broker did not confirm it; `attendance relay` will send it");
            "pending"
        }
        Err(e) => {
            ctx.out.status(format!(
                "notification pending ({}); `attendance relay` will send it",
                crate::error::one_line(&e)
            ));
            "pending"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_must_be_rfc3339_and_not_in_the_future() {
        assert!(parse_at("2026-11-30 08:00").is_err());
        let now = parse_at("2026-11-30T08:00:00Z").unwrap();
        assert!(check_not_future(parse_at("2026-11-30T08:01:00Z").unwrap(), now, 120).is_ok());
        assert!(check_not_future(parse_at("2026-11-30T08:03:00Z").unwrap(), now, 120).is_err());
    }
}
