//! The lines that say what a leave, calendar or shift change re-settled (`ops::settle::resettle`).

use crate::cli::Ctx;
use crate::domain::text::plural;
use crate::ops::settle::resettle::Resettled;

/// Say what was re-settled (`re-settled 3 settled days of E000123: 2 absent -> on_leave`), the
/// corrected rows kept, and the days that count only when settled; `dry_run`: what would be
/// (`would re-settle ...`).
pub(crate) fn say(ctx: &Ctx, r: &Resettled, of: Option<&str>, dry_run: bool) {
    if !r.settled_days.is_empty() {
        let whose = match of {
            Some(e) => format!(" of {e}"),
            None => format!(" ({})", plural(r.settled_rows as usize, "row")),
        };
        let what = if r.changes.is_empty() {
            "no row changed".to_string()
        } else {
            r.changes_line()
        };
        let verb = if dry_run { "would re-settle" } else { "re-settled" };
        let mut line = format!("{verb} {}{whose}: {what}", plural(r.settled_days.len(), "settled day"));
        if r.kept_corrected > 0 {
            line.push_str(&format!(
                "; kept {} (a correction wins)",
                plural(r.kept_corrected as usize, "corrected row")
            ));
        }
        if r.unreadable > 0 {
            line.push_str(&format!(
                "; {} with an unreadable punch history left as it was",
                plural(r.unreadable as usize, "row")
            ));
        }
        ctx.say(line);
    }
    if let (Some(first), Some(last)) = (r.counts_at_settle.first(), r.counts_at_settle.last()) {
        let days = if first == last {
            first.to_string()
        } else {
            format!("{} ({first} to {last})", plural(r.counts_at_settle.len(), "day"))
        };
        ctx.say(format!("{days} not settled yet: the change counts when settle runs"));
    }
}
