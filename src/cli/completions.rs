//! `attendance completions SHELL` and `attendance man`: generated from the same clap
//! definitions as `--help`, so they never drift from the real flags.

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};

pub(crate) fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "attendance", &mut out);
    Ok(crate::output::bytes(&out)?)
}

pub(crate) fn man(args: &ManArgs) -> Result<()> {
    let cmd = Cli::command();
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let mut cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            write_pages(cmd, dir)
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            Ok(crate::output::bytes(&out)?)
        }
    }
}

/// A page for the command and each of its subcommands, as `clap_mangen::generate_to` names
/// them (`attendance-report-day.1`), each written whole (`crate::files`).
fn write_pages(cmd: clap::Command, dir: &std::path::Path) -> Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd);
    let mut page = Vec::new();
    man.render(&mut page)?;
    crate::files::write(&dir.join(man.get_filename()), &page)
}
