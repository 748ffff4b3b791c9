//! HR's questions to the record: the reports' queries (a day, a range, a department, an
//! employee, the punch log), the month sheet's and payroll's rows, streamed, and one
//! employee's month for the timesheet.

pub(crate) mod month_rows;
pub(crate) mod report_queries;
pub(crate) mod timesheet_rows;
