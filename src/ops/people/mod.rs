//! The company's people and their rules of work, as HR changes them: the roster (`org`), shifts
//! and their assignments (`shifts`, `shift_changes`), approved leave (`leave`) and the work
//! calendar (`calendar`), pay periods (`periods`), the company's rulebook of policy versions
//! (`policy`) and the decisions on overtime (`overtime`). A change that reaches days already
//! settled re-settles them (`ops::settle::resettle`).

pub(crate) mod calendar;
pub(crate) mod leave;
pub(crate) mod org;
pub(crate) mod overtime;
pub(crate) mod periods;
pub(crate) mod policy;
pub(crate) mod shift_changes;
pub(crate) mod shifts;

use serde::Serialize;

/// What an import (shifts, assignments, calendar entries) does, or would do, to one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Difference {
    /// Nothing there yet.
    New,
    /// There, with other values.
    Changed,
    /// There, the same.
    Unchanged,
}

impl Difference {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Difference::New => "new",
            Difference::Changed => "changed",
            Difference::Unchanged => "unchanged",
        }
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
