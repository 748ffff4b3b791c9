//! Operations: what a command does, as one call, one module per command family. An operation
//! takes the configuration and plain values, applies the domain's rules, reaches each store
//! through its folder (`redis`, `mysql`, `amqp`), returns a value and prints nothing; it
//! knows nothing of clap. A store type a command needs is re-exported by its operation.
//!
//! May import: `ops`, `domain`, the store folders by the project's own types (never the
//! `redis`, `mysql` or `amiquip` crates), `config`, `error`, `interrupt`; never `cli` or
//! `output`. Only `cli` imports `ops`. `tests/architecture.rs` checks this.

pub(crate) mod archive;
pub(crate) mod bulk;
pub(crate) mod bulk_stream;
pub(crate) mod calendar;
pub(crate) mod checkin;
pub(crate) mod correct;
pub(crate) mod db;
pub(crate) mod dlq;
pub(crate) mod doctor;
mod doctor_backlog;
mod doctor_grants;
mod doctor_redis;
pub(crate) mod exit;
pub(crate) mod init_day;
pub(crate) mod leave;
pub(crate) mod metrics;
pub(crate) mod org;
pub(crate) mod queues;
pub(crate) mod recover;
pub(crate) mod relay;
pub(crate) mod reopen;
pub(crate) mod report;
pub(crate) mod resettle;
pub(crate) mod review;
pub(crate) mod roll_call;
pub(crate) mod settle;
pub(crate) mod shift_changes;
pub(crate) mod shifts;
pub(crate) mod status;
pub(crate) mod void;
pub(crate) mod watch;

/// Settle's one-line warning when its Redis keeps nothing on disk or may evict keys; nothing
/// when Redis cannot be reached (settle reports that itself, with its retries).
pub(crate) fn settle_warning(cfg: &crate::config::Config) -> Option<String> {
    crate::redis::persistence::warning_for(cfg)
}
