//! The files people hand in or get: punches to check in, shifts and assignments, and a
//! realistic sample day of punches.

pub(crate) mod punch_file;
pub(crate) mod sample_day;
pub(crate) mod shift_files;
