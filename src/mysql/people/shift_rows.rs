//! Shift queries: the named shifts and who follows which from when (`migrations/V16`).

use anyhow::Result;
use chrono::{NaiveDate, NaiveTime};
use mysql::prelude::Queryable;
use mysql::Value;

use crate::domain::day::shift::{parse_days, Shift};
use crate::domain::day::shifts::{Assignment, Scope, ShiftTable};
use crate::error::Error;
use crate::mysql::placeholders;
use crate::mysql::Db;

/// The whole table: every shift and every assignment.
pub(crate) fn table(conn: &mut impl Queryable) -> Result<ShiftTable> {
    type Row = (String, NaiveTime, NaiveTime, u32, u32, String, u32, bool);
    let rows: Vec<Row> = conn.query(
        "SELECT name, start_time, end_time, late_grace_minutes, early_grace_minutes, work_days, \
         break_minutes, part_time FROM shifts ORDER BY name",
    )?;
    let mut shifts = Vec::with_capacity(rows.len());
    for (name, start, end, late, early, days, brk, part_time) in rows {
        let work_days =
            parse_days(&days).map_err(|why| Error::internal(format!("shifts row '{name}': work_days: {why}")))?;
        shifts.push(Shift {
            name,
            start,
            end,
            late_grace_minutes: late,
            early_grace_minutes: early,
            work_days,
            break_minutes: brk,
            part_time,
            split: None,
        });
    }
    let rows: Vec<(String, String, NaiveDate, String)> =
        conn.query("SELECT scope, target, from_date, shift FROM shift_assignments")?;
    let assignments = rows
        .into_iter()
        .map(|(scope, target, from, shift)| {
            let scope = Scope::parse(&scope)
                .ok_or_else(|| Error::internal(format!("shift_assignments row {target}: scope '{scope}'")))?;
            Ok(Assignment {
                scope,
                target,
                from,
                shift,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ShiftTable::new(shifts, assignments))
}

/// [`table`] on a connection of its own.
pub(crate) fn read(db: &Db) -> Result<ShiftTable> {
    table(&mut db.conn()?)
}

/// Add or replace shifts in the caller's transaction (with the re-settle they cause): a file
/// lands whole or not at all.
pub(crate) fn upsert_shifts(tx: &mut impl Queryable, shifts: &[Shift]) -> Result<()> {
    for chunk in shifts.chunks(500) {
        let sql = format!(
            "INSERT INTO shifts (name, start_time, end_time, late_grace_minutes, early_grace_minutes, \
             work_days, break_minutes, part_time) VALUES {} ON DUPLICATE KEY UPDATE \
             start_time = VALUES(start_time), end_time = VALUES(end_time), \
             late_grace_minutes = VALUES(late_grace_minutes), early_grace_minutes = VALUES(early_grace_minutes), \
             work_days = VALUES(work_days), break_minutes = VALUES(break_minutes), part_time = VALUES(part_time)",
            placeholders(chunk.len(), 8)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|s| {
                [
                    Value::from(&s.name),
                    Value::from(s.start),
                    Value::from(s.end),
                    Value::from(s.late_grace_minutes),
                    Value::from(s.early_grace_minutes),
                    Value::from(s.days_text()),
                    Value::from(s.break_minutes),
                    Value::from(s.part_time),
                ]
            })
            .collect();
        tx.exec_drop(sql, params)?;
    }
    Ok(())
}

/// Add or replace assignments (one per scope, target and date) in the caller's transaction
/// (with the re-settle they cause).
pub(crate) fn upsert_assignments(tx: &mut impl Queryable, assignments: &[Assignment]) -> Result<()> {
    for chunk in assignments.chunks(1_000) {
        let sql = format!(
            "INSERT INTO shift_assignments (scope, target, from_date, shift) VALUES {} \
             ON DUPLICATE KEY UPDATE shift = VALUES(shift)",
            placeholders(chunk.len(), 4)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|a| {
                [
                    Value::from(a.scope.as_str()),
                    Value::from(&a.target),
                    Value::from(a.from),
                    Value::from(&a.shift),
                ]
            })
            .collect();
        tx.exec_drop(sql, params)?;
    }
    Ok(())
}

/// Which of `ids` are departments (`department`) or employees (`employee`) on the roster.
pub(crate) fn known_targets(db: &Db, scope: Scope, ids: &[&str]) -> Result<std::collections::HashSet<String>> {
    let mut conn = db.conn()?;
    let table = match scope {
        Scope::Department => "departments",
        Scope::Employee => "employees",
    };
    let mut out = std::collections::HashSet::new();
    for chunk in ids.chunks(1_000) {
        if chunk.is_empty() {
            continue;
        }
        let sql = format!(
            "SELECT id FROM {table} WHERE id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        let found: Vec<String> = conn.exec(sql, chunk.to_vec())?;
        out.extend(found);
    }
    Ok(out)
}
