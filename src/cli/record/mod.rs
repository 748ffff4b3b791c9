//! The record's upkeep: `migrate` (the schema), `db partition` and `archive`.

pub(super) mod archive;
pub(super) mod db;
pub(super) mod migrate;
