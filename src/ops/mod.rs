//! Operations: what a command does, as one call, one module per command family. An operation
//! takes the configuration and plain values, applies the domain's rules, reaches each store
//! through its folder (`redis`, `mysql`, `amqp`), returns a value and prints nothing; it
//! knows nothing of clap. A store type a command needs is re-exported by its operation.
//!
//! May import: `ops`, `domain`, the store folders by the project's own types (never the
//! `redis`, `mysql` or `amiquip` crates), `config`, `error`, `interrupt`; never `cli` or
//! `output`. Only `cli` imports `ops`. `tests/architecture.rs` checks this.

pub mod archive;
pub mod bulk;
pub mod calendar;
pub mod checkin;
pub mod correct;
pub mod db;
pub mod dlq;
pub mod doctor;
pub mod exit;
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
