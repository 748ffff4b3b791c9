//! The `attendance` binary: parse, run, and turn any error into one line and an exit code.

use clap::Parser;

use attendance::cli::Cli;
use attendance::error::{exit, exit_code_of, is_broken_pipe, one_line};

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
    match attendance::commands::run(cli) {
        Ok(()) => {}
        // The reader of stdout went away: what it wanted it has; no error, as with `cat | head`.
        Err(err) if is_broken_pipe(&err) => std::process::exit(exit::OK),
        Err(err) => {
            eprintln!("error: {}", one_line(&err));
            std::process::exit(exit_code_of(&err));
        }
    }
}
