//! Operations: what a command does, as one call, grouped by command family in folders:
//! `checkin` (punches, review, void, status), `settle` (the nightly write to MySQL, and the
//! changes after it: corrections, re-settles), `relay` (notifications: outboxes, the broker's
//! queues, the parking queue), `boards` (a day laid out and rebuilt), `people` (roster, shifts,
//! leave, calendar), `report` (HR's reports, the roll call), `doctor` (the installation's
//! verdicts), `record` (schema, partitions, archive). Beside them, what every family shares:
//! `lookup` (who an employee is, their shift, who acts), `exit` (the one line of an error),
//! `reopen` (riding out a Redis restart), `metrics` (the jobs' textfile), `day_metrics` (the
//! day's figures on demand) and `watch` (the supervisor's queue and screen). An operation takes the configuration and plain values,
//! applies the domain's rules, reaches each store through its folder (`redis`, `mysql`,
//! `amqp`), returns a value and prints nothing; it knows nothing of clap.
//!
//! May import: `ops`, `domain`, the store folders by the project's own types (never the
//! `redis`, `mysql` or `amiquip` crates), `config`, `error`, `interrupt`; never `cli` or
//! `output`. Only `cli` imports `ops`. A family never reaches into a sibling's internals: what
//! two families share lives in a module of its own here. `tests/it/architecture` checks this.

pub(crate) mod boards;
pub(crate) mod checkin;
pub(crate) mod day_metrics;
pub(crate) mod doctor;
pub(crate) mod exit;
pub(crate) mod keys;
pub(crate) mod lookup;
pub(crate) mod metrics;
pub(crate) mod people;
pub(crate) mod record;
pub(crate) mod relay;
pub(crate) mod reopen;
pub(crate) mod report;
pub(crate) mod settle;
pub(crate) mod settled;
pub(crate) mod watch;

/// Settle's one-line warning when its Redis keeps nothing on disk or may evict keys; nothing
/// when Redis cannot be reached (settle reports that itself, with its retries).
pub(crate) fn settle_warning(cfg: &crate::config::Config) -> Option<String> {
    crate::redis::server::persistence::warning_for(cfg)
}
