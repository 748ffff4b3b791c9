//! `attendance doctor`: run the checks, print one line each (or JSON), pick the exit code.

use anyhow::Result;

use super::Ctx;
use crate::cli::DoctorArgs;
use crate::error::Error;
use crate::ops::doctor::{self, Level};

pub(crate) fn run(ctx: &Ctx, args: DoctorArgs) -> Result<()> {
    let report = doctor::run(&ctx.cfg, chrono::Utc::now());
    if args.output.json {
        crate::output::json(&report)?;
    } else {
        let width = report.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &report.checks {
            textln!("{:<4}  {:<width$}  {}", c.status.as_str(), c.name, c.detail)?;
        }
    }
    let (warn, fail) = (report.count(Level::Warn), report.count(Level::Fail));
    match report.worst() {
        Level::Fail => Err(Error::Unhealthy(format!("doctor: {fail} check(s) failed, {warn} warning(s)")).into()),
        Level::Warn => Err(Error::Partial(format!("doctor: {warn} warning(s)")).into()),
        Level::Ok | Level::Skip => Ok(()),
    }
}
