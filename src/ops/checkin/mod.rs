//! The kiosk's commands: a punch recorded on its board and its supervisor notified, one at a
//! time (`single`), by file (`bulk`) or as a stream (`stream`); a back-dated punch held for a
//! supervisor's review and the review itself (`review`); a wrong punch voided (`void`); and an
//! employee's own day (`status`). What they share is `record` (one punch on its board, then its
//! notification) and `ops::lookup` (who the employee is and what shift they work).

pub(crate) mod bulk;
pub(crate) mod record;
pub(crate) mod review;
pub(crate) mod review_bulk;
pub(crate) mod single;
pub(crate) mod status;
pub(crate) mod stream;
pub(crate) mod void;
