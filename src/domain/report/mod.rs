//! What HR and supervisors read: the month sheet, payroll's period, an employee's timesheet,
//! the roll call, a department's day at a glance, and the tables and workbooks they are rendered as.

pub(crate) mod month;
pub(crate) mod payroll;
pub(crate) mod roll_call;
pub(crate) mod summary;
pub(crate) mod table;
pub(crate) mod timesheet;
pub(crate) mod xlsx;
