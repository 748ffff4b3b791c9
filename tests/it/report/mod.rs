//! Reports read back: every format of the day reports, the month sheet and its workbook, and
//! the roll call of who is in now.

mod formats;
mod month;
mod roll_call;
