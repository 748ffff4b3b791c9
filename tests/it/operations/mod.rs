//! What operators run and read beside the commands: workbooks, metrics files, completions, man
//! pages, install script and units, files on filesystems that refuse them, journald priorities,
//! the day's figures in Prometheus's text format.

mod files;
mod journald;
mod metrics;
mod tooling;
