//! The absence alerts a following relay sends (docs/notifications.md#absence-alerts): once a
//! group of people is due and its alert time has come (`domain::day::due`, by the Redis server's
//! clock), its department's supervisor is told who has not arrived, through the department's
//! queue, once per department, date and shift however many relays run: a relay claims the
//! alert in the department's hash slot (one SET NX, expiring), publishes it, and marks it sent
//! only once the broker confirmed it. A relay that dies holding a claim leaves it to expire and
//! the next look (its own, or another relay's) sends the alert, saying it is late; so does a
//! relay started after the alert time.

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};

use crate::amqp::AlertPublisher;
use crate::config::{Config, Policy};
use crate::domain::day::due::{self, Due};
use crate::domain::day::shifts::Shifts;
use crate::domain::day::workdays::DayKind;
use crate::domain::event::alert::AbsenceAlert;
use crate::ops::exit::one_line;
use crate::ops::reopen::redis_gone;
use crate::redis::board::Board;

/// How often the relay looks for alerts that are due.
const LOOK_EVERY: Duration = Duration::from_secs(5);
/// After a failure (MySQL or the broker away), the next look waits this long.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// How long a sent alert's mark is kept: past the days anyone could still be alerted for.
const KEEP_MS: u64 = 8 * 24 * 3600 * 1000;

/// A relay's alerts: when it looks next, and the date whose alerts are all sent.
pub(crate) struct Alerts {
    /// This relay, in its claims.
    me: String,
    next: Instant,
    done: Option<NaiveDate>,
    /// The last failure, said once until it changes.
    problem: Option<String>,
}

/// What a look did, for the relay's status lines.
#[derive(Debug, Default)]
struct Looked {
    /// Lines to say: each alert sent, each department with nobody missing counts only.
    lines: Vec<String>,
    /// Some alert due is neither sent nor ours to send now (another relay's claim).
    open: bool,
}

impl Alerts {
    pub(crate) fn new(me: &str) -> Alerts {
        Alerts {
            me: me.to_string(),
            next: Instant::now(),
            done: None,
            problem: None,
        }
    }

    /// Look for alerts that are due, at most every few seconds (the follow loop calls this
    /// as often as it turns). Only Redis going away is an error (the loop reconnects); MySQL
    /// or a broker that fails is said once, and the look is tried again a little later.
    pub(crate) fn tick(&mut self, cfg: &Config, board: &mut Board, say: &mut impl FnMut(String)) -> Result<()> {
        if Instant::now() < self.next {
            return Ok(());
        }
        self.next = Instant::now() + LOOK_EVERY;
        match self.look(cfg, board) {
            Ok(looked) => {
                self.problem = None;
                looked.lines.into_iter().for_each(&mut *say);
                Ok(())
            }
            Err(e) if redis_gone(&e) => Err(e),
            Err(e) => {
                let line = format!("relay: absence alerts: {}; trying again", one_line(&e));
                if self.problem.as_ref() != Some(&line) {
                    say(line.clone());
                }
                self.problem = Some(line);
                self.next = Instant::now() + RETRY_AFTER;
                Ok(())
            }
        }
    }

