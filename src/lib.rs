//! attendance: the daily attendance of a company on Redis (the day's boards), RabbitMQ
//! (supervisors' notifications) and MySQL (the record). The binary in `main.rs` is a thin
//! shell over this library.
//!
//! The layers (docs/architecture.md) are private to the crate. What this page shows is all that
//! the binary, the tests and the benchmarks use: the entry points, the configuration, the
//! stores' handles they set up and inspect the real services with, and the pure rules they
//! check. `unreachable_pub` keeps everything else `pub(crate)`.

#![warn(unreachable_pub)]

mod amqp;
mod cli;
mod config;
mod domain;
mod error;
mod files;
mod interrupt;
mod mysql;
mod ops;
mod output;
mod redis;

// The binary: parse, run, and turn any error into one line and its exit code.
pub use crate::cli::{parse as parse_cli, run, Cli};
pub use crate::domain::text::{clip, inert};
pub use crate::error::{error_line, exit, is_broken_pipe, only_warned};
pub use crate::ops::exit::{exit_code_of, one_line};
pub use crate::output::stderr_line;

// The configuration, as every command and benchmark builds it.
pub use crate::config::{check_environment, Config, Overrides, Policy, Sources};

// The pure rules and formats that tests check directly and benchmarks feed.
pub use crate::domain::day::policy::{
    day_start, is_policy_workday, local_offset_secs, DayOutcome, DayStatus, PunchWindow,
};
pub use crate::domain::day::record::DayRecord;
pub use crate::domain::event::record::{record_of, Event};
pub use crate::domain::event::render::render;
pub use crate::domain::event::signer::{ed25519_pair, Signer};
pub use crate::domain::event::signing::{sign_batch, sign_event};
pub use crate::domain::formats::punch_file::{parse as parse_punch_file, Row as PunchRow};
pub use crate::domain::people::employment::{Employment, Given};
pub use crate::domain::people::roster::{generate as generate_roster, parse as parse_roster};
pub use crate::domain::punch::Kind;

// Redis: the board handle, the punch script and the raw handle that benchmarks time Redis alone on.
pub use crate::config::redis_cluster_seeds as seed_urls;
pub use crate::redis::board::{punch_calls, Employee, Punch, PunchRules, PUNCH_SCRIPT};
pub use crate::redis::cluster::ClusterConn;
pub use crate::redis::keys::{Keys, ROSTER_PARTS};
pub use crate::redis::server::persistence::info_texts;
pub use crate::redis::{Board, Keyspace, Redis};

// MySQL: the handle, the server connection tests drop their databases with, and the rows that
// settle writes (the benchmarks' LOAD DATA reference writes the same).
pub use crate::mysql::attendance::{load_fresh, stored_from_row, unknown_employees, DayRow, Stored, SELECT_STORED};
pub use crate::mysql::conn::mysql_server;
pub use crate::mysql::people::roster_import::upsert as upsert_roster;
pub use crate::mysql::people::roster_rows::{active_members, Member};
pub use crate::mysql::{placeholders, Db};

// RabbitMQ: the names, a publisher, the broker's state and the namespace's teardown.
pub use crate::amqp::inventory::{broker_state, BrokerState};
pub use crate::amqp::management::nodes as management_nodes;
pub use crate::amqp::{teardown, Names, Publisher};

// Operations that tests and benchmarks call without the binary.
pub use crate::ops::lookup::resolve;
pub use crate::ops::record::schema::migrate;
pub use crate::ops::relay::Handoffs;
pub use crate::ops::settle::{settle, Hooks, Options as SettleOptions};
