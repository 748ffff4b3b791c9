//! Bulk check-in's file: a CSV of punches (`employee_id,kind,at[,source]`) checked row by row.
//! Unlike a roster import, a batch of punches is not one transaction: a bad row is refused and
//! reported with its line, and the good rows still land (`ops::checkin::bulk::bulk` records them
//! through the same script as one punch). Pure: no store is touched here.

use std::io::Read;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::day::policy::PunchWindow;
use crate::domain::people::roster::valid_id;
use crate::domain::punch::Kind;
use crate::domain::text::clip;
use crate::error::Error;

/// One row as read, before the employee is resolved.
#[derive(Debug, Clone)]
pub struct Row {
    pub line: u64,
    pub employee_id: String,
    pub kind: Option<Kind>,
    pub at: DateTime<Utc>,
    pub source: String,
}

pub(crate) use crate::domain::csv_input::{write_refusals, Refusal};

/// The most punches one file may hold: a day of 100,000 employees is 200,000; ten days'
/// backlog of a large site still fits.
pub(crate) const MAX_ROWS: u64 = 2_000_000;

/// Read every row and keep those `window` accepts; bad rows become refusals, in line order.
/// A bad header refuses the whole file (exit 2).
pub fn parse(reader: impl Read, window: &PunchWindow) -> Result<(Vec<Row>, Vec<Refusal>), Error> {
    let (rows, refused) = read(reader)?;
    Ok(keep_within(window, rows, refused))
}

/// Read every row, checking each on its own; whether its time is acceptable needs the
/// server's clock, which [`keep_within`] is given later (`ops::checkin::bulk`).
pub(crate) fn read(reader: impl Read) -> Result<(Vec<Row>, Vec<Refusal>), Error> {
    let (mut rows, mut refused) = (Vec::new(), Vec::new());
    each(reader, |r| {
        match r {
            Ok(row) => rows.push(row),
            Err(refusal) => refused.push(refusal),
        }
        true
    })?;
    Ok((rows, refused))
}

/// Hand each row to `f` as soon as it is read (a good row, or its refusal), until the end of
/// the input or until `f` returns false: a punch stream applies rows as they arrive. The
/// header and the bounds refuse the whole input, as for [`read`].
pub(crate) fn each(reader: impl Read, mut f: impl FnMut(Result<Row, Refusal>) -> bool) -> Result<(), Error> {
    let mut rdr = crate::domain::csv_input::open(reader, "punches", &["employee_id", "kind", "at"], &["source"])?;
    for rec in crate::domain::csv_input::records(&mut rdr, "punches", MAX_ROWS) {
        let item = match rec? {
            Ok(rec) => {
                let line = rec.position().map_or(0, |p| p.line());
                match parse_row(&rec) {
                    Ok((employee_id, kind, at, source)) => Ok(Row {
                        line,
                        employee_id,
                        kind,
                        at,
                        source,
                    }),
                    Err(reason) => Err(Refusal { line, reason }),
                }
            }
            Err(e) => Err(Refusal {
                line: e.position().map_or(0, |p| p.line()),
                reason: e.to_string(),
            }),
        };
        if !f(item) {
            break;
        }
    }
    Ok(())
}

/// The rows whose time `window` accepts; the others join the refusals, in line order.
pub(crate) fn keep_within(window: &PunchWindow, rows: Vec<Row>, mut refused: Vec<Refusal>) -> (Vec<Row>, Vec<Refusal>) {
    let mut kept = Vec::with_capacity(rows.len());
    for r in rows {
        match window.check(r.at) {
            Ok(()) => kept.push(r),
            Err(reason) => refused.push(Refusal { line: r.line, reason }),
        }
    }
    refused.sort_by_key(|r| r.line);
    (kept, refused)
}

type Parsed = (String, Option<Kind>, DateTime<Utc>, String);

