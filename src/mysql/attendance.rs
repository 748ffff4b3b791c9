//! Attendance rows: settle's batched upserts, the stored punch histories a rerun starts from,
//! and one row for status and corrections.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::Result;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use mysql::prelude::Queryable;
use mysql::Value;
use serde::Serialize;

use super::placeholders;
use super::typed::Cols;
use crate::domain::day::policy::{DayOutcome, DayStatus};
use crate::domain::punch::Kind;
use crate::error::Error;

/// One punch of the history, as an instant.
pub(crate) type Stamp = (DateTime<Utc>, Kind);

/// One employee's settled day, ready for MySQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayRow {
    pub employee_id: String,
    pub department_id: String,
    pub outcome: DayOutcome,
    /// UTC.
    pub first_in: Option<NaiveDateTime>,
    /// UTC.
    pub last_out: Option<NaiveDateTime>,
    /// The punch history, oldest first (see [`encode_log`]).
    pub punches: Vec<Stamp>,
}

/// The stored punch history: `in@2026-11-27T07:55:00Z,out@...`, oldest first.
pub(crate) fn encode_log(punches: &[Stamp]) -> String {
    let mut out = String::with_capacity(punches.len() * 24);
    push_log(&mut out, punches);
    out
}

/// [`encode_log`] appended to `out`.
fn push_log(out: &mut String, punches: &[Stamp]) {
    for (i, (t, k)) in punches.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k.as_str());
        out.push('@');
        push_datetime(out, t.naive_utc(), 'T');
        out.push('Z');
    }
}

/// `2026-11-27 07:55:00` (with `sep` between date and time), written digit by digit: chrono's
/// `format` reads its pattern again for every value, and settle writes millions of them.
pub(super) fn push_datetime(out: &mut String, t: NaiveDateTime, sep: char) {
    use chrono::{Datelike, Timelike};
    use std::fmt::Write;
    if !(0..=9999).contains(&t.year()) {
        let _ = write!(out, "{}{sep}{}", t.format("%Y-%m-%d"), t.format("%H:%M:%S"));
        return;
    }
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}{sep}{:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
}

/// Read a stored punch history back. `None` if any token is unreadable.
pub(crate) fn parse_log(s: &str) -> Option<Vec<Stamp>> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(|tok| {
            let (k, t) = tok.split_once('@')?;
            let t = DateTime::parse_from_rfc3339(t).ok()?.with_timezone(&Utc);
            Some((t, k.parse().ok()?))
        })
        .collect()
}

/// Columns of one upserted row.
pub(crate) const COLS: usize = 9;

/// The most rows one statement may carry: MySQL takes at most 65,535 placeholders.
pub(crate) const MAX_ROWS_PER_STATEMENT: usize = 65_535 / COLS;

// The configuration bounds `settle.batch_size` by its own copy of this figure (it imports no
// store); a column added here must move that bound too.
const _: () = assert!(crate::config::MAX_BATCH_ROWS == MAX_ROWS_PER_STATEMENT);

/// A corrected row keeps its corrected times, status and minutes; the punch history and
/// the department always follow the latest settle.
const UPSERT_TAIL: &str = " ON DUPLICATE KEY UPDATE \
    department_id = VALUES(department_id), punches = VALUES(punches), \
    status = IF(corrected, status, VALUES(status)), \
    first_in = IF(corrected, first_in, VALUES(first_in)), \
    last_out = IF(corrected, last_out, VALUES(last_out)), \
    late_minutes = IF(corrected, late_minutes, VALUES(late_minutes)), \
    early_minutes = IF(corrected, early_minutes, VALUES(early_minutes))";

fn upsert_sql(rows: usize) -> String {
    format!(
        "INSERT INTO attendance (work_date, employee_id, department_id, status, first_in, last_out, \
         late_minutes, early_minutes, punches) VALUES {}{UPSERT_TAIL}",
        placeholders(rows, COLS)
    )
}

fn push_params(params: &mut Vec<Value>, date: NaiveDate, r: &DayRow) {
    params.extend([
        Value::from(date),
        Value::from(&r.employee_id),
        Value::from(&r.department_id),
        Value::from(r.outcome.status.as_str()),
        Value::from(r.first_in),
        Value::from(r.last_out),
        Value::from(r.outcome.late_minutes),
        Value::from(r.outcome.early_minutes),
        Value::from(encode_log(&r.punches)),
    ]);
}

