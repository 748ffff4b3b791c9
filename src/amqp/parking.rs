//! The parking queue: how a message gets there (counting its failures from the broker's
//! `x-death` header), and listing, replaying and purging what sits there.
//!
//! A parked message keeps its body, `message_id` and headers, plus `x-att-department`,
//! `x-att-reason`, `x-att-failures` and `x-att-parked-at`.

use std::time::Duration;

use amiquip::{AmqpProperties, AmqpValue, Channel, Delivery, FieldTable, Publish};
use anyhow::Result;
use serde::Serialize;

use super::confirm::Confirming;
use super::topology::{self, Names, Wait};
use crate::config::Config;
use crate::error::{Error, Service};

/// How often the broker dead-lettered this message out of `queue` because it was rejected.
/// RabbitMQ keeps one `x-death` entry per (queue, reason) with a count, on classic and quorum
/// queues alike (3.10), which works where quorum's `x-delivery-limit` would not: that limit
/// counts requeues, and a rejected message is not requeued here but sent through retry.
pub(crate) fn rejections(d: &Delivery, queue: &str) -> u32 {
    let Some(AmqpValue::FieldArray(deaths)) = header(&d.properties, "x-death") else {
        return 0;
    };
    deaths
        .iter()
        .filter_map(|e| match e {
            AmqpValue::FieldTable(t) => Some(t),
            _ => None,
        })
        .filter(|t| text(t.get("queue")) == Some(queue) && text(t.get("reason")) == Some("rejected"))
        .filter_map(|t| number(t.get("count")))
        .sum::<i64>()
        .try_into()
        .unwrap_or(u32::MAX)
}

fn header<'a>(p: &'a AmqpProperties, key: &str) -> Option<&'a AmqpValue> {
    p.headers().as_ref()?.get(key)
}

fn text(v: Option<&AmqpValue>) -> Option<&str> {
    match v? {
        AmqpValue::LongString(s) => Some(s),
        _ => None,
    }
}

fn number(v: Option<&AmqpValue>) -> Option<i64> {
    match *v? {
        AmqpValue::LongLongInt(n) => Some(n),
        AmqpValue::LongInt(n) => Some(n.into()),
        AmqpValue::LongUInt(n) => Some(n.into()),
        AmqpValue::ShortInt(n) => Some(n.into()),
        AmqpValue::ShortUInt(n) => Some(n.into()),
        _ => None,
    }
}

/// Copy `d` to the parking queue with why and how often it failed; Ok once the broker confirmed it.
pub(crate) fn park(
    out: &mut Confirming,
    names: &Names,
    dept: &str,
    d: &Delivery,
    reason: &str,
    failures: u32,
    timeout: Duration,
) -> Result<()> {
    park_body(out, names, dept, &d.body, &d.properties, reason, failures, timeout)
}

/// An event a reader refused (`recover`'s journal read): parked with its reason, and counted.
#[derive(Debug, Clone)]
pub(crate) struct Refused {
    pub department: String,
    pub event_id: String,
    /// The event's JSON, as read.
    pub body: String,
    pub reason: String,
    /// The refusal's class (for the counts `doctor` reports).
    pub class: &'static str,
}

/// Park refused events on a connection of its own; Ok once the broker confirmed them all.
pub(crate) fn park_refused(cfg: &Config, refused: &[Refused]) -> Result<()> {
    if refused.is_empty() {
        return Ok(());
    }
    let names = Names::new(&cfg.namespace);
    let (link, mut out) = topology::connect(cfg, |conn| {
        let ch: Channel = topology::open_channel(conn)?;
        topology::declare_common(&ch, Wait::Answer, &names, cfg)?;
        ch.close().ok();
        Confirming::open(conn)
    })?;
    let timeout = Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    for r in refused {
        let props = AmqpProperties::default()
            .with_message_id(r.event_id.clone())
            .with_content_type("application/json".into());
        park_body(
            &mut out,
            &names,
            &r.department,
            r.body.as_bytes(),
            &props,
            &r.reason,
            1,
            timeout,
        )?;
    }
    drop(out);
    link.close();
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn park_body(
    out: &mut Confirming,
    names: &Names,
    dept: &str,
    body: &[u8],
    properties: &AmqpProperties,
    reason: &str,
    failures: u32,
    timeout: Duration,
) -> Result<()> {
    let mut headers = properties.headers().clone().unwrap_or_default();
    let s = |v: &str| AmqpValue::LongString(v.to_string());
    headers.insert("x-att-department".into(), s(dept));
    headers.insert("x-att-reason".into(), s(reason));
    headers.insert("x-att-failures".into(), AmqpValue::LongLongInt(failures.into()));
    headers.insert("x-att-parked-at".into(), s(&chrono::Utc::now().to_rfc3339()));
    let props = properties.clone().with_headers(headers).with_delivery_mode(2);
    let publish = Publish {
        mandatory: true,
        ..Publish::with_properties(body, names.parking(), props)
    };
    if !out.publish_and_wait("", publish, timeout)? {
        return Err(Error::service(
            Service::Rabbitmq,
            "the broker did not take the message into the parking queue",
        )
        .into());
    }
    Ok(())
}

/// A message in the parking queue.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Parked {
    pub message_id: Option<String>,
    #[serde(rename = "department_id")]
    pub department: Option<String>,
    pub routing_key: String,
    pub failures: i64,
    pub reason: String,
    #[serde(serialize_with = "crate::domain::instant::rfc3339_opt")]
    pub parked_at: Option<String>,
    /// The body as text (lossy if it is not UTF-8).
    pub body: String,
}

