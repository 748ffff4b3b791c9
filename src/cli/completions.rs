//! `attendance completions SHELL`: generated from the same clap definitions as `--help`, so
//! they never drift from the real flags (the man pages likewise: `cli/man.rs`).

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub(crate) fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "attendance", &mut out);
    Ok(crate::output::bytes(&out)?)
}
