//! A following relay's one stream of publishes: the events check-ins hand off (woken through
//! Redis) and its full rounds over every outbox, on one publisher and one window of confirms,
//! so that neither ever waits for the other's confirms.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use anyhow::Result;

use super::drain::{DrainReport, MALFORMED_SHOWN, PAGE};
use super::recent::{Confirmed, Recent};
use crate::amqp::Publisher;
use crate::amqp::{Flow, Verdicts};
use crate::redis::board::Board;

/// What published an event: a check-in's wake-up, the full round, or a lost connection (the
/// events it had confirmed within the re-publish horizon, no longer in any outbox).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Wake,
    /// The full round begun at this instant (this host's clock).
    Round(chrono::DateTime<chrono::Utc>),
    Again,
}

struct Tag {
    dept: String,
    id: String,
    origin: Origin,
    /// The outbox value, kept for the re-publish horizon (empty when it is 0).
    stored: String,
}

/// A full round's figures, until every event it published is confirmed or refused.
#[derive(Default)]
struct Round {
    /// Outboxes the round found holding events, and how many of them it read events from.
    found: Vec<String>,
    departments: usize,
    read: usize,
    sent: usize,
    refused: usize,
    /// Entries that are no event: never published, they stay in their outbox (pending).
    unpublishable: usize,
    malformed: Vec<String>,
    /// Every outbox read, or the publisher stopped on the way.
    swept: bool,
}

/// The events on their way, and what their confirms removed from the outboxes. An event leaves
/// its outbox only once confirmed, as everywhere.
pub struct Handoffs {
    flow: Flow<Tag>,
    /// Ids published and not yet confirmed: a wake-up or the round meets them in the outbox
    /// again, and must not publish them twice.
    in_flight: HashSet<String>,
    /// Refused by the broker (or no event at all) since the last round began: left for the next
    /// round, so that it is not tried again at every wake-up of its department.
    held: HashSet<String>,
    /// What the wake-ups' confirms removed since [`Handoffs::take_handed`].
    handed: DrainReport,
    round: Option<Round>,
    /// What the broker confirmed lately, published again after a lost connection.
    recent: Recent,
    /// Events published again since [`Handoffs::take_republished`].
    republished: usize,
    /// How often the broker refused each re-published event (a queue without a leader yet
    /// nacks): tried again at each round, up to [`REFUSALS`] times.
    refusals: HashMap<String, u32>,
}

/// Refusals after which a re-published event is given up (a queue deleted for good would
/// return it at every round): about a minute of rounds at a 500 ms interval.
const REFUSALS: u32 = 120;

/// No re-publish horizon: nothing kept once confirmed.
impl Default for Handoffs {
    fn default() -> Self {
        Handoffs::new(0)
    }
}

impl Handoffs {
    /// Nothing on its way; the events confirmed within `horizon_secs` are kept for a loss.
    pub fn new(horizon_secs: u32) -> Self {
        Handoffs {
            flow: Flow::keeping_failed(),
            in_flight: HashSet::new(),
            held: HashSet::new(),
            handed: DrainReport::default(),
            round: None,
            recent: Recent::new(horizon_secs),
            republished: 0,
            refusals: HashMap::new(),
        }
    }

    /// The publisher is gone: what it had on its way stays in its outbox (the next round sends
    /// it), and the round ends. If it was `lost` (broke, rather than closed on purpose), what
    /// it confirmed within the horizon becomes due again, with the re-publishes it had not had
    /// confirmed yet.
    pub fn start_over(&mut self, lost: bool) {
        let mut recent = std::mem::replace(&mut self.recent, Recent::new(0));
        if lost {
            recent.lost();
        }
        for t in self.flow.take_unconfirmed() {
            if t.origin == Origin::Again {
                recent.due(to_confirmed(t));
            }
        }
        let (republished, refusals) = (self.republished, std::mem::take(&mut self.refusals));
        *self = Handoffs {
            recent,
            republished,
            refusals,
            ..Handoffs::new(0)
        };
    }

    /// Publish again what a lost connection had confirmed within the horizon (and what a
    /// broker refused of that since). Stops when the publisher does: the rest stays due.
    pub fn republish(&mut self, publisher: &mut Publisher) {
        let mut due = self.recent.take_due().into_iter();
        for e in due.by_ref() {
            let tag = Tag {
                dept: e.dept.clone(),
                id: e.id.clone(),
                origin: Origin::Again,
                stored: e.stored.clone(),
            };
            if !publisher.send_again(&mut self.flow, &e.id, &e.stored, tag) {
                self.recent.due(e);
                break;
            }
            self.republished += 1;
        }
        for e in due {
            self.recent.due(e);
        }
        publisher.flush_journal(&mut self.flow);
        self.flow.take_malformed();
    }

    /// A new connection after a loss: what it confirms in its first horizon is set aside too.
    pub fn watch_first(&mut self) {
        self.recent.watch_first();
    }

