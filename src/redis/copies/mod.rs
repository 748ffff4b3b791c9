//! Redis's copies of what MySQL holds, read on the punch path without MySQL: the roster cache,
//! the company's rules (shift table and rulebook) and the key registry.

pub(crate) mod key_registry;
pub(crate) mod roster_cache;
mod shift_copy;
