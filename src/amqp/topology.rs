//! AMQP names, connections and the topology every notification command declares before use.
//!
//! Declaring is idempotent: the broker accepts a redeclare with the same arguments, so every
//! command declares what it touches instead of relying on an install step. A redeclare with
//! other arguments (a changed `amqp.queue_type` or `amqp.retry_delay_ms`) is refused by the
//! broker (PRECONDITION_FAILED, exit 3): delete the old queues first (see docs/notifications.md).

use amiquip::{
    AmqpValue, Channel, Connection, ExchangeDeclareOptions, ExchangeType, FieldTable, QueueDeclareOptions,
    QueueDeleteOptions,
};
use anyhow::{Context, Result};

use super::connect::Link;
use crate::config::{AmqpSettings, Config, JournalSettings, QueueType};
use crate::error::{Error, Service};

/// Every AMQP name of one namespace; all start with `<ns>.`.
#[derive(Debug, Clone)]
pub struct Names {
    ns: String,
}

impl Names {
    pub fn new(namespace: &str) -> Names {
        Names {
            ns: namespace.to_string(),
        }
    }
    /// Topic exchange for other teams' queues, routing key `<dept>.<kind>`; events are published
    /// there only with `amqp.events_exchange` on (department queues get theirs directly).
    pub fn events(&self) -> String {
        format!("{}.events", self.ns)
    }
    /// Fanout exchange that department queues dead-letter to; feeds the retry queue.
    pub fn dead_letters(&self) -> String {
        format!("{}.dlx", self.ns)
    }
    /// Queue where a rejected message waits `retry_delay_ms` before going back.
    pub fn retry(&self) -> String {
        format!("{}.retry", self.ns)
    }
    /// Direct exchange that takes a message back to one department queue (routing key = dept id).
    /// Retries and `dlq replay` use it, so other teams' queues on `events` never see a retry.
    pub fn requeue(&self) -> String {
        format!("{}.requeue", self.ns)
    }
    /// Queue of messages that failed `max_retries` times.
    pub fn parking(&self) -> String {
        format!("{}.parking", self.ns)
    }
    /// Stream queue keeping every event for `journal.max_age_days`, read by `recover`.
    pub fn journal(&self) -> String {
        format!("{}.journal", self.ns)
    }
    /// A department's queue.
    pub fn department(&self, dept: &str) -> String {
        format!("{}.dept.{dept}", self.ns)
    }
    /// The department a department queue's name names.
    pub fn department_of<'a>(&self, queue: &'a str) -> Option<&'a str> {
        queue.strip_prefix(&self.ns)?.strip_prefix(".dept.")
    }
}

/// Open a connection to the first broker of `amqp_url` that answers and set it up (channels,
/// confirms, declarations) within the configured connect timeout, per broker; none reachable
/// = exit 3. The setup is part of the call so that no caller can forget to bound it (or leave
/// the connect deadline armed over its real work); it runs again on the next broker if one
/// fails it.
pub(crate) fn connect<T>(cfg: &Config, setup: impl FnMut(&mut Connection) -> Result<T>) -> Result<(Link, T)> {
    super::connect::open(&cfg.amqp_urls(), &cfg.amqp, setup)
}

/// A channel on `conn`, wrapped as a RabbitMQ error.
pub(crate) fn open_channel(conn: &mut Connection) -> Result<Channel> {
    conn.open_channel(None)
        .map_err(|e| Error::service(Service::Rabbitmq, e).into())
}

fn args(pairs: &[(&str, AmqpValue)]) -> FieldTable {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn queue_type(s: &AmqpSettings) -> AmqpValue {
    AmqpValue::LongString(
        match s.queue_type {
            QueueType::Quorum => "quorum",
            QueueType::Classic => "classic",
        }
        .into(),
    )
}

/// How to declare: waiting for each answer (a refusal is reported with its reason), or
/// pipelined without answers (a refusal closes the channel, and the publish that follows on
/// it fails, so nothing is lost; used on the check-in's hot path, where ten round trips to the
/// broker would cost more than the rest of the check-in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    Answer,
    NoWait,
}

fn durable_queue(ch: &Channel, w: Wait, name: &str, arguments: FieldTable) -> Result<()> {
    let opts = QueueDeclareOptions {
        durable: true,
        arguments,
        ..Default::default()
    };
    match w {
        Wait::Answer => ch.queue_declare(name, opts).map(drop),
        Wait::NoWait => ch.queue_declare_nowait(name, opts).map(drop),
    }
    .map_err(|e| Error::service(Service::Rabbitmq, e))
    .with_context(|| format!("declaring queue {name}"))
}

fn durable_exchange(ch: &Channel, w: Wait, kind: ExchangeType, name: &str) -> Result<()> {
    let opts = ExchangeDeclareOptions {
        durable: true,
        ..Default::default()
    };
    match w {
        Wait::Answer => ch.exchange_declare(kind, name, opts).map(drop),
        Wait::NoWait => ch.exchange_declare_nowait(kind, name, opts).map(drop),
    }
    .map_err(|e| Error::service(Service::Rabbitmq, e))
    .with_context(|| format!("declaring exchange {name}"))
}

fn bind(ch: &Channel, w: Wait, queue: &str, exchange: &str, key: &str) -> Result<()> {
    match w {
        Wait::Answer => ch.queue_bind(queue, exchange, key, FieldTable::new()),
        Wait::NoWait => ch.queue_bind_nowait(queue, exchange, key, FieldTable::new()),
    }
    .map_err(|e| Error::service(Service::Rabbitmq, e))
    .with_context(|| format!("binding {queue} to {exchange} with '{key}'"))
}

