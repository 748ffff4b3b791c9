//! Settle's side of the boards: the cut-over (each live board and punch log moved into settle's
//! own keys), reading settle's boards and punch logs, releasing them once their rows are committed, and the per-department
//! sets of dates that still have boards. Everything goes department by department from a list
//! the caller takes from the roster, never by a keyspace SCAN, so it runs on a Redis Cluster too.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use redis::ConnectionLike;

use super::Board;
use crate::domain::day::record::DayRecord;
use crate::domain::event::punch_log::How;

static CUTOVER: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(concat!(
        include_str!("scripts/tokens.lua"),
        include_str!("scripts/cutover.lua")
    ))
});
static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(concat!(
        include_str!("scripts/tokens.lua"),
        include_str!("scripts/release.lua")
    ))
});

/// Departments per pipeline: a few hundred short commands per round trip.
const PER_PIPELINE: usize = 200;

/// What a board says of one employee: the department whose board holds the field, and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardEntry {
    pub department_id: String,
    pub value: String,
}

/// Settle's boards of a day: the departments that have one, and every employee's value. An
/// employee found on two boards (moved department during the day) gets both values joined:
/// the record format is a list of punches, so the union is still a record.
#[derive(Debug, Default)]
pub struct DayBoards {
    pub departments: Vec<String>,
    pub entries: HashMap<String, BoardEntry>,
}

fn day(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

impl Board {
    /// Move each department's live board of `date` into settle's key (merging into what a killed
    /// run left there), `per_call` departments per pipeline; `after_each` runs after every pipeline
    /// with its size (the test hook uses it). Returns how many live boards moved.
    pub fn cut_over(
        &mut self,
        date: NaiveDate,
        depts: &[String],
        per_call: usize,
        after_each: impl FnMut(usize),
    ) -> Result<u64> {
        let (con, keys) = (&mut self.con, &self.keys);
        let what = "moving the day's boards out of the live keys";
        per_department(con, &CUTOVER, what, depts, per_call, after_each, |d| {
            let mut inv = CUTOVER.key(keys.board(d, date));
            inv.key(keys.settle_board(d, date));
            for how in How::ON_BOARD {
                inv.key(keys.punch_log(d, date, how.as_str()))
                    .key(keys.settle_punch_log(d, date, how.as_str()));
            }
            inv
        })
    }

    /// The departments with no board at all for `date`, neither live nor settle's.
    pub fn without_board(&mut self, date: NaiveDate, depts: &[String]) -> Result<Vec<String>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut missing = Vec::new();
        for chunk in depts.chunks(PER_PIPELINE) {
            let mut pipe = redis::pipe();
            for d in chunk {
                pipe.exists(keys.board(d, date)).exists(keys.settle_board(d, date));
            }
            let found: Vec<bool> = pipe.query(con).context("looking for the day's boards in Redis")?;
            for (d, pair) in chunk.iter().zip(found.chunks(2)) {
                if !pair.iter().any(|b| *b) {
                    missing.push(d.clone());
                }
            }
        }
        Ok(missing)
    }

    /// Read settle's boards of `date` (after [`Board::cut_over`]).
    pub fn settle_boards(&mut self, date: NaiveDate, depts: &[String]) -> Result<DayBoards> {
        let keys = &self.keys;
        let boards: Vec<HashMap<String, String>> = hgetall_each(
            &mut self.con,
            depts,
            |d| keys.settle_board(d, date),
            "reading the day's boards from Redis",
        )?;
        let mut out = DayBoards::default();
        for (dept, board) in depts.iter().zip(boards) {
            if board.is_empty() {
                continue;
            }
            out.departments.push(dept.clone());
            for (emp, value) in board {
                join(&mut out.entries, dept, emp, value);
            }
        }
        Ok(out)
    }

    /// Delete settle's boards of `date` for these departments and forget the date in their days
    /// sets (unless a fresh live board appeared), keeping their punches in the settled day's key
    /// until `keep_until` (unix seconds; 0: not kept) so that a punch sent again is a repeat
    /// (see `Keys::settled_board`), `per_call` departments per pipeline;
    /// `after_each` runs after every pipeline with its size (the test hook uses it). Returns how
    /// many boards were deleted.
    pub fn release(
        &mut self,
        date: NaiveDate,
        depts: &[String],
        keep_until: i64,
        per_call: usize,
        after_each: impl FnMut(usize),
    ) -> Result<u64> {
        let (con, keys) = (&mut self.con, &self.keys);
        let what = "deleting settled boards from Redis";
        per_department(con, &RELEASE, what, depts, per_call, after_each, |d| {
            let mut inv = RELEASE.key(keys.settle_board(d, date));
            inv.key(keys.board(d, date))
                .key(keys.board_days(d))
                .key(keys.settled_board(d, date))
                .arg(day(date))
                .arg(keep_until);
            for how in How::ON_BOARD {
                inv.key(keys.settle_punch_log(d, date, how.as_str()));
            }
            inv
        })
    }

    /// Every date that still has a board (live or settle's) in one of these departments, read from
    /// their days sets. Unreadable members are skipped: they name no board settle could find.
    pub fn days_with_boards(&mut self, depts: &[String]) -> Result<BTreeSet<NaiveDate>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut days = BTreeSet::new();
        for chunk in depts.chunks(PER_PIPELINE) {
            let mut pipe = redis::pipe();
            for d in chunk {
                pipe.smembers(keys.board_days(d));
            }
            let sets: Vec<Vec<String>> = pipe.query(con).context("reading the days with boards from Redis")?;
            days.extend(
                sets.iter()
                    .flatten()
                    .filter_map(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()),
            );
        }
        Ok(days)
    }

    /// Settle's punch logs of `date` (after [`Board::cut_over`]): every (event id, record) pair
    /// of these departments, with how its punch came (see `punch.lua`).
    pub(crate) fn settle_punch_logs(
        &mut self,
        date: NaiveDate,
        depts: &[String],
    ) -> Result<Vec<(String, String, How)>> {
        let mut out = Vec::new();
        for how in How::ON_BOARD {
            let keys = &self.keys;
            let logs: Vec<Vec<(String, String)>> = hgetall_each(
                &mut self.con,
                depts,
                |d| keys.settle_punch_log(d, date, how.as_str()),
                "reading the day's punch logs from Redis",
            )?;
            out.extend(logs.into_iter().flatten().map(|(id, record)| (id, record, how)));
        }
        Ok(out)
    }

    /// Settle's board values of `date` for these (department, employee) pairs; `None` where absent.
    pub fn settle_values(&mut self, date: NaiveDate, pairs: &[(&str, &str)]) -> Result<Vec<Option<String>>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(PER_PIPELINE) {
            let mut pipe = redis::pipe();
            for (dept, emp) in chunk {
                pipe.hget(keys.settle_board(dept, date), *emp);
            }
            let vals: Vec<Option<String>> = pipe.query(con).context("reading the day's boards from Redis")?;
            out.extend(vals);
        }
        Ok(out)
    }

    /// One employee's punches of `date` still waiting in Redis (live board and settle's), not yet
    /// in MySQL's row if the day was settled before they came: empty if none.
    pub fn waiting_record(&mut self, dept: &str, date: NaiveDate, emp: &str) -> Result<DayRecord> {
        let (con, keys) = (&mut self.con, &self.keys);
        let (live, settling): (Option<String>, Option<String>) = redis::pipe()
            .hget(keys.board(dept, date), emp)
            .hget(keys.settle_board(dept, date), emp)
            .query(con)
            .context("reading the employee's board from Redis")?;
        let joined = [live, settling].into_iter().flatten().collect::<Vec<_>>().join(",");
        Ok(DayRecord::parse(&joined))
    }
}

