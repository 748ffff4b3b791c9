//! Settled days checked against what MySQL holds: settle records in Redis what each day it
//! settled left in MySQL (`redis/settled_days.rs`); a day MySQL now holds fewer rows of, or
//! fewer rows with punches, was lost there (a fail-over to a replica that was behind). Settle
//! refuses to run over it and `doctor` fails on it, both naming the day and what restores it.

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use crate::mysql::Conn;
use crate::redis::settled_days::SettledDay;
use crate::redis::Board;

/// A settled day MySQL holds less of than its settle left there.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Short {
    #[serde(rename = "work_date")]
    pub date: NaiveDate,
    pub expected: SettledDay,
    pub rows: u64,
    pub punched: u64,
}

/// Record `date` as settled with what MySQL now holds of it (`run` settled it), forgetting the
/// days no punch can reach any more (by `today` and today's `policy.max_backdate_days`, the
/// rulebook's).
pub(crate) fn record(
    board: &mut Board,
    conn: &mut Conn,
    (date, run): (NaiveDate, u64),
    (today, max_backdate_days): (NaiveDate, u32),
) -> Result<()> {
    let (rows, punched) = crate::mysql::attendance::held(conn, &[date])?
        .remove(&date)
        .unwrap_or_default();
    board.record_settled_day(
        date,
        SettledDay {
            run,
            rows,
            punched,
            recovered: false,
        },
        horizon(max_backdate_days, today),
    )
}

/// The oldest settled day still kept beside `today`: as long as its punch tokens are
/// (`policy::repeats_kept_until`), the window in which a punch of the day is still taken.
fn horizon(max_backdate_days: u32, today: NaiveDate) -> NaiveDate {
    today - chrono::Days::new(u64::from(max_backdate_days) + 3)
}

/// The recorded days MySQL holds less of, oldest first.
pub(crate) fn short_days(board: &mut Board, conn: &mut Conn) -> Result<Vec<Short>> {
    let recorded = board.settled_days()?;
    if recorded.is_empty() {
        return Ok(Vec::new());
    }
    let dates: Vec<NaiveDate> = recorded.keys().copied().collect();
    let held = crate::mysql::attendance::held(conn, &dates)?;
    Ok(recorded
        .into_iter()
        .filter_map(|(date, expected)| {
            let (rows, punched) = held.get(&date).copied().unwrap_or_default();
            (rows < expected.rows || punched < expected.punched).then_some(Short {
                date,
                expected,
                rows,
                punched,
            })
        })
        .collect())
}

/// One line naming the days (the first five), what was expected and found, and what to run.
pub(crate) fn describe(short: &[Short]) -> String {
    let named: Vec<String> = short
        .iter()
        .take(5)
        .map(|s| {
            format!(
                "{} ({} rows with {} punched expected, run {}; MySQL holds {} with {} punched)",
                s.date, s.expected.rows, s.expected.punched, s.expected.run, s.rows, s.punched
            )
        })
        .collect();
    let more = if short.len() > named.len() { ", ..." } else { "" };
    let first = short.first().map_or_else(|| "D".to_string(), |s| s.date.to_string());
    format!(
        "{} settled day(s) short in MySQL (a fail-over to a replica that was behind?): {}{more}; \
         run `attendance recover --date {first}` then `attendance settle --date {first}` for each",
        short.len(),
        named.join(", ")
    )
}
