//! `attendance archive --before DATE [--out DIR] [--drop]`: old days to CSV files, and with
//! `--drop` out of MySQL.

use anyhow::Result;

use super::Ctx;
use crate::cli::ArchiveArgs;
use crate::ops::archive::{self, Options};

pub(crate) fn run(ctx: &Ctx, args: ArchiveArgs) -> Result<()> {
    let opts = Options {
        before: args.before,
        today: ctx.today(),
        dir: args.out,
        drop: args.drop,
    };
    let report = archive::archive(&ctx.cfg, &opts)?;
    if args.output.json {
        return crate::output::json(&report);
    }
    for f in &report.files {
        ctx.say(format!("{}: {} rows", f.path.display(), f.rows));
    }
    let partitions = match (report.partitions_dropped.as_slice(), &report.partitions_problem) {
        (_, Some(why)) => format!("; emptied partitions kept ({why})"),
        ([], None) => String::new(),
        (p, None) => format!("; partitions dropped: {}", p.join(", ")),
    };
    ctx.say(format!(
        "archived the days before {}{}{partitions}",
        report.before,
        if report.dropped {
            " and deleted them from MySQL"
        } else {
            " (still in MySQL: --drop deletes them)"
        }
    ));
    Ok(())
}
