//! An employee's own day: from the board while it is live, from MySQL once it is settled (with
//! any punch that reached Redis after the settle).

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::config::Config;
use crate::domain::day::policy;
use crate::domain::day::worked::{Facts, Leave, ShiftDay};
use crate::redis::board::{Board, Employee};

/// The answer: a live day, or a settled one.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Answer {
    Live(Live),
    Settled(Settled),
}

/// A day still on its board.
/// Where an employee stands on a live day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum State {
    /// No punch yet.
    NotIn,
    /// Checked in, not out.
    In,
    /// Checked out.
    Out,
    /// No punch, and the date is not a work day of their shift.
    RestDay,
}

impl State {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            State::NotIn => "not_in",
            State::In => "in",
            State::Out => "out",
            State::RestDay => "rest_day",
        }
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Live {
    pub employee_id: String,
    pub employee_name: String,
    pub department_id: String,
    #[serde(rename = "work_date")]
    pub date: String,
    pub state: State,
    /// The shift they follow that date (`default`: the policy).
    pub shift: String,
    /// Its work days (`mon,tue,...`), for the text line.
    #[serde(skip)]
    pub shift_days: String,
    pub first_in: Option<String>,
    pub last_out: Option<String>,
    pub late: bool,
    pub late_minutes: u32,
    pub early: bool,
    pub early_minutes: u32,
}

/// A settled day, as MySQL holds it.
#[derive(Debug, Serialize)]
pub(crate) struct Settled {
    pub employee_id: String,
    /// As the roster has it now (empty for an employee no longer in it).
    pub employee_name: String,
    pub department_id: String,
    #[serde(rename = "work_date")]
    pub date: String,
    pub settled: bool,
    pub status: policy::DayStatus,
    pub first_in: Option<String>,
    pub last_out: Option<String>,
    pub late_minutes: u32,
    pub early_minutes: u32,
    pub corrected: bool,
    /// Punches for this day that reached Redis after it was settled: the next settle adds them.
    pub waiting_punches: Vec<Waiting>,
    /// Why the waiting punches could not be looked for (Redis away), if so.
    #[serde(skip)]
    pub note: Option<String>,
}

/// A punch on the board of a settled day, not yet in MySQL.
#[derive(Debug, Serialize)]
pub(crate) struct Waiting {
    pub kind: crate::domain::punch::Kind,
    pub at: String,
}

/// The status of `employee_id` on `date`; `today` is the company's today.
pub(crate) fn status(cfg: &Config, employee_id: &str, date: NaiveDate, today: NaiveDate) -> Result<Answer> {
    crate::domain::people::roster::check_id("employee id", employee_id)?;
    if date < today {
        if let Some(s) = settled(cfg, employee_id, date)? {
            return Ok(Answer::Settled(s));
        }
    }
    let mut board = Board::open(cfg)?;
    let e = crate::ops::lookup::employee(cfg, &mut board, employee_id)?;
    // A past day being settled (or whose settle was killed) has its punches on settle's board.
    // On the board: laid out (expected), or punched.
    let (rec, on_board) = if date < today {
        let rec = board.waiting_record(&e.department_id, date, &e.id)?;
        let on_board = !rec.punches.is_empty();
        (rec, on_board)
    } else {
        let rec = board.day_record(&e.department_id, date, &e.id)?;
        let on_board = rec.is_some();
        (rec.unwrap_or_default(), on_board)
    };
    // Judged by the employee's own shift of that date (one small read of the shift copy).
    // The day's policy: its default shift and its overtime rule.
    let policy = crate::ops::lookup::policy_on(cfg, &mut board, date)?;
    let shifts = crate::ops::lookup::shifts(cfg, &mut board, &[e.id.as_str()], &policy)?;
    let shift = shifts.on(&e.id, &e.department_id, date).0;
    let day = ShiftDay::new(shift, cfg.timezone, date, policy.overtime);
    // Off the board on a day their shift does not work: init-day left them off as not expected
    // (a calendar work day would have laid them out). Without any shift assigned, as before.
    let rest_day = !on_board && !shifts.table.is_empty() && !shift.works_on(date);
    let mut answer = live(cfg, e, date, &rec, &day);
    if rest_day {
        answer.state = State::RestDay;
    }
    answer.shift = shift.name.clone();
    answer.shift_days = shift.days_text();
    Ok(Answer::Live(answer))
}

