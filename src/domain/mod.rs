//! The domain: pure rules and formats, no store and no I/O but the files a user hands in.
//! Policy (late, early, the day a punch belongs to, and the `Policy` settings the
//! configuration fills in), the work calendar, the roster, the check-in event, dates, an
//! employee's day as stored, and the formats of what comes in (CSV files) and goes out
//! (report tables, workbooks).
//!
//! May import: `domain` and `error` (for its error type) only: no store, no `config`, no
//! operation. Everything above reads it. `tests/architecture.rs` checks this.

pub mod csv_input;
pub mod dates;
pub mod day_record;
pub mod event;
pub mod policy;
pub mod punch_file;
pub mod roster;
pub mod sample_day;
pub mod summary;
pub mod table;
pub mod workdays;
pub mod xlsx;
