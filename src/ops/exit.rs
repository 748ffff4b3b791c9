//! Every store's word on its own client errors, handed to the chain walk of `crate::error`:
//! the one line `main` prints, and the exit code it picks. It lives with the operations, the
//! one layer that knows every store, so that `error` itself names no store and no import runs
//! in a circle.

use crate::error::{exit_code_with, one_line_with, StoreCheck};

/// Each store's check, in the order the old single walk asked them.
const STORES: [StoreCheck; 3] = [
    crate::redis::failure::says,
    crate::mysql::failure::says,
    crate::amqp::failure::says,
];

/// The exit code for any error (see [`crate::error::exit_code_with`]).
pub fn exit_code_of(err: &anyhow::Error) -> i32 {
    exit_code_with(err, &STORES)
}

/// One line for stderr: the error and its causes, joined, passwords redacted (see
/// [`crate::error::one_line_with`]), and inert: a bad id or name quoted in it shows its control
/// characters as `\u{1b}`, so an error line can neither move the cursor nor start a new line.
pub fn one_line(err: &anyhow::Error) -> String {
    crate::domain::text::inert(&one_line_with(err, &STORES)).into_owned()
}
