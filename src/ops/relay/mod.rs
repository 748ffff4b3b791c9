//! Relaying the Redis outboxes into the broker: after a check-in, by `relay` (once, or
//! following the check-ins' hand-offs until stopped), and by `settle`.

mod drain;
mod feed;
mod follow;
mod handoffs;

pub use drain::{
    drain_departments, drain_once, drain_outboxes, drain_outboxes_of, in_parallel, send_punch, DrainReport,
    STALE_AFTER_SECS,
};
pub use feed::{publish_while, Feed};
pub use follow::{follow, FollowSink};
pub use handoffs::Handoffs;
