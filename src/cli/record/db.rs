//! `attendance db partition --from YYYY-MM --months N`: monthly partitions of `attendance`.

use anyhow::Result;

use crate::cli::Ctx;
use crate::cli::DbCommand;
use crate::ops::record::schema;
use crate::output;

pub(crate) fn run(ctx: &Ctx, cmd: DbCommand) -> Result<()> {
    let DbCommand::Partition { from, months, output } = cmd;
    let parts = schema::partition(&ctx.cfg, from, months)?;
    if output.json {
        return output::json(&parts);
    }
    let rows = parts
        .iter()
        .map(|p| {
            let bound = p.less_than.map_or("MAXVALUE".into(), |d| d.to_string());
            vec![p.name.clone(), bound, p.rows.to_string()]
        })
        .collect();
    crate::cli::table(&["partition", "days before", "rows (estimate)"], rows)?;
    Ok(())
}
