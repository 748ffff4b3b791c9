//! Voiding a punch on a live board (`punch void`): the token out of the employee's day, in one
//! script call on the department's board (`void.lua`), its notice to the outbox in the same call.

use std::sync::LazyLock;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use redis::Commands;

use crate::domain::event::punch_log::{self, Entry, How};
use crate::domain::event::void_notice::VoidNotice;
use crate::domain::punch::Kind;
use crate::redis::handle::Board;

static VOID: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(include_str!("scripts/void.lua")));

impl Board {
    /// Take the punch `kind` at `secs` into `date` out of `emp`'s day on `dept`'s live board,
    /// and put `notice` (signed here with this process's key) in the department's outbox in the
    /// same step; `false` when the board holds no such punch (nothing written).
    pub(crate) fn void_punch(
        &mut self,
        dept: &str,
        date: NaiveDate,
        emp: &str,
        kind: Kind,
        secs: i64,
        notice: &mut VoidNotice,
    ) -> Result<bool> {
        let tok = format!("{}{secs}", if kind == Kind::In { 'i' } else { 'o' });
        notice.sign(self.signer.as_deref());
        let json = serde_json::to_string(&*notice)?;
        let mut inv = VOID.key(self.keys.board(dept, date));
        inv.key(self.keys.outbox(dept));
        inv.arg(emp).arg(tok).arg(&notice.event_id).arg(json);
        let done: i64 = inv.invoke(&mut self.con).context("voiding the punch in Redis")?;
        Ok(done == 1)
    }
}

impl Board {
    /// The punch whose event is `event_id` in `dept`'s punch logs of the days it has live
    /// boards for (how it came: live, bulk, recovered or approved), read in one pipeline.
    pub(crate) fn punch_of_event(&mut self, dept: &str, event_id: &str) -> Result<Option<Entry>> {
        let what = "looking the event up in the punch logs in Redis";
        let days: Vec<String> = self.con.smembers(self.keys.board_days(dept)).context(what)?;
        let mut asked = Vec::new();
        let mut pipe = redis::pipe();
        for date in days
            .iter()
            .filter_map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        {
            for how in How::ON_BOARD {
                pipe.hget(self.keys.punch_log(dept, date, how.as_str()), event_id);
                asked.push(how);
            }
        }
        if asked.is_empty() {
            return Ok(None);
        }
        let found: Vec<Option<String>> = pipe.query(&mut self.con).context(what)?;
        match asked.into_iter().zip(found).find_map(|(how, r)| r.map(|r| (how, r))) {
            Some((how, record)) => Ok(Some(
                punch_log::parse(event_id, &record, how).map_err(anyhow::Error::msg)?,
            )),
            None => Ok(None),
        }
    }
}
