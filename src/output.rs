//! Where output goes: data to stdout, status and progress to stderr, progress bars only on a TTY.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Verbosity and the terminal, as the commands see them.
#[derive(Debug, Clone, Copy)]
pub struct Out {
    pub quiet: bool,
    pub verbose: bool,
}

impl Out {
    /// A status line on stderr, unless `-q`.
    pub fn status(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", msg.as_ref());
        }
    }

    /// A detail on stderr, only with `-v`.
    pub fn verbose(&self, msg: impl AsRef<str>) {
        if self.verbose && !self.quiet {
            eprintln!("{}", msg.as_ref());
        }
    }

    /// A progress bar on stderr when it is a terminal; hidden otherwise.
    pub fn progress(&self, len: u64, what: &str) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        pb.set_style(
            ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({per_sec}, {eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        pb.set_message(what.to_string());
        pb
    }
}

/// Print a table of rows to stdout with comfy-table.
pub fn print_table(header: &[&str], rows: Vec<Vec<String>>) {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(header.to_vec());
    for r in rows {
        t.add_row(r);
    }
    println!("{t}");
}
