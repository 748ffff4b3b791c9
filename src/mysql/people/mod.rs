//! The company's people and rules of work as MySQL holds them: the roster (imported, read), the
//! shifts and their assignments, approved leave, the work calendar, the rulebook of policy versions
//! and the decisions on overtime.

pub(crate) mod calendar_rows;
pub(crate) mod leave_rows;
pub(crate) mod overtime_rows;
pub(crate) mod periods;
pub(crate) mod policy_rows;
pub(crate) mod roster_import;
pub(crate) mod roster_rows;
pub(crate) mod shift_rows;
