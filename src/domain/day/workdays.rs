//! The work calendar: which days are work days. The policy's week decides unless a calendar
//! entry overrides it (a holiday on a Monday, a work Saturday). Parsing calendar CSVs (all or
//! nothing) and the effective kind of a day are pure; the entries live in MySQL (`crate::mysql::people::calendar_rows`).

use std::collections::BTreeMap;
use std::io::Read;

use chrono::NaiveDate;
use serde::Serialize;

use crate::domain::csv_input::Refusal;
use crate::domain::day::policy::{is_policy_workday, Policy};
use crate::error::Error;

pub(crate) const HEADER: [&str; 3] = ["date", "kind", "note"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DayKind {
    Workday,
    Holiday,
}

impl DayKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DayKind::Workday => "workday",
            DayKind::Holiday => "holiday",
        }
    }

    pub fn parse(s: &str) -> Result<DayKind, String> {
        match s {
            "workday" => Ok(DayKind::Workday),
            "holiday" => Ok(DayKind::Holiday),
            _ => Err(format!(
                "kind must be workday or holiday, not '{}'",
                crate::domain::text::clip(s)
            )),
        }
    }
}

/// One calendar entry: an override of the policy's week.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Entry {
    pub date: NaiveDate,
    pub kind: DayKind,
    pub note: String,
}

/// Calendar entries by date.
pub(crate) type Overrides = BTreeMap<NaiveDate, Entry>;

/// Whether `date` is a work day: its calendar entry if any, else the policy's week.
pub(crate) fn is_workday(policy: &Policy, overrides: &Overrides, date: NaiveDate) -> bool {
    match overrides.get(&date) {
        Some(e) => e.kind == DayKind::Workday,
        None => is_policy_workday(policy, date),
    }
}

/// The date's calendar entry as the shifts read it: `Some(true)` a work day and `Some(false)`
/// a holiday for every shift, `None` each shift's own week.
pub(crate) fn entry(overrides: &Overrides, date: NaiveDate) -> Option<bool> {
    overrides.get(&date).map(|e| e.kind == DayKind::Workday)
}

/// The first work day after `date`, looking at most a year ahead (the policy has at least
/// one work day a week, so only a calendar full of holidays finds none).
pub(crate) fn next_workday(policy: &Policy, overrides: &Overrides, date: NaiveDate) -> Option<NaiveDate> {
    date.iter_days()
        .skip(1)
        .take(366)
        .find(|d| is_workday(policy, overrides, *d))
}

/// The most days a calendar file may set: some 27 years, one row a day.
pub(crate) const MAX_ROWS: u64 = 10_000;

/// The rejection of a calendar file with bad lines, in one line (cut at 300 characters; every
/// line is in `--errors FILE`).
pub(crate) fn rejection(bad: &[Refusal]) -> Error {
    let lines: Vec<String> = bad.iter().map(|r| format!("line {}: {}", r.line, r.reason)).collect();
    Error::input(format!(
        "calendar: {} bad line(s), nothing imported: {}",
        bad.len(),
        lines.join("; ")
    ))
}

/// Parse a calendar file (`date,kind,note`, note optional). Any bad line rejects the file:
/// the bad lines come back (for [`rejection`] and `--errors FILE`); a file that cannot be read
/// at all is the error.
pub(crate) fn read_csv(reader: impl Read) -> Result<Result<Vec<Entry>, Vec<Refusal>>, Error> {
    let mut rdr = crate::domain::csv_input::open(reader, "calendar", &HEADER[..2], &HEADER[2..])?;
    let mut entries: BTreeMap<NaiveDate, (u64, Entry)> = BTreeMap::new();
    let mut bad = Vec::new();
    for rec in crate::domain::csv_input::records(&mut rdr, "calendar", MAX_ROWS) {
        let Some((rec, line)) = crate::domain::csv_input::record_or_refusal(rec?, &mut bad) else {
            continue;
        };
        match parse_record(&rec) {
            Ok(e) => {
                if let Some((first, _)) = entries.get(&e.date) {
                    let reason = format!("{} already given on line {first}", e.date);
                    bad.push(Refusal { line, reason });
                } else {
                    entries.insert(e.date, (line, e));
                }
            }
            Err(reason) => bad.push(Refusal { line, reason }),
        }
    }
    if !bad.is_empty() {
        return Ok(Err(bad));
    }
    Ok(Ok(entries.into_values().map(|(_, e)| e).collect()))
}

fn parse_record(rec: &csv::StringRecord) -> Result<Entry, String> {
    if rec.len() < 2 || rec.len() > 3 {
        return Err(format!("expected 2 or 3 fields, found {}", rec.len()));
    }
    let date = crate::domain::dates::parse_day(&rec[0])
        .map_err(|why| format!("invalid date '{}': {why}", crate::domain::text::clip(&rec[0])))?;
    let kind = DayKind::parse(&rec[1])?;
    let note = rec.get(2).unwrap_or("").to_string();
    check_note(&note)?;
    Ok(Entry { date, kind, note })
}

/// A note fits its column (200 characters) and is text, not control (`domain::text`).
pub(crate) fn check_note(note: &str) -> Result<(), String> {
    crate::domain::text::check("note", note)?;
    if note.chars().count() > 200 {
        return Err("note longer than 200 characters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn overrides_win_over_the_week() {
        let p = Policy::default();
        let mut o = Overrides::new();
        // 2026-12-25 is a Friday, 2026-12-26 a Saturday.
        assert!(is_workday(&p, &o, d("2026-12-25")));
        o.insert(
            d("2026-12-25"),
            Entry {
                date: d("2026-12-25"),
                kind: DayKind::Holiday,
                note: String::new(),
            },
        );
        o.insert(
            d("2026-12-26"),
            Entry {
                date: d("2026-12-26"),
                kind: DayKind::Workday,
                note: String::new(),
            },
        );
        assert!(!is_workday(&p, &o, d("2026-12-25")));
        assert_eq!(next_workday(&p, &o, d("2026-12-24")), Some(d("2026-12-26")));
        assert_eq!(next_workday(&p, &o, d("2026-12-26")), Some(d("2026-12-28")));
    }

    #[test]
    fn a_bad_file_lists_every_bad_line() {
        let csv =
            "date,kind,note\n2026-12-25,holiday,Christmas\n2026-13-01,holiday\n2026-12-31,maybe\n2026-12-25,workday\n";
        let e = read_csv(csv.as_bytes())
            .unwrap()
            .map_err(|bad| rejection(&bad))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("line 4") && e.contains("line 5"),
            "{e}"
        );
        assert!(e.contains("3 bad line(s)"), "{e}");
        let ok = read_csv("date,kind\n2026-12-25,holiday\n".as_bytes()).unwrap().unwrap();
        assert_eq!(ok[0].kind, DayKind::Holiday);
    }
}
