//! The company's people and time: the roster and its imports, shifts, the work calendar, the rulebook of policy, and
//! an employee moved to another department mid-day.

mod calendar;
mod move_mid_day;
mod org;
mod policy;
mod roster;
mod shifts;
