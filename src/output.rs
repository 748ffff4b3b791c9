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

    /// A warning on stderr that `-q` does not silence: something an admin must hear even from
    /// a quiet job (the units run `-q`, and their stderr is the journal).
    pub(crate) fn warning(&self, msg: impl AsRef<str>) {
        stderr_line(format!("warning: {}", msg.as_ref()));
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
/// When stderr is the journal, an error line gets the priority prefix `<3>` and a warning
/// `<4>` (sd-daemon(3)), so that `journalctl -p err` / `-p warning` show them.
pub fn stderr_line(msg: impl Display) {
    let msg = msg.to_string();
    let prefix = if to_journal() { priority(&msg) } else { "" };
    let _ = writeln!(std::io::stderr().lock(), "{prefix}{msg}");
}

/// The sd-daemon priority prefix of a line: `<3>` for an error (`error: ...`), `<4>` for a
/// warning (`warning: ...`, or `command: warning: ...`), none for the rest (the unit's level).
fn priority(line: &str) -> &'static str {
    let after_command = line.split_once(": ").map_or("", |(_, rest)| rest);
    if line.starts_with("error:") {
        "<3>"
    } else if line.starts_with("warning:") || after_command.starts_with("warning:") {
        "<4>"
    } else {
        ""
    }
}

/// Whether stderr is the journal's stream: systemd sets `JOURNAL_STREAM=DEV:INODE` to the
/// stream it connects, and a child whose stderr was redirected elsewhere inherits the variable,
/// so the device and inode of stderr itself must match (systemd.exec(5)).
fn to_journal() -> bool {
    static JOURNAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *JOURNAL.get_or_init(|| {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let Some(stream) = std::env::var_os("JOURNAL_STREAM") else {
            return false;
        };
        let Some(meta) = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| std::fs::File::from(fd).metadata().ok())
        else {
            return false;
        };
        stream.to_str() == Some(format!("{}:{}", meta.dev(), meta.ino()).as_str())
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_and_warnings_get_their_journal_priority() {
        assert_eq!(priority("error: unknown employee E9"), "<3>");
        assert_eq!(priority("warning: 2 rows refused"), "<4>");
        assert_eq!(
            priority("init-day: warning: the department queues were not declared"),
            "<4>"
        );
        assert_eq!(priority("settle: 120 rows written"), "");
        assert_eq!(priority("a note: error: not at the start"), "");
    }
}
