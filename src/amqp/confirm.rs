//! A confirm-mode channel: publish, then learn from the broker's acks which messages it took.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use amiquip::{Channel, Confirm, Connection, ConnectionBlockedNotification, Publish, Return};
use anyhow::Result;
use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::outstanding::{Outstanding, Settled};
use super::topology;
use crate::error::{Error, Service};

pub(crate) struct Confirming {
    pub(crate) channel: Channel,
    confirms: Receiver<Confirm>,
    returns: Receiver<Return>,
    /// The tags not yet confirmed: each confirm read exactly (not amiquip's `ConfirmSmoother`,
    /// which turns an out-of-order nack into an ack: see `outstanding.rs`).
    outstanding: Outstanding,
    /// A wait for a confirm ran out: the broker may have stopped answering altogether.
    pub(crate) timed_out: bool,
    /// The broker's `connection.blocked` and `connection.unblocked` (a memory or disk alarm).
    blocks: Receiver<ConnectionBlockedNotification>,
    /// Why the broker blocks this connection's publishers, while it does.
    blocked: Option<String>,
    /// The confirms' sender was dropped: amiquip's connection is gone.
    gone: bool,
}

/// How often a wait for confirms looks whether the broker blocked the connection meanwhile.
const BLOCK_CHECK: Duration = Duration::from_millis(50);

/// What one wait brought: the delivery tags a confirm settled, each once, and the messages
/// returned unroutable.
pub(crate) struct Confirmed {
    pub(crate) confirms: Vec<Settled>,
    pub(crate) returned: Vec<Return>,
}

impl Confirming {
    pub(crate) fn open(conn: &mut Connection) -> Result<Confirming> {
        let channel = topology::open_channel(conn)?;
        let svc = |e| Error::service(Service::Rabbitmq, e);
        // The listeners must exist before confirms are enabled, or early confirms are lost.
        let confirms = channel.listen_for_publisher_confirms().map_err(svc)?;
        let returns = channel.listen_for_returns().map_err(svc)?;
        channel.enable_publisher_confirms().map_err(svc)?;
        // One listener per connection: this channel is the connection's only publisher.
        let blocks = conn.listen_for_connection_blocked().map_err(svc)?;
        Ok(Confirming {
            channel,
            confirms,
            returns,
            outstanding: Outstanding::default(),
            timed_out: false,
            blocks,
            blocked: None,
            gone: false,
        })
    }

    /// Publish; returns the message's delivery tag, which its confirm will carry.
    pub(crate) fn publish(&mut self, exchange: &str, publish: Publish) -> Result<u64> {
        self.channel
            .basic_publish(exchange, publish)
            .map_err(|e| Error::service(Service::Rabbitmq, e))?;
        Ok(self.outstanding.publish())
    }

    /// Wait up to `timeout` for the next confirm from the broker; `Err(why)` when none came,
    /// or at once when the broker blocks the connection's publishers (an alarm: no confirm
    /// comes until it clears, and waiting for it would only spend the bound).
    pub(crate) fn wait(&mut self, timeout: Duration) -> Result<Confirmed, String> {
        let deadline = Instant::now() + timeout;
        let raw = loop {
            if let Some(why) = self.blocked_now() {
                return Err(why);
            }
            match self
                .confirms
                .recv_deadline((Instant::now() + BLOCK_CHECK).min(deadline))
            {
                Ok(c) => break c,
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(RecvTimeoutError::Timeout) => {
                    self.timed_out = true;
                    return Err(format!("no publisher confirm within {} ms", timeout.as_millis()));
                }
                // The broker closed the channel (a refused declare, say): a call now usually
                // returns its reason, which is worth more to an operator than "closed" (when
                // amiquip lost it, the publisher asks the broker again: `Publisher::why_closed`).
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(match self.channel.qos(0, 0, false) {
                        Err(e) => e.to_string(),
                        Ok(()) => "the broker stopped confirming".into(),
                    })
                }
            }
        };
        // The broker sends a message's return before its ack, so it is already queued here.
        let returned = self.returns.try_iter().collect();
        Ok(Confirmed {
            confirms: self.settle(raw),
            returned,
        })
    }

    /// The tags a confirm from amiquip settles.
    fn settle(&mut self, raw: Confirm) -> Vec<Settled> {
        let (p, acked) = match raw {
            Confirm::Ack(p) => (p, true),
            Confirm::Nack(p) => (p, false),
        };
        self.outstanding.confirm(p.delivery_tag, p.multiple, acked)
    }

    /// Why the broker blocks this connection's publishers, if it does now (the notifications
    /// that arrived so far, in order).
    pub(crate) fn blocked_now(&mut self) -> Option<String> {
        for n in self.blocks.try_iter() {
            self.blocked = match n {
                ConnectionBlockedNotification::Blocked(reason) => Some(reason),
                ConnectionBlockedNotification::Unblocked => None,
            };
        }
        self.blocked
            .as_ref()
            .map(|reason| format!("the broker blocks publishers ({reason}: a memory or disk alarm)"))
    }

    /// The confirm that has already arrived, if one has (no wait).
    pub(crate) fn try_wait(&mut self) -> Option<Confirmed> {
        let raw = match self.confirms.try_recv() {
            Ok(raw) => raw,
            Err(e) => {
                self.gone |= e.is_disconnected();
                return None;
            }
        };
        let returned = self.returns.try_iter().collect();
        Some(Confirmed {
            confirms: self.settle(raw),
            returned,
        })
    }

    /// Whether [`Confirming::try_wait`] found the channel gone (the connection closed under
    /// it): no confirm can come.
    pub(crate) fn closed(&self) -> bool {
        self.gone
    }

    /// Publish one message and wait for its confirm: true if the broker acked it and routed it.
    pub(crate) fn publish_and_wait(&mut self, exchange: &str, publish: Publish, timeout: Duration) -> Result<bool> {
        let tag = self.publish(exchange, publish)?;
        let mut returned = false;
        loop {
            let got = self
                .wait(timeout)
                .map_err(|why| Error::service(Service::Rabbitmq, why))?;
            returned |= !got.returned.is_empty();
            if let Some(c) = got.confirms.iter().find(|c| c.tag == tag) {
                return Ok(c.acked && !returned);
            }
        }
    }
}

/// The message ids among returned messages.
pub(crate) fn returned_ids(returned: &[Return]) -> HashSet<String> {
    returned
        .iter()
        .filter_map(|r| r.properties.message_id().clone())
        .collect()
}
