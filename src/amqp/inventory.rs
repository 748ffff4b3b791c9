//! The namespace's queues as a whole: which exist and what they hold (for `doctor`),
//! declaring them all up front (`queues declare`), and emptying them all (`queues purge`,
//! which the demo runs so that no backlog outlives it).
//!
//! A passive declare of a missing queue is refused with NOT_FOUND, which closes the channel:
//! each refusal costs a fresh channel, never the connection.

use std::time::Duration;

use amiquip::{AmqpValue, Channel, Connection};
use anyhow::{Context, Result};
use serde::Serialize;

use super::connect::{Link, Target};
use super::management;
use super::topology::{self, Names, Wait};
use crate::config::Config;
use crate::error::{Error, Service};

/// What the broker holds for this namespace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BrokerState {
    /// The broker's product and version, from the connection handshake.
    pub version: String,
    /// `host:port` of the broker that answered (the first of the list that did).
    pub broker: String,
    /// Whether the events exchange exists.
    pub exchange: bool,
    /// Departments of the roster whose queue exists, and those whose queue does not.
    pub declared: usize,
    pub missing: Vec<String>,
    /// Messages waiting in the department queues that exist.
    pub messages: u64,
    /// Messages waiting in each department queue that exists.
    #[serde(skip)]
    pub depths: Vec<(String, u64)>,
    /// Messages in the parking queue (None: no parking queue yet).
    pub parked: Option<u64>,
}

/// The product and version the broker announced.
fn version(conn: &Connection) -> String {
    let prop = |k: &str| match conn.server_properties().get(k) {
        Some(AmqpValue::LongString(s)) => s.clone(),
        _ => String::new(),
    };
    format!("{} {}", prop("product"), prop("version")).trim().to_string()
}

/// How long a healthy broker may take to answer a passive declare or a purge (bounded like
/// every other wait on the broker: docs/timeouts.md).
const ANSWER_MS: u32 = 5_000;

/// A queue's message count, or None when it does not exist (the channel is then replaced).
fn count(conn: &mut Link, ch: &mut Channel, name: &str) -> Result<Option<u64>> {
    let answer = Duration::from_millis(u64::from(ANSWER_MS));
    let got = conn
        .guard()
        .within(answer, "looking up a queue", || Ok(ch.queue_declare_passive(name)))?;
    match got {
        Ok(q) => Ok(Some(u64::from(q.declared_message_count().unwrap_or(0)))),
        Err(amiquip::Error::ServerClosedChannel { code: 404, .. }) => {
            *ch = topology::open_channel(&mut *conn)?;
            Ok(None)
        }
        Err(e) => Err(Error::service(Service::Rabbitmq, e)).with_context(|| format!("looking up queue {name}")),
    }
}

/// Look up the events exchange, every department's queue and the parking queue.
pub fn broker_state(cfg: &Config, departments: &[String]) -> Result<BrokerState> {
    let names = Names::new(&cfg.namespace);
    let (mut conn, mut ch) = topology::connect(cfg, topology::open_channel)?;
    let mut state = BrokerState {
        version: version(&conn),
        broker: conn.broker().to_string(),
        ..Default::default()
    };
    state.exchange = exchange_exists(&mut conn, &mut ch, &names.events())?;
    for dept in departments {
        match count(&mut conn, &mut ch, &names.department(dept))? {
            Some(n) => {
                state.declared += 1;
                state.messages += n;
                state.depths.push((dept.clone(), n));
            }
            None => state.missing.push(dept.clone()),
        }
    }
    state.parked = count(&mut conn, &mut ch, &names.parking())?;
    drop(ch);
    conn.close();
    Ok(state)
}

/// What [`declare_missing`] did: queues looked up, and how many of them were missing and
/// declared.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Checked {
    pub looked_up: usize,
    pub declared: usize,
}

/// Declare what the broker lacks of the common topology and of the departments' queues: each
/// is looked up first (a passive declare: a lookup and the queue's counts, about half the
/// broker's work of a redeclare and its binding, which also write to the broker's metadata
/// store), and only the missing ones are declared, by [`declare`]. A queue deleted by hand is
/// declared again, with its binding; a binding removed by hand from a queue that is still
/// there is not (`queues declare` redeclares everything).
pub(crate) fn declare_missing(cfg: &Config, departments: &[String]) -> Result<Checked> {
    let names = Names::new(&cfg.namespace);
    let mut queues: Vec<String> = departments.iter().map(|d| names.department(d)).collect();
    queues.extend([names.retry(), names.parking()]);
    if cfg.journal.enabled {
        queues.push(names.journal());
    }
    let channels = DECLARE_CHANNELS.min(queues.len());
    let (mut conn, mut chans) = topology::connect(cfg, |conn| {
        (0..channels)
            .map(|_| topology::open_channel(conn))
            .collect::<Result<Vec<_>>>()
    })?;
    let mut common_missing = false;
    for x in [names.events(), names.dead_letters(), names.requeue()] {
        common_missing |= !exchange_exists(&mut conn, &mut chans[0], &x)?;
    }
    // One bound over the whole pass: arming the guard for each lookup would wake its thread
    // twice per queue, which on a busy machine costs more than the lookups.
    let bound = Duration::from_millis(u64::from(ANSWER_MS) * (1 + queues.len() as u64 / 500));
    let guard = conn.guard().clone();
    let missing = guard.within(bound, "looking up queues", || missing_queues(&mut conn, chans, &queues))?;
    conn.close();
    common_missing |= missing.iter().any(|&i| i >= departments.len());
    let missing: Vec<String> = missing
        .into_iter()
        .filter(|&i| i < departments.len())
        .map(|i| departments[i].clone())
        .collect();
    let declared = if missing.is_empty() && !common_missing {
        0
    } else {
        declare(cfg, &missing)?
    };
    Ok(Checked {
        looked_up: queues.len() + 3,
        declared,
    })
}