/// HGETALL of one key per department, [`PER_PIPELINE`] departments per round trip: each
/// department's hash, in the order of `depts`.
pub(super) fn hgetall_each<T: redis::FromRedisValue>(
    con: &mut impl ConnectionLike,
    depts: &[String],
    key: impl Fn(&str) -> String,
    what: &'static str,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(depts.len());
    for chunk in depts.chunks(PER_PIPELINE) {
        let mut pipe = redis::pipe();
        for d in chunk {
            pipe.hgetall(key(d));
        }
        let hashes: Vec<T> = pipe.query(con).context(what)?;
        out.extend(hashes);
    }
    Ok(out)
}

/// Run a script once per department, `per_call` calls per pipeline, and sum the replies.
fn per_department(
    con: &mut impl ConnectionLike,
    script: &redis::Script,
    what: &str,
    depts: &[String],
    per_call: usize,
    mut after_each: impl FnMut(usize),
    call: impl Fn(&str) -> redis::ScriptInvocation<'static>,
) -> Result<u64> {
    // In a pipeline EVALSHA does not load the script on NOSCRIPT: load it first.
    script
        .prepare_invoke()
        .load(con)
        .with_context(|| format!("{what}: loading the script"))?;
    let mut sum = 0;
    for chunk in depts.chunks(per_call.max(1)) {
        let mut pipe = redis::pipe();
        for d in chunk {
            pipe.invoke_script(&call(d));
        }
        let n: Vec<u64> = pipe.query(con).context(what.to_string())?;
        sum += n.iter().sum::<u64>();
        after_each(chunk.len());
    }
    Ok(sum)
}

/// Add one board's value of `emp` to what other boards gave (the first department seen stays).
pub(crate) fn join(entries: &mut HashMap<String, BoardEntry>, dept: &str, emp: String, value: String) {
    match entries.get_mut(&emp) {
        Some(e) if !value.is_empty() => {
            e.value = if e.value.is_empty() {
                value
            } else {
                format!("{},{value}", e.value)
            };
        }
        Some(_) => {}
        None => {
            entries.insert(
                emp,
                BoardEntry {
                    department_id: dept.to_string(),
                    value,
                },
            );
        }
    }
}
