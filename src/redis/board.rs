//! Redis: the day's boards, the roster lookup and the per-department outbox. Every write that
//! one check-in makes is one Lua script call on its department's keys (no lock).

pub(crate) use super::cutover::BoardEntry;
pub(crate) use super::handle::Board;
pub(crate) use super::layout::LayoutReport;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::LazyLock;

use anyhow::{Context, Result};
use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use chrono_tz::Tz;
use redis::Commands;

use crate::config::Policy;
use crate::domain::day::record::{DayRecord, MAX_TOKENS};
use crate::domain::day::shift_clock::PunchFacts;
use crate::domain::event::punch_log::How;
use crate::domain::event::record::RecordFields;
use crate::domain::event::signer::Signer;
use crate::domain::people::employment::Employment;
use crate::domain::punch::Kind;
use crate::redis::keys::Keys;

static PUNCH: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(PUNCH_SCRIPT));

/// An employee as the roster cache knows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Employee {
    pub id: String,
    pub department_id: String,
    pub name: String,
    /// The days they may punch on (open on both sides unless the roster gives dates).
    pub employment: Employment,
}

/// One punch to record.
#[derive(Debug, Clone)]
pub struct Punch {
    pub employee: Employee,
    /// `None`: its time decides (before the day's split a check-in, see `punch.lua`).
    pub kind: Option<Kind>,
    pub at: DateTime<Utc>,
    pub facts: PunchFacts,
    pub source: String,
    pub event_id: String,
    /// When this process recorded the punch (`at` may be earlier: a kiosk replaying offline punches).
    pub recorded_at: DateTime<Utc>,
    /// The event's outbox record up to its last field, made when the punch was first recorded
    /// (a punch held for review, approved later): used as is, so the signature of the process
    /// that recorded it stands. `None`: made now, signed with this process's key.
    pub record: Option<String>,
}

impl Punch {
    /// Build a punch at `at` under the policy; its event id is the punch's identity
    /// (`punch::punch_id`), so the same punch sent again carries the same id.
    pub fn new(
        employee: Employee,
        kind: Option<Kind>,
        at: DateTime<Utc>,
        source: &str,
        policy: &Policy,
        tz: Tz,
    ) -> Punch {
        Punch::with_facts(
            employee,
            kind,
            at,
            source,
            crate::domain::day::shift_clock::classify(policy, tz, at),
        )
    }

    /// Build a punch whose facts are already known (bulk: one `DayClock` per day).
    pub fn with_facts(
        employee: Employee,
        kind: Option<Kind>,
        at: DateTime<Utc>,
        source: &str,
        facts: PunchFacts,
    ) -> Punch {
        let resolved = resolved_kind(kind, &facts);
        Punch {
            event_id: crate::domain::punch::punch_id(&employee.id, resolved, at),
            facts,
            employee,
            kind,
            at,
            source: source.to_string(),
            recorded_at: Utc::now(),
            record: None,
        }
    }
}

/// What the board made of a punch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PunchOutcome {
    pub kind: Kind,
    /// The day's first check-in or last check-out moved.
    pub changed: bool,
    /// The very same punch was already recorded (nothing written, no event).
    pub duplicate: bool,
    pub first_in: Option<i64>,
    pub last_out: Option<i64>,
    /// The event: its wire JSON from [`punch`]; from [`punch_many_streamed`], the outbox record
    /// as the script stored it, completed here from the script's flags (the publisher renders
    /// it, see `event::render`). `None` for a duplicate, and
    /// from [`punch_many`], where the events wait in the outboxes for the publisher.
    pub event_json: Option<String>,
}

/// Settings the script needs besides the punch.
#[derive(Debug, Clone, Copy)]
pub struct PunchRules {
    /// Local time splitting the day for an unlabelled punch (`Policy::auto_kind_split`).
    pub auto_kind_split: NaiveTime,
    pub tz: Tz,
}

impl PunchRules {
    pub fn new(policy: &Policy, tz: Tz) -> Self {
        PunchRules {
            auto_kind_split: policy.auto_kind_split(),
            tz,
        }
    }

