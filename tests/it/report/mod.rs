//! Reports read back: every format of the day reports, the month sheet and its workbook, and
//! the roll call of who is in now, a week of worked days computed by hand, and overtime by the
//! rulebook computed by hand.

mod formats;
mod month;
mod overtime;
mod roll_call;
mod worked_days;
