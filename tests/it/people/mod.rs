//! The company's people and time: the roster and its imports, shifts, the work calendar, pay
//! periods that close, the rulebook of policy, and
//! an employee moved to another department mid-day.

mod calendar;
mod move_mid_day;
mod org;
mod periods;
mod policy;
mod roster;
mod shifts;
