//! What Redis holds of MySQL's tables for the hot path: the roster (`roster_cache`), the shift
//! table and the rulebook of policy versions (`shift_copy`) and the registry of kiosk keys
//! (`key_registry`), each rewritten from MySQL and read without it.

pub(crate) mod key_registry;
pub(crate) mod roster_cache;
mod shift_copy;
