//! Who works here: the roster file and its import plan and listing, employment dates, and who
//! may act on whose day.

pub(crate) mod accounts;
pub(crate) mod authority;
pub(crate) mod employment;
pub(crate) mod roster;
pub(crate) mod roster_list;
pub(crate) mod roster_plan;
