//! Laying out a day's boards from the MySQL roster, a slice of departments at a time: one thread
//! reads the next slice's members while Redis lays out this one, so the time is the slower of
//! the two rather than their sum, and memory holds a couple of slices, never the whole roster.
//! `init-day` and settle (the next work day) both lay out through here.

use std::sync::mpsc;

use anyhow::Result;
use chrono::NaiveDate;
use redis::ConnectionLike;

use crate::board::{self, LayoutReport};
use crate::db;
use crate::keys::Keys;

/// Departments per slice: enough employees for the pipelines to stay full.
pub const DEPTS_PER_SLICE: usize = 50;

/// Lay out `date` for the active members of `depts` (every department that has some), and
/// report the totals. `progress` gets each slice's number of employees.
pub fn lay_out(
    mysql: &mut (impl mysql::prelude::Queryable + Send),
    con: &mut impl ConnectionLike,
    keys: &Keys,
    date: NaiveDate,
    depts: &[String],
    mut progress: impl FnMut(usize),
) -> Result<LayoutReport> {
    let mut report = LayoutReport {
        date: date.to_string(),
        ..LayoutReport::default()
    };
    let (tx, rx) = mpsc::sync_channel::<Vec<db::roster::Member>>(2);
    std::thread::scope(|s| {
        let reader = s.spawn(move || -> Result<()> {
            for slice in depts.chunks(DEPTS_PER_SLICE) {
                let members = db::roster::active_members_of(mysql, slice, true)?;
                if !members.is_empty() && tx.send(members).is_err() {
                    // Redis failed: its error is the one to report.
                    break;
                }
            }
            Ok(())
        });
        let laid = (|| -> Result<()> {
            for members in rx {
                let part = board::layout_day(con, keys, date, &members, |_| {})?;
                report.departments += part.departments;
                report.employees += part.employees;
                report.laid_out += part.laid_out;
                progress(part.employees);
            }
            Ok(())
        })();
        let read = reader.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        laid.and(read)
    })?;
    Ok(report)
}
