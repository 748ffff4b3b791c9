//! A day's boards in Redis: laid out from the MySQL roster (`layout`, `attendance init-day`,
//! and settle for the next work day), and rebuilt from the event journal after Redis lost them
//! (`recover`, and settle's reconcile).

pub(crate) mod layout;
pub(crate) mod recover;