/// The exchanges, the retry queue, the parking queue and the journal (unless turned off).
pub(crate) fn declare_common(ch: &Channel, w: Wait, names: &Names, cfg: &Config) -> Result<()> {
    declare_common_of(ch, w, names, &cfg.amqp, &cfg.journal)
}

/// [`declare_common`] from the two settings it reads.
pub(crate) fn declare_common_of(
    ch: &Channel,
    w: Wait,
    names: &Names,
    s: &AmqpSettings,
    j: &JournalSettings,
) -> Result<()> {
    durable_exchange(ch, w, ExchangeType::Topic, &names.events())?;
    durable_exchange(ch, w, ExchangeType::Fanout, &names.dead_letters())?;
    durable_exchange(ch, w, ExchangeType::Direct, &names.requeue())?;
    // A rejected message waits here for the TTL, then dead-letters (keeping its routing key,
    // the department id set by the department queue) back through `requeue`.
    durable_queue(
        ch,
        w,
        &names.retry(),
        args(&[
            ("x-queue-type", queue_type(s)),
            ("x-message-ttl", AmqpValue::LongInt(s.retry_delay_ms as i32)),
            ("x-dead-letter-exchange", AmqpValue::LongString(names.requeue())),
        ]),
    )?;
    bind(ch, w, &names.retry(), &names.dead_letters(), "")?;
    durable_queue(ch, w, &names.parking(), args(&[("x-queue-type", queue_type(s))]))?;
    declare_journal(ch, w, names, j)
}

/// The journal: a stream (an append-only log the broker keeps on disk, replicated on a cluster,
/// read from any point without being consumed away). Publishers write every event there, in
/// batches, and an event leaves its outbox only once its batch is confirmed too. Age-based
/// retention only: a day's events must all stay for `recover`, however many there were.
pub(crate) fn declare_journal(ch: &Channel, w: Wait, names: &Names, j: &JournalSettings) -> Result<()> {
    if !j.enabled {
        return Ok(());
    }
    durable_queue(
        ch,
        w,
        &names.journal(),
        args(&[
            ("x-queue-type", AmqpValue::LongString("stream".into())),
            ("x-max-age", AmqpValue::LongString(format!("{}D", j.max_age_days))),
        ]),
    )
}

/// One department's queue, bound to requeue (`<dept>`): events come straight to it through the
/// default exchange.
pub(crate) fn declare_department(ch: &Channel, w: Wait, names: &Names, s: &AmqpSettings, dept: &str) -> Result<()> {
    let q = names.department(dept);
    // Dead letters carry the department id as routing key, whatever key the message came with
    // (even one published straight to the queue), so the retry finds its way back.
    durable_queue(
        ch,
        w,
        &q,
        args(&[
            ("x-queue-type", queue_type(s)),
            ("x-dead-letter-exchange", AmqpValue::LongString(names.dead_letters())),
            ("x-dead-letter-routing-key", AmqpValue::LongString(dept.to_string())),
        ]),
    )?;
    bind(ch, w, &q, &names.requeue(), dept)?;
    Ok(())
}

/// Remove what versions before direct publishing bound to `<ns>.events`: each department
/// queue (`<dept>.*`) and the journal (`#`). Harmless while nothing is published there; with
/// `amqp.events_exchange` on, they would get every event twice. Unbinding a binding that does
/// not exist is accepted by the broker, so this is idempotent; it waits for each answer (AMQP
/// has no unbind without one), so it runs only where the feed is on.
pub(crate) fn unbind_legacy(ch: &Channel, names: &Names, cfg: &Config, departments: &[String]) -> Result<()> {
    let unbind = |q: String, key: String| {
        ch.queue_unbind(q.as_str(), names.events(), key.as_str(), FieldTable::new())
            .map_err(|e| Error::service(Service::Rabbitmq, e))
            .with_context(|| format!("unbinding {q} from {} ('{key}')", names.events()))
    };
    if cfg.journal.enabled {
        unbind(names.journal(), "#".into())?;
    }
    for d in departments {
        unbind(names.department(d), format!("{d}.*"))?;
    }
    Ok(())
}

/// Delete every exchange and queue of the namespace: the common ones and the given
/// departments' queues. For tests and for moving to another queue type.
pub fn teardown(cfg: &Config, departments: &[String]) -> Result<()> {
    let names = Names::new(&cfg.namespace);
    let (link, ch) = connect(cfg, open_channel)?;
    let answer = std::time::Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    let guard = link.guard().clone();
    let bound = link.closing_bound();
    let mut queues: Vec<String> = departments.iter().map(|d| names.department(d)).collect();
    queues.extend([names.retry(), names.parking(), names.journal()]);
    for q in queues {
        guard.within(answer, "deleting a queue", || {
            Ok(ch.queue_delete(q, QueueDeleteOptions::default())?)
        })?;
    }
    for x in [names.events(), names.dead_letters(), names.requeue()] {
        guard.within(answer, "deleting an exchange", || Ok(ch.exchange_delete(x, false)?))?;
    }
    drop(bound);
    drop(ch);
    link.close();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_under_the_namespace() {
        let n = Names::new("acme");
        for name in [
            n.events(),
            n.dead_letters(),
            n.retry(),
            n.requeue(),
            n.parking(),
            n.journal(),
            n.department("D7"),
        ] {
            assert!(name.starts_with("acme."), "{name}");
        }
        assert_eq!(n.department_of(&n.department("D7")), Some("D7"));
        assert_eq!(n.department_of("other.dept.D7"), None);
    }
}