    /// Once that first horizon is over, what the connection confirmed in it is due again
    /// (published at the next [`Handoffs::republish`]): how many.
    pub fn first_over(&mut self) -> usize {
        self.recent.first_over()
    }

    /// How the broker answered this connection's events since the last call: all refused means
    /// the channel is to be given up ([`Verdicts`]).
    pub fn take_verdicts(&mut self) -> Verdicts {
        self.flow.take_verdicts()
    }

    /// Events due again after a loss, not yet published on a new connection.
    pub fn due(&self) -> usize {
        self.recent.due_len()
    }

    /// How many events were published again since the last call.
    pub fn take_republished(&mut self) -> usize {
        std::mem::take(&mut self.republished)
    }
    /// Publish the events of the woken departments' outboxes (a page of each; the full rounds
    /// take any more) but those already on their way. Stops when the publisher does.
    pub fn offer(&mut self, publisher: &mut Publisher, board: &mut Board, depts: &[String]) -> Result<()> {
        for dept in depts {
            let (_, page) = board.outbox_page(dept, 0, PAGE)?;
            if !self.send_page(publisher, dept, page, Origin::Wake) {
                break;
            }
        }
        publisher.flush_journal(&mut self.flow);
        // An entry that is no event stays in its outbox; the full rounds name it.
        self.flow.take_malformed();
        Ok(())
    }

    /// The full round: every outbox, page by page, into the same stream as the hand-offs, never
    /// waiting for a confirm (but for room in the confirm window, facing a backlog). Between two
    /// SCAN calls listing the outboxes, and between two pages of one, the wake-ups that came
    /// meanwhile are taken and their events sent at once. Its
    /// report comes from [`Handoffs::take_round`] once its confirms are in. A round starts only
    /// once the last one was taken.
    pub fn sweep(&mut self, publisher: &mut Publisher, board: &mut Board) -> Result<()> {
        debug_assert!(self.round.is_none(), "the last round was not taken");
        self.held.clear();
        self.round = Some(Round::default());
        // What was read of the journal for the last round is older than what others journaled since.
        publisher.forget_journal();
        let now = chrono::Utc::now();
        let found = board.outbox_departments_between(|board| self.between_pages(publisher, board))?;
        for dept in &found {
            if !self.sweep_outbox(publisher, board, dept, now)? {
                break;
            }
        }
        publisher.flush_journal(&mut self.flow);
        let round = self.round.as_mut().expect("begun above");
        round.found = found;
        round.swept = true;
        Ok(())
    }

