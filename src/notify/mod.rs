//! Notifications on RabbitMQ: topology, confirmed publishing from the Redis outboxes, the
//! supervisor's consumer and the parking queue. All amiquip code lives under this module;
//! the rest of the crate sees plain values and `anyhow` errors.

mod confirm;
mod connect;
mod consume;
pub mod dlq;
mod feed;
mod handoff;
mod journal;
pub mod management;
mod publish;
pub mod queues;
mod reconnect;
mod relay;
mod topology;
mod watchdog;

pub use consume::{watch_department, WatchItem, WatchOptions, WatchReport};
pub use feed::{publish_while, Feed};
pub use handoff::Handoffs;
pub use journal::{read_journal, require_journal, EndedBy, ReadReport};
pub use publish::{Connecting, Flow, Publisher};
pub use reconnect::Backoff;
pub use relay::{
    drain_departments, drain_outboxes, drain_outboxes_of, in_parallel, send_punch, DrainReport, STALE_AFTER_SECS,
};
pub use topology::{teardown, Names};
