//! Reports read back: every format of the day reports, the month sheet and its workbook, and
//! the roll call of who is in now, and a week of worked days computed by hand.

mod formats;
mod month;
mod roll_call;
mod worked_days;
