//! How the month sheet and payroll read a slice of employees' rows: every day of the period,
//! in the table's own key order (day, employee), one range of the primary key per day.
//!
//! A slice whose employees hold a run of ids (a roster numbered by department, payroll's keyset)
//! reads that run of the key, one statement for the whole slice; a slice whose ids are
//! scattered reads them by an `IN` list of at most [`IDS_PER_READ`] (MariaDB turns a list of
//! 1,000 or more into a table it joins and sorts). The fewer statements the better: each one is
//! a range per day to find, so a slice of 500 employees read the month about 1.5 times over
//! where a slice of a few thousand reads it about once.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;

use crate::domain::day::overtime::Decision;
use crate::domain::day::policy::DayStatus;
use crate::error::Error;
use crate::mysql::people::overtime_rows;
use crate::mysql::typed::Cols;

/// The most ids one read names in its `IN` list.
pub(crate) const IDS_PER_READ: usize = 500;

/// `?,?,...` for `n` values.
pub(crate) fn marks(n: usize) -> String {
    vec!["?"; n].join(",")
}

pub(crate) fn values<T: Clone + Into<mysql::Value>>(v: &[T]) -> Vec<mysql::Value> {
    v.iter().cloned().map(Into::into).collect()
}

/// Whose rows a read takes: these employees, or every employee from one id to another.
#[derive(Clone, Copy)]
pub(crate) enum Who<'a> {
    Ids(&'a [&'a str]),
    Range(&'a str, &'a str),
}

/// How to read the rows of `ids` (sorted, distinct, not empty), and the names of those of them
/// on the roster: their run of the key when the roster holds few others between the first and
/// the last (at most as many again), else by their ids, [`IDS_PER_READ`] at a time.
pub(crate) fn plan<'a>(
    conn: &mut impl Queryable,
    ids: &'a [&'a str],
) -> Result<(Vec<Who<'a>>, HashMap<String, String>)> {
    let (lo, hi) = (ids[0], ids[ids.len() - 1]);
    let most = 2 * ids.len();
    let run: Vec<(String, String)> = conn.exec(
        "SELECT id, name FROM employees WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?",
        (lo, hi, most as u64 + 1),
    )?;
    let mine = |id: &str| ids.binary_search(&id).is_ok();
    if run.len() <= most {
        let names = run.into_iter().filter(|(id, _)| mine(id)).collect();
        return Ok((vec![Who::Range(lo, hi)], names));
    }
    let mut names = HashMap::with_capacity(ids.len());
    let mut reads = Vec::new();
    for part in ids.chunks(IDS_PER_READ) {
        let (cond, values) = whom(Who::Ids(part), "id");
        names.extend(
            conn.exec::<(String, String), _, _>(format!("SELECT id, name FROM employees WHERE {cond}"), values)?,
        );
        reads.push(Who::Ids(part));
    }
    Ok((reads, names))
}

/// The condition on `column` (an employee id) that selects `who`, and its values.
pub(crate) fn whom(who: Who, column: &str) -> (String, Vec<mysql::Value>) {
    match who {
        Who::Ids(ids) => (format!("{column} IN ({})", marks(ids.len())), values(ids)),
        Who::Range(first, last) => (format!("{column} BETWEEN ? AND ?"), vec![first.into(), last.into()]),
    }
}

/// The rows (`columns` of `attendance a`) of `who` on `dates`, in the table's own order (day,
/// employee): an employee's days come in date order, and each day's rows are one range of the
/// primary key (one equality per day: a range of days would read every employee's), so MySQL
/// neither sorts nor looks rows up by a second index.
fn rows_of<'c>(
    conn: &'c mut mysql::PooledConn,
    columns: &str,
    who: Who,
    dates: &[NaiveDate],
) -> Result<mysql::QueryResult<'c, 'c, 'c, mysql::Binary>> {
    let mut params = values(dates);
    let (whom, ids) = whom(who, "a.employee_id");
    params.extend(ids);
    Ok(conn.exec_iter(
        format!(
            "SELECT {columns} FROM attendance a WHERE a.work_date IN ({}) AND {whom} \
             ORDER BY a.work_date, a.employee_id",
            marks(dates.len())
        ),
        params,
    )?)
}

