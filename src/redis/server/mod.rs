//! What the Redis server itself says, node by node: its clock (`clock`), its persistence and
//! eviction settings (`persistence`), each node's health for `doctor` (`nodes`), the version and
//! the days that still have boards (`facts`), which servers they are (`identity`), and the wait for replicas (`replication`).

pub(crate) mod clock;
pub(crate) mod facts;
pub(crate) mod identity;
pub(crate) mod nodes;
pub(crate) mod persistence;
mod replication;
