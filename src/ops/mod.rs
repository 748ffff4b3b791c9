//! Operations: what a command does, as one call. An operation takes the configuration and
//! plain values, reaches each store only through its own module (`board` for Redis, `db` for
//! MySQL, `notify` for AMQP), returns a value and prints nothing; it knows nothing of clap.
//! A command parses its arguments, calls one operation and renders what it returns.

pub mod calendar;
pub mod checkin;
pub mod correct;
pub mod leave;
pub mod org;
pub mod partition;
pub mod queues;
pub mod report;
pub mod status;
