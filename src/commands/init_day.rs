//! `attendance init-day`: lay out a day's boards in Redis from the MySQL roster, and record in
//! MySQL that the day was laid out (settle then refuses the day if its boards go missing).

use anyhow::Result;

use super::Ctx;
use crate::cli::InitDayArgs;
use crate::{db, keys::Keys, layout, services};

pub fn run(ctx: &Ctx, args: InitDayArgs) -> Result<()> {
    let date = ctx.date_or_today(args.date);
    db::runs::check_storable(date)?;
    let pool = services::mysql(&ctx.cfg)?;
    let mut conn = pool.get_conn().map_err(|e| services::mysql_error(&ctx.cfg, e))?;
    let depts: Vec<String> = db::roster::department_ids(&mut conn)?
        .into_iter()
        .filter_map(|(d, active)| active.then_some(d))
        .collect();
    let mut con = services::redis(&ctx.cfg)?;
    ctx.warn_redis_persistence(&mut con);
    let pb = ctx.out.progress(db::roster::active_count(&mut conn)?, "init-day");
    let started = std::time::Instant::now();
    let keys = Keys::new(&ctx.cfg.namespace);
    // The day's queues are declared on the broker while the boards are laid out in Redis: two
    // services' work, overlapped. A broker away costs a warning, never the day's layout.
    let report = std::thread::scope(|s| {
        let declaring = s.spawn(|| super::queues::declare_ahead(ctx, "init-day", &depts));
        let report = layout::lay_out(&mut conn, &mut con, &keys, date, &depts, |n| pb.inc(n as u64));
        declaring.join().ok();
        report
    })?;
    pb.finish_and_clear();
    // Recorded once the boards exist: a layout cut off half-way is not claimed.
    db::runs::record_layout(&mut conn, date, report.departments, report.employees)?;
    if args.output.json {
        crate::outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        ctx.out.status(format!(
            "{date}: {} boards, {} employees, {} newly laid out, {} kept ({:.2}s)",
            report.departments,
            report.employees,
            report.laid_out,
            report.employees as u64 - report.laid_out,
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}
