//! The record's upkeep in MySQL: its schema and monthly partitions (`schema`: `attendance
//! migrate`, `attendance db partition`) and old days moved out to files (`archive`).

pub(crate) mod archive;
pub(crate) mod schema;
