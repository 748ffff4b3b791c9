//! The Redis server's clock, the one clock the program goes by (README "Where time comes
//! from"): `TIME`, read alone or in the pipeline of the roster lookup a punch makes anyway, with
//! this host's clock read around it (`domain::day::clock::Reading`).

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use crate::domain::day::clock::Reading;
use crate::redis::board::Employee;
use crate::redis::Board;

/// `TIME`'s answer (seconds and microseconds, as strings) as an instant.
pub(crate) fn server_time(v: redis::Value) -> Result<DateTime<Utc>> {
    let (secs, micros): (i64, i64) = redis::from_redis_value(v).context("TIME")?;
    DateTime::from_timestamp_micros(secs * 1_000_000 + micros).context("Redis's TIME is out of range")
}

impl Board {
    /// The server's clock, with this host's read just before and just after.
    pub fn read_clock(&mut self) -> Result<Reading> {
        let before = Utc::now();
        let v: redis::Value = redis::cmd("TIME").query(&mut self.con).context("TIME")?;
        let after = Utc::now();
        Ok(Reading {
            before,
            server: server_time(v)?,
            after,
        })
    }

    /// [`Board::lookup_many`] and the server's clock. On one node `TIME` rides in the lookup's
    /// first pipeline; a cluster's pipeline routes by key, so there (and for no ids) it is one
    /// more round trip, to whichever node answers keyless commands.
    pub fn lookup_many_timed<S: AsRef<str>>(&mut self, ids: &[S]) -> Result<(Vec<Option<Employee>>, Reading)> {
        if self.is_cluster() || ids.is_empty() {
            let reading = self.read_clock()?;
            return Ok((self.lookup_many(ids)?, reading));
        }
        let (found, reading) = self.lookup(ids, true)?;
        Ok((found, reading.context("Redis did not answer TIME")?))
    }
}
