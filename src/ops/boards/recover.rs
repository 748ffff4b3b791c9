//! Rebuilding a day's boards from the event journal after Redis lost them (a restart without
//! an append-only file, an evicted key): lay the day out from the roster again, then replay
//! every journaled punch of that day through the board's own script. Idempotent: a punch still
//! (or again) on its board is a duplicate and changes nothing. Nothing is published and
//! nothing goes to an outbox: the journal only holds events that were published already.

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

pub(crate) use crate::amqp::EndedBy; // what ended the journal's read, for the command to say
use crate::config::Config;
use crate::domain::day::policy;
use crate::domain::day::shift_clock::DayClock;
use crate::domain::day::shifts::Shifts;
use crate::domain::event::record::Event;
use crate::error::Error;
use crate::redis::board::{Board, Employee, Punch, PunchRules};

/// What `recover` did, and the warnings for the operator.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub report: RecoverReport,
    /// Redis keeps nothing on disk or may evict keys: the one-line warning.
    pub persistence: Option<String>,
    /// The day is older than the journal keeps: some of its punches may be gone.
    pub too_old: Option<String>,
}

/// Recover `date` (`today` is the company's today); `idle` without a delivery ends the read.
pub(crate) fn recover(cfg: &Config, date: NaiveDate, today: NaiveDate, idle: Duration) -> Result<Outcome> {
    if date > today {
        return Err(Error::refused(format!("{date} has not begun: there is nothing to recover")).into());
    }
    if !cfg.journal.enabled {
        return Err(Error::refused(
            "the journal is turned off (journal.enabled = false): there is nothing to recover from",
        )
        .into());
    }
    let age = (today - date).num_days();
    let too_old = (age > i64::from(cfg.journal.max_age_days)).then(|| {
        format!(
            "warning: {date} is {age} days old and the journal keeps {} days: some of its punches may be gone",
            cfg.journal.max_age_days
        )
    });
    let members = crate::mysql::people::roster_rows::active_members(&crate::mysql::Db::open(cfg)?)?;
    let mut board = Board::open(cfg)?;
    let persistence = board.persistence_warning();
    let report = replay(cfg, &mut board, &members, Options { date, idle })?;
    Ok(Outcome {
        report,
        persistence,
        too_old,
    })
}

/// Punches replayed per batch: bounded memory however long the journal is past the day.
const BATCH: usize = 10_000;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub date: NaiveDate,
    /// A pause in deliveries this long ends the read (see `crate::amqp::read_journal`).
    pub idle: Duration,
}

/// What `recover` did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RecoverReport {
    #[serde(rename = "work_date")]
    pub date: NaiveDate,
    /// Board fields laid out again from the roster (0 when the boards were there).
    pub laid_out: u64,
    /// Punches of the day read from the journal.
    pub read: u64,
    /// Punches put back on a board.
    pub restored: u64,
    /// Punches found on their board already.
    pub already_present: u64,
    /// Punches read that were voided before settle (`punch void`, MySQL's punch_voids): not
    /// put back.
    pub voided: u64,
    /// Journal messages of other days, or not events at all, skipped.
    pub skipped: u64,
    /// Events of the day the keyring or the roster refused (docs/security.md): parked with
    /// their reason, never replayed.
    pub refused: u64,
    /// Journal messages delivered in all.
    pub messages: u64,
    /// The day was settled before (settle's record in Redis says so): `settle --date D` writes
    /// it again from the boards put back, however few rows MySQL holds of it now.
    pub was_settled: bool,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    pub ended_by: EndedBy,
    pub seconds: f64,
}

/// Where the read starts: the day's first instant, less the clock skew a punch of the day may
/// have been published ahead of it with, and a minute for the broker's timestamps.
/// The bound is the built-in maximum of `policy.max_future_skew_secs` (an hour): reading a
/// little more of the journal costs nothing, missing a punch would.
pub(crate) fn read_from(cfg: &Config, date: NaiveDate) -> DateTime<Utc> {
    policy::day_start(cfg.timezone, date) - chrono::Duration::seconds(3_600 + 60)
}

