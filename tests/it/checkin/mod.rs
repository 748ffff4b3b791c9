//! Recording punches: one `checkin`, a file of them, a stream on a pipe, in any order, with
//! times as people type them and values that must be refused; the punch script against its
//! model.

mod board_script;
mod bulk;
mod odd_values;
mod order;
mod single;
mod stream;
mod typed_times;
