//! RabbitMQ references for the benchmarks: the broker alone, and emptying queues between steps.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use attendance::Config;

/// How long a reference step may wait on the broker in all: amiquip's calls have no bound of
/// their own, and a broker that accepts connections but never answers (one out of file handles,
/// say) would otherwise hold a benchmark for ever.
const BOUND: Duration = Duration::from_secs(300);

/// `f` on a thread of its own, or an error once `bound` has passed without its answer (the
/// thread is left behind: the benchmark fails and exits).
fn bounded<T: Send + 'static>(
    what: &str,
    bound: Duration,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(bound) {
        Ok(answer) => answer,
        Err(_) => bail!("RabbitMQ did not finish {what} within {} s", bound.as_secs()),
    }
}

/// `f` on a channel of a connection of its own, bounded as a whole by [`BOUND`].
fn on_channel(
    cfg: &Config,
    what: &str,
    f: impl FnOnce(&amiquip::Channel) -> Result<()> + Send + 'static,
) -> Result<()> {
    let url = cfg.amqp_url.clone();
    bounded(what, BOUND, move || {
        let mut conn = amiquip::Connection::insecure_open(&url)?;
        f(&conn.open_channel(None)?)?;
        conn.close()?;
        Ok(())
    })
}

/// Empty the department queues between steps, so the broker's memory does not grow run to run.
pub fn purge(cfg: &Config, queues: &[String]) -> Result<()> {
    let queues = queues.to_vec();
    on_channel(cfg, "purging the queues", move |ch| {
        for q in &queues {
            ch.queue_purge(q.as_str())?;
        }
        Ok(())
    })
}

/// RabbitMQ alone: `n` persistent messages of `size` bytes, published with confirms (a window
/// of `window` outstanding) by one publisher round-robin straight into the given queues; the
/// queues are purged afterwards. Messages per second.
pub fn broker_reference(cfg: &Config, queues: &[String], n: usize, size: usize, window: usize) -> Result<f64> {
    let (url, queues) = (cfg.amqp_url.clone(), queues.to_vec());
    bounded("the RabbitMQ-alone reference", BOUND, move || {
        reference_now(&url, &queues, n, size, window)
    })
}

fn reference_now(url: &str, queues: &[String], n: usize, size: usize, window: usize) -> Result<f64> {
    use amiquip::{AmqpProperties, Confirm, ConfirmSmoother, Connection, Publish};
    let mut conn = Connection::insecure_open(url)?;
    let ch = conn.open_channel(None)?;
    let rx = ch.listen_for_publisher_confirms()?;
    ch.enable_publisher_confirms()?;
    let body = vec![b'x'; size];
    let mut smoother = ConfirmSmoother::new();
    let (mut sent, mut acked) = (0usize, 0usize);
    let t = Instant::now();
    while acked < n {
        while sent < n && sent - acked < window {
            let props = AmqpProperties::default().with_delivery_mode(2);
            ch.basic_publish(
                "",
                Publish::with_properties(&body, queues[sent % queues.len()].as_str(), props),
            )?;
            sent += 1;
        }
        let raw = rx
            .recv_timeout(Duration::from_secs(30))
            .context("no confirm from RabbitMQ in 30 s")?;
        for c in smoother.process(raw) {
            match c {
                Confirm::Ack(_) => acked += 1,
                Confirm::Nack(_) => bail!("RabbitMQ nacked a reference message"),
            }
        }
    }
    let rate = n as f64 / t.elapsed().as_secs_f64();
    for q in queues {
        ch.queue_purge(q)?;
    }
    conn.close()?;
    Ok(rate)
}

/// Delete a queue (the namespace's journal, say).
#[allow(dead_code)] // only the day benchmark deletes its journal
pub fn delete_queue(cfg: &Config, queue: String) -> Result<()> {
    on_channel(cfg, "deleting a queue", move |ch| {
        ch.queue_delete(queue, amiquip::QueueDeleteOptions::default())?;
        Ok(())
    })
}
