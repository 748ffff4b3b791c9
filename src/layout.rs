//! Laying out a day's boards from the MySQL roster, a slice of departments at a time: one thread
//! reads the next slice's members while Redis lays out this one, so the time is the slower of
//! the two rather than their sum, and memory holds a couple of slices, never the whole roster.
//! `init-day` and settle (the next work day) both lay out through here.
//!
//! The Redis roster cache is rebuilt on the way, from the same reads, only when it is not the
//! roster MySQL has (see [`Stamp`]): a day whose roster did not change reads ids alone (the
//! department index answers) and writes no roster field.

use std::sync::mpsc;

use anyhow::Result;
use chrono::NaiveDate;
use redis::ConnectionLike;

use crate::board::{self, LayoutReport, RosterRebuild};
use crate::db;
use crate::keys::Keys;
use crate::roster::{Member, Stamp};

/// Departments per slice: enough employees for the pipelines to stay full.
pub const DEPTS_PER_SLICE: usize = 50;

/// Lay out `date` for the active members of `depts`, which must be every department that has
/// some (the roster cache is rebuilt from them), and report the totals. `progress` gets each
/// slice's number of employees.
pub fn lay_out(
    mysql: &mut (impl mysql::prelude::Queryable + Send),
    con: &mut impl ConnectionLike,
    keys: &Keys,
    date: NaiveDate,
    depts: &[String],
    mut progress: impl FnMut(usize),
) -> Result<LayoutReport> {
    // Read before the members: a change made while they are read shows at the next layout.
    let changed = db::roster::last_change(mysql)?;
    let cache = board::roster_cache_state(con, keys)?;
    let mut rebuild = if cache.current(&changed) {
        None
    } else {
        Some(RosterRebuild::start(con, keys)?)
    };
    let mut report = LayoutReport {
        date: date.to_string(),
        ..LayoutReport::default()
    };
    let names = rebuild.is_some();
    for_each_slice(mysql, depts, names, |members| {
        if let Some(r) = rebuild.as_mut() {
            r.add(con, keys, members)?;
        }
        let part = board::layout_day(con, keys, date, members, |_| {})?;
        report.departments += part.departments;
        report.employees += part.employees;
        report.laid_out += part.laid_out;
        progress(part.employees);
        Ok(())
    })?;
    let stamp = Stamp {
        active: report.employees as u64,
        changed,
    };
    match rebuild {
        Some(r) => r.finish(con, keys, &stamp)?,
        // Nothing changed but the count: an employee row deleted. Rare; a pass of its own.
        None if cache.held != stamp.active => {
            let mut r = RosterRebuild::start(con, keys)?;
            for_each_slice(mysql, depts, true, |members| r.add(con, keys, members))?;
            r.finish(con, keys, &stamp)?;
        }
        None => {}
    }
    Ok(report)
}

/// Read the active members of `depts` a slice at a time (with their names or not) on a thread
/// of its own, handing each slice to `each` as the next one is read.
fn for_each_slice(
    mysql: &mut (impl mysql::prelude::Queryable + Send),
    depts: &[String],
    names: bool,
    mut each: impl FnMut(&[Member]) -> Result<()>,
) -> Result<()> {
    let (tx, rx) = mpsc::sync_channel::<Vec<Member>>(2);
    std::thread::scope(|s| {
        let reader = s.spawn(move || -> Result<()> {
            for slice in depts.chunks(DEPTS_PER_SLICE) {
                let members = db::roster::active_members_of(mysql, slice, names)?;
                if !members.is_empty() && tx.send(members).is_err() {
                    // Redis failed: its error is the one to report.
                    break;
                }
            }
            Ok(())
        });
        let used = rx.iter().try_for_each(|members| each(&members));
        // Stop the reader if Redis failed: its next send fails.
        drop(rx);
        let read = reader.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        used.and(read)
    })
}
