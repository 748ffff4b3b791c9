//! `attendance init-day`: lay out a day's boards in Redis from the MySQL roster, and record in
//! MySQL that the day was laid out (settle then refuses the day if its boards go missing).

use anyhow::Result;
use std::cell::OnceCell;

use super::Ctx;
use crate::cli::InitDayArgs;
use crate::domain::text::plural;
use crate::ops::boards::layout;

pub(crate) fn run(ctx: &Ctx, args: InitDayArgs) -> Result<()> {
    let date = ctx.date_or_today(args.date);
    let pb = OnceCell::new();
    let o = layout::init_day(
        &ctx.cfg,
        date,
        |employees| {
            pb.set(ctx.out.progress(employees, "init-day")).ok();
        },
        |n| {
            if let Some(pb) = pb.get() {
                pb.inc(n as u64);
            }
        },
    )?;
    if let Some(pb) = pb.get() {
        pb.finish_and_clear();
    }
    if let Some(w) = &o.persistence {
        ctx.say(w.clone());
    }
    super::queues::report_declared(ctx, "init-day", &o.queues);
    let r = &o.layout;
    if args.output.json {
        crate::outln!("{}", serde_json::to_string(r)?)?;
    } else {
        let resting = match r.rest_day {
            0 => String::new(),
            n => format!(", {n} on a rest day by their shift (not laid out)"),
        };
        ctx.say(format!(
            "{date}: {}, {}, {} newly laid out, {} kept{resting} ({:.2}s)",
            plural(r.departments as usize, "board"),
            plural(r.employees as usize, "employee"),
            r.laid_out,
            r.employees as u64 - r.laid_out,
            o.seconds
        ));
    }
    Ok(())
}
