//! `doctor`'s view of where the quorum queues' leaders sit: a quorum queue's leader is placed
//! once, when it is declared, so queues declared before the policy that spreads them
//! (`queue-leader-locator: balanced`, see `amqp/limits.rs`) keep whatever node they landed on,
//! usually the first of `amqp_url`, which then carries every leader's files and traffic. Every
//! quorum queue of the broker counts: that is the load a node carries, what the balanced
//! locator and `rabbitmq-queues rebalance quorum` even out.

use std::collections::BTreeMap;

use super::verdict::{check, Check, Level};
use crate::amqp::management::{NodeFiles, QueueSeat};

/// The quorum queues' leaders per node of `nodes`, most first.
fn leaders(nodes: &[NodeFiles], seats: &[QueueSeat]) -> Vec<(String, usize)> {
    let mut led: BTreeMap<&str, usize> = nodes.iter().map(|n| (n.name.as_str(), 0)).collect();
    for q in seats {
        if let Some(l) = &q.leader {
            *led.entry(l.as_str()).or_default() += 1;
        }
    }
    let mut led: Vec<(String, usize)> = led.into_iter().map(|(n, c)| (n.to_string(), c)).collect();
    led.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    led
}

/// Ok while no node leads more than its share (rounded up) plus a half and one: queues come and
/// go, and the broker's balanced placement, counting leaders as declarations arrive on several
/// channels at once, leaves a node a few past its share (12 queues on 3 nodes came out [2, 6,
/// 4]). What the warning is for is leaders piled up, e.g. all of them on one node. A warning
/// otherwise, naming the node and the command that spreads them.
pub(super) fn verdict(nodes: &[NodeFiles], seats: &[QueueSeat]) -> Check {
    let led = leaders(nodes, seats);
    let total: usize = led.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = led.iter().map(|(node, n)| format!("{node} {n}")).collect();
    if total == 0 || led.len() < 2 {
        return check(
            "queue leaders",
            Level::Ok,
            format!("{total} quorum queue leader(s) on {} node(s)", led.len()),
        );
    }
    let share = total.div_ceil(led.len());
    let (top, most) = (&led[0].0, led[0].1);
    if most <= share + share / 2 + 1 {
        return check(
            "queue leaders",
            Level::Ok,
            format!("quorum queue leaders spread: {}", parts.join(", ")),
        );
    }
    check(
        "queue leaders",
        Level::Warn,
        format!(
            "{most} of {total} quorum queue leaders on {top} (a share is {share}): queues declared before the \
             leaders' policy keep their leaders; run `rabbitmq-queues rebalance quorum` on a node to spread them ({})",
            parts.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> NodeFiles {
        NodeFiles {
            name: name.into(),
            fd_used: None,
            fd_total: None,
        }
    }

    fn seat(name: &str, leader: &str) -> QueueSeat {
        serde_json::from_value(serde_json::json!({ "name": name, "vhost": "/", "leader": leader })).unwrap()
    }

    #[test]
    fn leaders_piled_on_one_node_are_a_warning_naming_the_rebalance() {
        let nodes = [node("a"), node("b"), node("c")];
        let piled: Vec<QueueSeat> = (0..9).map(|i| seat(&format!("att.dept.D{i}"), "a")).collect();
        let v = verdict(&nodes, &piled);
        assert_eq!(v.status, Level::Warn, "{}", v.detail);
        assert!(v.detail.contains("9 of 9 quorum queue leaders on a"), "{}", v.detail);
        assert!(v.detail.contains("rabbitmq-queues rebalance quorum"), "{}", v.detail);
        let spread: Vec<QueueSeat> = (0..9)
            .map(|i| seat(&format!("att.dept.D{i}"), ["a", "b", "c"][i % 3]))
            .chain([seat("other.dept.X", "a"), seat("att.retry", "b")])
            .collect();
        assert_eq!(verdict(&nodes, &spread).status, Level::Ok);
        // Uneven as concurrent declarations leave it, not piled: ok.
        let uneven: Vec<QueueSeat> = (0..12)
            .map(|i| {
                seat(
                    &format!("att.dept.D{i}"),
                    if i < 2 {
                        "a"
                    } else if i < 8 {
                        "b"
                    } else {
                        "c"
                    },
                )
            })
            .collect();
        assert_eq!(verdict(&nodes, &uneven).status, Level::Ok);
        // Two thirds on one node is piled.
        let heavy: Vec<QueueSeat> = (0..12)
            .map(|i| seat(&format!("att.dept.D{i}"), if i < 8 { "a" } else { ["b", "c"][i % 2] }))
            .collect();
        assert_eq!(verdict(&nodes, &heavy).status, Level::Warn);
    }
}
