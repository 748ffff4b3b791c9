//! `attendance watch-dept DEPT`: a supervisor's view. On a terminal, a live screen of the
//! department's board and its latest events; piped, one line (or JSON object) per event.

use std::cell::RefCell;
use std::io::IsTerminal;

use anyhow::Result;

use super::alert::{alert_line, Alerted};
use super::live::{Live, KEYS, REDRAW};
use super::screen::Entry;
use crate::cli::Ctx;
use crate::cli::WatchDeptArgs;
use crate::domain::dates::minutes_text;
use crate::domain::event::record::Event;
use crate::domain::event::void_notice::VoidNotice;
use crate::domain::punch::Kind;
use crate::interrupt;
use crate::ops::watch::{WatchItem, WatchOptions};

pub(crate) fn run(ctx: &Ctx, args: WatchDeptArgs) -> Result<()> {
    crate::domain::people::roster::check_id("department id", &args.department_id)?;
    let live = !args.once && !args.output.json && std::io::stdout().is_terminal();
    let dept = &args.department_id;
    let stop = interrupt::stop_flag();
    let mut screen = if live { Some(Live::open(ctx, dept, stop)?) } else { None };
    // The board shows at once, while the broker's connection is still being made.
    if let Some(s) = screen.as_mut() {
        s.refresh(ctx)?;
    }
    let opts = WatchOptions {
        once: args.once,
        // The live screen takes its keys between deliveries: a short tick keeps them prompt.
        tick: if live { KEYS } else { REDRAW },
    };
    // The watch's words go on stderr, or on the live screen (stderr is the same terminal).
    let notices = RefCell::new(Vec::new());
    let say = |line: String| {
        let line = format!("watch-dept: {line}");
        if live {
            notices.borrow_mut().push(line);
        } else {
            ctx.say(line);
        }
    };
    let mut alerted = Alerted::default();
    let watched = crate::ops::watch::department(&ctx.cfg, dept, opts, stop, &say, |item| {
        let today = ctx.today();
        let other_day = |d: chrono::NaiveDate| (d != today).then_some(d);
        let json = args.output.json;
        match item {
            WatchItem::Void { notice } => {
                let entry = Entry {
                    day: None,
                    text: void_line(ctx, notice),
                };
                show(screen.as_mut(), &alerted, entry, json.then_some((notice, None)))?;
            }
            WatchItem::Event { event } => {
                let entry = Entry {
                    day: other_day(event.work_date),
                    text: line(ctx, event) + alerted.arrived(event).as_deref().unwrap_or(""),
                };
                show(screen.as_mut(), &alerted, entry, json.then_some((event, Some("punch"))))?;
            }
            WatchItem::Alert { alert } => {
                alerted.note(ctx, alert);
                let entry = Entry {
                    day: other_day(alert.work_date),
                    text: alert_line(ctx, alert),
                };
                show(screen.as_mut(), &alerted, entry, json.then_some((alert, None)))?;
            }
            WatchItem::Rejected {
                reason,
                failures,
                parked,
            } => say(format!(
                "rejected a malformed message (failure {failures} of {}): {reason}{}",
                ctx.cfg.amqp.max_retries,
                if parked {
                    "; moved to the parking queue"
                } else {
                    "; it will be retried"
                }
            )),
            WatchItem::Lost { why } => say(format!("lost the broker, reconnecting: {why}")),
            WatchItem::Reconnected { broker } => say(format!("consuming again, on {broker}")),
            WatchItem::Idle => {}
        }
        if let Some(s) = screen.as_mut() {
            for said in notices.borrow_mut().drain(..) {
                s.notice(said);
            }
            // A backlog arrives in a burst: the board is read a few times a second, not per event.
            s.refresh(ctx)?;
        }
        // Shown means written out: the writer flushes before the message is acked.
        Ok(())
    });
    // The terminal is put back before the last word.
    drop(screen);
    // The reader went away (`watch-dept D | head`): a normal end. The message that could not
    // be written was not acked, so it stays in the queue.
    let report = match watched {
        Err(e) if crate::error::is_broken_pipe(&e) => return Ok(()),
        r => r?,
    };
    ctx.say(format!(
        "watch-dept: {} events shown, {} duplicates dropped, {} malformed retried, {} parked",
        report.shown, report.duplicates, report.retried, report.parked
    ));
    Ok(())
}

/// One item shown: onto the live screen (with the alert's panel as it now stands), as its JSON
/// (`--json`), or as its plain line.
fn show(
    screen: Option<&mut Live>,
    alerted: &Alerted,
    entry: Entry,
    json: Option<(&impl serde::Serialize, Option<&str>)>,
) -> Result<()> {
    match (screen, json) {
        (Some(s), _) => {
            s.push(entry);
            s.state.alert = alerted.panel();
            Ok(())
        }
        (None, Some((value, message_type))) => printed(value, message_type),
        (None, None) => Ok(textln!("{}", entry.text)?),
    }
}

/// One plain line per event: time, employee, kind and what it means; inert, as it goes to a
/// terminal (piped or on the live screen) and the name and ids came from a message.
fn line(ctx: &Ctx, e: &Event) -> String {
    let at = chrono::DateTime::parse_from_rfc3339(&e.at)
        .map(|t| crate::domain::dates::wall_clock(t.with_timezone(&ctx.cfg.timezone), "%H:%M:%S"))
        .unwrap_or_else(|_| e.at.clone());
    let what = match e.kind {
        Kind::In => "in",
        Kind::Out => "out",
    };
    let note = match (e.changed, e.late, e.early) {
        (false, _, _) => " (repeat)".to_string(),
        (_, true, _) => format!(" (late by {})", minutes_text(e.late_minutes)),
        (_, _, true) => format!(" (early by {})", minutes_text(e.early_minutes)),
        _ => String::new(),
    };
    let line = format!(
        "{at} {} {} {} {what}{note}",
        e.department_id, e.employee_id, e.employee_name
    );
    crate::domain::text::inert(&line).into_owned()
}

/// One plain line per void notice: `void: E000002 Priya Tanaka 08:04 check-in voided by
/// E000001 (reason)`, the punch's date added when it is not today's; inert, as `line`.
fn void_line(ctx: &Ctx, n: &VoidNotice) -> String {
    let tz = ctx.cfg.timezone;
    let at = chrono::DateTime::parse_from_rfc3339(&n.at).map(|t| t.with_timezone(&tz));
    let when = match at {
        Ok(t) if n.work_date == ctx.today() => crate::domain::dates::wall_clock(t, "%H:%M"),
        Ok(t) => format!("{} {}", n.work_date, crate::domain::dates::wall_clock(t, "%H:%M")),
        Err(_) => n.at.clone(),
    };
    let what = match n.kind {
        Kind::In => "check-in",
        Kind::Out => "check-out",
    };
    let why = if n.reason.is_empty() {
        String::new()
    } else {
        format!(" ({})", n.reason)
    };
    let line = format!(
        "void: {} {} {when} {what} voided by {}{why}",
        n.employee_id, n.employee_name, n.voided_by
    );
    crate::domain::text::inert(&line).into_owned()
}

/// One line of `--json`: the message as the contract prints it (its instants in the one form,
/// and a punch's event typed `punch` as the others are typed), not as it was signed.
fn printed(message: &impl serde::Serialize, message_type: Option<&str>) -> Result<()> {
    let mut v = crate::domain::instant::printed_message(serde_json::to_value(message)?);
    if let (Some(t), Some(m)) = (message_type, v.as_object_mut()) {
        m.insert("type".into(), t.into());
    }
    crate::output::json(&v)
}
