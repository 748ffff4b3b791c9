//! The integration tests, one binary: the real `attendance` binary run against the real Redis,
//! MySQL and RabbitMQ, each test in its own database and namespace (`tests/common`). One module
//! per command family, then one per concern that crosses the commands.

// The helpers live once, beside this binary's folder: `tests/common`.
#[path = "../common/mod.rs"]
mod common;

// Command families.
mod checkin;
mod clock;
mod config;
mod correct;
mod doctor;
mod init_day;
mod people;
mod relay;
mod report;
mod review;
mod settle;
mod void;
mod watch;

// Concerns across the commands.
mod architecture;
mod clusters;
mod durability;
mod json_contract;
mod month;
mod mysql_years;
mod operations;
mod quickstart;
mod security;