fn describe(d: &Delivery) -> Parked {
    let p = &d.properties;
    Parked {
        message_id: p.message_id().clone(),
        department: text(header(p, "x-att-department")).map(str::to_string),
        routing_key: d.routing_key.clone(),
        failures: number(header(p, "x-att-failures")).unwrap_or(0),
        reason: text(header(p, "x-att-reason")).unwrap_or("unknown").to_string(),
        parked_at: text(header(p, "x-att-parked-at")).map(str::to_string),
        body: String::from_utf8_lossy(&d.body).into_owned(),
    }
}

/// Which parked messages a command acts on.
#[derive(Debug, Clone)]
pub(crate) enum Select {
    All,
    /// By `message_id` (the event id).
    Ids(Vec<String>),
}

impl Select {
    fn takes(&self, p: &Parked) -> bool {
        match self {
            Select::All => true,
            Select::Ids(ids) => p.message_id.as_ref().is_some_and(|m| ids.contains(m)),
        }
    }
}

/// What `replay` or `purge` did.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct DlqReport {
    /// Messages replayed or purged.
    pub done: usize,
    /// Messages left in the parking queue.
    pub left: usize,
    /// Selected messages that could not be replayed (no department known, or not routed).
    pub failed: Vec<Parked>,
}

enum Action {
    Keep,
    Remove,
}

/// Take up to `limit` parked messages off the queue, decide on each, then hand back every
/// message kept (one nack for all, requeued in order). Nothing is lost if this dies mid-way:
/// unacked messages go back to the queue when the channel closes.
fn sweep(
    cfg: &Config,
    limit: usize,
    mut decide: impl FnMut(&mut Confirming, &Delivery, &Parked) -> Result<Action>,
) -> Result<()> {
    let svc = |e| Error::service(Service::Rabbitmq, e);
    let names = Names::new(&cfg.namespace);
    let (link, (ch, mut out)) = topology::connect(cfg, |conn| {
        let ch: Channel = topology::open_channel(conn)?;
        topology::declare_common(&ch, Wait::Answer, &names, cfg)?;
        Ok((ch, Confirming::open(conn)?))
    })?;
    let bound = link.closing_bound();
    let answer = std::time::Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    for _ in 0..limit {
        let got = link.guard().within(answer, "getting a parked message", || {
            Ok(ch.basic_get(names.parking(), false)?)
        })?;
        let Some(got) = got else {
            break;
        };
        let parked = describe(&got.delivery);
        match decide(&mut out, &got.delivery, &parked)? {
            Action::Remove => got.ack(&ch).map_err(svc)?,
            Action::Keep => {}
        }
    }
    ch.nack_all(true).map_err(svc)?;
    drop(bound);
    ch.close().ok();
    link.close();
    Ok(())
}

/// Up to `limit` parked messages, oldest first; the queue is left as it was.
pub(crate) fn list(cfg: &Config, limit: usize) -> Result<Vec<Parked>> {
    let mut found = Vec::new();
    sweep(cfg, limit, |_, _, p| {
        found.push(p.clone());
        Ok(Action::Keep)
    })?;
    Ok(found)
}

/// Drop the selected parked messages.
pub(crate) fn purge(cfg: &Config, select: &Select) -> Result<DlqReport> {
    let mut report = DlqReport::default();
    sweep(cfg, usize::MAX, |_, _, p| {
        Ok(if select.takes(p) {
            report.done += 1;
            Action::Remove
        } else {
            report.left += 1;
            Action::Keep
        })
    })?;
    Ok(report)
}

/// A replay's objection to a parked message (its body): the reason it stays parked, if any.
pub(crate) type Refuse<'a> = dyn FnMut(&Parked, &[u8]) -> Result<Option<String>> + 'a;

/// Put the selected parked messages back on their department's queue with a clean failure
/// count (no `x-death`, no `x-att-*` but `x-att-replays`), confirmed before they leave parking.
/// One `refuse` objects to (its reason) stays parked, listed in `failed` with that reason.
pub(crate) fn replay(cfg: &Config, select: &Select, refuse: &mut Refuse<'_>) -> Result<DlqReport> {
    let names = Names::new(&cfg.namespace);
    let timeout = Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    let mut report = DlqReport::default();
    sweep(cfg, usize::MAX, |out, d, p| {
        if !select.takes(p) {
            report.left += 1;
            return Ok(Action::Keep);
        }
        if let Some(reason) = refuse(p, &d.body)? {
            report.left += 1;
            report.failed.push(Parked { reason, ..p.clone() });
            return Ok(Action::Keep);
        }
        let routed = match &p.department {
            Some(dept) => {
                topology::declare_department(&out.channel, Wait::Answer, &names, &cfg.amqp, dept)?;
                let publish = Publish {
                    mandatory: true,
                    ..Publish::with_properties(&d.body, dept.as_str(), replay_properties(&d.properties))
                };
                out.publish_and_wait(&names.requeue(), publish, timeout)?
            }
            None => false,
        };
        if routed {
            report.done += 1;
            Ok(Action::Remove)
        } else {
            report.left += 1;
            report.failed.push(p.clone());
            Ok(Action::Keep)
        }
    })?;
    Ok(report)
}

fn replay_properties(p: &AmqpProperties) -> AmqpProperties {
    let old = p.headers().clone().unwrap_or_default();
    let replays = number(old.get("x-att-replays")).unwrap_or(0) + 1;
    let mut headers: FieldTable = old
        .into_iter()
        .filter(|(k, _)| {
            !k.starts_with("x-att-")
                && !k.starts_with("x-death")
                && !k.starts_with("x-first-death")
                && !k.starts_with("x-last-death")
        })
        .collect();
    headers.insert("x-att-replays".into(), AmqpValue::LongLongInt(replays));
    p.clone().with_headers(headers)
}
