//! `report now`: the roll call from the day's boards in Redis (today by the Redis server's
//! clock, in the company's zone) and, when some shift crosses midnight, the day before's (its
//! night shift is on that date's board), the departments from the MySQL roster, the names
//! from the roster cache, the shifts from their Redis copy.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use crate::config::Config;
use crate::domain::dates::TypedTime;
use crate::domain::day::record::DayRecord;
use crate::domain::day::shift::Shift;
use crate::domain::day::shifts::Clocks;
use crate::domain::report::roll_call::{self, Present, RollCall};
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
/// otherwise, as every report of an unknown department), now by the Redis server's clock, or as
/// it stood at `at` (within the back-dating window of a punch, exit 1 outside it): the punches
/// on the boards up to that instant.
pub(crate) fn now(cfg: &Config, dept: Option<&str>, at: Option<TypedTime>) -> Result<Now> {
    let tz = cfg.timezone;
    // A time that names its own day is checked before any store is read.
    if let Some(Err(why)) = at.and_then(|t| t.dated(tz)) {
        return Err(Error::input(why).into());
    }
    if let Some(d) = dept {
        crate::domain::people::roster::check_id("department id", d)?;
    }
    let db = crate::mysql::Db::open_reports(cfg)?;
    let mut depts: Vec<String> = crate::mysql::people::roster_rows::department_ids(&mut db.conn()?)?
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
    let server = board.read_clock()?.server;
    let asked = match at {
        None => None,
        Some(t) => {
            let i = t
                .instant(tz, server.with_timezone(&tz).date_naive())
                .map_err(Error::input)?;
            // Bounded as a back-dated punch is: the boards of older days are settled and gone.
            let today = crate::domain::day::policy::work_date(tz, server);
            crate::domain::day::policy::PunchWindow::new(
                &crate::ops::lookup::policy_on(cfg, &mut board, today)?,
                tz,
                server,
            )
            .check(i)
            .map_err(|why| Error::refused(why.replacen("punch", "a roll call", 1)))?;
            Some(i)
        }
    };
    let at = asked.unwrap_or(server).with_timezone(&tz);
    let date = crate::domain::day::policy::work_date(tz, at.to_utc());
    let read = |board: &mut Board, date: NaiveDate| -> Result<Vec<HashMap<String, DayRecord>>> {
        let mut boards = board.department_boards(date, &depts)?;
        if asked.is_some() {
            let secs = (at.to_utc() - crate::domain::day::policy::day_start(tz, date)).num_seconds();
            boards.iter_mut().for_each(|b| roll_call::as_of(b, secs));
        }
        Ok(boards)
    };
    let boards: Vec<_> = depts.iter().cloned().zip(read(&mut board, date)?).collect();
    let before = still_in_from_before(cfg, &mut board, &boards, date, at.to_utc(), &read)?;
    let roll = RollCall::of(date, boards, before);
    let ids: Vec<String> = roll.present.iter().map(|p| p.employee_id.clone()).collect();
    let names = board.names(&ids)?;
    Ok(Now { date, at, roll, names })
}

/// Those still in from a shift that began the day before `date` (see
/// `domain::report::roll_call::open_before`). Cheap when nobody can be: the day before's boards are read
/// only when some shift is assigned and one crosses midnight (one small read of the shift
/// copy's table says so), and the shifts of only those whose check-in there is still open.
fn still_in_from_before(
    cfg: &Config,
    board: &mut Board,
    today: &[(String, HashMap<String, DayRecord>)],
    date: NaiveDate,
    now: DateTime<Utc>,
    mut read: impl FnMut(&mut Board, NaiveDate) -> Result<Vec<HashMap<String, DayRecord>>>,
) -> Result<Vec<Present>> {
    // The copy's table alone (no employee's own assignment): which shifts exist.
    let head = crate::ops::lookup::shifts_on(cfg, board, &[] as &[&str], date)?;
    let defined = &head.table.shifts;
    // No shift defined: no copy, everyone on the policy, whose punches are on their local date.
    let night = !defined.is_empty() && defined.values().chain([&head.default]).any(Shift::crosses_midnight);
    let Some(before) = date.pred_opt().filter(|_| night) else {
        return Ok(Vec::new());
    };
    let open = roll_call::open_before(before, read(board, before)?, today);
    if open.is_empty() {
        return Ok(open);
    }
    let ids: Vec<&str> = open.iter().map(|p| p.employee_id.as_str()).collect();
    let shifts = crate::ops::lookup::shifts_on(cfg, board, &ids, before)?;
    let mut clocks = Clocks::new(&shifts, cfg.timezone);
    Ok(open
        .into_iter()
        .filter(|p| roll_call::still_on_shift(&mut clocks, &shifts, p, now))
        .collect())
}
