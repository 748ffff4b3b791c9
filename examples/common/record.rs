//! The benchmark's record: BENCHMARKS.md's first table is the latest full run. A run compares
//! each headline figure with the same step's recorded figure and names every step more than
//! 20% worse, so that a regression is seen the day it lands; `--record` makes the run the new
//! first table (with its date, commit and machine load) and keeps the previous one below it.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};

/// A step worse than its record by more than this share is named.
const WORSE: f64 = 0.20;

/// Which way a step's headline figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// The headline number of a figure cell: its ratio to the same-run reference where it has one
/// (`... = 1.09x LOAD DATA`, `0.77x`), which a faster or slower machine moves less than a
/// time; otherwise its first number (`2.93 s for ...`, `median 3.28 ms`).
pub fn headline(figure: &str) -> Option<f64> {
    let ratio = |token: &str| token.strip_suffix('x').and_then(|r| r.parse::<f64>().ok());
    let after_equals = figure.match_indices("= ").find_map(|(i, _)| {
        let token = figure[i + 2..].split_whitespace().next()?;
        ratio(token.trim_end_matches([',', ';']))
    });
    if let Some(v) = after_equals {
        return Some(v);
    }
    if let Some(v) = figure.split_whitespace().next().and_then(ratio) {
        return Some(v);
    }
    figure
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|t| !t.is_empty() && t.parse::<f64>().is_ok())
        .and_then(|t| t.parse().ok())
}

/// The first table of BENCHMARKS.md: step -> figure cell, and the paragraph that dates it.
pub struct Record {
    steps: HashMap<String, String>,
    pub dated: String,
}

impl Record {
    /// Read `path`; an absent file or table is an empty record (nothing to compare with).
    pub fn read(path: &Path) -> Record {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let latest = latest_block(&text);
        let mut steps = HashMap::new();
        for line in latest.lines().filter(|l| l.starts_with("| ")) {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            if cells.len() >= 2 && cells[0] != "step" && !cells[0].starts_with("---") {
                steps.insert(cells[0].to_string(), cells[1].to_string());
            }
        }
        let dated = latest
            .lines()
            .find(|l| l.starts_with("Run of "))
            .or_else(|| latest.lines().find(|l| l.contains(" UTC") && l.contains("20")))
            .unwrap_or("")
            .trim()
            .to_string();
        Record { steps, dated }
    }

    /// How `figure` of `step` compares with the record: `None` when the record has no such
    /// step or no number; else the recorded figure's headline, this one's, and whether it is
    /// more than 20% worse.
    pub fn compare(&self, step: &str, figure: &str, better: Better) -> Option<Compared> {
        let then = headline(self.steps.get(step)?)?;
        let now = headline(figure)?;
        if then <= 0.0 {
            return None;
        }
        let change = (now - then) / then;
        let worse = match better {
            Better::Lower => change > WORSE,
            Better::Higher => change < -WORSE,
        };
        Some(Compared {
            then,
            now,
            change,
            worse,
        })
    }
}

/// One step beside its record.
pub struct Compared {
    pub then: f64,
    pub now: f64,
    pub change: f64,
    pub worse: bool,
}

impl std::fmt::Display for Compared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "recorded {} -> now {} ({:+.0}%){}",
            self.then,
            self.now,
            self.change * 100.0,
            if self.worse { ": MORE THAN 20% WORSE" } else { "" }
        )
    }
}

/// The latest run's block: from the title to the first `## ` section.
fn latest_block(text: &str) -> &str {
    let start = text.find('\n').map_or(0, |i| i + 1);
    let end = text[start..].find("\n## ").map_or(text.len(), |i| start + i + 1);
    &text[start..end]
}

/// Make `block` (this run's dated table) BENCHMARKS.md's first, the previous first kept below
/// it as the first earlier run.
pub fn record(path: &Path, block: &str) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let title_end = text.find('\n').map_or(text.len(), |i| i + 1);
    let old = latest_block(&text);
    let rest = &text[title_end + old.len()..];
    let updated = format!(
        "{}\n{}\n## The run before\n\n{}\n{}",
        &text[..title_end],
        block.trim_end(),
        old.trim(),
        if rest.is_empty() {
            String::new()
        } else {
            format!("\n{rest}")
        }
    );
    std::fs::write(path, updated).with_context(|| format!("writing {}", path.display()))
}

/// The current commit (`git rev-parse --short HEAD`), or `unknown` outside a checkout.
pub fn commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("unknown".into(), |o| {
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        })
}

/// The machine's load averages (1, 5, 15 minutes), as /proc/loadavg has them.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_takes_the_ratio_then_the_first_number() {
        assert_eq!(headline("0.44 s = 1.09x LOAD DATA; peak RSS 32 MB"), Some(1.09));
        assert_eq!(headline("423049 punches/s = 4.16x HSET; Redis spent"), Some(4.16));
        assert_eq!(headline("0.77x"), Some(0.77));
        assert_eq!(headline("2.93 s for 96969 punches = 33121/s"), Some(2.93));
        assert_eq!(headline("median 3.28 ms = 0.90x PING, p99 5.19 ms"), Some(0.90));
        assert_eq!(headline("median 8.10 ms, p99 11.86 ms"), Some(8.10));
        assert_eq!(headline("-"), None);
    }
}
