//! Redis: the day's boards, the roster lookup, the per-department outboxes, the relay's
//! hand-offs, and the connections (one node or a cluster) they all go through. The `redis`
//! crate is named only under this folder: the rest of the program holds a [`Board`] (one
//! connection and its namespace's key names) and calls its methods. Nothing here imports
//! from `ops`, `cli` or `amqp`.

mod alerts;
pub(crate) mod board;
pub(crate) mod cluster;
mod conn;
pub(crate) mod copies;
pub(crate) mod cutover;
mod dump;
pub(crate) mod failure;
mod handle;
pub(crate) mod handoff;
pub(crate) mod journaled;
pub(crate) mod keys;
mod layout;
pub(crate) mod moves;
mod outbox;
mod overlap;
pub(crate) mod server;
pub(crate) mod settled_days;
mod void;

pub use handle::{Board, Keyspace, Redis};