/// Lay day `opts.date` out from `members` (as `init-day` does; never clobbers a punch), then
/// replay its journaled punches onto the boards.
pub(crate) fn replay(
    cfg: &Config,
    board: &mut Board,
    members: &[crate::mysql::people::roster_rows::Member],
    opts: Options,
) -> Result<RecoverReport> {
    let started = Instant::now();
    // No journal, nothing to replay: refuse before laying anything out.
    crate::amqp::require_journal(cfg)?;
    // Redis lost the day, likely the roster cache with it: written again, as check-ins need it.
    board.cache_roster(members)?;
    // The day's boards hold those employed that day and expected by their shift (see
    // `init_day::lay_out`).
    let db = crate::mysql::Db::open(cfg)?;
    let table = crate::mysql::people::shift_rows::read(&db)?;
    // The day is rebuilt by the rules in force on it.
    let policy = crate::ops::lookup::rules_from(cfg, &db)?.on(opts.date)?;
    let rota = super::layout::rota(&db, table.clone(), &policy, opts.date)?;
    let employed: Vec<_> = members.iter().filter(|m| rota.expects(m)).cloned().collect();
    let laid_out = board.layout_day(opts.date, &employed, |_| {})?.laid_out;
    // The registry from MySQL: Redis lost its copy with the day.
    let ring = crate::ops::keys::verifiers_of_record(cfg, &db, board)?;
    let mut r = Replayer {
        board,
        rules: PunchRules::new(&policy, cfg.timezone),
        clock: DayClock::new(&policy, cfg.timezone, opts.date),
        batch: Vec::with_capacity(BATCH),
        read: 0,
        restored: 0,
        already_present: 0,
        skipped: 0,
        // Read before the journal: a punch voided from here on is off its board already, or
        // the void finds it there and takes it off again.
        voids: crate::mysql::voids::voided_on(&db, opts.date)?,
        voided: 0,
        verify: ring.map(|ring| Verify::new(cfg, ring, members, Shifts::new(table, &policy))),
    };
    let journal = crate::amqp::read_journal(cfg, read_from(cfg, opts.date), opts.idle, |ev| r.take(ev))?;
    r.flush()?;
    let refused = park(cfg, r.board, r.verify.take())?;
    // A day settled before (MySQL may have lost its rows): its next settle writes it again.
    let was_settled = r.board.mark_settled_day_recovered(opts.date)?;
    Ok(RecoverReport {
        refused,
        was_settled,
        date: opts.date,
        laid_out,
        read: r.read,
        restored: r.restored,
        already_present: r.already_present,
        voided: r.voided,
        skipped: r.skipped + journal.not_events,
        messages: journal.messages,
        first_offset: journal.first_offset,
        last_offset: journal.last_offset,
        ended_by: journal.ended_by,
        seconds: started.elapsed().as_secs_f64(),
    })
}

struct Replayer<'c> {
    board: &'c mut Board,
    rules: PunchRules,
    clock: DayClock,
    batch: Vec<Punch>,
    read: u64,
    restored: u64,
    already_present: u64,
    skipped: u64,
    /// The day's voided punches (employee, unix seconds, kind), and how many were met.
    voids: std::collections::HashSet<(String, i64, crate::domain::punch::Kind)>,
    voided: u64,
    /// Checks on every event of the day, when a keyring is configured.
    verify: Option<Verify>,
}

/// The shifts as the record (MySQL) holds them, whatever Redis lost: what dates a journaled
/// punch for [`Verify`].
/// The default shift is `date`'s policy (it never crosses midnight, so only its dating matters).
pub(crate) fn shifts_of_record(cfg: &Config, db: &crate::mysql::Db, date: NaiveDate) -> Result<Shifts> {
    let policy = crate::ops::lookup::rules_from(cfg, db)?.on(date)?;
    Ok(Shifts::new(crate::mysql::people::shift_rows::read(db)?, &policy))
}

/// Park the events `verify` refused, with their reasons, and count them by class for `doctor`;
/// returns how many.
pub(crate) fn park(cfg: &Config, board: &mut Board, verify: Option<Verify>) -> Result<u64> {
    let refused = verify.map_or(Vec::new(), |v| v.refused);
    crate::amqp::parking::park_refused(cfg, &refused)?;
    let mut classes: std::collections::BTreeMap<&str, u64> = Default::default();
    for f in &refused {
        *classes.entry(f.class).or_default() += 1;
    }
    for (class, n) in classes {
        board.count_refused(class, n)?;
    }
    Ok(refused.len() as u64)
}

