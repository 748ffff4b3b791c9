//! Publishing events with publisher confirms and a window of outstanding confirms.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use amiquip::{AmqpProperties, Confirm, Publish};
use anyhow::Result;

use super::confirm::{returned_ids, Confirming};
use super::connect::Link;
use super::topology::{self, Names, Wait};
use crate::config::{AmqpSettings, Config};
use crate::error::{Error, Service};
use crate::event::{self, Outgoing};

/// A confirm-mode channel on its own connection, declaring department queues as it meets them.
pub struct Publisher {
    // Field order is drop order: closing the connection closes its channel too (one round
    // trip, not two), and the channel's own close then returns at once.
    link: Link,
    out: Confirming,
    declared: HashSet<String>,
    names: Names,
    settings: AmqpSettings,
    /// Why the channel is no longer usable, once it is not.
    broken: Option<String>,
}

/// The AMQP properties of an event message: persistent JSON, `message_id` = event id.
pub(crate) fn event_properties(id: &str) -> AmqpProperties {
    AmqpProperties::default()
        .with_delivery_mode(2)
        .with_content_type("application/json".into())
        .with_message_id(id.to_string())
        .with_app_id("attendance".into())
        .with_timestamp(chrono::Utc::now().timestamp() as u64)
}

impl Publisher {
    /// Connect, enable confirms and declare the common topology. Unreachable: exit 3.
    pub fn connect(cfg: &Config) -> Result<Publisher> {
        let names = Names::new(&cfg.namespace);
        let (link, (out, broken)) = topology::connect(cfg, |conn| {
            let out = Confirming::open(conn)?;
            // Declarations do not wait for answers, so the broker's refusal of one (a queue
            // declared otherwise) closes the channel at some later call: here or at the first
            // publish. Either way it is the channel that is broken, not the connection: the
            // events stay pending.
            let broken = topology::declare_common(&out.channel, Wait::NoWait, &names, cfg)
                .err()
                .map(|e| format!("{e:#}"));
            Ok((out, broken))
        })?;
        Ok(Publisher {
            link,
            out,
            declared: HashSet::new(),
            names,
            settings: cfg.amqp.clone(),
            broken,
        })
    }

    /// Wait at most this long for each confirm (a check-in answers sooner than a bulk drain).
    pub fn set_confirm_timeout_ms(&mut self, ms: u32) {
        self.settings.confirm_timeout_ms = ms;
    }

    /// `host:port` of the broker this publisher reached.
    pub fn broker(&self) -> &str {
        self.link.broker()
    }

