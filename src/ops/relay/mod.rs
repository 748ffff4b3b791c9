//! Relaying the Redis outboxes into the broker: after a check-in, by `relay` (once, or
//! following the check-ins' hand-offs until stopped), and by `settle`.

mod alerts;
mod drain;
mod feed;
mod follow;
mod handoffs;
mod recent;

// The broker's side of the department queues: declared, emptied, deleted (`queues`), and the
// parking queue of notifications that failed too often (`dlq`).
pub(crate) mod dlq;
pub(crate) mod queues;

pub(crate) use drain::{backlog, backlog_of, drain_once, drain_outboxes_of, send_punch, DrainReport};
pub(crate) use feed::{publish_while, Feed};
pub(crate) use follow::{follow, FollowSink};
pub use handoffs::Handoffs;
