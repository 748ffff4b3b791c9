//! The kiosk's and the employee's commands: `checkin` one punch (`single`) or a file or stream of
//! them (`bulk`), `status`, and the supervisor's `review` of held punches and `punch void`.

pub(super) mod bulk;
pub(super) mod punch;
pub(super) mod review;
pub(super) mod review_bulk;
pub(super) mod single;
pub(super) mod status;
