//! The jobs' figures as a node_exporter textfile (`--metrics-file`), for Prometheus to alert
//! on a settle that failed or did not run, or a relay with events stuck in the outboxes.
//!
//! The file is written beside its final name and renamed over it (`crate::files`):
//! node_exporter reads the directory at any moment and must never see half a file.

use std::fmt::Write as _;
use std::path::Path;
use std::time::SystemTime;

use anyhow::Result;

use crate::domain::policy::DayStatus;
use crate::ops::relay::DrainReport;
use crate::ops::settle::Report;

/// A textfile being built: each metric with its HELP and TYPE lines once.
#[derive(Debug, Default)]
pub(crate) struct Textfile {
    text: String,
}

impl Textfile {
    /// One gauge sample; `help` is written with the first sample of that name only.
    pub(crate) fn gauge(&mut self, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        if !self.text.contains(&format!("# TYPE {name} gauge\n")) {
            let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} gauge");
        }
        let labels: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect();
        let labels = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", labels.join(","))
        };
        let _ = writeln!(self.text, "{name}{labels} {value}");
    }

    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// Write to `path` whole (`crate::files`): node_exporter reads only `*.prom`, and the
    /// temporary file beside it ends in `.tmp`.
    pub(crate) fn write(&self, path: &Path) -> Result<()> {
        crate::files::write(path, self.text.as_bytes())
    }
}

/// The one line said of a metrics file that could not be written: the file and why (the
/// cause alone, as the system said it: "Read-only file system (os error 30)").
pub(crate) fn not_written(path: &Path, err: &anyhow::Error) -> String {
    let why = err.root_cause().to_string().replace(['\n', '\r'], " ");
    format!("--metrics-file {} not written: {why}", path.display())
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A settle run: its outcome (`ok`, `partial`, or `error` when it stopped early), and the
/// report when it ran to the end.
pub(crate) fn settle(report: Option<&Report>, outcome: &str, started: SystemTime, seconds: f64) -> Textfile {
    let mut t = Textfile::default();
    t.gauge(
        "attendance_settle_last_run_timestamp_seconds",
        "When the last settle run started (Unix time).",
        &[],
        unix(started),
    );
    t.gauge(
        "attendance_settle_duration_seconds",
        "How long the last settle run took.",
        &[],
        seconds,
    );
    for o in ["ok", "partial", "error"] {
        t.gauge(
            "attendance_settle_outcome",
            "1 for the last settle run's outcome: ok, partial (some rows failed) or error (stopped).",
            &[("outcome", o)],
            f64::from(u8::from(o == outcome)),
        );
    }
    let Some(r) = report else {
        return t;
    };
    let day = r.date.and_hms_opt(0, 0, 0).map_or(0, |d| d.and_utc().timestamp());
    t.gauge(
        "attendance_settle_day_timestamp_seconds",
        "The day the last run settled (its midnight, UTC).",
        &[],
        day as f64,
    );
    t.gauge(
        "attendance_settle_employees",
        "Active employees of the settled day.",
        &[],
        r.employees as f64,
    );
    t.gauge(
        "attendance_settle_rows_written",
        "Attendance rows the last run wrote.",
        &[],
        r.rows_written as f64,
    );
    // Every status, zeros included, so that a series never vanishes from one night to the next.
    for status in DayStatus::ALL.iter().map(|s| s.as_str()) {
        t.gauge(
            "attendance_settle_rows",
            "The settled day's attendance rows by status.",
            &[("status", status)],
            r.counts.get(status).copied().unwrap_or(0) as f64,
        );
    }
    t.gauge(
        "attendance_settle_failed_rows",
        "Rows the last run could not write.",
        &[],
        r.failed as f64,
    );
    t.gauge(
        "attendance_settle_events_pending",
        "Notifications still in the Redis outboxes after the run.",
        &[],
        r.outbox.pending as f64,
    );
    t
}

/// A relay drain (or, with `--follow`, the latest round and the totals since start).
pub(crate) fn relay(
    last: Option<&DrainReport>,
    sent_total: usize,
    ok: bool,
    started: SystemTime,
    seconds: f64,
) -> Textfile {
    let mut t = Textfile::default();
    t.gauge(
        "attendance_relay_last_run_timestamp_seconds",
        "When the last relay drain started (Unix time).",
        &[],
        unix(started),
    );
    t.gauge(
        "attendance_relay_duration_seconds",
        "How long the last relay drain took.",
        &[],
        seconds,
    );
    t.gauge(
        "attendance_relay_success",
        "1 if the last drain reached the broker and left nothing pending.",
        &[],
        f64::from(u8::from(ok)),
    );
    t.gauge(
        "attendance_relay_events_sent",
        "Events the broker confirmed since this relay started.",
        &[],
        sent_total as f64,
    );
    if let Some(r) = last {
        t.gauge(
            "attendance_relay_events_pending",
            "Events still waiting in the Redis outboxes after the last drain.",
            &[],
            r.pending as f64,
        );
        t.gauge(
            "attendance_relay_departments",
            "Departments whose outbox held events at the last drain.",
            &[],
            r.departments as f64,
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_and_type_once_per_name_and_labels_escaped() {
        let mut t = Textfile::default();
        t.gauge("m", "help", &[("s", "a\"b")], 1.0);
        t.gauge("m", "help", &[("s", "c")], 2.5);
        assert_eq!(
            t.as_str(),
            "# HELP m help\n# TYPE m gauge\nm{s=\"a\\\"b\"} 1\nm{s=\"c\"} 2.5\n"
        );
    }

    #[test]
    fn the_write_replaces_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("att-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.prom");
        std::fs::write(&path, "old").unwrap();
        let mut t = Textfile::default();
        t.gauge("m", "h", &[], 3.0);
        t.write(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), t.as_str());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
