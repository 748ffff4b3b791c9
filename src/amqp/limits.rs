//! The bound on the department queues (`amqp.queue_max_length`, `amqp.queue_max_age_hours`),
//! kept as a broker policy rather than as queue arguments: a queue declared with other
//! arguments than it has is refused (PRECONDITION_FAILED), so limits as arguments could never
//! change on a queue that exists, whereas a policy applies to existing and future queues alike
//! and can change at any time (docs/notifications.md#bounded-queues).
//!
//! The same policy spreads the quorum queues' leaders over the cluster's nodes
//! (`queue-leader-locator: balanced`; RabbitMQ 3.10 takes it as a policy key and as the queue
//! argument `x-queue-leader-locator`). As an argument it would make every existing queue's
//! redeclaration fail; as a policy it places each queue declared after it is set (one policy
//! applies to a queue, so the limits and the placement share this one). Every command that
//! declares department queues in bulk (`queues declare`, `org import`, `init-day`) sets it
//! first when `amqp.management_url` is configured ([`ensure`]). Queues declared before keep
//! their leader until `rabbitmq-queues rebalance quorum` moves them (`doctor` says so).
//!
//! Past the length the oldest events are dropped (`overflow: drop-head`); past the age they
//! expire. Either way the queue dead-letters them through the retry queue once; back at their
//! department queue, the broker sees a cycle with no rejection in it and drops them for good.

use std::time::Duration;

use anyhow::Result;
use serde_json::{json, Value};

use super::connect::Target;
use super::management;
use crate::config::Config;

/// What the department queues of a namespace are bounded by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The policy's name, `<ns>.dept-limits`.
    pub name: String,
    /// The regular expression of the department queues' names.
    pub pattern: String,
    pub vhost: String,
    /// The policy's definition; None when both limits are 0 (no policy).
    pub definition: Option<Value>,
}

impl Limits {
    pub(crate) fn of(cfg: &Config) -> Limits {
        let vhost = cfg
            .amqp_urls()
            .first()
            .and_then(|u| Target::parse(u).ok())
            .map_or_else(|| "/".to_string(), |t| t.vhost);
        Limits {
            name: format!("{}.dept-limits", cfg.namespace),
            pattern: format!("^{}\\.dept\\.", escape(&cfg.namespace)),
            vhost,
            definition: definition(
                cfg.amqp.queue_max_length,
                cfg.amqp.queue_max_age_hours,
                cfg.amqp.queue_type == crate::config::QueueType::Quorum,
            ),
        }
    }

    /// The command an administrator runs to set (or, with no limits, clear) the policy.
    pub(crate) fn rabbitmqctl(&self) -> String {
        match &self.definition {
            Some(d) => format!(
                "rabbitmqctl set_policy -p '{}' --apply-to queues '{}' '{}' '{d}'",
                self.vhost, self.name, self.pattern
            ),
            None => format!("rabbitmqctl clear_policy -p '{}' '{}'", self.vhost, self.name),
        }
    }

    /// The policy as the management API takes it.
    fn body(&self, definition: &Value) -> Value {
        json!({ "pattern": self.pattern, "definition": definition, "priority": 0, "apply-to": "queues" })
    }
}

/// The policy's definition for these limits (and, for quorum queues, their leaders spread over
/// the nodes), or None when there is nothing to set.
fn definition(max_length: u32, max_age_hours: u32, quorum: bool) -> Option<Value> {
    let mut d = serde_json::Map::new();
    if quorum {
        // Each new queue's leader on the node that leads the fewest: not every leader on the
        // first node of `amqp_url`, which every command reaches first (docs/sizing.md).
        d.insert("queue-leader-locator".into(), json!("balanced"));
    }
    if max_length > 0 {
        d.insert("max-length".into(), json!(max_length));
        // The default, written out: the oldest event goes, a new one is always taken (a
        // publish refused for a full queue would leave its event in the outbox for ever).
        d.insert("overflow".into(), json!("drop-head"));
    }
    if max_age_hours > 0 {
        d.insert("message-ttl".into(), json!(u64::from(max_age_hours) * 3_600_000));
    }
    (!d.is_empty()).then_some(Value::Object(d))
}

/// A namespace as a literal in a regular expression.
fn escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// How the limits reached the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Applied {
    /// Set (or cleared) through the management API.
    Managed,
    /// No `amqp.management_url`: the administrator runs this command.
    ByHand(String),
    /// No limits configured and no management API: nothing to do.
    Unbounded,
}