    /// The split on `date`, in seconds into the work day as the board counts them (a DST day
    /// included).
    pub fn split_secs(&self, date: NaiveDate) -> i64 {
        crate::domain::day::policy::local_offset_secs(self.tz, date, self.auto_kind_split)
    }
}

/// The event's outbox record up to its last field, which the script appends once it knows the
/// kind (see `event::record_prefix`).
fn record_prefix(p: &Punch, kind: Kind, tz: Tz, signer: Option<&Signer>) -> String {
    crate::domain::event::record::record_prefix(&fields(p, kind, tz, signer))
}

/// What the record of a punch holds, as Rust knows it before the script runs.
fn fields<'p>(p: &'p Punch, kind: Kind, tz: Tz, signer: Option<&'p Signer>) -> RecordFields<'p> {
    RecordFields {
        event_id: &p.event_id,
        kind,
        signer,
        employee_id: &p.employee.id,
        employee_name: &p.employee.name,
        department_id: &p.employee.department_id,
        at: p.at.with_timezone(&tz).fixed_offset(),
        work_date: p.facts.work_date,
        source: &p.source,
        recorded_at: p.recorded_at,
        late_minutes_if_in: p.facts.late_minutes_if_in,
        early_minutes_if_out: p.facts.early_minutes_if_out,
    }
}

/// What the punch script does with the events it makes (see `punch.lua`'s `ARGV[3]`). Each
/// also goes to the day's punch log of the way it came (see [`Events::how`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Events {
    /// Into the outbox, and back to the caller (one check-in publishes it at once).
    OutboxAndReply,
    /// The same for a bulk check-in from a file (logged as bulk).
    BulkOutboxAndReply,
    /// Into the outbox only (a bulk: the publisher drains the outboxes).
    Outbox,
    /// Nowhere but the punch log: a replay of journaled events, published once already.
    Drop,
    /// Into the outbox and back, as one check-in, for a held punch approved (logged as approved).
    Approved,
}

impl Events {
    /// Which of the day's punch logs these punches go to.
    fn how(self) -> How {
        match self {
            Events::OutboxAndReply => How::Live,
            Events::BulkOutboxAndReply | Events::Outbox => How::Bulk,
            Events::Drop => How::Recovered,
            Events::Approved => How::Approved,
        }
    }
}

/// One script call for punches that all share a department and a work date, and the records
/// it hands the script, up to their last field, in the punches' order: the script answers only
/// with flags, so the caller completes each record from them ([`complete`]) instead of Redis
/// sending it back.
fn invocation<'p, 's>(
    script: &'s redis::Script,
    keys: &Keys,
    rules: PunchRules,
    signer: Option<&Signer>,
    punches: impl IntoIterator<Item = &'p Punch>,
    events: Events,
) -> (redis::ScriptInvocation<'s>, Vec<Cow<'p, str>>) {
    let mut punches = punches.into_iter().peekable();
    let first = punches.peek().expect("at least one punch");
    let (dept, date) = (&first.employee.department_id, first.facts.work_date);
    let split = rules.split_secs(date);
    let mut inv = script.key(keys.board(dept, date));
    inv.key(keys.outbox(dept))
        .key(keys.board_days(dept))
        .key(keys.punch_log(dept, date, events.how().as_str()))
        .key(keys.settled_board(dept, date))
        .arg(split)
        .arg(MAX_TOKENS)
        .arg(if events == Events::Drop { "r" } else { "1" })
        .arg(date.format("%Y-%m-%d").to_string());
    let punches: Vec<&Punch> = punches.collect();
    // A replay writes no event, only its punch log entry: unsigned, since this process did not
    // record the punch (recover checked the journal's signature, with a keyring).
    let signer = signer.filter(|_| events != Events::Drop);
    // A bulk's records made now are signed as one batch (one Ed25519 signature for the call).
    let mut batched = match signer.filter(|_| events.batched()) {
        Some(signer) => {
            let fresh: Vec<RecordFields> = punches
                .iter()
                .filter(|p| p.record.is_none())
                .map(|p| fields(p, kind_of(p), rules.tz, Some(signer)))
                .collect();
            crate::domain::event::record::record_prefixes(&fresh, signer)
        }
        None => Vec::new(),
    }
    .into_iter();
    let mut records = Vec::with_capacity(punches.len());
    for p in punches {
        let kind = kind_of(p);
        let record = match &p.record {
            Some(made) => Cow::Borrowed(made.as_str()),
            None => match batched.next() {
                Some(signed) => Cow::Owned(signed),
                None => Cow::Owned(record_prefix(p, kind, rules.tz, signer)),
            },
        };
        inv.arg(&p.employee.id)
            .arg(p.facts.secs)
            .arg(kind.as_str())
            .arg(&p.event_id)
            .arg(&*record);
        records.push(record);
    }
    (inv, records)
}

