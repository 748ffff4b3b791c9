//! Notifications on RabbitMQ: topology, confirmed publishing from the Redis outboxes, the
//! supervisor's consumer and the parking queue. All amiquip code lives under this module;
//! the rest of the crate sees plain values and `anyhow` errors.

mod confirm;
mod connect;
mod consume;
pub mod failure;
pub mod inventory;
mod journal;
pub mod management;
pub mod parking;
mod publish;
mod reconnect;
mod topology;
mod watchdog;

pub use consume::{watch_department, ShownEvents, WatchItem, WatchOptions, WatchReport};
pub use journal::{read_journal, require_journal, EndedBy, ReadReport};
pub use publish::{Connecting, Flow, Publisher};
pub use reconnect::Backoff;
pub use topology::{teardown, Names};
