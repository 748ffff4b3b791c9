//! Configuration and the command line every command shares: usage, help, layers of settings,
//! config errors an admin can act on, and `config show`.

mod errors;
mod show;
mod usage;