/// A punch's whole outbox record, as the script stored it: the prefix it was handed and the
/// last field the script appended (`<i|o><1|0>`, see `punch.lua`), which the outcome's flags
/// say. `None` for a duplicate (no event).
fn complete(prefix: Cow<'_, str>, o: &PunchOutcome) -> Option<String> {
    if o.duplicate {
        return None;
    }
    let mut record = prefix.into_owned();
    record.push(if o.kind == Kind::In { 'i' } else { 'o' });
    record.push(if o.changed { '1' } else { '0' });
    Some(record)
}

/// The rule for an unlabelled punch (its time against its shift's split), settled here so
/// that the signature covers the kind the script records: each punch carries its own split,
/// so the punches of one call may follow different shifts.
fn kind_of(p: &Punch) -> Kind {
    resolved_kind(p.kind, &p.facts)
}

/// A punch's label, or without one its time against its shift's split.
fn resolved_kind(kind: Option<Kind>, facts: &PunchFacts) -> Kind {
    kind.unwrap_or(if facts.secs < facts.split { Kind::In } else { Kind::Out })
}

/// One script call's reply: per punch, flags (1 out, 2 changed, 4 duplicate), first_in and
/// last_out (-1: none) (see `punch.lua`); with `records` (the prefixes the call handed the
/// script, when `events` wants the events back), each outcome's event record completed.
fn outcomes(reply: redis::Value, records: Option<Vec<Cow<'_, str>>>, punches: usize) -> Result<Vec<PunchOutcome>> {
    const PER: usize = 3;
    let values: Vec<redis::Value> = redis::from_redis_value(reply)?;
    if values.len() != PER * punches {
        anyhow::bail!(
            "the punch script answered {} values for {punches} punches",
            values.len()
        );
    }
    let mut out: Vec<PunchOutcome> = values.chunks(PER).map(outcome).collect::<Result<_>>()?;
    if let Some(records) = records {
        for (o, prefix) in out.iter_mut().zip(records) {
            o.event_json = complete(prefix, o);
        }
    }
    Ok(out)
}

fn outcome(r: &[redis::Value]) -> Result<PunchOutcome> {
    let int = |v: &redis::Value| -> Result<i64> { Ok(redis::from_redis_value_ref(v)?) };
    let (flags, fi, lo) = (int(&r[0])?, int(&r[1])?, int(&r[2])?);
    Ok(PunchOutcome {
        kind: if flags & 1 == 1 { Kind::Out } else { Kind::In },
        changed: flags & 2 == 2,
        duplicate: flags & 4 == 4,
        first_in: (fi >= 0).then_some(fi),
        last_out: (lo >= 0).then_some(lo),
        event_json: None,
    })
}

impl Events {
    /// Whether the records made now are signed together, one batch per script call: a bulk's.
    fn batched(self) -> bool {
        matches!(self, Events::BulkOutboxAndReply | Events::Outbox)
    }

    /// Whether the caller wants each punch's event record back (to publish it at once).
    fn replied(self) -> bool {
        matches!(
            self,
            Events::OutboxAndReply | Events::BulkOutboxAndReply | Events::Approved
        )
    }
}

