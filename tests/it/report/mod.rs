//! Reports read back: every format of the day reports, the month sheet and its workbook, and
//! the roll call of who is in now, a week of worked days computed by hand, overtime by the
//! rulebook computed by hand, timesheets, and the month sheet and payroll read a slice at a time.

mod formats;
mod month;
mod overtime;
mod roll_call;
mod streamed;
mod timesheet;
mod worked_days;
