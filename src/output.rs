//! Where output goes: data to stdout, status and progress to stderr, progress bars only on a TTY.
//!
//! Every piece of data goes through [`data`] (or its helpers), never a bare `println!`, which
//! panics when stdout's reader has gone (`attendance report day | head -1`). Here a closed pipe
//! is an `io::Error` of kind `BrokenPipe` that `main` turns into a quiet exit 0.

use std::fmt::Display;
use std::io::{IsTerminal, Write};

use serde::Serialize;

use indicatif::{ProgressBar, ProgressStyle};

/// Verbosity and the terminal, as the commands see them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Out {
    pub quiet: bool,
    pub verbose: bool,
}

impl Out {
    /// A status line on stderr, unless `-q`.
    pub(crate) fn status(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            stderr_line(msg.as_ref());
        }
    }

    /// A detail on stderr, only with `-v`.
    pub(crate) fn verbose(&self, msg: impl AsRef<str>) {
        if self.verbose && !self.quiet {
            stderr_line(msg.as_ref());
        }
    }

    /// A progress bar on stderr when it is a terminal; hidden otherwise.
    pub(crate) fn progress(&self, len: u64, what: &str) -> ProgressBar {
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

/// One line on stderr. A closed stderr (`attendance ... 2>&1 | head -c 100`) is ignored rather
/// than a panic (what `eprintln!` does): the exit code still says how the command ended.
pub fn stderr_line(msg: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

/// Write data to stdout as it is (no newline added) and flush, so that a line is out before
/// whatever the command does next (a watcher acks a message only once it is shown).
pub(crate) fn data(text: impl Display) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()
}

/// Bytes to stdout as they are (a workbook), flushed.
pub(crate) fn bytes(b: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(b)?;
    out.flush()
}

/// One line of data on stdout.
pub(crate) fn line(text: impl Display) -> std::io::Result<()> {
    data(format_args!("{text}\n"))
}

/// One JSON document (or, in a stream, one object) on its own line.
pub(crate) fn json(value: &impl Serialize) -> anyhow::Result<()> {
    line(serde_json::to_string(value)?)?;
    Ok(())
}

/// Print a table of rows to stdout with comfy-table.
pub(crate) fn print_table(header: &[&str], rows: Vec<Vec<String>>) -> std::io::Result<()> {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(header.to_vec());
    for r in rows {
        t.add_row(r);
    }
    line(t)
}

/// `println!` for data: the same arguments, but it returns the write's `io::Result` instead
/// of panicking on a closed pipe. Use as `outln!("{x}")?`.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}