/// Set the policy through the management API when `amqp.management_url` is configured (a
/// failure is an error: the operator asked for limits); otherwise say the command to run.
pub(crate) fn apply(cfg: &Config) -> Result<Applied> {
    let limits = Limits::of(cfg);
    let Some(url) = &cfg.amqp.management_url else {
        if limits.definition.is_none() {
            return Ok(Applied::Unbounded);
        }
        return Ok(Applied::ByHand(limits.rabbitmqctl()));
    };
    let timeout = Duration::from_millis(u64::from(cfg.amqp.connect_timeout_ms));
    match &limits.definition {
        Some(d) => management::put_policy(url, &limits.vhost, &limits.name, &limits.body(d), timeout)?,
        None => management::delete_policy(url, &limits.vhost, &limits.name, timeout)?,
    }
    Ok(Applied::Managed)
}

/// Make sure the policy is on the broker before department queues are declared, through the
/// management API when `amqp.management_url` is configured (one read; a write only when it
/// differs or is missing). Without the API there is nothing this can do: `doctor` names the
/// leaders piled on one node and the command that spreads them. A failure is an error: queues
/// declared without the policy would keep their leaders where they land.
pub(crate) fn ensure(cfg: &Config) -> Result<()> {
    match in_force(cfg) {
        InForce::Same | InForce::Unknown(None) => Ok(()),
        InForce::Differs { .. } => apply(cfg).map(drop),
        InForce::Unknown(Some(e)) => Err(e),
    }
}

/// Whether the broker's policy is the configuration's, as `doctor` sees it.
#[derive(Debug)]
pub(crate) enum InForce {
    /// The policy on the broker is the configuration's (or neither has one).
    Same,
    /// It differs, or is missing: `queues declare` has not run since the limits changed.
    Differs {
        on_broker: Option<Value>,
        configured: Option<Value>,
    },
    /// No management API to ask (or it did not answer: why, for the caller to word).
    Unknown(Option<anyhow::Error>),
}

/// Read the policy through the management API and compare it with the configuration.
pub(crate) fn in_force(cfg: &Config) -> InForce {
    let limits = Limits::of(cfg);
    let Some(url) = &cfg.amqp.management_url else {
        return InForce::Unknown(None);
    };
    let timeout = Duration::from_millis(u64::from(cfg.amqp.connect_timeout_ms));
    match management::policy_definition(url, &limits.vhost, &limits.name, timeout) {
        Ok(on_broker) if on_broker == limits.definition => InForce::Same,
        Ok(on_broker) => InForce::Differs {
            on_broker,
            configured: limits.definition,
        },
        Err(e) => InForce::Unknown(Some(e)),
    }
}

/// Remove the policy through the management API (`queues delete`); without one, the command
/// that does.
pub(crate) fn remove(cfg: &Config) -> Result<Applied> {
    let limits = Limits::of(cfg);
    let Some(url) = &cfg.amqp.management_url else {
        return Ok(Applied::ByHand(format!(
            "rabbitmqctl clear_policy -p '{}' '{}'",
            limits.vhost, limits.name
        )));
    };
    let timeout = Duration::from_millis(u64::from(cfg.amqp.connect_timeout_ms));
    management::delete_policy(url, &limits.vhost, &limits.name, timeout)?;
    Ok(Applied::Managed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_for_the_limits_set_and_none_without() {
        assert_eq!(definition(0, 0, false), None);
        assert_eq!(
            definition(500, 0, false),
            Some(json!({ "max-length": 500, "overflow": "drop-head" }))
        );
        assert_eq!(definition(0, 48, false), Some(json!({ "message-ttl": 172_800_000u64 })));
        assert_eq!(
            definition(0, 0, true),
            Some(json!({ "queue-leader-locator": "balanced" }))
        );
    }

    #[test]
    fn the_pattern_matches_only_the_namespace_department_queues() {
        assert_eq!(escape("a.b-c"), "a\\.b-c");
        let mut cfg = Config {
            namespace: "acme.x".into(),
            ..Default::default()
        };
        cfg.amqp.queue_max_length = 10;
        cfg.amqp.queue_max_age_hours = 0;
        cfg.amqp.queue_type = crate::config::QueueType::Classic;
        let l = Limits::of(&cfg);
        assert_eq!(l.pattern, "^acme\\.x\\.dept\\.");
        assert_eq!(
            l.rabbitmqctl(),
            "rabbitmqctl set_policy -p '/' --apply-to queues 'acme.x.dept-limits' '^acme\\.x\\.dept\\.' \
             '{\"max-length\":10,\"overflow\":\"drop-head\"}'"
        );
    }
}
