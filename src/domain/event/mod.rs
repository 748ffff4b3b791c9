//! What a department's queue carries: a punch's event (its record in the outbox, its signature
//! alone or a batch's, its wire JSON), the absence alert, the void notice, the message types
//! that tell them apart, the memberships a consumer checks them against, and the punch log's
//! entries.

pub(crate) mod alert;
pub(crate) mod backing;
pub(crate) mod batch;
pub(crate) mod membership;
pub(crate) mod message;
pub(crate) mod punch_log;
pub(crate) mod record;
pub(crate) mod render;
pub(crate) mod signer;
pub(crate) mod signing;
pub(crate) mod void_notice;
