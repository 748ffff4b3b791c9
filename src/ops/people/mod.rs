//! The company's people and their rules of work, as HR changes them: the roster (`org`), shifts
//! and their assignments (`shifts`, `shift_changes`), approved leave (`leave`) and the work
//! calendar (`calendar`). A change that reaches days already settled re-settles them
//! (`ops::settle::resettle`).

pub(crate) mod calendar;
pub(crate) mod leave;
pub(crate) mod org;
pub(crate) mod shift_changes;
pub(crate) mod shifts;
