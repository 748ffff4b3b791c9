//! `attendance archive --before DATE [--out DIR] [--drop] [--dry-run]`: old days to CSV files, and with
//! `--drop` out of MySQL.

use anyhow::Result;

use crate::cli::ArchiveArgs;
use crate::cli::Ctx;
use crate::domain::text::plural;
use crate::ops::record::archive::{self, Options};

pub(crate) fn run(ctx: &Ctx, args: ArchiveArgs) -> Result<()> {
    let opts = Options {
        before: args.before,
        today: ctx.today(),
        dir: args.out,
        drop: args.drop,
        dry_run: args.dry_run,
    };
    let report = archive::archive(&ctx.cfg, &opts)?;
    if args.output.json {
        return crate::output::json(&report);
    }
    if report.dry_run {
        for f in &report.files {
            textln!("{}: {}", f.path.display(), plural(f.rows as usize, "row"))?;
        }
        let rows: u64 = report.files.iter().map(|f| f.rows).sum();
        ctx.say(format!(
            "dry run: would archive {} of the days before {}{}; nothing written",
            plural(rows as usize, "row"),
            report.before,
            if report.would_drop {
                " and delete them from MySQL"
            } else {
                ""
            }
        ));
        return Ok(());
    }
    for f in &report.files {
        ctx.say(format!("{}: {}", f.path.display(), plural(f.rows as usize, "row")));
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
