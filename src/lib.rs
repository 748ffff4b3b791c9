//! attendance: the daily attendance of a company on Redis (the day's boards), RabbitMQ
//! (supervisors' notifications) and MySQL (the record). The binary in `main.rs` is a thin
//! shell over this library, which the tests, examples and benchmarks use too.

pub mod amqp;
pub mod cli;
pub mod config;
pub mod domain;
pub mod error;
pub mod interrupt;
pub mod mysql;
pub mod ops;
pub mod output;
pub mod redis;
