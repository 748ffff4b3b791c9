//! The `attendance` binary: parse, run, and turn any error into one line and an exit code.

use clap::Parser;

use attendance::cli::Cli;
use attendance::error::{exit, exit_code_of, one_line};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout (exit 0) and usage errors to stderr (exit 2).
            let code = if e.use_stderr() { exit::USAGE } else { exit::OK };
            e.print().ok();
            std::process::exit(code);
        }
    };
    if let Err(err) = attendance::commands::run(cli) {
        eprintln!("error: {}", one_line(&err));
        std::process::exit(exit_code_of(&err));
    }
}