/// The indices of the `queues` the broker does not have, looked up on the channels at once
/// (each lookup waits for its answer, so several channels keep the broker busy). A missing
/// queue closes its channel, which is replaced.
fn missing_queues(conn: &mut Link, chans: Vec<Channel>, queues: &[String]) -> Result<Vec<usize>> {
    let per = queues.len().div_ceil(chans.len().max(1)).max(1);
    let link = std::sync::Mutex::new(conn);
    std::thread::scope(|s| {
        let lookups: Vec<_> = chans
            .into_iter()
            .zip(queues.chunks(per).enumerate())
            .map(|(mut ch, (i, part))| {
                let link = &link;
                s.spawn(move || -> Result<Vec<usize>> {
                    let mut missing = Vec::new();
                    for (j, q) in part.iter().enumerate() {
                        match ch.queue_declare_passive(q.as_str()) {
                            Ok(_) => {}
                            Err(amiquip::Error::ServerClosedChannel { code: 404, .. }) => {
                                missing.push(i * per + j);
                                let mut conn = link.lock().unwrap_or_else(|p| p.into_inner());
                                ch = topology::open_channel(&mut conn)?;
                            }
                            Err(e) => {
                                return Err(Error::service(Service::Rabbitmq, e))
                                    .with_context(|| format!("looking up queue {q}"))
                            }
                        }
                    }
                    Ok(missing)
                })
            })
            .collect();
        let mut missing = Vec::new();
        for l in lookups {
            missing.extend(l.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?);
        }
        Ok(missing)
    })
}

/// Whether an exchange exists (the channel is replaced when it does not).
fn exchange_exists(conn: &mut Link, ch: &mut Channel, name: &str) -> Result<bool> {
    let answer = Duration::from_millis(u64::from(ANSWER_MS));
    let got = conn.guard().within(answer, "looking up an exchange", || {
        Ok(ch.exchange_declare_passive(name))
    })?;
    match got {
        Ok(_) => Ok(true),
        Err(amiquip::Error::ServerClosedChannel { code: 404, .. }) => {
            *ch = topology::open_channel(&mut *conn)?;
            Ok(false)
        }
        Err(e) => Err(Error::service(Service::Rabbitmq, e)).with_context(|| format!("looking up exchange {name}")),
    }
}

/// Channels that declare at once: the broker runs each channel in its own process, so a fresh
/// broker creates several quorum queues at a time instead of one after the other.
const DECLARE_CHANNELS: usize = 4;
/// Declarations sent on a channel before waiting for the broker to have done them: the wait
/// (bounded by `amqp.confirm_timeout_ms`) then covers a known amount of work.
const DECLARE_BATCH: usize = 50;

