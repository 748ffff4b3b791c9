//! `attendance recover --date D`: rebuild day D's boards from the journal and say what it found.

use std::time::Duration;

use anyhow::Result;

use super::Ctx;
use crate::cli::RecoverArgs;
use crate::ops::boards::recover::{self, EndedBy};

pub(crate) fn run(ctx: &Ctx, args: RecoverArgs) -> Result<()> {
    let idle = Duration::from_millis(args.idle_ms);
    let o = recover::recover(&ctx.cfg, args.date, ctx.today(), idle)?;
    for w in [&o.too_old, &o.persistence].into_iter().flatten() {
        ctx.say(w.clone());
    }
    let r = o.report;
    if args.output.json {
        return crate::output::json(&r);
    }
    super::table(
        &[
            "date",
            "read",
            "restored",
            "already present",
            "voided",
            "laid out",
            "skipped",
            "refused",
        ],
        vec![vec![
            r.date.to_string(),
            r.read.to_string(),
            r.restored.to_string(),
            r.already_present.to_string(),
            r.voided.to_string(),
            r.laid_out.to_string(),
            r.skipped.to_string(),
            r.refused.to_string(),
        ]],
    )?;
    ctx.say(format!(
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
