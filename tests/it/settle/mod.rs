//! Settling a day into MySQL: every status, honest run records, the boards checked against the
//! journal first, re-settling when leave, calendar or shifts change, rest days and the nights
//! the clocks change.

mod day;
mod dst;
mod forgery;
mod honest_runs;
mod lagging_replica;
mod reconcile;
mod resettle;
mod rest_days;
mod shift_resettle;
