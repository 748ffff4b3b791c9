//! Notifications on RabbitMQ: topology, confirmed publishing from the Redis outboxes, the
//! supervisor's consumer and the parking queue. All amiquip code lives under this module;
//! the rest of the crate sees plain values and `anyhow` errors.

mod alerts;
mod confirm;
mod connect;
mod consume;
pub(crate) mod failure;
pub(crate) mod inventory;
mod journal;
pub(crate) mod limits;
pub(crate) mod management;
mod outstanding;
pub(crate) mod parking;
mod publish;
mod reconnect;
mod tls;
mod topology;
mod watchdog;

pub(crate) use alerts::AlertPublisher;
pub(crate) use consume::{parse_message, watch_department, ShownEvents, WatchItem, WatchOptions, WatchReport};
pub(crate) use journal::{read_journal, read_journal_to_fence, require_journal, EndedBy};
pub use publish::Publisher;
pub(crate) use publish::{Connecting, Flow, Verdicts};
pub use topology::{teardown, Names};

/// Whether every broker URL of the config reads as one (a usage error, exit 2, otherwise): for
/// a command that will need the broker later, so that a typo stops it before it touches Redis.
pub(crate) fn check_urls(cfg: &crate::config::Config) -> Result<(), crate::error::Error> {
    cfg.amqp_urls()
        .into_iter()
        .try_for_each(|u| connect::Target::parse(u).map(drop))
}
