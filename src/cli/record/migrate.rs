//! `attendance migrate`: create the database if missing and apply the schema.

use anyhow::Result;

use crate::cli::Ctx;

pub(crate) fn run(ctx: &Ctx) -> Result<()> {
    let report = crate::ops::record::schema::migrate(&ctx.cfg)?;
    if report.created_database {
        ctx.say(format!("created database {}", report.database));
    }
    if report.applied.is_empty() {
        ctx.say(format!("database {} is up to date", report.database));
    } else {
        ctx.say(format!(
            "applied {} migration(s) to {}: {}",
            report.applied.len(),
            report.database,
            report.applied.join(", ")
        ));
    }
    Ok(())
}
