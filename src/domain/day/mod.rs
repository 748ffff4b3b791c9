//! The day's rules: the policy and the rulebook of its versions, shifts and who follows which,
//! the work calendar, who is due, an employee's day as stored, the worked day (status and
//! minutes) and how its overtime counts, the servers' clock, and punches held for review.

pub(crate) mod clock;
pub(crate) mod due;
pub(crate) mod overtime;
pub(crate) mod policy;
pub(crate) mod record;
pub(crate) mod review;
pub(crate) mod rulebook;
pub(crate) mod shift;
pub(crate) mod shift_changes;
pub(crate) mod shift_clock;
pub(crate) mod shifts;
pub(crate) mod workdays;
pub(crate) mod worked;