/// Punches per script call and script calls per pipeline in [`Board::punch_many`].
pub(crate) const PUNCHES_PER_CALL: usize = 100;
pub(crate) const CALLS_PER_PIPELINE: usize = 32;

impl Board {
    /// Record one punch: one EVALSHA (the script is loaded on first use). The outcome carries the
    /// event's wire JSON, rendered from the record the script stored.
    pub fn punch(&mut self, rules: PunchRules, p: &Punch) -> Result<PunchOutcome> {
        self.punch_as(rules, p, false)
    }

    /// [`Board::punch`]; `approved`: a held punch approved (`review approve`), logged as such.
    pub(crate) fn punch_as(&mut self, rules: PunchRules, p: &Punch, approved: bool) -> Result<PunchOutcome> {
        let events = if approved {
            Events::Approved
        } else {
            Events::OutboxAndReply
        };
        let (inv, records) = invocation(&PUNCH, &self.keys, rules, self.signer.as_deref(), [p], events);
        let reply: redis::Value = inv.invoke(&mut self.con).context("recording the punch in Redis")?;
        let mut o = outcomes(reply, Some(records), 1)?.remove(0);
        if let Some(record) = o.event_json.take() {
            o.event_json = Some(crate::domain::event::render::render(&p.event_id, &record)?.json);
        }
        Ok(o)
    }

    /// What a punch held for review keeps, so that approving it later records exactly this
    /// punch: the kind the board would give it, and its event's record up to the last field,
    /// signed now with this process's key.
    pub(crate) fn held_record(&self, rules: PunchRules, p: &Punch) -> (Kind, String) {
        let kind = kind_of(p);
        (kind, record_prefix(p, kind, rules.tz, self.signer.as_deref()))
    }

    /// The id of the key this process signs with, if any.
    pub(crate) fn key_id(&self) -> Option<&str> {
        self.signer.as_deref().map(Signer::key_id)
    }

    /// This process's key id, and its Ed25519 public key (`None`: a shared secret).
    pub(crate) fn signer_kind(&self) -> Option<(String, Option<String>)> {
        self.signer.as_deref().map(|s| (s.key_id().to_string(), s.public_key()))
    }

    /// Whether this process signs with a key that `ring` lets replay offline punches at `now_ms`.
    pub(crate) fn may_replay(&self, ring: &crate::domain::event::signing::Keyring, now_ms: i64) -> bool {
        self.signer
            .as_deref()
            .is_some_and(|s| ring.authorises_replay(s, now_ms))
    }

    /// Record many punches: grouped by department and day (order kept within each group: the
    /// record does not depend on it, but `changed` and `duplicate` do), many punches per script call, many calls per pipeline. Same
    /// script, same outcomes as one by one; the outcomes come back in input order, without the
    /// event JSON (the events wait in the outboxes for the publisher).
    pub fn punch_many(
        &mut self,
        rules: PunchRules,
        punches: &[Punch],
        progress: impl FnMut(usize),
    ) -> Result<Vec<PunchOutcome>> {
        self.all_recorded_as(rules, punches, Events::Outbox, progress)
    }

    /// Put journaled punches back on their boards (`recover`): the same script and rules as a
    /// check-in, so a punch already there is a duplicate, but no event goes to an outbox: the
    /// journal has these events because they were published once already.
    pub fn replay_many(
        &mut self,
        rules: PunchRules,
        punches: &[Punch],
        progress: impl FnMut(usize),
    ) -> Result<Vec<PunchOutcome>> {
        self.all_recorded_as(rules, punches, Events::Drop, progress)
    }

    /// Every punch recorded through the script with `events`, or the failure; `progress` gets the
    /// size of each script call as it is answered.
    fn all_recorded_as(
        &mut self,
        rules: PunchRules,
        punches: &[Punch],
        events: Events,
        mut progress: impl FnMut(usize),
    ) -> Result<Vec<PunchOutcome>> {
        all_recorded(self.punch_batched(&PUNCH, rules, punches, events, |call, _| progress(call.len())))
    }

