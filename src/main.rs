//! The `attendance` binary: parse, run, and turn any error into one line and an exit code.

use clap::error::ErrorKind;

use attendance::{check_environment, parse_cli};
use attendance::{clip, exit_code_of, inert, one_line, stderr_line};
use attendance::{error_line, exit, is_broken_pipe, only_warned};

fn main() {
    // Before clap reads its own variables: a value that is not text or is empty is named.
    if let Err(e) = check_environment(std::env::vars_os()) {
        stderr_line(error_line(&inert(&e.to_string())));
        std::process::exit(exit::USAGE);
    }
    let cli = match parse_cli() {
        Ok(cli) => cli,
        // Help and version go to stdout as clap writes them (exit 0).
        Err(e) if !e.use_stderr() => {
            e.print().ok();
            std::process::exit(exit::OK);
        }
        // `attendance` or `attendance report` alone: the help, on stderr, as a usage error.
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.print().ok();
            std::process::exit(exit::USAGE);
        }
        // A usage error is one line like every other error (exit 2): clap's message without
        // its usage block and "For more information" tip, which `--help` gives anyway.
        Err(e) => {
            let line = usage_line(&e.render().to_string());
            stderr_line(error_line(&inert(line.strip_prefix("error: ").unwrap_or(&line))));
            std::process::exit(exit::USAGE);
        }
    };
    match attendance::run(cli) {
        Ok(()) => {}
        // The reader of stdout went away: what it wanted it has; no error, as with `cat | head`.
        Err(err) if is_broken_pipe(&err) => std::process::exit(exit::OK),
        // Warnings already shown (doctor's): said plainly, exit 4, not as an error.
        Err(err) if only_warned(&err) => {
            stderr_line(one_line(&err));
            std::process::exit(exit_code_of(&err));
        }
        Err(err) => {
            stderr_line(error_line(&one_line(&err)));
            std::process::exit(exit_code_of(&err));
        }
    }
}

/// clap's rendered error folded into one line: `error: invalid value '0999-01-01' for
/// '--date <DATE>': ...`. The caller makes it inert: a value quoted in it may hold ESC or CR.
/// A value clap quotes (`'...'`) is cut to its first 80 characters, as every error quotes a bad
/// value: a 1 MB `--date` is named by its start.
fn usage_line(rendered: &str) -> String {
    let line = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    line.split('\'')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { clip(part) } else { part.to_string() })
        .collect::<Vec<_>>()
        .join("'")
}
