//! An employee moved to another department by `org import` takes their days with them: each
//! board field of theirs (every day in the old department's days set: today, days not yet
//! settled, a next day already laid out) goes to the new department's board of the same day.
//!
//! Two departments' boards may live on two nodes of a Redis Cluster, so a move is two steps,
//! each atomic on one department's keys and safe to repeat: merge into the new board (a union
//! of tokens, `move_in.lua`), then remove from the old one only if it is unchanged
//! (`move_out.lua`; changed: merge again). A journal of moves still to finish (`Keys::moves`)
//! is written before the roster changes and emptied after, so a rerun of `org import`
//! finishes a move a crash cut short. In between, settle reads both boards and merges them.
//! The departures stay (`Keys::departures`): consumers check a moved employee's earlier events
//! against them (`domain::event::membership`).

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use redis::Commands;

use super::Board;
use crate::domain::event::membership::{add_departure, parse_departures, Departure, Membership};

static MOVE_IN: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(concat!(
        include_str!("scripts/hashtable.lua"),
        include_str!("scripts/tokens.lua"),
        include_str!("scripts/move_in.lua")
    ))
});
static MOVE_OUT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(include_str!("scripts/move_out.lua")));

/// What moving one employee's days did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Moved {
    /// Board fields moved: one per day the employee had on the old department's boards.
    pub days: u64,
    /// Of those, the days that held punches (the others were laid out, not yet punched).
    pub with_punches: u64,
}

impl Board {
    /// Journal moves before the roster changes: employee id -> the department they leave.
    /// An employee already in the journal keeps its departments too (a move not finished).
    ///
    /// Each employee's departure from the department they leave is recorded too, at the
    /// server's time (`Keys::departures`), and kept: before the roster changes, so that no
    /// consumer ever sees the new department without it. An import that fails after this
    /// leaves a departure from the department the employee is still in, which grants nothing
    /// (their roster department passes anyway), and its rerun moves that departure's time.
    pub fn note_moves(&mut self, moves: &[(&str, &str)]) -> Result<()> {
        if moves.is_empty() {
            return Ok(());
        }
        let now = self.read_clock()?.server;
        let (con, keys) = (&mut self.con, &self.keys);
        for chunk in moves.chunks(1_000) {
            let ids: Vec<&str> = chunk.iter().map(|(e, _)| *e).collect();
            let (held, left): (Vec<Option<String>>, Vec<Option<String>>) = redis::pipe()
                .cmd("HMGET")
                .arg(keys.moves())
                .arg(&ids)
                .cmd("HMGET")
                .arg(keys.departures())
                .arg(&ids)
                .query(con)
                .context("reading the moves journal in Redis")?;
            let departures: Vec<(&str, String)> = chunk
                .iter()
                .zip(left)
                .map(|((emp, from), left)| (*emp, add_departure(left.as_deref(), from, now)))
                .collect();
            let () = con
                .hset_multiple(keys.departures(), &departures)
                .context("recording departures in Redis")?;
            let fields: Vec<(&str, String)> = chunk
                .iter()
                .zip(held)
                .map(|((emp, from), held)| {
                    let mut depts: BTreeSet<&str> = held.as_deref().unwrap_or("").split(',').collect();
                    depts.insert(from);
                    depts.remove("");
                    (*emp, depts.into_iter().collect::<Vec<_>>().join(","))
                })
                .collect();
            let () = con
                .hset_multiple(keys.moves(), &fields)
                .context("writing the moves journal in Redis")?;
        }
        Ok(())
    }

    /// The moves journalled and not yet finished: employee id -> the departments they left.
    pub fn pending_moves(&mut self) -> Result<HashMap<String, Vec<String>>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let all: HashMap<String, String> = con
            .hgetall(keys.moves())
            .context("reading the moves journal in Redis")?;
        Ok(all
            .into_iter()
            .map(|(emp, depts)| {
                (
                    emp,
                    depts.split(',').filter(|d| !d.is_empty()).map(String::from).collect(),
                )
            })
            .collect())
    }

    /// The departments `ids` left and when, each in the order given (empty: none recorded).
    pub(crate) fn departures_of<S: AsRef<str>>(&mut self, ids: &[S]) -> Result<Vec<Vec<Departure>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let (con, keys) = (&mut self.con, &self.keys);
        let held: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(keys.departures())
            .arg(ids.iter().map(AsRef::as_ref).collect::<Vec<&str>>())
            .query(con)
            .context("reading the departures in Redis")?;
        Ok(held
            .iter()
            .map(|v| v.as_deref().map(parse_departures).unwrap_or_default())
            .collect())
    }

    /// What a consumer checks an event of `emp` for `dept` against: the roster cache's
    /// department, and, only when that is another, the departments `emp` left (`None`: not in
    /// the roster).
    pub(crate) fn membership(&mut self, emp: &str, dept: &str) -> Result<Option<Membership>> {
        let Some(e) = self.lookup_many(&[emp])?.into_iter().flatten().next() else {
            return Ok(None);
        };
        Ok(Some(self.with_departures(emp, &e.department_id, dept)?))
    }

    /// `emp`'s membership given their roster department `current`: the departures are read
    /// only when `current` is not `dept`, the department an event says.
    pub(crate) fn with_departures(&mut self, emp: &str, current: &str, dept: &str) -> Result<Membership> {
        let mut m = Membership::now(current);
        if current != dept {
            m.left = self.departures_of(&[emp])?.pop().unwrap_or_default();
        }
        Ok(m)
    }

    /// A move is finished (or has nothing left to do): out of the journal.
    pub fn forget_move(&mut self, emp: &str) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        let () = con
            .hdel(keys.moves(), emp)
            .context("writing the moves journal in Redis")?;
        Ok(())
    }

    /// Move `emp`'s field of every day `from` has a live board of onto `to`'s board of that day.
    pub fn move_days(&mut self, emp: &str, from: &str, to: &str) -> Result<Moved> {
        let (con, keys) = (&mut self.con, &self.keys);
        let what = "moving an employee's day to their new department's board in Redis";
        let days: Vec<String> = con.smembers(keys.board_days(from)).context(what)?;
        let mut moved = Moved::default();
        for day in days {
            let Ok(date) = NaiveDate::parse_from_str(&day, "%Y-%m-%d") else {
                continue;
            };
            let (old, new) = (keys.board(from, date), keys.board(to, date));
            let mut value: Option<String> = con.hget(&old, emp).context(what)?;
            if value.is_none() {
                continue;
            }
            let mut punched = false;
            while let Some(v) = value {
                punched |= !v.is_empty();
                let mut inv = MOVE_IN.key(&new);
                inv.key(keys.board_days(to)).arg(emp).arg(&v).arg(&day);
                let _: u8 = inv.invoke(con).context(what)?;
                let mut inv = MOVE_OUT.key(&old);
                inv.key(keys.settle_board(from, date))
                    .key(keys.board_days(from))
                    .arg(emp)
                    .arg(&v)
                    .arg(&day);
                value = inv.invoke(con).context(what)?;
            }
            moved.days += 1;
            if punched {
                moved.with_punches += 1;
            }
        }
        Ok(moved)
    }
}