/// The keyring, the roster and the shifts a journaled event must agree with before it is
/// replayed.
pub(crate) struct Verify {
    ring: crate::domain::event::signing::Keyring,
    roster: std::collections::HashMap<String, String>,
    /// What dates a punch: a night shift's check-out after midnight is the night's.
    shifts: Shifts,
    tz: chrono_tz::Tz,
    refused: Vec<crate::amqp::parking::Refused>,
}

impl Verify {
    /// The checks against `ring` (`members`: the active roster; `shifts`: MySQL's, the record's).
    pub(crate) fn new(
        cfg: &Config,
        ring: crate::domain::event::signing::Keyring,
        members: &[crate::mysql::people::roster_rows::Member],
        shifts: Shifts,
    ) -> Verify {
        Verify {
            ring,
            roster: members
                .iter()
                .map(|m| (m.employee_id.clone(), m.department_id.clone()))
                .collect(),
            shifts,
            tz: cfg.timezone,
            refused: Vec::new(),
        }
    }

    /// Whether the event may be replayed; if not, it is kept for parking with its reason. An
    /// employee whose roster department is not the event's has their departures read too.
    pub(crate) fn passes(&mut self, ev: &Event, board: &mut Board) -> Result<bool> {
        let roster = match self.roster.get(&ev.employee_id) {
            Some(current) => Some(board.with_departures(&ev.employee_id, current, &ev.department_id)?),
            None => None,
        };
        Ok(
            match crate::domain::event::signing::check(&self.ring, ev, self.tz, roster.as_ref(), None, &self.shifts) {
                Ok(()) => true,
                Err(refusal) => {
                    self.refused.push(crate::amqp::parking::Refused {
                        department: ev.department_id.clone(),
                        event_id: ev.event_id.clone(),
                        body: ev.to_wire_json(),
                        class: refusal.class(),
                        reason: format!("refused by recover: {refusal}"),
                    });
                    false
                }
            },
        )
    }
}

impl Replayer<'_> {
    fn take(&mut self, ev: Event) -> Result<()> {
        if ev.work_date != self.clock.date {
            self.skipped += 1;
            return Ok(());
        }
        if let Some(v) = &mut self.verify {
            if !v.passes(&ev, self.board)? {
                return Ok(());
            }
        }
        match self.punch(ev) {
            Some(p) if self.is_voided(&p) => {
                self.read += 1;
                self.voided += 1;
            }
            Some(p) => {
                self.read += 1;
                self.batch.push(p);
            }
            // Hand-published junk with the day's date: not a punch anyone was told about.
            None => self.skipped += 1,
        }
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether `punch void` took this punch off its day: it stays off.
    fn is_voided(&self, p: &Punch) -> bool {
        !self.voids.is_empty()
            && p.kind
                .is_some_and(|k| self.voids.contains(&(p.employee.id.clone(), p.at.timestamp(), k)))
    }

    fn punch(&self, ev: Event) -> Option<Punch> {
        journaled_punch(&self.clock, ev)
    }

    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let outcomes = self.board.replay_many(self.rules, &self.batch, |_| {})?;
        let dups = outcomes.iter().filter(|o| o.duplicate).count() as u64;
        self.already_present += dups;
        self.restored += outcomes.len() as u64 - dups;
        self.batch.clear();
        Ok(())
    }
}

/// A journaled punch as the board script takes it: its own event id, its final kind (the board
/// already decided an unlabelled one), its instant on its day's clock. None: not a punch.
pub(crate) fn journaled_punch(clock: &DayClock, ev: Event) -> Option<Punch> {
    let at = DateTime::parse_from_rfc3339(&ev.at).ok()?.with_timezone(&Utc);
    let recorded_at = ev
        .recorded_at
        .as_deref()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map_or_else(Utc::now, |t| t.with_timezone(&Utc));
    // The recovered punch log keeps the event's record as its kiosk signed it (the script
    // appends the last field): settle takes only punches a signed record backs.
    let record = crate::domain::event::record::record_of(&ev)
        .ok()
        .and_then(|r| r.get(..r.len().saturating_sub(2)).map(str::to_string));
    Some(Punch {
        facts: clock.facts(at),
        employee: Employee {
            id: ev.employee_id,
            department_id: ev.department_id,
            name: ev.employee_name,
            ..Employee::default()
        },
        kind: Some(ev.kind),
        at,
        source: ev.source,
        event_id: ev.event_id,
        recorded_at,
        record,
    })
}
