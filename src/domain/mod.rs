//! The domain: pure rules and formats, no store and no I/O but the files a user hands in.
//! Policy (late, early, the day a punch belongs to, and the `Policy` settings the
//! configuration fills in), the work calendar, the roster, the check-in event, dates, an
//! employee's day as stored, and the formats of what comes in (CSV files) and goes out
//! (report tables, workbooks).
//!
//! May import: `domain` and `error` (for its error type) only: no store, no `config`, no
//! operation. Everything above reads it. `tests/it/architecture` checks this.

pub(crate) mod csv_input;
pub(crate) mod dates;
pub(crate) mod day;
pub(crate) mod event;
pub(crate) mod formats;
pub(crate) mod instant;
pub(crate) mod people;
pub(crate) mod punch;
pub(crate) mod report;
pub(crate) mod text;
