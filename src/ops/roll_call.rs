//! `report now`: the roll call from the day's boards in Redis (today by the Redis server's
//! clock, in the company's zone), the departments from the MySQL roster, the names from the
//! roster cache.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{DateTime, NaiveDate};
use chrono_tz::Tz;

use crate::config::Config;
use crate::domain::roll_call::RollCall;
use crate::error::Error;
use crate::redis::board::Board;

/// The roll call and what it was taken at.
pub(crate) struct Now {
    pub date: NaiveDate,
    pub at: DateTime<Tz>,
    pub roll: RollCall,
    /// Employee id -> name, of those in.
    pub names: HashMap<String, String>,
}

/// Take the roll call of every department (or of `dept`, which the roster must know: exit 1
/// otherwise, as every report of an unknown department).
pub(crate) fn now(cfg: &Config, dept: Option<&str>) -> Result<Now> {
    if let Some(d) = dept {
        crate::domain::roster::check_id("department id", d)?;
    }
    let db = crate::mysql::Db::open_reports(cfg)?;
    let mut depts: Vec<String> = crate::mysql::roster_rows::department_ids(&mut db.conn()?)?
        .into_iter()
        .map(|(d, _)| d)
        .collect();
    if let Some(d) = dept {
        if !depts.iter().any(|k| k == d) {
            return Err(Error::refused(format!("unknown department '{d}'")).into());
        }
        depts = vec![d.to_string()];
    }
    let mut board = Board::open(cfg)?;
    let at = board.read_clock()?.server.with_timezone(&cfg.timezone);
    let date = crate::domain::policy::work_date(cfg.timezone, at.to_utc());
    let boards = board.department_boards(date, &depts)?;
    let roll = RollCall::of(depts.into_iter().zip(boards).collect());
    let ids: Vec<String> = roll.present.iter().map(|p| p.employee_id.clone()).collect();
    let names = board.names(&ids)?;
    Ok(Now { date, at, roll, names })
}