fn parse_row(rec: &csv::StringRecord) -> Result<Parsed, String> {
    if rec.len() < 3 || rec.len() > 4 {
        return Err(format!("expected 3 or 4 fields, found {}", rec.len()));
    }
    let id = rec[0].to_string();
    if !valid_id(&id) {
        return Err(format!("invalid employee_id '{}'", clip(&id)));
    }
    let kind = match &rec[1] {
        "" | "auto" => None,
        k => Some(k.parse::<Kind>()?),
    };
    let at =
        crate::domain::dates::parse_instant(&rec[2]).map_err(|why| format!("invalid at '{}': {why}", clip(&rec[2])))?;
    let source = rec.get(3).filter(|s| !s.is_empty()).unwrap_or("bulk").to_string();
    crate::domain::text::check("source", &source)?;
    if source.len() > 64 {
        return Err("source longer than 64 characters".into());
    }
    Ok((id, kind, at, source))
}

/// What a bulk check-in did.
#[derive(Debug, Default, Serialize)]
pub(crate) struct BulkReport {
    pub rows: usize,
    /// Punches that moved someone's first check-in or last check-out.
    pub recorded: usize,
    /// Punches kept as history (a repeat) or exact duplicates: the record did not move.
    pub unchanged: usize,
    /// Of `unchanged`, the punches already recorded (the same punch sent again: same employee,
    /// kind and second, before or after settle): no event, no punch log entry.
    pub repeats: usize,
    /// Every refusal, in line order; `--json` lists the first [`SHOWN_REFUSALS`] of them
    /// (`--errors FILE` has them all) and `refused_count` counts them all.
    #[serde(serialize_with = "first_refusals")]
    pub refused: Vec<Refusal>,
    pub refused_count: usize,
    /// Punches held for review (back-dated past `policy.replay_window_minutes` by a key that
    /// may not replay offline punches): stored, not applied.
    pub held: usize,
    /// Punches sent to Redis whose reply never came because Redis failed: each may or may not
    /// have landed. Running the same file again settles them (a punch already there is a repeat).
    pub unconfirmed: usize,
    /// Why Redis stopped recording, when it did (the command then exits 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failure itself, for the exit code.
    #[serde(skip)]
    pub failure: Option<anyhow::Error>,
}

/// How many refusals stderr and `--json` list; the rest are counted (100,000 bad rows would
/// otherwise print 100 MB), and `checkin --file F --errors FILE` writes them all.
pub(crate) const SHOWN_REFUSALS: usize = 20;

fn first_refusals<S: serde::Serializer>(refused: &[Refusal], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(refused.iter().take(SHOWN_REFUSALS))
}

/// Every refusal as CSV (`line,reason`), for `--errors FILE`.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_rows_are_refused_with_their_line_and_good_rows_kept() {
        let now = DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let csv = "employee_id,kind,at,source\n\
                   E1,in,2026-11-30T08:00:00Z,k1\n\
                   E2,sideways,2026-11-30T08:00:00Z\n\
                   E3,in,yesterday\n\
                   E 4,in,2026-11-30T08:00:00Z\n\
                   E5,,2026-11-30T13:00:00Z\n\
                   E6,out,2026-11-30T11:00:00Z\n\
                   E7,in,2026-11-22T08:00:00Z\n";
        let window = PunchWindow::new(&crate::domain::day::policy::Policy::default(), chrono_tz::UTC, now);
        let (rows, refused) = parse(csv.as_bytes(), &window).unwrap();
        assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), vec![2, 7]);
        assert_eq!(rows[0].source, "k1");
        assert_eq!(rows[1].source, "bulk");
        assert_eq!(refused.iter().map(|r| r.line).collect::<Vec<_>>(), vec![3, 4, 5, 6, 8]);
        assert!(refused[4].reason.contains("max_backdate_days"), "{:?}", refused[4]);
        assert!(parse("id,when\n".as_bytes(), &window).is_err());
    }
}
