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
use crate::event::Event;

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

    /// Publish `(event id, event JSON)` pairs, keeping up to `amqp.confirm_window` confirms
    /// outstanding, and return the ids the broker acked, in order. An id missing from the
    /// answer was nacked, returned unroutable, not confirmed in time, or is not a valid event:
    /// it stays in its outbox for the next drain. Errors only if the channel was already broken.
    pub fn publish_confirmed(&mut self, items: &[(String, String)]) -> Result<Vec<String>> {
        if let Some(why) = &self.broken {
            return Err(Error::service(Service::Rabbitmq, why).into());
        }
        let mut w = Window::default();
        for (i, (id, json)) in items.iter().enumerate() {
            let Ok(ev) = serde_json::from_str::<Event>(json) else {
                continue;
            };
            if w.pending.len() >= self.settings.confirm_window && !self.wait(&mut w) {
                break;
            }
            match self.publish_one(id, &ev, json) {
                Ok(tag) => {
                    w.pending.insert(tag, i);
                }
                Err(e) => {
                    self.broken = Some(format!("{e:#}"));
                    break;
                }
            }
        }
        while !w.pending.is_empty() && self.wait(&mut w) {}
        w.acked.sort_unstable();
        Ok(w.acked
            .into_iter()
            .map(|i| items[i].0.clone())
            .filter(|id| !w.returned.contains(id))
            .collect())
    }

    fn publish_one(&mut self, id: &str, ev: &Event, json: &str) -> Result<u64> {
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
            ..Publish::with_properties(json.as_bytes(), ev.routing_key(), event_properties(id))
        };
        self.out.publish(&self.names.events(), publish)
    }

    /// Take the confirms that arrive within the timeout; false once none will come.
    fn wait(&mut self, w: &mut Window) -> bool {
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
        w.returned.extend(returned_ids(&got.returned));
        for c in got.confirms {
            match c {
                Confirm::Ack(p) => {
                    if let Some(i) = w.pending.remove(&p.delivery_tag) {
                        w.acked.push(i);
                    }
                }
                Confirm::Nack(p) => {
                    w.pending.remove(&p.delivery_tag);
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

/// The state of one `publish_confirmed` call.
#[derive(Default)]
struct Window {
    /// Delivery tag -> index of the item, for messages not yet confirmed.
    pending: HashMap<u64, usize>,
    acked: Vec<usize>,
    returned: HashSet<String>,
}
