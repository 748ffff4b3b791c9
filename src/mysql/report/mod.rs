//! HR's questions to the record: the reports' queries (a day, a range, a department, an
//! employee, the punch log) and the month sheet's and payroll's rows, streamed.

pub(crate) mod month_rows;
pub(crate) mod report_queries;
