//! The namespace's journal (`<ns>.journal`, a RabbitMQ stream) read straight from the broker,
//! from its first offset: how many copies of each event id it holds.

use std::collections::HashMap;
use std::time::Duration;

use amiquip::{AmqpValue, ConsumerMessage, ConsumerOptions, FieldTable};

/// Event id -> how many times the journal holds it (every message read from the first offset
/// until `idle` passes without a delivery; fences and other non-events skipped).
pub fn copies(broker: &str, ns: &str, idle: Duration) -> HashMap<String, usize> {
    let mut conn = amiquip::Connection::insecure_open(broker).unwrap();
    let ch = conn.open_channel(None).unwrap();
    ch.qos(0, 1000, false).unwrap();
    let mut args = FieldTable::default();
    args.insert("x-stream-offset".into(), AmqpValue::LongString("first".into()));
    let consumer = ch
        .basic_consume(
            format!("{ns}.journal"),
            ConsumerOptions {
                arguments: args,
                ..Default::default()
            },
        )
        .unwrap();
    let mut out: HashMap<String, usize> = HashMap::new();
    let mut wait = Duration::from_secs(5);
    while let Ok(ConsumerMessage::Delivery(d)) = consumer.receiver().recv_timeout(wait) {
        wait = idle;
        let body: serde_json::Value = serde_json::from_slice(&d.body).unwrap_or_default();
        let events = match body {
            serde_json::Value::Array(v) => v,
            one => vec![one],
        };
        for ev in events {
            if let Some(id) = ev["event_id"].as_str() {
                *out.entry(id.to_string()).or_default() += 1;
            }
        }
        consumer.ack(d).unwrap();
    }
    consumer.cancel().ok();
    conn.close().ok();
    out
}

/// The ids the journal holds more than once, with their counts.
pub fn doubled(copies: &HashMap<String, usize>) -> Vec<(&str, usize)> {
    let mut d: Vec<(&str, usize)> = copies
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, n)| (id.as_str(), *n))
        .collect();
    d.sort_unstable();
    d
}
