//! Publishing absence alerts: one message at a time to a department's queue, on a connection
//! of its own (the relay's event publisher keeps a window of confirms that an alert's would
//! disturb), each confirmed before the relay marks it sent.

use std::collections::HashSet;
use std::time::Duration;

use amiquip::Publish;
use anyhow::Result;

use super::confirm::Confirming;
use super::connect::Link;
use super::publish::event_properties;
use super::topology::{self, Names, Wait};
use crate::config::{AmqpSettings, Config};

/// A confirm-mode channel for alerts.
pub(crate) struct AlertPublisher {
    // Field order is drop order: the channel goes with its connection.
    link: Link,
    out: Confirming,
    names: Names,
    settings: AmqpSettings,
    declared: HashSet<String>,
}

impl AlertPublisher {
    /// Connect to the first broker that answers (exit 3 if none).
    pub(crate) fn connect(cfg: &Config) -> Result<AlertPublisher> {
        let names = Names::new(&cfg.namespace);
        let (link, out) = topology::connect(cfg, |conn| {
            let out = Confirming::open(conn)?;
            if cfg.amqp.declare {
                topology::declare_common(&out.channel, Wait::Answer, &names, cfg)?;
            }
            Ok(out)
        })?;
        Ok(AlertPublisher {
            link,
            out,
            names,
            settings: cfg.amqp.clone(),
            declared: HashSet::new(),
        })
    }

    /// Publish `json` (message id `id`) to `dept`'s queue and wait for the broker's confirm:
    /// true once it took it into the queue; false if it refused it or no queue took it.
    pub(crate) fn send(&mut self, dept: &str, id: &str, json: &str) -> Result<bool> {
        if self.settings.declare && !self.declared.contains(dept) {
            topology::declare_department(&self.out.channel, Wait::Answer, &self.names, &self.settings, dept)?;
            self.declared.insert(dept.to_string());
        }
        // Mandatory: a queue deleted behind our back returns it rather than dropping it.
        let publish = Publish {
            mandatory: true,
            ..Publish::with_properties(json.as_bytes(), self.names.department(dept), event_properties(id))
        };
        let timeout = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
        self.out.publish_and_wait("", publish, timeout)
    }

    /// Close within `amqp.close_timeout_ms`.
    pub(crate) fn close(self) {
        let bound = self.link.closing_bound();
        drop(bound);
        drop(self.out);
    }
}