    /// [`Board::punch_many`], handing each script call's outcomes to `each` as soon as Redis has
    /// answered it, with the outbox records in them (the punches' indices, and every outcome so
    /// far): a bulk check-in publishes those events while it records the next ones. When Redis
    /// fails part-way, it keeps what was recorded: the outcomes of the punches whose replies came
    /// (`None` for the others, which may or may not have landed), and the failure, so a bulk
    /// check-in cut off says how much it recorded.
    pub fn punch_many_streamed(
        &mut self,
        rules: PunchRules,
        punches: &[Punch],
        each: impl FnMut(&[usize], &mut [Option<PunchOutcome>]),
    ) -> (Vec<Option<PunchOutcome>>, Result<()>) {
        self.punch_batched(&PUNCH, rules, punches, Events::BulkOutboxAndReply, each)
    }
}

/// Every outcome, or the failure that cut the batch off.
fn all_recorded((outcomes, failed): (Vec<Option<PunchOutcome>>, Result<()>)) -> Result<Vec<PunchOutcome>> {
    failed?;
    outcomes
        .into_iter()
        .map(|o| o.context("a punch got no reply from Redis"))
        .collect()
}

/// The script calls [`Board::punch_many`] makes, through another script with the same keys and
/// arguments: the `board_breakdown` example times variants of `punch.lua` (each without one of
/// its steps) call by call this way.
#[doc(hidden)]
pub fn punch_calls<'s>(
    script: &'s redis::Script,
    keys: &Keys,
    rules: PunchRules,
    punches: &[Punch],
) -> Vec<redis::ScriptInvocation<'s>> {
    calls(punches)
        .iter()
        .map(|call| {
            invocation(
                script,
                keys,
                rules,
                None,
                call.iter().map(|&i| &punches[i]),
                Events::Outbox,
            )
            .0
        })
        .collect()
}

/// The script calls for punches: grouped by department and day (order kept within each group,
/// which each punch's `changed` and `duplicate` depend on), [`PUNCHES_PER_CALL`] at most per call.
fn calls(punches: &[Punch]) -> Vec<Vec<usize>> {
    let mut groups: HashMap<(&str, NaiveDate), Vec<usize>> = HashMap::new();
    for (i, p) in punches.iter().enumerate() {
        groups
            .entry((&p.employee.department_id, p.facts.work_date))
            .or_default()
            .push(i);
    }
    groups
        .into_values()
        .flat_map(|v| v.chunks(PUNCHES_PER_CALL).map(<[usize]>::to_vec).collect::<Vec<_>>())
        .collect()
}

/// The punch script's text, which `board_breakdown` varies.
#[doc(hidden)]
pub const PUNCH_SCRIPT: &str = concat!(include_str!("scripts/hashtable.lua"), include_str!("scripts/punch.lua"));

impl Board {
    fn punch_batched(
        &mut self,
        script: &redis::Script,
        rules: PunchRules,
        punches: &[Punch],
        events: Events,
        mut each_call: impl FnMut(&[usize], &mut [Option<PunchOutcome>]),
    ) -> (Vec<Option<PunchOutcome>>, Result<()>) {
        let (con, keys, signer) = (&mut self.con, &self.keys, self.signer.as_deref());
        let mut out: Vec<Option<PunchOutcome>> = vec![None; punches.len()];
        // In a pipeline EVALSHA does not load the script on NOSCRIPT: load it first.
        if let Err(e) = script.prepare_invoke().load(con) {
            return (
                out,
                Err(anyhow::Error::new(e).context("loading the punch script into Redis")),
            );
        }
        let calls = calls(punches);
        // The records handed to each call sent and not yet answered, in the order sent (when
        // the events come back to the caller): each reply completes its call's records.
        let sent: RefCell<VecDeque<Vec<Cow<str>>>> = RefCell::default();
        let mut pipes = calls.chunks(CALLS_PER_PIPELINE).map(|batch| {
            let mut pipe = redis::pipe();
            for call in batch {
                let (inv, records) = invocation(script, keys, rules, signer, call.iter().map(|&i| &punches[i]), events);
                pipe.invoke_script(&inv);
                if events.replied() {
                    sent.borrow_mut().push_back(records);
                }
            }
            pipe
        });
        // The replies come back in the order the pipelines went out.
        let mut answered = calls.chunks(CALLS_PER_PIPELINE);
        let done = con.each_pipeline(&mut pipes, &mut |replies| {
            let batch = answered.next().context("Redis answered a pipeline never sent")?;
            for (call, reply) in batch.iter().zip(replies) {
                let records = if events.replied() {
                    Some(
                        sent.borrow_mut()
                            .pop_front()
                            .context("Redis answered a call never sent")?,
                    )
                } else {
                    None
                };
                for (&i, o) in call.iter().zip(outcomes(reply?, records, call.len())?) {
                    out[i] = Some(o);
                }
                each_call(call, &mut out);
            }
            Ok(())
        });
        (out, done.context("recording punches in Redis"))
    }
}