    fn look(&mut self, cfg: &Config, board: &mut Board) -> Result<Looked> {
        let tz = cfg.timezone;
        let read = Instant::now();
        let now = board.read_clock()?.server;
        let date = crate::domain::day::policy::work_date(tz, now);
        if self.done == Some(date) {
            return Ok(Looked::default());
        }
        // Whether alerts go out, and when, is the rulebook's word for the day.
        let policy = &crate::ops::lookup::policy_on(cfg, board, date)?;
        if !policy.absence_alerts {
            return Ok(Looked::default());
        }
        // Each shift's alert goes out at its own start plus its grace: the shift table comes
        // from Redis's copy (one small read), so a look before the day's first alert is cheap.
        let shifts = Shifts::new(board.read_all_shifts()?, policy);
        if now < due::first_alert_at(policy, &shifts, tz, date) {
            return Ok(Looked::default());
        }
        // A group whose alert time is still to come keeps the date open.
        let (due, later): (Vec<Due>, Vec<Due>) =
            due_of(cfg, policy, date)?.into_iter().partition(|d| d.alert_at <= now);
        let mut looked = Looked::default();
        let signer = cfg.signing.signer()?;
        let mut publisher: Option<AlertPublisher> = None;
        let mut shifts: Vec<&str> = due.iter().map(|d| d.shift.as_str()).collect();
        shifts.dedup();
        for shift in shifts {
            let group: Vec<&Due> = due.iter().filter(|d| d.shift == shift).collect();
            let depts: Vec<String> = group.iter().map(|d| d.department_id.clone()).collect();
            let marks = board.alert_marks(date, shift, &depts)?;
            let todo: Vec<&Due> = group
                .into_iter()
                .zip(marks)
                .filter_map(|(d, m)| match m.as_deref() {
                    None => Some(d),
                    Some(m) if m.starts_with("claim:") => {
                        looked.open = true;
                        None
                    }
                    Some(_) => None,
                })
                .collect();
            if todo.is_empty() {
                continue;
            }
            let ids: Vec<String> = todo.iter().map(|d| d.department_id.clone()).collect();
            let boards = board.department_boards(date, &ids)?;
            for (d, b) in todo.into_iter().zip(boards) {
                let sent_at = now + chrono::Duration::from_std(read.elapsed()).unwrap_or_default();
                let arrived = |id: &str| b.get(id).is_some_and(|r| !r.punches.is_empty());
                let alert = AbsenceAlert::new(d, date, tz, sent_at, arrived, signer.as_ref());
                if !alert.missing.is_empty() && publisher.is_none() {
                    publisher = Some(AlertPublisher::connect(cfg)?);
                }
                if let Some(other) = board.claim_alert(&d.department_id, date, shift, &self.me, claim_ms(cfg))? {
                    looked.open |= other.starts_with("claim:");
                    continue;
                }
                let p = match publisher.as_mut() {
                    Some(p) if !alert.missing.is_empty() => p,
                    _ => {
                        board.mark_alert(&d.department_id, date, shift, "nobody", KEEP_MS)?;
                        continue;
                    }
                };
                if !p.send(&d.department_id, &alert.event_id, &alert.to_json())? {
                    // Its claim expires: the next look sends it again.
                    looked.open = true;
                    looked.lines.push(format!(
                        "relay: absence alert for {} not taken by the broker (no queue?); trying again",
                        d.department_id
                    ));
                    continue;
                }
                board.mark_alert(&d.department_id, date, shift, "sent", KEEP_MS)?;
                looked.lines.push(sent_line(&alert, cfg, d.alert_at));
            }
        }
        if let Some(p) = publisher {
            p.close();
        }
        if !looked.open && later.is_empty() {
            self.done = Some(date);
        }
        Ok(looked)
    }
}

/// The groups due on `date`, by shift: the roster, leave and calendar read from MySQL, then
/// `domain::day::due`.
fn due_of(cfg: &Config, policy: &Policy, date: NaiveDate) -> Result<Vec<Due>> {
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let overrides = crate::mysql::people::calendar_rows::overrides(&mut conn, date, date)?;
    let calendar = overrides.get(&date).map(|e| e.kind == DayKind::Workday);
    let shifts = Shifts::new(crate::mysql::people::shift_rows::table(&mut conn)?, policy);
    let members = crate::mysql::people::roster_rows::active_members(&db)?;
    let mut on_leave = crate::mysql::people::leave_rows::on_leave(&mut conn, date)?;
    // Off for the morning: not due at the shift's start (off for the afternoon: due).
    let half = crate::mysql::people::leave_rows::half_leave(&mut conn, date)?;
    on_leave.extend(half.into_iter().filter_map(|(e, morning)| morning.then_some(e)));
    let mut due = due::due(policy, &shifts, cfg.timezone, date, calendar, &members, &on_leave);
    due.sort_by(|a, b| a.shift.cmp(&b.shift));
    Ok(due)
}

/// How long a claim holds: past the longest a publish can take (connecting, then its confirm),
/// so that no other relay sends the alert while it is on its way.
fn claim_ms(cfg: &Config) -> u64 {
    u64::from(cfg.amqp.connect_timeout_ms) + 2 * u64::from(cfg.amqp.confirm_timeout_ms) + 5_000
}

fn sent_line(a: &AbsenceAlert, cfg: &Config, alert_at: DateTime<Utc>) -> String {
    let at = crate::domain::dates::wall_clock(alert_at.with_timezone(&cfg.timezone), "%H:%M");
    format!(
        "relay: absence alert sent to {} for {} {at}: {} of {} not in{}",
        a.department_id,
        a.work_date,
        a.missing.len(),
        a.expected,
        if a.late {
            format!(", late by {}", crate::domain::dates::minutes_text(a.late_minutes))
        } else {
            String::new()
        }
    )
}
