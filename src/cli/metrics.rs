//! `attendance metrics`: the day's figures in Prometheus's text format, to stdout or a file.

use anyhow::Result;

use super::Ctx;
use crate::cli::DayMetricsArgs;
use crate::ops::day_metrics;

pub(crate) fn run(ctx: &Ctx, args: DayMetricsArgs) -> Result<()> {
    let t = day_metrics::gather(&ctx.cfg, usize::from(args.top));
    match &args.output {
        Some(path) => t.write(path)?,
        None => crate::outln!("{}", t.as_str().trim_end())?,
    }
    Ok(())
}
