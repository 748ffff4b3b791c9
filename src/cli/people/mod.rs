//! HR's commands on the company's people and rules of work: `org`, `shifts`, `leave`,
//! `calendar`, `policy`, pay periods (`period`) and decisions on overtime (`overtime`), and
//! the lines that say what a change re-settled (`resettled`).

pub(super) mod calendar;
pub(super) mod leave;
pub(super) mod org;
pub(super) mod overtime;
pub(super) mod period;
pub(super) mod policy;
mod resettled;
pub(super) mod shifts;
