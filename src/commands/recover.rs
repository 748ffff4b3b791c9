//! `attendance recover --date D`: rebuild day D's boards from the journal and say what it found.

use std::time::Duration;

use anyhow::Result;

use super::Ctx;
use crate::cli::RecoverArgs;
use crate::error::Error;
use crate::notify::EndedBy;
use crate::output::print_table;
use crate::recover::{self, Options};
use crate::{db, services};

pub fn run(ctx: &Ctx, args: RecoverArgs) -> Result<()> {
    let date = args.date;
    if date > ctx.today() {
        return Err(Error::refused(format!("{date} has not begun: there is nothing to recover")).into());
    }
    if !ctx.cfg.journal.enabled {
        return Err(Error::refused(
            "the journal is turned off (journal.enabled = false): there is nothing to recover from",
        )
        .into());
    }
    let age = (ctx.today() - date).num_days();
    if age > i64::from(ctx.cfg.journal.max_age_days) {
        ctx.out.status(format!(
            "warning: {date} is {age} days old and the journal keeps {} days: some of its punches may be gone",
            ctx.cfg.journal.max_age_days
        ));
    }
    let members = db::roster::active_members(&services::mysql(&ctx.cfg)?)?;
    let mut con = services::redis(&ctx.cfg)?;
    ctx.warn_redis_persistence(&mut con);
    let opts = Options {
        date,
        idle: Duration::from_millis(args.idle_ms),
    };
    let r = recover::recover(&ctx.cfg, &mut con, &members, opts)?;
    if args.output.json {
        return crate::output::json(&r);
    }
    print_table(
        &["date", "read", "restored", "already present", "laid out", "skipped"],
        vec![vec![
            r.date.to_string(),
            r.read.to_string(),
            r.restored.to_string(),
            r.already_present.to_string(),
            r.laid_out.to_string(),
            r.skipped.to_string(),
        ]],
    )?;
    ctx.out.status(format!(
        "read {} journal message(s) (offsets {}..{}) up to {} ({:.2}s)",
        r.messages,
        r.first_offset.map_or("-".into(), |o| o.to_string()),
        r.last_offset.map_or("-".into(), |o| o.to_string()),
        match r.ended_by {
            EndedBy::Idle => format!("a {} ms pause in deliveries", args.idle_ms),
            EndedBy::NewerMessage => "a message published after recover started".to_string(),
        },
        r.seconds
    ));
    Ok(())
}