/// Upsert rows in one multi-row statement (at most [`MAX_ROWS_PER_STATEMENT`]).
pub(crate) fn upsert(conn: &mut impl Queryable, date: NaiveDate, rows: &[DayRow]) -> mysql::Result<()> {
    let mut params = Vec::with_capacity(rows.len() * COLS);
    for r in rows {
        push_params(&mut params, date, r);
    }
    conn.exec_drop(upsert_sql(rows.len()), params)
}

/// Insert rows of a day that had none with `LOAD DATA LOCAL INFILE`, MySQL's fastest bulk path.
/// `Ok(true)`: every row went in as sent. `Ok(false)`: some row was skipped (a duplicate: LOCAL
/// skips them) or a value adjusted (LOCAL turns data errors into warnings); the caller then
/// upserts the same rows in the same transaction, which writes the duplicates and refuses a bad
/// value as it always did. A server that refuses LOAD DATA LOCAL gives an error: upsert then too.
pub fn load_fresh<'r>(
    tx: &mut mysql::Transaction,
    date: NaiveDate,
    rows: impl ExactSizeIterator<Item = &'r DayRow>,
) -> mysql::Result<bool> {
    let n = rows.len() as u64;
    let data = std::sync::Arc::new(tsv(date, rows).into_bytes());
    tx.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(move |_, w| {
        std::io::Write::write_all(w, &data)
    })));
    let loaded = tx.query_drop(
        "LOAD DATA LOCAL INFILE 'settle.tsv' INTO TABLE attendance CHARACTER SET utf8mb4 \
         (work_date, employee_id, department_id, status, first_in, last_out, late_minutes, early_minutes, punches)",
    );
    let clean = loaded.map(|()| tx.affected_rows() == n && tx.warnings() == 0);
    tx.set_local_infile_handler(None);
    clean
}

/// The rows as LOAD DATA reads them: a line each, fields tab-separated, `\N` for NULL. Written
/// straight into one buffer (no string per field: at 1M rows the allocations showed).
fn tsv<'r>(date: NaiveDate, rows: impl ExactSizeIterator<Item = &'r DayRow>) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(rows.len() * 160);
    let day = date.format("%Y-%m-%d").to_string();
    let dt = |out: &mut String, t: Option<NaiveDateTime>| match t {
        Some(t) => push_datetime(out, t, ' '),
        None => out.push_str("\\N"),
    };
    for r in rows {
        out.push_str(&day);
        out.push('\t');
        tsv_escape(&mut out, &r.employee_id);
        out.push('\t');
        tsv_escape(&mut out, &r.department_id);
        out.push('\t');
        out.push_str(r.outcome.status.as_str());
        out.push('\t');
        dt(&mut out, r.first_in);
        out.push('\t');
        dt(&mut out, r.last_out);
        let _ = write!(out, "\t{}\t{}\t", r.outcome.late_minutes, r.outcome.early_minutes);
        // A history holds no tab, newline or backslash: kinds, digits and punctuation only.
        push_log(&mut out, &r.punches);
        out.push('\n');
    }
    out
}