impl Board {
    /// One employee's record for a day: `None` if the board has no field for them (not laid
    /// out and no punch), `Some(empty)` if laid out with no punch yet.
    pub fn day_record(&mut self, dept: &str, date: NaiveDate, emp: &str) -> Result<Option<DayRecord>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let v: Option<String> = con.hget(keys.board(dept, date), emp)?;
        Ok(v.map(|v| DayRecord::parse(&v)))
    }

    /// A whole department board for a day: employee id -> record.
    pub fn department_board(&mut self, dept: &str, date: NaiveDate) -> Result<HashMap<String, DayRecord>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let m: HashMap<String, String> = con.hgetall(keys.board(dept, date))?;
        Ok(m.into_iter().map(|(k, v)| (k, DayRecord::parse(&v))).collect())
    }

    /// The live boards of `date` of these departments, in their order (an empty map for a
    /// department with no board), a pipeline of HGETALLs at a time.
    pub fn department_boards(&mut self, date: NaiveDate, depts: &[String]) -> Result<Vec<HashMap<String, DayRecord>>> {
        let keys = &self.keys;
        let boards: Vec<HashMap<String, String>> = super::cutover::hgetall_each(
            &mut self.con,
            depts,
            |d| keys.board(d, date),
            "reading the day's boards from Redis",
        )?;
        Ok(boards
            .into_iter()
            .map(|b| b.into_iter().map(|(k, v)| (k, DayRecord::parse(&v))).collect())
            .collect())
    }

    /// Names of the given employees from the roster cache (id -> name); unknown ids are left out.
    pub fn names(&mut self, ids: &[String]) -> Result<HashMap<String, String>> {
        Ok(self
            .lookup_many(ids)?
            .into_iter()
            .flatten()
            .map(|e| (e.id, e.name))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_keeps_names_and_sources_with_quotes_tabs_and_accents() {
        let e = Employee {
            id: "E1".into(),
            department_id: "D1".into(),
            name: "Ann \"Q\" O'Neil \\ é\tx".into(),
            ..Employee::default()
        };
        let at = DateTime::parse_from_rfc3339("2026-11-02T08:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let p = Punch::new(e, None, at, "gate \"7\"\n", &Policy::default(), chrono_tz::Asia::Tokyo);
        // As the script completes it: a check-in that changed the record.
        let record = record_prefix(&p, Kind::In, chrono_tz::Asia::Tokyo, None) + "i1";
        let out = crate::domain::event::render::render(&p.event_id, &record).unwrap();
        let ev: crate::domain::event::record::Event = serde_json::from_str(&out.json).unwrap();
        assert_eq!(ev.employee_name, "Ann \"Q\" O'Neil \\ é\tx");
        assert_eq!(ev.source, "gate \"7\"\n");
        assert_eq!(ev.at, "2026-11-02T17:00:00+09:00");
        assert_eq!((ev.kind, ev.changed, ev.event_id), (Kind::In, true, p.event_id.clone()));
        assert_eq!((out.department_id.as_str(), out.kind), ("D1", Kind::In));
    }
}
