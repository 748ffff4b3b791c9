//! Settle's side of Redis: read every board of a day, delete the boards once their rows are
//! committed, and look at what the outboxes still hold. Outboxes are never deleted here.

use std::collections::{BTreeSet, HashMap};

use anyhow::{Context, Result};
use chrono::NaiveDate;
use redis::Commands;

use super::rows::BoardEntry;
use crate::keys::Keys;
use crate::services::RedisConn;

/// The boards of a day: their keys (sorted) and every employee's value. An employee found
/// on two boards (moved department during the day) gets both values joined: the record
/// format is a list of punches, so the union is still a record.
pub struct DayBoards {
    pub keys: Vec<String>,
    pub entries: HashMap<String, BoardEntry>,
}

pub fn read(con: &mut RedisConn, keys: &Keys, date: NaiveDate) -> Result<DayBoards> {
    let found: BTreeSet<String> = con
        .scan_match::<_, String>(keys.board_pattern(date))
        .context("listing the day's boards in Redis")?
        .collect::<Result<_, _>>()
        .context("listing the day's boards in Redis")?;
    let board_keys: Vec<String> = found.into_iter().collect();
    let mut entries: HashMap<String, BoardEntry> = HashMap::new();
    for chunk in board_keys.chunks(100) {
        let mut pipe = redis::pipe();
        for k in chunk {
            pipe.hgetall(k);
        }
        let boards: Vec<HashMap<String, String>> = pipe.query(con).context("reading the day's boards from Redis")?;
        for (key, board) in chunk.iter().zip(boards) {
            let dept = Keys::dept_of(key).unwrap_or_default();
            for (emp, value) in board {
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
        }
    }
    Ok(DayBoards {
        keys: board_keys,
        entries,
    })
}

/// Delete boards, a few keys per command; `after_each` runs after every command (the test
/// hook uses it). Returns how many were deleted.
pub fn delete(
    con: &mut RedisConn,
    board_keys: &[String],
    per_command: usize,
    mut after_each: impl FnMut(usize),
) -> Result<u64> {
    let mut n = 0;
    for chunk in board_keys.chunks(per_command.max(1)) {
        let deleted: u64 = con.del(chunk).context("deleting settled boards from Redis")?;
        n += deleted;
        after_each(chunk.len());
    }
    Ok(n)
}

/// What became of the outboxes' events (the shape of `notify::DrainReport`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Outboxes {
    /// Departments whose outbox holds events.
    pub departments: usize,
    /// Events delivered (and gone from their outbox).
    pub sent: usize,
    /// Events still waiting in an outbox.
    pub pending: usize,
    /// Why they could not be delivered, if something stood in the way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Count what the outboxes hold, touching nothing.
pub fn pending_outboxes(con: &mut RedisConn, keys: &Keys) -> Result<Outboxes> {
    let depts = crate::board::outbox_departments(con, keys)?;
    if depts.is_empty() {
        // An empty pipeline is an error to the client, not an empty answer.
        return Ok(Outboxes::default());
    }
    let mut pipe = redis::pipe();
    for d in &depts {
        pipe.hlen(keys.outbox(d));
    }
    let lens: Vec<usize> = pipe.query(con).context("reading the outboxes in Redis")?;
    Ok(Outboxes {
        departments: lens.iter().filter(|n| **n > 0).count(),
        pending: lens.iter().sum(),
        ..Outboxes::default()
    })
}
