//! The re-publish horizon: the events a publisher's broker confirmed in the last
//! `amqp.republish_horizon_seconds`, kept in memory so that, once the connection is lost, they
//! are published again on the next one. A broker node that dies may not have kept what it had
//! just confirmed (rabbitmq/rabbitmq-server#9208: confirmed writes lost when the connection's
//! node led the queue); the events have left their outboxes by then, so only the publisher
//! still knows them. Consumers drop the repeats by event id (at least once, never lost).

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

/// An event confirmed: its department, id and outbox value (what [`crate::amqp::Publisher::send`]
/// takes), and when its confirm came.
#[derive(Clone)]
pub(crate) struct Confirmed {
    pub dept: String,
    pub id: String,
    pub stored: String,
}

/// The events confirmed within the horizon, oldest first, and those due again after a loss.
pub(crate) struct Recent {
    horizon: Duration,
    kept: VecDeque<(Instant, Confirmed)>,
    /// Taken at a loss: to publish again once a broker answers (kept across failed attempts).
    due: Vec<Confirmed>,
    /// After a reconnect: until when what the new connection confirms is also set aside in
    /// `first`, to be published once more then ([`Recent::first_over`]).
    first_until: Option<Instant>,
    first: Vec<Confirmed>,
}

impl Recent {
    pub(crate) fn new(horizon_secs: u32) -> Recent {
        Recent {
            horizon: Duration::from_secs(u64::from(horizon_secs)),
            kept: VecDeque::new(),
            due: Vec::new(),
            first_until: None,
            first: Vec::new(),
        }
    }

    /// Whether anything is kept at all (a horizon of 0 keeps nothing: the events' values need
    /// not be copied).
    pub(crate) fn on(&self) -> bool {
        !self.horizon.is_zero()
    }

    /// The broker confirmed this event now.
    pub(crate) fn confirmed(&mut self, event: Confirmed) {
        if !self.on() {
            return;
        }
        let now = Instant::now();
        self.forget_before(now);
        if self.first_until.is_some_and(|until| now < until) {
            self.first.push(event.clone());
        }
        self.kept.push_back((now, event));
    }

    fn forget_before(&mut self, now: Instant) {
        while self
            .kept
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > self.horizon)
        {
            self.kept.pop_front();
        }
    }

    /// The connection was lost now: what it confirmed within the horizon becomes due again.
    pub(crate) fn lost(&mut self) {
        self.forget_before(Instant::now());
        self.due.extend(self.kept.drain(..).map(|(_, e)| e));
    }

    /// The broker refused (nacked or returned) events of these departments: their queues may be
    /// failing over, and then a surviving node may also have confirmed publishes to them that
    /// it did not keep (measured on RabbitMQ 3.10: docs/durability.md section 5). What was
    /// confirmed for them within the horizon becomes due again, as after a loss.
    pub(crate) fn refused<'a>(&mut self, depts: impl IntoIterator<Item = &'a str>) {
        let depts: HashSet<&str> = depts.into_iter().collect();
        if depts.is_empty() || self.kept.is_empty() {
            return;
        }
        self.forget_before(Instant::now());
        let (due, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.kept)
            .into_iter()
            .partition(|(_, e)| depts.contains(e.dept.as_str()));
        self.kept = kept;
        self.due.extend(due.into_iter().map(|(_, e)| e));
    }

    /// A new connection after a loss: what it confirms within the horizon from now is set
    /// aside. Right after a node dies, a surviving node has confirmed publishes to a queue whose
    /// leader was gone and not kept them (docs/durability.md section 5); a publisher that
    /// reconnects at once publishes into that window, and by the end of the horizon the queues
    /// have their new leaders.
    pub(crate) fn watch_first(&mut self) {
        if self.on() {
            self.first_until = Some(Instant::now() + self.horizon);
            self.first.clear();
        }
    }

    /// Once the first horizon of [`Recent::watch_first`] is over, what was confirmed in it is
    /// due again: how many.
    pub(crate) fn first_over(&mut self) -> usize {
        if self.first_until.is_none_or(|until| Instant::now() < until) {
            return 0;
        }
        self.first_until = None;
        let n = self.first.len();
        self.due.append(&mut self.first);
        n
    }

    /// An event to publish again at the next chance (a re-publish the broker refused, or that
    /// a connection lost in turn before confirming it).
    pub(crate) fn due(&mut self, event: Confirmed) {
        self.due.push(event);
    }

    /// The events to publish again on the new connection (their confirms there keep them anew).
    pub(crate) fn take_due(&mut self) -> Vec<Confirmed> {
        std::mem::take(&mut self.due)
    }

    /// Events due again, not yet handed to a new connection.
    pub(crate) fn due_len(&self) -> usize {
        self.due.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(id: &str) -> Confirmed {
        Confirmed {
            dept: "D1".into(),
            id: id.into(),
            stored: "{}".into(),
        }
    }

    #[test]
    fn a_loss_makes_the_events_confirmed_within_the_horizon_due_and_only_those() {
        let mut r = Recent::new(1);
        r.confirmed(ev("old"));
        // Pretend it was confirmed two seconds ago.
        r.kept[0].0 -= Duration::from_secs(2);
        r.confirmed(ev("new"));
        r.lost();
        let due: Vec<String> = r.take_due().into_iter().map(|e| e.id).collect();
        assert_eq!(due, ["new"]);
        assert!(r.take_due().is_empty(), "taken once");
    }

    #[test]
    fn a_refusal_makes_due_only_its_departments_events() {
        let mut r = Recent::new(10);
        r.confirmed(ev("a"));
        r.confirmed(Confirmed {
            dept: "D2".into(),
            id: "b".into(),
            stored: "{}".into(),
        });
        r.refused(["D2"]);
        let due: Vec<String> = r.take_due().into_iter().map(|e| e.id).collect();
        assert_eq!(due, ["b"]);
        r.lost();
        let due: Vec<String> = r.take_due().into_iter().map(|e| e.id).collect();
        assert_eq!(due, ["a"], "the other department's stays kept until a loss");
    }

    #[test]
    fn what_a_new_connection_confirms_in_its_first_horizon_is_due_once_it_is_over() {
        let mut r = Recent::new(1);
        r.confirmed(ev("before"));
        r.watch_first();
        r.confirmed(ev("first"));
        assert_eq!(r.first_over(), 0, "not over yet");
        r.first_until = Some(Instant::now());
        assert_eq!(r.first_over(), 1);
        let due: Vec<String> = r.take_due().into_iter().map(|e| e.id).collect();
        assert_eq!(due, ["first"]);
        assert_eq!(r.first_over(), 0, "once");
    }

    #[test]
    fn a_zero_horizon_keeps_nothing() {
        let mut r = Recent::new(0);
        r.confirmed(ev("a"));
        r.lost();
        assert_eq!(r.due_len(), 0);
    }
}
