//! `attendance watch-dept DEPT`: a supervisor's view. On a terminal, a live screen of the
//! department's board and its latest events; piped, one line (or JSON object) per event.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::Ctx;
use crate::board::{self, summary};
use crate::cli::WatchDeptArgs;
use crate::event::{Event, Kind};
use crate::keys::Keys;
use crate::notify::{self, WatchItem, WatchOptions};
use crate::{interrupt, services};

/// Event lines kept under the board on the live screen.
const RECENT: usize = 15;
/// Names listed per state on the live screen before "and N more".
const NAMES: usize = 12;
/// The live screen's refresh: at most this often on events, and this often when idle.
const REDRAW: Duration = Duration::from_millis(500);

pub fn run(ctx: &Ctx, args: WatchDeptArgs) -> Result<()> {
    crate::roster::check_id("department id", &args.department_id)?;
    let live = !args.once && !args.json && std::io::stdout().is_terminal();
    let mut screen = if live {
        Some(Screen {
            con: services::redis(&ctx.cfg)?,
            recent: VecDeque::new(),
            drawn: Instant::now() - REDRAW,
        })
    } else {
        None
    };
    let opts = WatchOptions {
        once: args.once,
        tick: REDRAW,
    };
    let dept = &args.department_id;
    let watched = notify::watch_department(&ctx.cfg, dept, opts, interrupt::stop_flag(), |item| {
        match item {
            WatchItem::Event { event, .. } => match screen.as_mut() {
                Some(s) => {
                    s.push(line(ctx, event));
                    // A backlog arrives in a burst: redraw a few times a second, not per event.
                    if s.drawn.elapsed() >= REDRAW {
                        s.draw(ctx, dept)?;
                    }
                }
                None if args.json => writeln!(std::io::stdout(), "{}", serde_json::to_string(event)?)?,
                None => writeln!(std::io::stdout(), "{}", line(ctx, event))?,
            },
            WatchItem::Rejected {
                reason,
                failures,
                parked,
            } => ctx.out.status(format!(
                "watch-dept: rejected a malformed message (failure {failures} of {}): {reason}{}",
                ctx.cfg.amqp.max_retries,
                if parked {
                    "; moved to the parking queue"
                } else {
                    "; it will be retried"
                }
            )),
            WatchItem::Idle => {
                if let Some(s) = screen.as_mut() {
                    s.draw(ctx, dept)?;
                }
            }
        }
        // Shown means written out: flush before the message is acked.
        std::io::stdout().flush()?;
        Ok(())
    });
    // The reader went away (`watch-dept D | head`): a normal end. The message that could not
    // be written was not acked, so it stays in the queue.
    let report = match watched {
        Err(e) if is_broken_pipe(&e) => return Ok(()),
        r => r?,
    };
    ctx.out.status(format!(
        "watch-dept: {} events shown, {} duplicates dropped, {} malformed retried, {} parked",
        report.shown, report.duplicates, report.retried, report.parked
    ));
    Ok(())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// One plain line per event: time, employee, kind and what it means.
fn line(ctx: &Ctx, e: &Event) -> String {
    let at = chrono::DateTime::parse_from_rfc3339(&e.at)
        .map(|t| t.with_timezone(&ctx.cfg.timezone).format("%H:%M:%S").to_string())
        .unwrap_or_else(|_| e.at.clone());
    let what = match e.kind {
        Kind::In => "in",
        Kind::Out => "out",
    };
    let note = match (e.changed, e.late, e.early) {
        (false, _, _) => " (repeat)".to_string(),
        (_, true, _) => format!(" (late by {} min)", e.late_minutes),
        (_, _, true) => format!(" (early by {} min)", e.early_minutes),
        _ => String::new(),
    };
    format!(
        "{at} {} {} {} {what}{note}",
        e.department_id, e.employee_id, e.employee_name
    )
}

struct Screen {
    con: redis::Connection,
    recent: VecDeque<String>,
    drawn: Instant,
}

impl Screen {
    fn push(&mut self, line: String) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(line);
    }

    fn draw(&mut self, ctx: &Ctx, dept: &str) -> Result<()> {
        let keys = Keys::new(&ctx.cfg.namespace);
        let date = ctx.today();
        let b = board::department_board(&mut self.con, &keys, dept, date)?;
        let s = summary::summarize(&b, &ctx.cfg.policy, ctx.cfg.timezone, date);
        let ids: Vec<String> = [&s.late, &s.not_in, &s.early]
            .into_iter()
            .flatten()
            .take(3 * NAMES)
            .cloned()
            .collect();
        let names = board::names(&mut self.con, &keys, &ids)?;
        let list = |v: &[String]| {
            let shown: Vec<String> = v
                .iter()
                .take(NAMES)
                .map(|id| names.get(id).map_or(id.clone(), |n| format!("{id} {n}")))
                .collect();
            let more = v.len().saturating_sub(NAMES);
            format!(
                "{}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        };
        let now = chrono::Utc::now().with_timezone(&ctx.cfg.timezone);
        let mut out = String::from("\x1b[2J\x1b[H");
        out += &format!(
            "Department {dept}, {date}, {} (Ctrl-C to leave)\n\n",
            now.format("%H:%M:%S")
        );
        out += &format!(
            "in {} (late {}) | not yet in {} | out {} (early {})\n\n",
            s.on_time.len() + s.late.len(),
            s.late.len(),
            s.not_in.len(),
            s.out.len(),
            s.early.len()
        );
        out += &format!(
            "Late:       {}\nNot yet in: {}\nEarly out:  {}\n\nLatest events:\n",
            list(&s.late),
            list(&s.not_in),
            list(&s.early)
        );
        for l in &self.recent {
            out += l;
            out.push('\n');
        }
        print!("{out}");
        self.drawn = Instant::now();
        Ok(())
    }
}
