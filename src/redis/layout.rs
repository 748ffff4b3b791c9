//! Laying out a day's boards: one empty field per employee of each department, never touching
//! a field that holds punches. A board that does not exist yet arrives whole (`restore.lua`: a
//! RESTORE of the hash built by `dump`); an existing one, or one RESTORE cannot make, gets its
//! missing fields through `layout.lua`.

use std::sync::LazyLock;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use redis::ConnectionLike;

use super::{dump, Board};
use crate::domain::people::roster::Member;
use crate::redis::keys::Keys;

static LAYOUT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(concat!(
        include_str!("scripts/hashtable.lua"),
        include_str!("scripts/layout.lua")
    ))
});
static RESTORE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(include_str!("scripts/restore.lua")));

/// Fields a pipeline carries: enough to keep Redis busy, few enough to keep a reply short.
const FIELDS_PER_PIPELINE: usize = 5_000;
/// Fields one `layout.lua` call adds at most (a big department is split, so one call stays short).
const FIELDS_PER_CALL: usize = 1_000;

/// What `init-day` did.
#[derive(Debug, Default, serde::Serialize)]
pub struct LayoutReport {
    #[serde(rename = "work_date")]
    pub date: String,
    pub departments: usize,
    pub employees: usize,
    /// Fields created now; the rest were already there (and kept their punches).
    pub laid_out: u64,
    /// Employed that day but on a rest day by their own shift: left off the boards (not
    /// expected; a punch of theirs still makes their field).
    pub rest_day: u64,
}

impl Board {
    /// Lay out every department's board for `date` from the roster (which must be ordered by
    /// department). Idempotent: a board that exists only gets the fields it lacks (HSETNX).
    /// `progress` gets the employees of each part laid out.
    pub fn layout_day(
        &mut self,
        date: NaiveDate,
        members: &[Member],
        mut progress: impl FnMut(usize),
    ) -> Result<LayoutReport> {
        let (con, keys) = (&mut self.con, &self.keys);
        // In a pipeline EVALSHA does not load the script on NOSCRIPT: load both first.
        for script in [&*RESTORE, &*LAYOUT] {
            script
                .prepare_invoke()
                .load(con)
                .context("loading the layout scripts into Redis")?;
        }
        let depts: Vec<&[Member]> = members.chunk_by(|a, b| a.department_id == b.department_id).collect();
        let mut report = LayoutReport {
            date: date.to_string(),
            departments: depts.len(),
            employees: members.len(),
            ..LayoutReport::default()
        };
        let day = date.format("%Y-%m-%d").to_string();
        let left = restore_new(con, keys, date, &day, &depts, &mut report, &mut progress)?;
        add_missing(con, keys, date, &day, &left, &mut report, &mut progress)?;
        Ok(report)
    }
}

/// RESTORE every board that does not exist yet; returns the departments left for
/// [`add_missing`]: boards that exist, ids a listpack keeps as numbers, and every department
/// after the server refused a payload.
fn restore_new<'m>(
    con: &mut impl ConnectionLike,
    keys: &Keys,
    date: NaiveDate,
    day: &str,
    depts: &[&'m [Member]],
    report: &mut LayoutReport,
    progress: &mut impl FnMut(usize),
) -> Result<Vec<&'m [Member]>> {
    let mut left = Vec::new();
    let mut refused = false;
    for batch in batches(depts) {
        let mut pipe = redis::pipe();
        let mut sent = Vec::with_capacity(batch.len());
        for &dept in batch {
            let ids: Vec<&str> = dept.iter().map(|m| m.employee_id.as_str()).collect();
            let Some(payload) = (!refused).then(|| dump::empty_hash(&ids)).flatten() else {
                left.push(dept);
                continue;
            };
            let d = &dept[0].department_id;
            let mut inv = RESTORE.key(keys.board(d, date));
            inv.key(keys.board_days(d)).arg(day).arg(payload).arg(dept.len());
            pipe.invoke_script(&inv);
            sent.push(dept);
        }
        if sent.is_empty() {
            continue;
        }
        let replies: Vec<i64> = pipe.query(con).context("laying out boards in Redis")?;
        for (dept, r) in sent.into_iter().zip(replies) {
            if r >= 0 {
                report.laid_out += r as u64;
                progress(dept.len());
            } else {
                refused |= r == -2;
                left.push(dept);
            }
        }
    }
    Ok(left)
}

/// Add each department's missing fields through `layout.lua` (one HSET for a board that does
/// not exist, HSETNX field by field for one that does).
fn add_missing(
    con: &mut impl ConnectionLike,
    keys: &Keys,
    date: NaiveDate,
    day: &str,
    depts: &[&[Member]],
    report: &mut LayoutReport,
    progress: &mut impl FnMut(usize),
) -> Result<()> {
    for batch in batches(depts) {
        let mut pipe = redis::pipe();
        let mut queued = 0;
        for dept in batch {
            for part in dept.chunks(FIELDS_PER_CALL) {
                let d = &part[0].department_id;
                let mut inv = LAYOUT.key(keys.board(d, date));
                inv.key(keys.board_days(d)).arg(day);
                for m in part {
                    inv.arg(&m.employee_id);
                }
                pipe.invoke_script(&inv);
                queued += part.len();
            }
        }
        let added: Vec<u64> = pipe.query(con).context("laying out boards in Redis")?;
        report.laid_out += added.iter().sum::<u64>();
        progress(queued);
    }
    Ok(())
}

/// Departments in runs of about [`FIELDS_PER_PIPELINE`] employees (a bigger one alone).
fn batches<'a, 'm>(depts: &'a [&'m [Member]]) -> impl Iterator<Item = &'a [&'m [Member]]> {
    let mut rest = depts;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut fields = 0;
        let n = rest
            .iter()
            .position(|d| {
                fields += d.len();
                fields >= FIELDS_PER_PIPELINE
            })
            .map_or(rest.len(), |i| i + 1);
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        Some(batch)
    })
}
