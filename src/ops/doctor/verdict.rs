//! A `doctor` verdict: one check's name, its level and the one line that says why. Every
//! family of checks (`mod.rs`, `backlog`, `grants`, `nodes`) makes them the same way.

use serde::Serialize;

/// A check's verdict, mildest first. `Skip`: not checked (said why), counts as ok.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Level {
    Ok,
    Skip,
    Warn,
    Fail,
}

impl Level {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Skip => "skip",
            Level::Warn => "warn",
            Level::Fail => "fail",
        }
    }
}

/// One check: what was looked at, the verdict, and one line that says why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    pub name: &'static str,
    pub status: Level,
    pub detail: String,
}

pub(crate) fn check(name: &'static str, status: Level, detail: impl Into<String>) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
    }
}