fn live(
    cfg: &Config,
    e: Employee,
    date: NaiveDate,
    rec: &crate::domain::day::record::DayRecord,
    day: &ShiftDay,
) -> Live {
    let tz = cfg.timezone;
    // Late and early as the worked day has them so far (a live day has no leave to weigh).
    let at = |s: i64| policy::instant(tz, date, s).with_timezone(&Utc);
    let so_far = day.judge(&Facts {
        workday: true,
        leave: Leave::None,
        first_in: rec.first_in().map(at),
        last_out: rec.last_out().map(at),
    });
    let (late, early) = (so_far.late_minutes, so_far.early_minutes);
    Live {
        state: match (rec.first_in(), rec.last_out()) {
            (_, Some(_)) => State::Out,
            (Some(_), None) => State::In,
            (None, None) => State::NotIn,
        },
        shift: String::new(),
        shift_days: String::new(),
        first_in: rec
            .first_in()
            .map(|s| crate::domain::instant::text(&policy::instant(tz, date, s))),
        last_out: rec
            .last_out()
            .map(|s| crate::domain::instant::text(&policy::instant(tz, date, s))),
        late: late > 0,
        late_minutes: late,
        early: early > 0,
        early_minutes: early,
        employee_id: e.id,
        employee_name: e.name,
        department_id: e.department_id,
        date: date.to_string(),
    }
}

/// The settled row of a past day, or `None` if the day is not settled yet.
fn settled(cfg: &Config, employee_id: &str, date: NaiveDate) -> Result<Option<Settled>> {
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let Some(r) = crate::mysql::attendance::row(&mut conn, date, employee_id)? else {
        return Ok(None);
    };
    let employee_name = crate::mysql::people::roster_rows::name_of(&mut conn, employee_id)?.unwrap_or_default();
    let (waiting_punches, note) = match waiting(cfg, &r, date) {
        Ok(w) => (w, None),
        Err(e) => (Vec::new(), Some(crate::ops::exit::one_line(&e))),
    };
    let local = |t: Option<NaiveDateTime>| t.map(|t| crate::domain::instant::text(&local_time(cfg.timezone, t)));
    Ok(Some(Settled {
        first_in: local(r.first_in),
        last_out: local(r.last_out),
        employee_id: r.employee_id,
        employee_name,
        department_id: r.department_id,
        date: date.to_string(),
        settled: true,
        status: r.status,
        late_minutes: r.late_minutes,
        early_minutes: r.early_minutes,
        corrected: r.corrected,
        waiting_punches,
        note,
    }))
}

/// A time MySQL holds (UTC) in the company's zone.
fn local_time(tz: Tz, t: NaiveDateTime) -> chrono::DateTime<Tz> {
    t.and_utc().with_timezone(&tz)
}

/// The employee's punches of a settled day still waiting in Redis (a late punch, or a settle
/// that has not run yet since): those MySQL's punch history does not hold. The settled row
/// stands on its own, so Redis away is a note for the caller, not a failure.
fn waiting(cfg: &Config, r: &crate::mysql::attendance::Stored, date: NaiveDate) -> Result<Vec<Waiting>> {
    let tz = cfg.timezone;
    let stored = crate::mysql::attendance::parse_log(&r.punches).unwrap_or_default();
    let rec = Board::open(cfg)?.waiting_record(&r.department_id, date, &r.employee_id)?;
    Ok(rec
        .punches
        .into_iter()
        .map(|(kind, secs)| (kind, policy::instant(tz, date, secs)))
        .filter(|(kind, at)| !stored.contains(&(at.with_timezone(&Utc), *kind)))
        .map(|(kind, at)| Waiting {
            kind,
            at: crate::domain::instant::text(&at),
        })
        .collect())
}
