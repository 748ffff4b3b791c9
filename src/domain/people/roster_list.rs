//! The roster as `org list` shows it and `org export` writes it: one entry per employee with
//! their department's name, who is current and who has left, and the CSV that `org import`
//! reads back unchanged (every column, the optional ones included).

use std::io::Write;

use chrono::NaiveDate;
use serde::Serialize;

use crate::domain::people::roster::{HEADER, OPTIONAL};
use crate::domain::people::roster_plan::Held;

/// One employee of the record.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Entry {
    pub employee_id: String,
    #[serde(rename = "employee_name")]
    pub name: String,
    pub department_id: String,
    pub department_name: String,
    pub role: &'static str,
    pub login: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    /// Off the roster altogether (`active` cleared: by hand, or a joiner `--full` dropped).
    #[serde(rename = "off_roster")]
    pub removed: bool,
}

impl Entry {
    pub(crate) fn new(h: Held, department_name: String) -> Entry {
        Entry {
            employee_id: h.employee_id,
            name: h.name,
            department_id: h.department_id,
            department_name,
            role: h.role.as_str(),
            login: h.login,
            start_date: h.employment.start,
            end_date: h.employment.end,
            removed: !h.active,
        }
    }

    /// Left by `today`: past their end date, or off the roster.
    pub(crate) fn left(&self, today: NaiveDate) -> bool {
        self.removed || self.end_date.is_some_and(|e| e < today)
    }
}

/// The export: every employee on the roster (leavers with their end date included, those
/// taken off it not), in the order given, as a roster CSV with every column. Cells are written
/// as stored, not guarded against spreadsheets: the file is for `org import`.
pub(crate) fn write_csv(w: impl Write, entries: &[Entry]) -> std::io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    csv.write_record(HEADER.iter().chain(OPTIONAL.iter()))?;
    let day = |d: Option<NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
    for e in entries.iter().filter(|e| !e.removed) {
        csv.write_record([
            e.employee_id.as_str(),
            &e.name,
            &e.department_id,
            &e.department_name,
            e.role,
            e.login.as_deref().unwrap_or(""),
            &day(e.start_date),
            &day(e.end_date),
        ])?;
    }
    csv.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::people::employment::Employment;
    use crate::domain::people::roster::Role;

    #[test]
    fn the_export_reads_back_as_the_same_roster() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let held = |id: &str, login: Option<&str>, employment: Employment, active: bool| Held {
            employee_id: id.into(),
            name: format!("N, \"{id}\""),
            department_id: "D1".into(),
            role: Role::Employee,
            login: login.map(str::to_string),
            employment,
            active,
        };
        let entries = vec![
            Entry::new(held("E1", Some("ann"), Employment::default(), true), "Sales".into()),
            Entry::new(
                held(
                    "E2",
                    None,
                    Employment::new(Some(d("2026-01-05")), Some(d("2026-11-30"))),
                    true,
                ),
                "Sales".into(),
            ),
            Entry::new(held("E3", None, Employment::default(), false), "Sales".into()),
        ];
        let mut out = Vec::new();
        write_csv(&mut out, &entries).unwrap();
        let rows = crate::domain::people::roster::parse(&out[..]).unwrap();
        assert_eq!(rows.len(), 2, "the one off the roster is left out");
        assert_eq!(rows[0].name, "N, \"E1\"");
        assert_eq!(rows[0].login, crate::domain::people::roster::Login::Set("ann".into()));
        assert_eq!(
            rows[1].end_date,
            crate::domain::people::employment::Given::Set(d("2026-11-30"))
        );
        assert!(entries[1].left(d("2026-12-01")) && !entries[1].left(d("2026-11-30")));
        assert!(entries[2].left(d("2026-01-01")));
    }
}
