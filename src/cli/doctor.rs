//! `attendance doctor`: run the checks, print one line each (or JSON), pick the exit code.

use anyhow::Result;

use super::Ctx;
use crate::cli::DoctorArgs;
use crate::domain::text::plural;
use crate::error::Error;
use crate::ops::doctor::{self, Level};

pub(crate) fn run(ctx: &Ctx, args: DoctorArgs) -> Result<()> {
    let report = doctor::run(&ctx.cfg, chrono::Utc::now(), args.role);
    if args.output.json {
        crate::output::json(&report)?;
    } else {
        let width = report.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &report.checks {
            textln!("{:<4}  {:<width$}  {}", c.status.as_str(), c.name, c.detail)?;
        }
    }
    let (warn, fail) = (report.count(Level::Warn), report.count(Level::Fail));
    let (warn, fail) = (plural(warn, "warning"), plural(fail, "check"));
    match report.worst() {
        Level::Fail => Err(Error::Unhealthy(format!("doctor: {fail} failed, {warn}")).into()),
        Level::Warn => Err(Error::Warned(format!("doctor: {warn}, nothing failed")).into()),
        Level::Ok | Level::Skip => Ok(()),
    }
}
