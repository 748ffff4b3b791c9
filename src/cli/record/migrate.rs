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
    let imported = crate::ops::record::schema::import_policy(&ctx.cfg)?;
    if !imported.is_empty() {
        let keys: Vec<String> = imported.iter().map(|(k, s)| format!("{k} ({s})")).collect();
        ctx.say(format!(
            "imported {} policy value(s) into the rulebook as its first version: {}; remove them from \
             the config file and the environment: `attendance policy set` changes them from now on",
            imported.len(),
            keys.join(", ")
        ));
    }
    Ok(())
}
