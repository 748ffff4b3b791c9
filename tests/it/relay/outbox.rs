//! What an outbox holds, drained by the real `relay` into the real broker: the compact records
//! the punch script writes now, entries written before them (the event's JSON), which are
//! published as they were written, and entries that are no event, which are never published
//! and never dropped: they stay in their outbox, counted as pending and named on stderr.

use crate::common;

use std::collections::HashMap;

use common::{TestEnv, AMQP_URL};
use redis::Commands;

/// Take every message of a queue (acking them): message id -> (routing key, body).
fn take(queue: &str) -> HashMap<String, (String, String)> {
    let mut conn = amiquip::Connection::insecure_open(AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    let mut out = HashMap::new();
    while let Some(g) = ch.basic_get(queue, false).unwrap() {
        let d = &g.delivery;
        let id = d.properties.message_id().clone().unwrap();
        out.insert(id, (d.routing_key.clone(), String::from_utf8(d.body.clone()).unwrap()));
        g.delivery.ack(&ch).unwrap();
    }
    conn.close().ok();
    out
}

/// An entry exactly as the script before the compact record wrote it (no `recorded_at` yet, as
/// in outboxes older still), for E000003's check-in.
const OLD_ENTRY: &str = r#"{"event_id":"7d4a1c0e-2b6f-4e8a-9c3d-5f1e2a3b4c5d","employee_id":"E000003","employee_name":"An \"old\" entry","department_id":"D001","at":"2026-11-02T08:40:00+00:00","work_date":"2026-11-02","source":"kiosk-2","kind":"out","late":false,"late_minutes":0,"early":true,"early_minutes":560,"changed":true}"#;
const OLD_ID: &str = "7d4a1c0e-2b6f-4e8a-9c3d-5f1e2a3b4c5d";

#[test]
fn relay_publishes_old_json_entries_and_new_records_alike() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.punch("E000002", "in", "2026-11-02T08:30:00", true);
    let records = env.outbox("D001");
    let (id, record) = records.iter().next().unwrap();
    assert!(!record.starts_with('{'), "a compact record, not JSON: {record}");
    let expected = attendance::render(id, record).unwrap().json;
    let _: () = env.redis().hset(env.keys().outbox("D001"), OLD_ID, OLD_ENTRY).unwrap();

    let r = env.json(&["relay", "--json"]);
    assert_eq!(r, serde_json::json!({"departments": 1, "sent": 2, "pending": 0}));
    assert!(env.outbox("D001").is_empty());
    // Straight into the department queue: the routing key is the queue's name.
    let queue = format!("{}.dept.D001", env.ns);
    let got = take(&queue);
    assert_eq!(got.len(), 2);
    assert_eq!(got[OLD_ID], (queue.clone(), OLD_ENTRY.to_string()), "as it was written");
    let (key, body) = &got[id];
    assert_eq!((key, body), (&queue, &expected));
    let ev: attendance::Event = serde_json::from_str(body).unwrap();
    assert_eq!(
        (ev.employee_id.as_str(), ev.event_id.as_str()),
        ("E000002", id.as_str())
    );
    assert_eq!(ev.at, "2026-11-02T08:30:00+00:00");
}

#[test]
fn a_malformed_outbox_entry_is_never_published_and_never_dropped() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    env.punch("E000002", "in", "2026-11-02T08:30:00", true);
    let good: Vec<String> = env.outbox("D001").into_keys().collect();
    let bad = [
        ("bad-record", "1\tE000004\tcut short"),
        ("bad-json", r#"{"event_id":"bad-json","kind":"in"}"#),
    ];
    let mut con = env.redis();
    for (id, value) in bad {
        let _: () = con.hset(env.keys().outbox("D001"), id, value).unwrap();
    }

    for _ in 0..2 {
        let err = env.fails(&["relay"], 4);
        for (id, _) in bad {
            assert!(err.contains(&format!("D001 {id}: not an event")), "{err}");
        }
        let left = env.outbox("D001");
        assert_eq!(left.len(), 2, "both stay, untouched: {left:?}");
        for (id, value) in bad {
            assert_eq!(left[id], value);
        }
    }
    let got = take(&format!("{}.dept.D001", env.ns));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        good.iter().collect::<Vec<_>>(),
        "only the event"
    );
    let o = env.run(&["relay", "--json"]);
    assert_eq!(o.status.code(), Some(4));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["sent"].as_u64(), r["pending"].as_u64()), (Some(0), Some(2)));
    assert_eq!(r["malformed"].as_array().map(Vec::len), Some(2), "{r}");
}
