//! The domain: pure rules and formats, no store and no I/O but the files a user hands in.
//! Policy (late, early, the day a punch belongs to, and the `Policy` settings the
//! configuration fills in), the work calendar, the roster, the check-in event, dates, an
//! employee's day as stored, and the formats of what comes in (CSV files) and goes out
//! (report tables, workbooks).
//!
//! May import: `domain` and `error` (for its error type) only: no store, no `config`, no
//! operation. Everything above reads it. `tests/architecture.rs` checks this.

pub(crate) mod alert;
pub(crate) mod authority;
pub(crate) mod clock;
pub(crate) mod csv_input;
pub(crate) mod dates;
pub(crate) mod day_record;
pub(crate) mod due;
pub(crate) mod employment;
pub(crate) mod event;
mod event_render;
pub(crate) mod grants;
pub(crate) mod hours;
pub(crate) mod instant;
pub(crate) mod membership;
pub(crate) mod message;
pub(crate) mod month;
pub(crate) mod payroll;
pub(crate) mod policy;
pub(crate) mod punch_file;
pub(crate) mod punch_log;
pub(crate) mod review;
pub(crate) mod roll_call;
pub(crate) mod roster;
pub(crate) mod roster_list;
pub(crate) mod roster_plan;
pub(crate) mod sample_day;
pub(crate) mod shift_changes;
pub(crate) mod shift_files;
pub(crate) mod shifts;
pub(crate) mod signing;
pub(crate) mod summary;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod void_notice;
pub(crate) mod workdays;
pub(crate) mod xlsx;
