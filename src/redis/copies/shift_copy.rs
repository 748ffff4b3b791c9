//! Redis: the copy of the shift table (`<ns>:{shifts}`), so that a check-in learns its
//! employee's shift in the round trip it already makes, without MySQL. Written whole by
//! `shifts import|assign` and by every init-day and layout; read per punch for only the
//! fields it needs: `table` (the shifts and the departments' assignments, small) and the
//! punching employees' own assignments, `e:<id>`.

use std::collections::HashMap;

use anyhow::{Context, Result};
use chrono::NaiveDate;

use crate::domain::day::shifts::ShiftTable;
use crate::redis::handle::Board;

/// The `table` field: the table without the employees' own assignments.
#[derive(serde::Serialize, serde::Deserialize)]
struct Head {
    shifts: std::collections::BTreeMap<String, crate::domain::day::shift::Shift>,
    departments: HashMap<String, Vec<(NaiveDate, String)>>,
}

/// The table from the `table` field and the employees' own fields, in `employees` order.
fn decode<S: AsRef<str>>(head: Option<String>, employees: &[S], own: Vec<Option<String>>) -> Result<ShiftTable> {
    let Some(head) = head else {
        return Ok(ShiftTable::default());
    };
    let head: Head = serde_json::from_str(&head).context("reading the shift copy: its table")?;
    let mut table = ShiftTable {
        shifts: head.shifts,
        departments: head.departments,
        employees: HashMap::new(),
    };
    for (e, v) in employees.iter().zip(own) {
        if let Some(v) = v {
            let list = serde_json::from_str(&v).context("reading the shift copy: an employee's")?;
            table.employees.insert(e.as_ref().to_string(), list);
        }
    }
    Ok(table)
}

impl Board {
    /// Replace the copy with `table`, whole: written aside, then renamed over the old one, so
    /// that a punch never reads half of it. An empty table removes the copy.
    pub(crate) fn write_shifts(&mut self, table: &ShiftTable) -> Result<()> {
        let (key, next) = (self.keys.shifts(), self.keys.shifts_next());
        if table.shifts.is_empty() && table.is_empty() {
            redis::cmd("DEL")
                .arg(&key)
                .query::<()>(&mut self.con)
                .context("removing the shift copy")?;
            return Ok(());
        }
        let head = serde_json::to_string(&Head {
            shifts: table.shifts.clone(),
            departments: table.departments.clone(),
        })?;
        redis::cmd("DEL").arg(&next).query::<()>(&mut self.con)?;
        let mut fields: Vec<(String, String)> = vec![("table".into(), head)];
        for (id, list) in &table.employees {
            fields.push((format!("e:{id}"), serde_json::to_string(list)?));
        }
        for chunk in fields.chunks(5_000) {
            redis::cmd("HSET")
                .arg(&next)
                .arg(chunk)
                .query::<()>(&mut self.con)
                .context("writing the shift copy")?;
        }
        redis::cmd("RENAME")
            .arg(&next)
            .arg(&key)
            .query::<()>(&mut self.con)
            .context("writing the shift copy")?;
        Ok(())
    }

    /// The part of the copy that concerns `employees`: every shift, every department's
    /// assignments and these employees' own: one HMGET per 5,000 employees; for the one
    /// employee of a single check-in, what the roster lookup already read (no round trip).
    /// No copy: an empty table (everyone on the policy).
    pub(crate) fn read_shifts<S: AsRef<str>>(&mut self, employees: &[S]) -> Result<ShiftTable> {
        if let [one] = employees {
            if let Some(p) = self.shift_prefetch.take().filter(|p| p.employee == one.as_ref()) {
                let mut fields = p.fields.into_iter();
                let head = fields.next().flatten();
                return decode(head, employees, fields.collect());
            }
        }
        let key = self.keys.shifts();
        let mut head = None;
        let mut own = Vec::with_capacity(employees.len());
        let chunks: Vec<&[S]> = if employees.is_empty() {
            vec![&[]]
        } else {
            employees.chunks(5_000).collect()
        };
        for (i, chunk) in chunks.into_iter().enumerate() {
            let mut fields: Vec<String> = Vec::with_capacity(chunk.len() + 1);
            if i == 0 {
                fields.push("table".into());
            }
            fields.extend(chunk.iter().map(|e| format!("e:{}", e.as_ref())));
            let mut values: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(&key)
                .arg(&fields)
                .query(&mut self.con)
                .context("reading the shift copy")?;
            if i == 0 {
                head = values.remove(0);
                if head.is_none() {
                    return Ok(ShiftTable::default());
                }
            }
            own.extend(values);
        }
        decode(head, employees, own)
    }

    /// The whole copy (every employee's own assignments included): what the relay's absence
    /// alerts look at every few seconds, without MySQL until an alert is due.
    pub(crate) fn read_all_shifts(&mut self) -> Result<ShiftTable> {
        let mut all: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.keys.shifts())
            .query(&mut self.con)
            .context("reading the shift copy")?;
        let head = all.remove("table");
        let (employees, own): (Vec<String>, Vec<Option<String>>) = all
            .into_iter()
            .filter_map(|(field, v)| Some((field.strip_prefix("e:")?.to_string(), Some(v))))
            .unzip();
        decode(head, &employees, own)
    }
}