    /// One department's outbox, page by page. False once the publisher stopped.
    fn sweep_outbox(
        &mut self,
        publisher: &mut Publisher,
        board: &mut Board,
        dept: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool> {
        let met = |r: &Round| r.read + r.unpublishable;
        let met_before = self.round.as_ref().map_or(0, met);
        let mut cursor = 0;
        let going = loop {
            let (next, page) = board.outbox_page(dept, cursor, PAGE)?;
            let going = self.send_page(publisher, dept, page, Origin::Round(now));
            let round = self.round.as_mut().expect("begun");
            for (id, why) in self.flow.take_malformed() {
                round.malformed.push(format!("{dept} {id}: {why}"));
            }
            self.between_pages(publisher, board)?;
            if !going || next == 0 {
                break going;
            }
            cursor = next;
        };
        let round = self.round.as_mut().expect("begun");
        round.departments += usize::from(met(round) > met_before);
        Ok(going)
    }

    /// Take the wake-ups that came (without waiting), send their events, take the confirms.
    fn between_pages(&mut self, publisher: &mut Publisher, board: &mut Board) -> Result<()> {
        let woken = board.take_wakes()?;
        if !woken.is_empty() {
            self.offer(publisher, board, &woken)?;
        }
        self.settle(publisher, board)
    }

    /// Send a page of an outbox but what is on its way or held. False once the publisher stopped.
    fn send_page(
        &mut self,
        publisher: &mut Publisher,
        dept: &str,
        page: Vec<(String, String)>,
        origin: Origin,
    ) -> bool {
        for (id, json) in page {
            if self.in_flight.contains(&id) || self.held.contains(&id) {
                continue;
            }
            let tag = Tag {
                dept: dept.to_string(),
                id: id.clone(),
                origin,
                stored: if self.recent.on() { json.clone() } else { String::new() },
            };
            let malformed = self.flow.malformed_len();
            // A hand-off is published here first. So is what a round meets younger than a
            // check-in's own confirm wait (its wake-up not taken yet, or a check-in publishing
            // it); older, it was left by a publisher that failed, and may be in the journal.
            let again = match origin {
                Origin::Wake => false,
                Origin::Round(now) => super::drain::is_stale(&id, &json, now),
                Origin::Again => true,
            };
            let going = match again {
                false => publisher.send(&mut self.flow, &id, &json, tag),
                true => publisher.send_again(&mut self.flow, &id, &json, tag),
            };
            if !going {
                return false;
            }
            if self.flow.malformed_len() > malformed {
                // Never published, so no confirm will ever take it off the books.
                if let (Origin::Round(_), Some(round)) = (origin, self.round.as_mut()) {
                    round.unpublishable += 1;
                }
                self.held.insert(id);
                continue;
            }
            self.in_flight.insert(id);
            if let (Origin::Round(_), Some(round)) = (origin, self.round.as_mut()) {
                round.read += 1;
            }
        }
        true
    }

    /// A full round was swept and its report not taken yet.
    pub fn round_open(&self) -> bool {
        self.round.is_some()
    }

    /// Events sent whose confirms have not all come.
    pub fn busy(&self) -> bool {
        self.flow.in_flight() > 0
    }

    /// Take the confirms that came, without waiting; remove what they acked from its outbox.
    pub fn settle(&mut self, publisher: &mut Publisher, board: &mut Board) -> Result<()> {
        publisher.poll(&mut self.flow);
        self.take_confirms(board)
    }

    /// Wait (within the confirm timeout) for every confirm still due, unless the publisher
    /// stopped: what was not acked stays in its outbox.
    pub fn finish(&mut self, publisher: &mut Publisher, board: &mut Board) -> Result<()> {
        if publisher.problem().is_none() {
            publisher.finish(&mut self.flow);
        }
        self.take_confirms(board)
    }

    /// What the wake-ups' confirms removed since the last call (departments, sent).
    pub fn take_handed(&mut self) -> DrainReport {
        std::mem::take(&mut self.handed)
    }

    /// The last full round's report, once every event it published was confirmed or refused;
    /// at once if the publisher stopped (what its outboxes still hold is then pending). None
    /// while it is not over, or when no round is open.
    pub fn take_round(&mut self, publisher: &Publisher, board: &mut Board) -> Result<Option<DrainReport>> {
        let Some(round) = self.round.as_ref() else {
            return Ok(None);
        };
        let mut report = DrainReport::default();
        if let Some(why) = publisher.problem() {
            let left = board.outbox_lens(&round.found)?;
            report.departments = left.iter().filter(|n| **n > 0).count().max(round.departments);
            report.pending = left.iter().sum();
            report.problem = Some(why.to_string());
        } else if round.swept && round.sent + round.refused == round.read {
            report.departments = round.departments;
            report.pending = round.refused + round.unpublishable;
        } else {
            return Ok(None);
        }
        let round = self.round.take().expect("open");
        report.sent = round.sent;
        report.malformed = round.malformed;
        report.malformed.truncate(MALFORMED_SHOWN);
        Ok(Some(report))
    }

    fn take_confirms(&mut self, board: &mut Board) -> Result<()> {
        let acked = self.flow.take_acked();
        let mut by_dept: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut handed_depts = BTreeSet::new();
        for t in &acked {
            self.in_flight.remove(&t.id);
            match (t.origin, self.round.as_mut()) {
                (Origin::Wake, _) => {
                    self.handed.sent += 1;
                    handed_depts.insert(t.dept.as_str());
                }
                (Origin::Round(_), Some(round)) => round.sent += 1,
                (Origin::Round(_), None) => {}
                // No longer in an outbox, nor counted again as sent.
                (Origin::Again, _) => continue,
            }
            by_dept.entry(t.dept.as_str()).or_default().push(t.id.clone());
        }
        self.handed.departments += handed_depts.len();
        let mut refused_depts: BTreeSet<String> = BTreeSet::new();
        for t in self.flow.take_failed() {
            refused_depts.insert(t.dept.clone());
            if t.origin == Origin::Again {
                // Refused this time: due again at the next round (it is in no outbox).
                let n = self.refusals.entry(t.id.clone()).or_default();
                *n += 1;
                if *n <= REFUSALS {
                    self.recent.due(to_confirmed(t));
                } else {
                    self.refusals.remove(&t.id);
                }
                continue;
            }
            self.in_flight.remove(&t.id);
            self.held.insert(t.id);
            if let (Origin::Round(_), Some(round)) = (t.origin, self.round.as_mut()) {
                round.refused += 1;
            }
        }
        board.outbox_ack_many(&by_dept)?;
        // Confirmed on this connection: kept in case it is lost in turn.
        if self.recent.on() {
            for t in acked {
                if t.origin == Origin::Again {
                    self.refusals.remove(&t.id);
                }
                self.recent.confirmed(to_confirmed(t));
            }
        }
        // A department refused: its queue may be failing over, when what a survivor confirmed
        // may not be kept; what it confirmed within the horizon is published again next round.
        self.recent.refused(refused_depts.iter().map(String::as_str));
        Ok(())
    }
}

fn to_confirmed(t: Tag) -> Confirmed {
    Confirmed {
        dept: t.dept,
        id: t.id,
        stored: t.stored,
    }
}