/// A value for a LOAD DATA line: its field and line separators and the escape escaped.
pub(super) fn tsv_escape(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// The ids among `ids` that are not in `employees`. The ids found are locked in share mode
/// until the transaction ends, so that none is deleted before the rows that name it commit:
/// what the foreign key `attendance_employee_fk` did until V5 dropped it for partitioning.
///
/// Settle's batches are runs of neighbouring ids (sorted, and a roster is mostly numbered by
/// department), so the ids are first read as one range of the primary key, from the smallest to
/// the largest, which costs MySQL a fifth of looking up thousands of ids one by one. The range
/// read stops after twice as many employees as ids (ids scattered over a large roster are not
/// worth a long scan); whatever it did not find is then looked up by id, as before. Only an id
/// read back exactly as sent counts as known, so the answer is the same either way. The range
/// also locks the employees between the ids until the commit (a concurrent roster change of
/// those waits for one batch).
pub fn unknown_employees<'a>(
    conn: &mut impl Queryable,
    ids: impl IntoIterator<Item = &'a str>,
) -> mysql::Result<HashSet<String>> {
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    let (Some(&lo), Some(&hi)) = (ids.first(), ids.last()) else {
        return Ok(HashSet::new());
    };
    let limit = 2 * ids.len() as u64 + 16;
    // The range comes back in the collation's order (utf8mb4_bin: by code point, which is how
    // Rust orders strings, but for PAD SPACE around ids ending in spaces or control
    // characters): walk it beside the sorted ids, reading each id in place. An id passed over
    // is only a candidate: it is looked up below, so an order that differs costs a lookup,
    // never a wrong answer.
    let mut candidates: Vec<&str> = Vec::new();
    let mut next = 0;
    let rows = conn.exec_iter(
        "SELECT id FROM employees WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ? LOCK IN SHARE MODE",
        (lo, hi, limit),
    )?;
    for row in rows {
        let row = row?;
        let Some(Value::Bytes(found)) = row.as_ref(0) else {
            continue;
        };
        while next < ids.len() && ids[next].as_bytes() < found.as_slice() {
            candidates.push(ids[next]);
            next += 1;
        }
        if next < ids.len() && ids[next].as_bytes() == found.as_slice() {
            next += 1;
        }
    }
    candidates.extend_from_slice(&ids[next..]);
    let mut unknown: HashSet<String> = candidates.iter().map(|id| id.to_string()).collect();
    if unknown.is_empty() {
        return Ok(unknown);
    }
    let list: Vec<Value> = candidates.iter().map(|id| Value::from(*id)).collect();
    let sql = format!(
        "SELECT id FROM employees WHERE id IN ({}) LOCK IN SHARE MODE",
        vec!["?"; list.len()].join(",")
    );
    for id in conn.exec::<String, _, _>(sql, list)? {
        unknown.remove(&id);
    }
    Ok(unknown)
}

/// Whether any row is stored for a day (a first run of the day has none to merge with).
pub(crate) fn any_rows(conn: &mut impl Queryable, date: NaiveDate) -> Result<bool> {
    Ok(conn
        .exec_first::<u8, _, _>("SELECT 1 FROM attendance WHERE work_date = ? LIMIT 1", (date,))?
        .is_some())
}

