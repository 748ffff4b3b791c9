//! Operations: what a command does, as one call. An operation takes the configuration and
//! plain values, reaches each store only through its own module (`board` for Redis, `db` for
//! MySQL, `notify` for AMQP), returns a value and prints nothing; it knows nothing of clap.
//! A command parses its arguments, calls one operation and renders what it returns.

pub mod archive;
pub mod bulk;
pub mod calendar;
pub mod checkin;
pub mod correct;
pub mod db;
pub mod doctor;
pub mod init_day;
pub mod leave;
pub mod metrics;
pub mod org;
pub mod queues;
pub mod recover;
pub mod relay;
pub mod report;
pub mod settle;
pub mod status;
pub mod watch;

/// Settle's one-line warning when its Redis keeps nothing on disk or may evict keys; nothing
/// when Redis cannot be reached (settle reports that itself, with its retries).
pub fn settle_warning(cfg: &crate::config::Config) -> Option<String> {
    crate::redis::persistence::warning_for(cfg)
}