/// A settled row as the month sheet and payroll read it.
pub(crate) struct DayRow {
    pub dept: String,
    pub employee: String,
    pub date: NaiveDate,
    pub status: DayStatus,
    pub first_in: Option<NaiveDateTime>,
    pub last_out: Option<NaiveDateTime>,
    /// Read by payroll only (0 on the month sheet's rows).
    pub late_minutes: u32,
}

/// The rows of `who` on `dates` (see [`rows_of`]) whose employee `keep` keeps, with their
/// late minutes when `late`.
pub(crate) fn read_rows(
    conn: &mut mysql::PooledConn,
    who: Who,
    dates: &[NaiveDate],
    late: bool,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<DayRow>> {
    let columns = if late {
        "a.department_id, a.employee_id, a.work_date, CAST(a.status AS CHAR), a.first_in, a.last_out, a.late_minutes"
    } else {
        "a.department_id, a.employee_id, a.work_date, CAST(a.status AS CHAR), a.first_in, a.last_out"
    };
    let mut out = Vec::new();
    for row in rows_of(conn, columns, who, dates)? {
        let mut c = Cols::new(row?, "attendance row");
        let employee: String = c.get(1)?;
        if !keep(&employee) {
            continue;
        }
        let (dept, date, status): (String, NaiveDate, String) = (c.get(0)?, c.get(2)?, c.get(3)?);
        let status = DayStatus::parse(&status)
            .ok_or_else(|| Error::internal(format!("attendance row {date} {employee}: unknown status '{status}'")))?;
        out.push(DayRow {
            dept,
            employee,
            date,
            status,
            first_in: c.get(4)?,
            last_out: c.get(5)?,
            late_minutes: if late { c.get(6)? } else { 0 },
        });
    }
    Ok(out)
}

/// The decision standing on each employee's day.
pub(crate) type Decisions = HashMap<(String, NaiveDate), Decision>;

/// The overtime decisions standing on `dates` (consecutive days) of `who`.
pub(crate) fn decisions(conn: &mut impl Queryable, who: Who, dates: &[NaiveDate]) -> Result<Decisions> {
    let (cond, mut params) = whom(who, "employee_id");
    match who {
        // One range of the (day, employee) key per day.
        Who::Range(..) => {
            let mut p = values(dates);
            p.append(&mut params);
            overtime_rows::standing(conn, &format!("work_date IN ({}) AND {cond}", marks(dates.len())), p)
        }
        Who::Ids(_) => {
            params.extend([dates[0].into(), dates[dates.len() - 1].into()]);
            overtime_rows::standing(conn, &format!("{cond} AND work_date BETWEEN ? AND ?"), params)
        }
    }
}

/// How many parts a reading thread may have read ahead of the one in use.
const AHEAD: usize = 1;

/// Run `read` on a thread of its own, which hands each part it reads to `give` (false: no one
/// takes parts any longer, stop), while `take` uses them here, in order (false: it wants no
/// more): MySQL answers and the rows are decoded while the part before is counted and written.
/// At most [`AHEAD`] parts wait between the two, so memory stays a few parts'. An error on
/// either side ends both.
pub(crate) fn ahead<T: Send>(
    read: impl FnOnce(&mut dyn FnMut(T) -> bool) -> Result<()> + Send,
    mut take: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<T>>(AHEAD);
        let reader = s.spawn(move || {
            if let Err(e) = read(&mut |part| tx.send(Ok(part)).is_ok()) {
                let _ = tx.send(Err(e));
            }
        });
        let used = (move || -> Result<()> {
            for part in rx {
                if !take(part?)? {
                    break;
                }
            }
            Ok(())
        })();
        reader
            .join()
            .map_err(|_| Error::internal("a report's reading thread panicked"))?;
        used
    })
}
