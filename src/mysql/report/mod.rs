//! HR's questions to the record: the reports' queries (a day, a range, a department, an
//! employee, the punch log), the month sheet's and payroll's rows, streamed, and one
//! employee's month for the timesheet.

mod members;
pub(crate) mod month_rows;
pub(crate) mod payroll_rows;
pub(crate) mod report_queries;
mod slices;
pub(crate) mod timesheet_rows;
