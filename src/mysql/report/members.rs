//! Who has a row in which department in a month: the month sheet's lines, read from the (day,
//! department) index alone, a group of departments at a time.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;

use crate::error::Error;
use crate::mysql::report::slices::{marks, values};

/// The longest list of one day's employees of one department MySQL gives in one value: 16 MiB,
/// 1.8 million ids of 8 characters and a comma (a list cut short is read again row by row).
const LIST_BYTES: u64 = 1 << 24;

/// The lines (department, employee) of the departments `depts` (in order) on `days`, in
/// department then employee order: each employee with a row in one of them, once per
/// department. The index gives each day's employees of a department as one list, deduplicated
/// here: a `DISTINCT` of every row would cost MySQL a temporary table, twice the time; a list
/// whose count does not match its length (an id holding a comma, a list cut short) is read
/// again row by row.
pub(crate) fn of(conn: &mut impl Queryable, depts: &[&str], days: &[NaiveDate]) -> Result<Vec<(String, String)>> {
    let (Some(lo), Some(hi)) = (depts.first(), depts.last()) else {
        return Ok(Vec::new());
    };
    conn.query_drop(format!("SET SESSION group_concat_max_len = {LIST_BYTES}"))?;
    let mut params = values(days);
    params.extend([(*lo).into(), (*hi).into()]);
    let lists = format!(
        "SELECT department_id, COUNT(*), GROUP_CONCAT(employee_id) FROM attendance \
         WHERE work_date IN ({}) AND department_id BETWEEN ? AND ? GROUP BY work_date, department_id",
        marks(days.len())
    );
    // A department id between the group's that is no department's is on no sheet.
    let mut theirs: HashMap<&str, HashSet<String>> = depts.iter().map(|d| (*d, HashSet::new())).collect();
    let mut whole = true;
    for row in conn.exec_iter(lists, params.clone())? {
        let (d, n, list): (String, u64, Vec<u8>) =
            mysql::from_row_opt(row?).map_err(|e| Error::internal(format!("attendance index list: {e}")))?;
        let Some(set) = theirs.get_mut(d.as_str()) else {
            continue;
        };
        let list = String::from_utf8(list).map_err(|e| Error::internal(format!("attendance index list: {e}")))?;
        let mut count = 0;
        for e in list.split(',') {
            count += 1;
            if !set.contains(e) {
                set.insert(e.to_string());
            }
        }
        whole &= count == n;
    }
    if !whole {
        theirs.values_mut().for_each(HashSet::clear);
        let rows = format!(
            "SELECT department_id, employee_id FROM attendance \
             WHERE work_date IN ({}) AND department_id BETWEEN ? AND ?",
            marks(days.len())
        );
        for row in conn.exec_iter(rows, params)? {
            let (d, e): (String, String) =
                mysql::from_row_opt(row?).map_err(|e| Error::internal(format!("attendance index row: {e}")))?;
            if let Some(set) = theirs.get_mut(d.as_str()) {
                set.insert(e);
            }
        }
    }
    let mut lines = Vec::new();
    for d in depts {
        let mut people: Vec<String> = theirs.remove(d).unwrap_or_default().into_iter().collect();
        people.sort_unstable();
        lines.extend(people.into_iter().map(|e| (d.to_string(), e)));
    }
    Ok(lines)
}
