//! The company's people and time: the roster and its imports, shifts, the work calendar, and
//! an employee moved to another department mid-day.

mod calendar;
mod move_mid_day;
mod org;
mod roster;
mod shifts;
