//! RabbitMQ references for the benchmarks: the broker alone, and emptying queues between steps.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use attendance::config::Config;

/// Empty the department queues between steps, so the broker's memory does not grow run to run.
pub fn purge(cfg: &Config, queues: &[String]) -> Result<()> {
    let mut conn = amiquip::Connection::insecure_open(&cfg.amqp_url)?;
    let ch = conn.open_channel(None)?;
    for q in queues {
        ch.queue_purge(q)?;
    }
    conn.close()?;
    Ok(())
}

/// RabbitMQ alone: `n` persistent messages of `size` bytes, published with confirms (a window
/// of `window` outstanding) by one publisher round-robin straight into the given queues; the
/// queues are purged afterwards. Messages per second.
pub fn broker_reference(cfg: &Config, queues: &[String], n: usize, size: usize, window: usize) -> Result<f64> {
    use amiquip::{AmqpProperties, Confirm, ConfirmSmoother, Connection, Publish};
    let mut conn = Connection::insecure_open(&cfg.amqp_url)?;
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
