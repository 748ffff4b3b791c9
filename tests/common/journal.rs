//! The namespace's journal (`<ns>.journal`, a RabbitMQ stream) read straight from the broker,
//! from its first offset: how many copies of each event id it holds.

use std::collections::HashMap;
use std::time::Duration;

use amiquip::{AmqpValue, ConsumerMessage, ConsumerOptions, FieldTable};

/// Every event of the namespace's journal, in order: each message read from the first offset
/// until `idle` passes without a delivery, a message of several events giving each (a message
/// that is not JSON, a fence, gives nothing).
pub fn events(broker: &str, ns: &str, idle: Duration) -> Vec<serde_json::Value> {
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
    let mut out = Vec::new();
    let mut wait = Duration::from_secs(5);
    while let Ok(ConsumerMessage::Delivery(d)) = consumer.receiver().recv_timeout(wait) {
        wait = idle;
        match serde_json::from_slice(&d.body).unwrap_or_default() {
            serde_json::Value::Array(v) => out.extend(v),
            serde_json::Value::Null => {}
            one => out.push(one),
        }
        consumer.ack(d).unwrap();
    }
    consumer.cancel().ok();
    conn.close().ok();
    out
}

/// Event id -> how many times the journal holds it (fences and other non-events skipped).
pub fn copies(broker: &str, ns: &str, idle: Duration) -> HashMap<String, usize> {
    let mut out: HashMap<String, usize> = HashMap::new();
    for ev in events(broker, ns, idle) {
        if let Some(id) = ev["event_id"].as_str() {
            *out.entry(id.to_string()).or_default() += 1;
        }
    }
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
