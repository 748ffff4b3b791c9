//! `attendance watch-dept`: a supervisor's view of one department's queue, as lines (`dept`)
//! or as a live screen: its state (`screen`), drawn from that state alone (`draw`), the
//! terminal and its key loop (`live`), and the absence alert's panel (`alert`).

mod alert;
pub(super) mod dept;
mod draw;
mod live;
mod screen;
