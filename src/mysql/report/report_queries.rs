//! HR's reports, straight from the attendance rows: each query returns a [`Table`] with times
//! shown in the company's zone.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use chrono_tz::Tz;
use mysql::prelude::Queryable;
use mysql::Row;

use crate::domain::dates::wall_clock_utc;
use crate::domain::day::overtime::Hours;
use crate::domain::day::policy::DayStatus;
use crate::domain::day::worked::Days;
use crate::domain::report::table::{local, local_time, Cell, Table};
use crate::mysql::people::leave_rows;
use crate::mysql::runs;
use crate::mysql::typed::Cols;
use crate::mysql::Db;

/// `COUNT(IF(status = 'present', 1, NULL)), ...` in `DayStatus::ALL` order.
fn status_counts_sql() -> String {
    DayStatus::ALL
        .iter()
        .map(|s| format!("COUNT(IF(a.status = '{}', 1, NULL))", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn status_columns() -> Vec<&'static str> {
    DayStatus::ALL.iter().map(|s| s.as_str()).collect()
}

/// Read `n` counts from a row starting at column `from` (a SUM over no rows is NULL: 0).
fn counts(c: &mut Cols, from: usize, n: usize) -> Result<Vec<u64>> {
    (from..from + n)
        .map(|i| Ok(c.get::<Option<u64>>(i)?.unwrap_or(0)))
        .collect()
}

/// Fill a table whose rows are an id, a name, then counts; and add a totals row of the sums.
fn with_totals(mut t: Table, rows: Vec<Row>) -> Result<Table> {
    let n = t.columns.len() - 2;
    let mut sums = vec![0u64; n];
    let any = !rows.is_empty();
    for r in rows {
        let mut cols = Cols::new(r, "report row");
        let c = counts(&mut cols, 2, n)?;
        for (s, x) in sums.iter_mut().zip(&c) {
            *s += x;
        }
        let mut row = vec![Cell::text(cols.get::<String>(0)?), Cell::text(cols.get::<String>(1)?)];
        row.extend(c.into_iter().map(Cell::from));
        t.push(row);
    }
    if any {
        let mut row = vec![Cell::text("total"), Cell::Null];
        row.extend(sums.into_iter().map(Cell::from));
        t.push(row);
    }
    Ok(t)
}

/// Per department: headcount and rows by status on a day, with a totals row.
pub(crate) fn day(pool: &Db, date: NaiveDate, dept: Option<&str>) -> Result<Table> {
    let mut cols = vec!["department", "name", "headcount"];
    cols.extend(status_columns());
    let t = Table::new(&cols);
    let rows: Vec<Row> = pool.get_conn()?.exec(
        format!(
            "SELECT a.department_id, COALESCE(d.name, ''), COUNT(*), {} FROM attendance a \
             LEFT JOIN departments d ON d.id = a.department_id \
             WHERE a.work_date = ? AND (? IS NULL OR a.department_id = ?) \
             GROUP BY a.department_id, d.name ORDER BY a.department_id",
            status_counts_sql()
        ),
        (date, dept, dept),
    )?;
    with_totals(t, rows)
}

/// Who was absent on a day.
pub(crate) fn absent(pool: &Db, date: NaiveDate, dept: Option<&str>) -> Result<Table> {
    let mut t = Table::new(&["employee", "name", "department"]);
    let rows: Vec<(String, String, String)> = pool.get_conn()?.exec(
        "SELECT a.employee_id, COALESCE(e.name, ''), a.department_id FROM attendance a \
         LEFT JOIN employees e ON e.id = a.employee_id \
         WHERE a.work_date = ? AND a.status = 'absent' AND (? IS NULL OR a.department_id = ?) \
         ORDER BY a.department_id, a.employee_id",
        (date, dept, dept),
    )?;
    for (id, name, d) in rows {
        t.push(vec![Cell::Text(id), Cell::Text(name), Cell::Text(d)]);
    }
    Ok(t)
}

/// One employee's days over a range, and a totals row (days, minutes, corrections, and the
/// days by status in the status column).
pub(crate) fn employee(pool: &Db, model: &mut Days, tz: Tz, id: &str, from: NaiveDate, to: NaiveDate) -> Result<Table> {
    let mut t = Table::new(&[
        "date",
        "weekday",
        "status",
        "first_in",
        "last_out",
        "late_minutes",
        "early_minutes",
        "worked_minutes",
        "overtime_minutes",
        "corrected",
    ]);
    let mut conn = pool.get_conn()?;
    let halves = leave_rows::half_days(&mut conn, from, to)?;
    let rows: Vec<Row> = conn.exec(
        "SELECT work_date, CAST(status AS CHAR), first_in, last_out, late_minutes, early_minutes, corrected, \
         department_id FROM attendance WHERE employee_id = ? AND work_date BETWEEN ? AND ? ORDER BY work_date",
        (id, from, to),
    )?;
    let (mut late, mut early, mut corrected) = (0u64, 0u64, 0u64);
    let mut hours = Hours::default();
    let mut by_status = std::collections::BTreeMap::<String, u64>::new();
    let days = rows.len();
    for r in rows {
        let mut cols = Cols::new(r, "attendance row");
        let (date, status): (NaiveDate, String) = (cols.get(0)?, cols.get(1)?);
        let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (cols.get(2)?, cols.get(3)?);
        let (l, e, c): (u64, u64, bool) = (cols.get(4)?, cols.get(5)?, cols.get(6)?);
        late += l;
        early += e;
        corrected += u64::from(c);
        let dept: String = cols.get(7)?;
        let h = model
            .of(id, &dept, date)
            .1
            .stored_hours(stored_status(&status)?, halves.on(id, date), fi, lo);
        hours += h;
        *by_status.entry(status.clone()).or_default() += 1;
        t.push(vec![
            Cell::Date(date),
            Cell::Text(date.format("%a").to_string()),
            Cell::Text(status),
            local_time(tz, fi),
            local_time(tz, lo),
            Cell::from(l),
            Cell::from(e),
            Cell::Minutes(h.worked.into()),
            Cell::Minutes(h.overtime.into()),
            Cell::typed(Cell::text(if c { "yes" } else { "" }), c),
        ]);
    }
    if days > 0 {
        let summary: Vec<String> = by_status.iter().map(|(s, n)| format!("{s} {n}")).collect();
        t.push(vec![
            Cell::text("total"),
            Cell::typed(
                Cell::text(format!("{days} day{}", if days == 1 { "" } else { "s" })),
                days,
            ),
            Cell::typed(Cell::Text(summary.join(", ")), serde_json::json!(by_status)),
            Cell::Null,
            Cell::Null,
            Cell::from(late),
            Cell::from(early),
            Cell::Minutes(hours.worked.into()),
            Cell::Minutes(hours.overtime.into()),
            Cell::typed(Cell::text(corrected.to_string()), corrected),
        ]);
    }
    Ok(t)
}

/// A department over a range: each employee's days by status, minutes late and early, hours
/// worked and overtime, and totals.
pub(crate) fn dept(pool: &Db, days: &mut Days, dept: &str, from: NaiveDate, to: NaiveDate) -> Result<Table> {
    let mut cols = vec!["employee", "name", "days"];
    cols.extend(status_columns());
    cols.extend(["late_minutes", "early_minutes"]);
    let t = Table::new(&cols);
    let rows: Vec<Row> = pool.get_conn()?.exec(
        format!(
            "SELECT a.employee_id, COALESCE(e.name, ''), COUNT(*), {}, \
             CAST(SUM(a.late_minutes) AS UNSIGNED), CAST(SUM(a.early_minutes) AS UNSIGNED) \
             FROM attendance a LEFT JOIN employees e ON e.id = a.employee_id \
             WHERE a.department_id = ? AND a.work_date BETWEEN ? AND ? \
             GROUP BY a.employee_id, e.name ORDER BY a.employee_id",
            status_counts_sql()
        ),
        (dept, from, to),
    )?;
    let mut t = with_totals(t, rows)?;
    let by_employee = dept_hours(pool, days, dept, from, to)?;
    let mut sum = Hours::default();
    t.columns
        .extend(["worked_minutes".to_string(), "overtime_minutes".to_string()]);
    for row in &mut t.rows {
        let h = match &row[0] {
            Cell::Text(id) if id == "total" && row[1] == Cell::Null => sum,
            Cell::Text(id) => by_employee.get(id).copied().unwrap_or_default(),
            _ => Hours::default(),
        };
        sum += h;
        row.extend([Cell::Minutes(h.worked.into()), Cell::Minutes(h.overtime.into())]);
    }
    Ok(t)
}

/// Each employee's hours in a department over a range, from the rows with both punches.
fn dept_hours(
    pool: &Db,
    days: &mut Days,
    dept: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<HashMap<String, Hours>> {
    let mut out: HashMap<String, Hours> = HashMap::new();
    let mut conn = pool.get_conn()?;
    let halves = leave_rows::half_days(&mut conn, from, to)?;
    let rows: Vec<(String, NaiveDate, String, NaiveDateTime, NaiveDateTime)> = conn.exec(
        "SELECT employee_id, work_date, CAST(status AS CHAR), first_in, last_out FROM attendance \
         WHERE department_id = ? AND work_date BETWEEN ? AND ? AND first_in IS NOT NULL AND last_out IS NOT NULL",
        (dept, from, to),
    )?;
    for (e, date, status, fi, lo) in rows {
        let leave = halves.on(&e, date);
        let h = days
            .of(&e, dept, date)
            .1
            .stored_hours(stored_status(&status)?, leave, Some(fi), Some(lo));
        *out.entry(e).or_default() += h;
    }
    Ok(out)
}

/// A stored row's status, or an error naming it.
fn stored_status(s: &str) -> Result<DayStatus> {
    DayStatus::parse(s)
        .ok_or_else(|| crate::error::Error::internal(format!("unknown status '{s}' in attendance")).into())
}

/// A corrected instant in JSON: `{"before": <instant or null>, "after": ...}`.
fn change(tz: Tz, before: Option<NaiveDateTime>, after: Option<NaiveDateTime>) -> serde_json::Value {
    let shown = |t: Option<NaiveDateTime>| t.map(|t| crate::domain::instant::text_in(tz, &t.and_utc()));
    serde_json::json!({ "before": shown(before), "after": shown(after) })
}

/// Corrections of days in a range, oldest first, with old -> new values in the company's zone.
pub(crate) fn corrections(pool: &Db, tz: Tz, from: NaiveDate, to: NaiveDate, employee: Option<&str>) -> Result<Table> {
    let mut t = Table::new(&[
        "id", "date", "employee", "by", "os_user", "db_user", "at", "status", "in", "out", "reason",
    ]);
    let hhmm = |t: Option<NaiveDateTime>| t.map_or("-".to_string(), |t| wall_clock_utc(tz, t, "%H:%M"));
    for c in crate::mysql::corrections::list(&mut pool.get_conn()?, from, to, employee)? {
        t.push(vec![
            Cell::from(c.id),
            Cell::Date(c.work_date),
            Cell::Text(c.employee_id),
            Cell::Text(c.corrected_by),
            Cell::Text(c.os_user),
            Cell::Text(c.db_user),
            local(tz, Some(c.corrected_at)),
            Cell::typed(
                Cell::Text(format!("{} -> {}", c.old_status, c.new_status)),
                serde_json::json!({ "before": c.old_status, "after": c.new_status }),
            ),
            Cell::typed(
                Cell::Text(format!("{} -> {}", hhmm(c.old_first_in), hhmm(c.new_first_in))),
                change(tz, c.old_first_in, c.new_first_in),
            ),
            Cell::typed(
                Cell::Text(format!("{} -> {}", hhmm(c.old_last_out), hhmm(c.new_last_out))),
                change(tz, c.old_last_out, c.new_last_out),
            ),
            Cell::Text(c.reason),
        ]);
    }
    Ok(t)
}

/// The punch log: each punch of days in a range, in time order, with where and when it was
/// recorded and how it came.
pub(crate) fn punches(
    pool: &Db,
    tz: Tz,
    from: NaiveDate,
    to: NaiveDate,
    employee: Option<&str>,
    dept: Option<&str>,
) -> Result<Table> {
    let mut t = Table::new(&[
        "date",
        "employee",
        "department",
        "at",
        "kind",
        "source",
        "key_id",
        "recorded_at",
        "event_id",
        "how",
    ]);
    for p in crate::mysql::punch_log::list(&mut pool.get_conn()?, from, to, employee, dept)? {
        t.push(vec![
            Cell::Date(p.work_date),
            Cell::Text(p.employee_id),
            Cell::Text(p.department_id),
            local(tz, Some(p.at)),
            Cell::Text(p.kind),
            Cell::Text(p.source),
            p.key_id.map_or(Cell::Null, Cell::Text),
            Cell::typed(
                Cell::Text(wall_clock_utc(tz, p.recorded_at, "%Y-%m-%d %H:%M:%S%.3f")),
                crate::domain::instant::text_in(tz, &p.recorded_at.and_utc()),
            ),
            Cell::Text(p.event_id),
            Cell::Text(p.how),
        ]);
    }
    Ok(t)
}

/// Settle runs, newest first.
pub(crate) fn runs(pool: &Db, tz: Tz, date: Option<NaiveDate>, limit: u32) -> Result<Table> {
    let mut t = Table::new(&[
        "run",
        "date",
        "started",
        "finished",
        "outcome",
        "employees",
        "written",
        "failed",
        "boards_deleted",
        "refused_punches",
        "counts",
        "problem",
    ]);
    for r in runs::list(&mut pool.get_conn()?, date, limit)? {
        let counts: Vec<String> = r.counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
        t.push(vec![
            Cell::from(r.id),
            Cell::Date(r.work_date),
            local(tz, Some(r.started_at)),
            local(tz, r.finished_at),
            Cell::Text(r.outcome),
            Cell::from(r.employees),
            Cell::from(r.rows_written),
            Cell::from(r.failed),
            Cell::from(r.boards_deleted),
            Cell::from(r.refused_punches),
            Cell::typed(Cell::Text(counts.join(", ")), serde_json::json!(r.counts)),
            Cell::Text(r.problem),
        ]);
    }
    Ok(t)
}

/// The rows those runs could not write.
pub(crate) fn failures(pool: &Db, date: Option<NaiveDate>, limit: u32) -> Result<Table> {
    let mut t = Table::new(&["run", "date", "employee", "department", "reason"]);
    for f in runs::failures(&mut pool.get_conn()?, date, limit)? {
        t.push(vec![
            Cell::from(f.run_id),
            Cell::Date(f.work_date),
            Cell::Text(f.employee_id),
            Cell::Text(f.department_id),
            Cell::Text(f.reason),
        ]);
    }
    Ok(t)
}

/// Whether an employee (active or not) or a department is known: reports of an unknown one
/// are refused rather than shown empty.
pub(crate) fn known(pool: &Db, what: Known, id: &str) -> Result<bool> {
    let sql = match what {
        Known::Employee => "SELECT COUNT(*) FROM employees WHERE id = ?",
        Known::Department => "SELECT COUNT(*) FROM departments WHERE id = ?",
    };
    let n: Option<u64> = pool.get_conn()?.exec_first(sql, (id,))?;
    Ok(n.unwrap_or(0) > 0)
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Known {
    Employee,
    Department,
}