/// Declare the exchanges, the retry and parking queues and every department's queue (a broker
/// out of file handles refuses here, not at a check-in). Returns how many department queues
/// were declared.
///
/// The common topology waits for each answer; the department queues are pipelined: on a few
/// channels at once, a batch at a time without waiting, then one passive declare per channel
/// whose answer says the batch is done (a channel's methods run in order). A refused
/// declaration (a queue declared otherwise) closes its channel, and that wait reports the
/// broker's reason, naming the queue.
pub(crate) fn declare(cfg: &Config, departments: &[String]) -> Result<usize> {
    let names = Names::new(&cfg.namespace);
    let mut queues: Vec<String> = departments.iter().map(|d| names.department(d)).collect();
    queues.extend([names.retry(), names.parking()]);
    if cfg.journal.enabled {
        queues.push(names.journal());
    }
    refuse_without_headroom(cfg, &queues)?;
    // A quorum queue's leader is placed when it is declared: the policy that spreads them must
    // be there first, whichever command declares first (`org import`, `init-day`).
    if !departments.is_empty() {
        super::limits::ensure(cfg)?;
    }
    let channels = DECLARE_CHANNELS.min(departments.len()).max(1);
    let (conn, chans) = topology::connect(cfg, |conn| {
        (0..channels)
            .map(|_| topology::open_channel(conn))
            .collect::<Result<Vec<_>>>()
    })?;
    let answer = Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    conn.guard().within(answer, "declaring the common topology", || {
        topology::declare_common(&chans[0], Wait::Answer, &names, cfg)
    })?;
    let per_channel: Vec<&[String]> = departments
        .chunks(departments.len().div_ceil(channels).max(1))
        .collect();
    let rounds = per_channel
        .iter()
        .map(|d| d.len().div_ceil(DECLARE_BATCH))
        .max()
        .unwrap_or(0);
    for round in 0..rounds {
        let batch = |depts: &&[String]| -> Vec<String> {
            depts
                .iter()
                .skip(round * DECLARE_BATCH)
                .take(DECLARE_BATCH)
                .cloned()
                .collect()
        };
        for (ch, depts) in chans.iter().zip(&per_channel) {
            for dept in batch(depts) {
                topology::declare_department(ch, Wait::NoWait, &names, &cfg.amqp, &dept)?;
            }
        }
        for (ch, depts) in chans.iter().zip(&per_channel) {
            let Some(last) = batch(depts).pop() else { continue };
            conn.guard()
                .within(answer, "declaring department queues", || {
                    Ok(ch.queue_declare_passive(names.department(&last))?)
                })
                .context("declaring department queues")?;
        }
    }
    if cfg.amqp.events_exchange {
        let bound =
            Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms) * (1 + departments.len() as u64 / 100));
        conn.guard().within(bound, "removing old bindings", || {
            topology::unbind_legacy(&chans[0], &names, cfg, departments)
        })?;
    }
    drop(chans);
    conn.close();
    Ok(departments.len())
}

/// Refuse, before declaring anything, queues the broker has no file handles for: a node out of
/// handles stops answering AMQP handshakes, for every user of the broker, until queues are
/// deleted. Only the management API tells (`amqp.management_url`: each node's handles used and
/// in all); without it, or when it does not answer, the declaration goes ahead as before. The
/// queues that already exist take no new handles, so they are counted out when the nodes are
/// short of handles for all of `queues`.
fn refuse_without_headroom(cfg: &Config, queues: &[String]) -> Result<()> {
    let Some(url) = &cfg.amqp.management_url else {
        return Ok(());
    };
    let timeout = Duration::from_millis(u64::from(cfg.amqp.connect_timeout_ms));
    let (Ok(nodes), Ok(seats)) = (management::nodes(url, timeout), management::queue_seats(url, timeout)) else {
        return Ok(());
    };
    let vhost = cfg
        .amqp_urls()
        .first()
        .and_then(|u| Target::parse(u).ok())
        .map_or_else(|| "/".to_string(), |t| t.vhost);
    let existing: std::collections::HashSet<&str> = seats
        .iter()
        .filter(|q| q.vhost == vhost)
        .map(|q| q.name.as_str())
        .collect();
    let new = queues.iter().filter(|q| !existing.contains(q.as_str())).count() as u64;
    let quorum = cfg.amqp.queue_type == crate::config::QueueType::Quorum;
    let short = management::headroom(&nodes, &management::placement(&seats), new, quorum)
        .into_iter()
        .find_map(|(_, _, short)| short);
    match short {
        None => Ok(()),
        Some(why) => Err(Error::service(
            Service::Rabbitmq,
            format!(
                "not enough file handles for the queues, nothing declared: {new} new queues need about {} more \
                 handles on a node; restart the broker with `ulimit -n 20000` (see docs/operations.md): {why}",
                management::Placement::spread(new, nodes.len(), quorum).handles()
            ),
        )
        .into()),
    }
}

/// What `queues purge` removed.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct PurgeReport {
    /// Queues that existed and were emptied.
    pub queues: usize,
    /// Messages removed from them.
    pub messages: u64,
}

/// Empty every department queue of `departments`, the retry queue and the parking queue.
/// Queues that do not exist are skipped; the topology itself stays.
pub(crate) fn purge(cfg: &Config, departments: &[String]) -> Result<PurgeReport> {
    let names = Names::new(&cfg.namespace);
    let (mut conn, mut ch) = topology::connect(cfg, topology::open_channel)?;
    let mut report = PurgeReport::default();
    let mut queues: Vec<String> = departments.iter().map(|d| names.department(d)).collect();
    queues.extend([names.retry(), names.parking()]);
    for q in queues {
        if count(&mut conn, &mut ch, &q)?.is_none() {
            continue;
        }
        let answer = Duration::from_millis(u64::from(ANSWER_MS));
        let n = conn
            .guard()
            .within(answer, "purging a queue", || Ok(ch.queue_purge(q.as_str())?))
            .with_context(|| format!("purging queue {q}"))?;
        report.queues += 1;
        report.messages += u64::from(n);
    }
    drop(ch);
    conn.close();
    Ok(report)
}
