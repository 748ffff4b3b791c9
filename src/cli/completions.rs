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
            clap_mangen::generate_to(cmd, dir).with_context(|| format!("writing man pages into {}", dir.display()))
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            Ok(crate::output::bytes(&out)?)
        }
    }
}
