//! `attendance simulate`: a realistic morning or evening of punches for the active roster.

use anyhow::Result;

use super::Ctx;
use crate::cli::SimulateArgs;
use crate::domain::formats::sample_day::{write_punches, Mix};
use crate::domain::text::plural;
use crate::error::Error;

pub(crate) fn run(ctx: &Ctx, a: SimulateArgs) -> Result<()> {
    for (name, v) in [
        ("--absent-pct", a.absent_pct),
        ("--late-pct", a.late_pct),
        ("--early-pct", a.early_pct),
    ] {
        if !(0.0..=100.0).contains(&v) {
            return Err(Error::input(format!("{name} must be between 0 and 100")).into());
        }
    }
    let date = ctx.date_or_today(a.date);
    let ids = crate::ops::people::org::expected_ids(&ctx.cfg, date)?;
    let mix = Mix {
        absent_pct: a.absent_pct,
        late_pct: a.late_pct,
        early_pct: a.early_pct,
    };
    let n = match &a.output {
        Some(path) => crate::files::write_with(path, |w| {
            write_punches(w, &ids, date, ctx.cfg.timezone, a.phase.into(), mix, a.seed)
        })?,
        None => write_punches(
            std::io::stdout().lock(),
            &ids,
            date,
            ctx.cfg.timezone,
            a.phase.into(),
            mix,
            a.seed,
        )?,
    };
    ctx.say(format!(
        "{} for {} on {date}",
        plural(n, "punch"),
        plural(ids.len(), "employee")
    ));
    // Punches of a past day are what an offline kiosk replays: checked in from a key that may
    // not replay, past the replay window, each would be held for review.
    if date < ctx.today() {
        ctx.say(format!(
            "{date} is past: check these in as an offline kiosk replaying its punches would, signed with a key \
             that may replay (replay = true in signing.keyring_file), or each older than \
             policy.replay_window_minutes (`attendance policy show`) is held for review"
        ));
    }
    Ok(())
}
