//! attendance: the daily attendance of a company on Redis (the day's boards), RabbitMQ
//! (supervisors' notifications) and MySQL (the record). The binary in `main.rs` is a thin
//! shell over this library, which the tests, examples and benchmarks use too.

pub mod archive;
pub mod board;
pub mod bulk;
pub mod calendar;
pub mod cli;
pub mod commands;
pub mod config;
pub mod csvfile;
pub mod dates;
pub mod db;
pub mod doctor;
pub mod error;
pub mod event;
pub mod interrupt;
pub mod keys;
pub mod layout;
pub mod metrics;
pub mod notify;
pub mod ops;
pub mod output;
pub mod policy;
pub mod recover;
pub mod report;
pub mod roster;
pub mod services;
pub mod settle;
pub mod simulate;
pub mod xlsx;
