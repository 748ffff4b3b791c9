//! The domain: pure rules and formats, no store and no I/O but the files a user hands in. By
//! family, each taking only from those listed before it: the primitives here (text, dates,
//! instants, CSV reading, a punch's kind); `people` (the roster, employment, accounts, who may
//! act); `day` (the policy, shifts and their clocks, the calendar, who is due, the day's record,
//! hours); `event` (the check-in event, its record, signature and wire JSON, alerts and void
//! notices); `report` (month, payroll, roll call, tables, workbooks) and `formats` (punch and
//! shift files, the sample day).
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