    /// Why publishing stopped working, if it did (timeout, closed channel); reconnect then.
    pub fn problem(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Publish `(event id, outbox value)` pairs, keeping up to `amqp.confirm_window` confirms
    /// outstanding, and return the ids the broker acked, in order. An id missing from the
    /// answer was nacked, returned unroutable, not confirmed in time, or is not a valid event:
    /// it stays in its outbox for the next drain. Errors only if the channel was already broken.
    pub fn publish_confirmed(&mut self, items: &[(String, String)]) -> Result<Vec<String>> {
        if let Some(why) = &self.broken {
            return Err(Error::service(Service::Rabbitmq, why).into());
        }
        let mut flow = Flow::default();
        for (i, (id, json)) in items.iter().enumerate() {
            if !self.send(&mut flow, id, json, i) {
                break;
            }
        }
        self.finish(&mut flow);
        let mut acked = flow.take_acked();
        acked.sort_unstable();
        Ok(acked.into_iter().map(|i| items[i].0.clone()).collect())
    }

    /// Publish one event into a stream of publishes whose window of outstanding confirms
    /// (`amqp.confirm_window`) spans calls, waiting first while the window is full; `tag` comes
    /// back from [`Flow::take_acked`] once the broker acked (and routed) it. False once
    /// publishing stopped ([`Publisher::problem`] says why). `stored` is the outbox value,
    /// rendered to the wire JSON by [`event::render`]; one that is no event is never published
    /// (never acked, it stays in its outbox) and [`Flow::take_malformed`] tells of it.
    pub fn send<T>(&mut self, flow: &mut Flow<T>, id: &str, stored: &str, tag: T) -> bool {
        if self.broken.is_some() {
            return false;
        }
        let ev = match event::render(id, stored) {
            Ok(ev) => ev,
            Err(e) => {
                flow.malformed.push((id.to_string(), e.to_string()));
                return true;
            }
        };
        if flow.pending.len() >= self.settings.confirm_window && !self.wait(flow) {
            return false;
        }
        match self.publish_one(id, &ev) {
            Ok(delivery) => {
                flow.pending.insert(delivery, (id.to_string(), tag));
                true
            }
            Err(e) => {
                self.broken = Some(format!("{e:#}"));
                false
            }
        }
    }

    /// Wait for every confirm still outstanding in `flow` (or until none will come).
    pub fn finish<T>(&mut self, flow: &mut Flow<T>) {
        while !flow.pending.is_empty() && self.wait(flow) {}
    }

    fn publish_one(&mut self, id: &str, ev: &Outgoing) -> Result<u64> {
        if !self.declared.contains(&ev.department_id) {
            topology::declare_department(
                &self.out.channel,
                Wait::NoWait,
                &self.names,
                &self.settings,
                &ev.department_id,
            )?;
            self.declared.insert(ev.department_id.clone());
        }
        // Mandatory: a message no queue takes (a department queue deleted behind our back) comes
        // back as a return before its ack, instead of being acked and dropped.
        let publish = Publish {
            mandatory: true,
            ..Publish::with_properties(ev.json.as_bytes(), ev.routing_key(), event_properties(id))
        };
        self.out.publish(&self.names.events(), publish)
    }

    /// Take the confirms that arrive within the timeout; false once none will come.
    fn wait<T>(&mut self, flow: &mut Flow<T>) -> bool {
        let got = match self
            .out
            .wait(Duration::from_millis(u64::from(self.settings.confirm_timeout_ms)))
        {
            Ok(got) => got,
            Err(why) => {
                self.broken = Some(why);
                return false;
            }
        };
        for r in &got.returned {
            // Redeclare next time: the queue this department had is gone.
            if let Some(dept) = r.routing_key.split('.').next() {
                self.declared.remove(dept);
            }
        }
        // A message's return arrives before its ack, so it is known here when the ack comes.
        flow.returned.extend(returned_ids(&got.returned));
        for c in got.confirms {
            match c {
                Confirm::Ack(p) => {
                    if let Some((id, tag)) = flow.pending.remove(&p.delivery_tag) {
                        if !flow.returned.remove(&id) {
                            flow.acked.push(tag);
                        }
                    }
                }
                Confirm::Nack(p) => {
                    if let Some((id, _)) = flow.pending.remove(&p.delivery_tag) {
                        flow.returned.remove(&id);
                    }
                }
            }
        }
        true
    }

    /// Close the connection politely, at most `amqp.close_timeout_ms` (the same as dropping it).
    pub fn close(self) {}

    /// Connect on a thread, so that the handshake overlaps the caller's own work (a check-in
    /// records its punch in Redis meanwhile).
    pub fn connect_in_background(cfg: &Config) -> Connecting {
        let cfg = cfg.clone();
        Connecting(Some(std::thread::spawn(move || Publisher::connect(&cfg))))
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if self.out.timed_out {
            // A broker that let a confirm time out may not answer a close either.
            self.link.guard().cut();
        }
    }
}

/// A publisher being connected; see [`Publisher::connect_in_background`]. Dropped unused (the
/// check-in was refused, or made no event), it closes the connection politely, so the broker
/// does not log an abrupt disconnect for every refused check-in.
pub struct Connecting(Option<std::thread::JoinHandle<Result<Publisher>>>);

impl Connecting {
    /// The publisher, once connected (or why not).
    pub fn wait(mut self) -> Result<Publisher> {
        let handle = self.0.take().expect("waited once");
        handle
            .join()
            .unwrap_or_else(|_| Err(Error::service(Service::Rabbitmq, "the connecting thread panicked").into()))
    }
}

impl Drop for Connecting {
    fn drop(&mut self) {
        if let Some(Ok(Ok(p))) = self.0.take().map(|h| h.join()) {
            p.close();
        }
    }
}

/// A stream of publishes on one publisher: what awaits its confirm, and what the broker took.
/// It holds only the window, so a drain's memory does not grow with the backlog.
pub struct Flow<T> {
    /// Delivery tag -> (event id, the caller's tag), for messages not yet confirmed.
    pending: HashMap<u64, (String, T)>,
    acked: Vec<T>,
    /// Ids returned unroutable whose confirm has not come yet.
    returned: HashSet<String>,
    /// Outbox entries that are no event: (id, why), never published.
    malformed: Vec<(String, String)>,
}

impl<T> Default for Flow<T> {
    fn default() -> Self {
        Flow {
            pending: HashMap::new(),
            acked: Vec::new(),
            returned: HashSet::new(),
            malformed: Vec::new(),
        }
    }
}

impl<T> Flow<T> {
    /// The tags of the messages acked since the last call.
    pub fn take_acked(&mut self) -> Vec<T> {
        std::mem::take(&mut self.acked)
    }

    /// The outbox entries met since the last call that are no event: (id, why).
    pub fn take_malformed(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.malformed)
    }
}
