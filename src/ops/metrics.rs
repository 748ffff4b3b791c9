//! The jobs' figures as a node_exporter textfile (`--metrics-file`), for Prometheus to alert
//! on a settle that failed or did not run, or a relay with events stuck in the outboxes.
//!
//! The file is written beside its final name and renamed over it (`crate::files`):
//! node_exporter reads the directory at any moment and must never see half a file.

use std::fmt::Write as _;
use std::path::Path;
use std::time::SystemTime;

use anyhow::Result;

use crate::domain::day::policy::DayStatus;
use crate::ops::relay::DrainReport;
use crate::ops::settle::Report;

/// A textfile being built: each metric with its HELP and TYPE lines once.
#[derive(Debug, Default)]
pub(crate) struct Textfile {
    text: String,
}

/// A value not known this run (the run stopped before it could count it): written as `NaN`,
/// so that every series is in every file and none is left looking current from an older run.
pub(crate) const UNKNOWN: f64 = f64::NAN;

impl Textfile {
    /// One gauge sample; `help` is written with the first sample of that name only.
    pub(crate) fn gauge(&mut self, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        self.sample("gauge", name, help, labels, value);
    }

    /// One counter sample: a count that only grows while its process lives (`rate()` and
    /// `increase()` take a restart's reset in their stride). Its name ends in `_total`.
    pub(crate) fn counter(&mut self, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        debug_assert!(name.ends_with("_total"), "a counter's name ends in _total: {name}");
        self.sample("counter", name, help, labels, value);
    }

    fn sample(&mut self, kind: &str, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        if !self.text.contains(&format!("# TYPE {name} {kind}\n")) {
            let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
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

    /// The exposition as written: `attendance metrics` prints it.
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
/// report when it ran to the end. A run that stopped early writes every series all the same:
/// its counts as [`UNKNOWN`], and the events pending in the outboxes as read from Redis
/// (`pending`; unknown when Redis could not be read either).
pub(crate) fn settle(
    report: Option<&Report>,
    pending: Option<usize>,
    outcome: &str,
    started: SystemTime,
    seconds: f64,
) -> Textfile {
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
    let known = |f: fn(&Report) -> f64| report.map_or(UNKNOWN, f);
    t.gauge(
        "attendance_settle_day_timestamp_seconds",
        "The day the last run settled (its midnight, UTC).",
        &[],
        known(|r| r.date.and_hms_opt(0, 0, 0).map_or(0, |d| d.and_utc().timestamp()) as f64),
    );
    t.gauge(
        "attendance_settle_employees",
        "Active employees of the settled day.",
        &[],
        known(|r| r.employees as f64),
    );
    t.gauge(
        "attendance_settle_rows_written",
        "Attendance rows the last run wrote.",
        &[],
        known(|r| r.rows_written as f64),
    );
    // Every status, zeros included, so that a series never vanishes from one night to the next.
    for status in DayStatus::ALL.iter().map(|s| s.as_str()) {
        t.gauge(
            "attendance_settle_rows",
            "The settled day's attendance rows by status.",
            &[("status", status)],
            report.map_or(UNKNOWN, |r| r.counts.get(status).copied().unwrap_or(0) as f64),
        );
    }
    t.gauge(
        "attendance_settle_failed_rows",
        "Rows the last run could not write.",
        &[],
        known(|r| r.failed as f64),
    );
    t.gauge(
        "attendance_settle_refused_punches",
        "Punches the last run refused: on a board or in a punch log with no good signed record behind them.",
        &[],
        known(|r| r.refused_punches.total() as f64),
    );
    t.gauge(
        "attendance_settle_events_pending",
        "Notifications still in the Redis outboxes after the run.",
        &[],
        report
            .map(|r| r.outbox.pending)
            .or(pending)
            .map_or(UNKNOWN, |n| n as f64),
    );
    t
}

/// A relay drain (or, with `--follow`, the latest round and the totals since start). `last`:
/// the drain, or with no broker the outboxes as read from Redis ([`crate::ops::relay::backlog`]);
/// `None` only when Redis could not be read either (the counts are then [`UNKNOWN`]).
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
    t.counter(
        "attendance_relay_events_sent_total",
        "Events the broker confirmed since this relay started.",
        &[],
        sent_total as f64,
    );
    t.gauge(
        "attendance_relay_events_pending",
        "Events still waiting in the Redis outboxes after the last drain (read from Redis when the broker could not be reached).",
        &[],
        last.map_or(UNKNOWN, |r| r.pending as f64),
    );
    t.gauge(
        "attendance_relay_departments",
        "Departments whose outbox held events at the last drain.",
        &[],
        last.map_or(UNKNOWN, |r| r.departments as f64),
    );
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
    fn counters_are_typed_as_counters_and_every_series_is_written_without_a_drain() {
        let t = relay(None, 7, false, SystemTime::UNIX_EPOCH, 0.5);
        let text = t.as_str();
        assert!(
            text.contains("# TYPE attendance_relay_events_sent_total counter\nattendance_relay_events_sent_total 7\n"),
            "{text}"
        );
        assert!(text.contains("attendance_relay_events_pending NaN\n"), "{text}");
        assert!(text.contains("attendance_relay_departments NaN\n"), "{text}");
        let t = settle(None, Some(3), "error", SystemTime::UNIX_EPOCH, 1.0);
        let text = t.as_str();
        assert!(text.contains("attendance_settle_events_pending 3\n"), "{text}");
        assert!(
            text.contains("attendance_settle_rows{status=\"absent\"} NaN\n"),
            "{text}"
        );
        assert!(text.contains("attendance_settle_rows_written NaN\n"), "{text}");
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