/// The punch histories stored for a day of these employees: employee id -> history.
pub(crate) fn stored_punches_of(
    conn: &mut impl Queryable,
    date: NaiveDate,
    ids: &[&str],
) -> Result<HashMap<String, String>> {
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(2_000) {
        let sql = format!(
            "SELECT employee_id, punches FROM attendance WHERE work_date = ? AND employee_id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        let mut params = Vec::with_capacity(chunk.len() + 1);
        params.push(Value::from(date));
        params.extend(chunk.iter().map(|id| Value::from(*id)));
        out.extend(conn.exec::<(String, String), _, _>(sql, params)?);
    }
    Ok(out)
}

/// The departments that already have rows for a day: their punches are safe in MySQL even
/// with no board left in Redis (a settled day, or a settle killed while deleting boards).
pub(crate) fn departments_with_rows(conn: &mut impl Queryable, date: NaiveDate) -> Result<Vec<String>> {
    Ok(conn.exec(
        "SELECT DISTINCT department_id FROM attendance WHERE work_date = ?",
        (date,),
    )?)
}

/// For each of `dates`, its rows and, of them, those with a punch, as MySQL holds them (a day
/// with no row is left out). One range read of the primary key per day.
pub(crate) fn held(conn: &mut impl Queryable, dates: &[NaiveDate]) -> Result<BTreeMap<NaiveDate, (u64, u64)>> {
    let mut out = BTreeMap::new();
    for chunk in dates.chunks(500) {
        let sql = format!(
            "SELECT work_date, COUNT(*), CAST(COALESCE(SUM(punches <> ''), 0) AS UNSIGNED) FROM attendance \
             WHERE work_date IN ({}) GROUP BY work_date",
            vec!["?"; chunk.len()].join(",")
        );
        let params: Vec<Value> = chunk.iter().map(|d| Value::from(*d)).collect();
        for (d, rows, punched) in conn.exec::<(NaiveDate, u64, u64), _, _>(sql, params)? {
            out.insert(d, (rows, punched));
        }
    }
    Ok(out)
}

/// Rows by status for a day, as they stand in MySQL (corrections included).
pub(crate) fn counts(conn: &mut impl Queryable, date: NaiveDate) -> Result<BTreeMap<String, u64>> {
    Ok(conn
        .exec(
            "SELECT CAST(status AS CHAR), COUNT(*) FROM attendance WHERE work_date = ? GROUP BY status",
            (date,),
        )?
        .into_iter()
        .collect())
}

/// One stored row.
#[derive(Debug, Clone, Serialize)]
pub struct Stored {
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    pub status: DayStatus,
    /// UTC (printed in the company's zone).
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub first_in: Option<NaiveDateTime>,
    /// UTC (printed in the company's zone).
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub last_out: Option<NaiveDateTime>,
    pub late_minutes: u32,
    pub early_minutes: u32,
    /// The day's punches as stored (`in@<RFC 3339>,out@...`); printed as a list of
    /// `{"kind", "at"}`.
    #[serde(serialize_with = "crate::domain::instant::punch_list")]
    pub punches: String,
    pub corrected: bool,
}

pub const SELECT_STORED: &str = "SELECT work_date, employee_id, department_id, CAST(status AS CHAR), \
    first_in, last_out, late_minutes, early_minutes, punches, corrected FROM attendance";

/// Map a row of [`SELECT_STORED`]; a value that does not fit is an error, not a default.
pub fn stored_from_row(r: mysql::Row) -> Result<Stored, Error> {
    let mut c = Cols::new(r, "attendance row");
    Ok(Stored {
        work_date: c.get(0)?,
        employee_id: c.get(1)?,
        department_id: c.get(2)?,
        status: c.parse(3, DayStatus::parse)?,
        first_in: c.get(4)?,
        last_out: c.get(5)?,
        late_minutes: c.get(6)?,
        early_minutes: c.get(7)?,
        punches: c.get(8)?,
        corrected: c.get(9)?,
    })
}

/// One employee's row for a day, if settled.
pub(crate) fn row(conn: &mut impl Queryable, date: NaiveDate, employee: &str) -> Result<Option<Stored>> {
    let r: Option<mysql::Row> = conn.exec_first(
        format!("{SELECT_STORED} WHERE work_date = ? AND employee_id = ?"),
        (date, employee),
    )?;
    Ok(r.map(stored_from_row).transpose()?)
}

/// Which of these (work date, employee) days have a settled row, a thousand to a query.
pub(crate) fn settled_among(
    conn: &mut impl Queryable,
    days: &[(NaiveDate, &str)],
) -> Result<HashSet<(NaiveDate, String)>> {
    let mut found = HashSet::new();
    for chunk in days.chunks(1_000) {
        let sql = format!(
            "SELECT work_date, employee_id FROM attendance WHERE (work_date, employee_id) IN ({})",
            vec!["(?,?)"; chunk.len()].join(",")
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|(d, e)| [Value::from(*d), Value::from(*e)])
            .collect();
        let rows: Vec<(NaiveDate, String)> = conn.exec(sql, params)?;
        found.extend(rows);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::policy::DayStatus;
    use proptest::prelude::*;

    fn stamps(secs: i64, n: usize) -> Vec<Stamp> {
        let t = DateTime::from_timestamp(secs, 0).unwrap();
        (0..n)
            .map(|i| {
                let kind = if i % 2 == 0 { Kind::In } else { Kind::Out };
                (t + chrono::Duration::minutes(37 * i as i64), kind)
            })
            .collect()
    }

    proptest! {
        /// The history as chrono's pattern wrote it before: stored histories must read back the same.
        #[test]
        fn the_history_is_written_as_chrono_wrote_it(secs in -40_000_000_000i64..300_000_000_000i64, n in 0usize..5) {
            let punches = stamps(secs, n);
            let old: Vec<String> = punches
                .iter()
                .map(|(t, k)| format!("{}@{}", k.as_str(), t.format("%Y-%m-%dT%H:%M:%SZ")))
                .collect();
            prop_assert_eq!(encode_log(&punches), old.join(","));
        }
    }

    #[test]
    fn a_load_line_escapes_what_would_split_it() {
        let date = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
        let punches = stamps(1_796_197_500, 2);
        let row = DayRow {
            employee_id: "E\t1\\x\ny".into(),
            department_id: "D1".into(),
            outcome: crate::domain::day::policy::DayOutcome {
                status: DayStatus::MissingCheckout,
                late_minutes: 5,
                early_minutes: 0,
            },
            first_in: Some(punches[0].0.naive_utc()),
            last_out: None,
            punches: punches.clone(),
        };
        assert_eq!(
            tsv(date, std::iter::once(&row)),
            format!(
                "2026-11-27\tE\\t1\\\\x\\ny\tD1\tmissing_checkout\t{}\t\\N\t5\t0\t{}\n",
                punches[0].0.format("%Y-%m-%d %H:%M:%S"),
                encode_log(&punches)
            )
        );
    }
}
