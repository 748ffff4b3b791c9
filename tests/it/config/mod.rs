//! Configuration and the command line every command shares: usage, help, layers of settings,
//! and `config show`.

mod show;
mod usage;
