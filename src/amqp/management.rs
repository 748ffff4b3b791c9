//! The broker's management API, for what AMQP cannot do: read how many file handles each node
//! has and uses (every quorum queue holds some, and a node out of handles crashes queues
//! instead of refusing them), and set the policy that bounds the department queues. Plain
//! HTTP/1.0, so that no HTTP client with a TLS stack of its own comes into the build;
//! `http://` only.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::error::redact;

/// One node's file handles; None until the node has collected its first figures (a node that
/// has just started answers without them).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct NodeFiles {
    pub name: String,
    pub fd_used: Option<u64>,
    pub fd_total: Option<u64>,
}

/// `GET <url>/api/nodes`, within `timeout` for the connect and for each read.
pub fn nodes(url: &str, timeout: Duration) -> Result<Vec<NodeFiles>> {
    let body = get(url, "api/nodes", timeout).with_context(|| format!("reading {}", redact(url)))?;
    serde_json::from_slice(&body).context("the management API's /api/nodes is not the expected JSON")
}

/// File handles a queue takes from the handle cache of the node that leads it (a classic queue:
/// the node that holds it), plus [`HANDLES_PER_PEER`] for each other member of a quorum queue,
/// and from each of those members. Measured (docs/sizing.md): a single node took 3 a queue
/// (1,508 for 502 queues); on a 3-node RabbitMQ 3.10.8 cluster, 203 quorum queues led by one
/// node took 1,010 of its handles (5 a queue: 3 + 2 peers) and 404 of each other member's (2 a
/// queue), read with `file_handle_cache:info([total_used])`, idle or with events in them.
pub(crate) const HANDLES_PER_LEADER: u64 = 3;
pub(crate) const HANDLES_PER_PEER: u64 = 1;
pub(crate) const HANDLES_PER_MEMBER: u64 = 2;
/// Handles a node must keep free beyond the queues: client connections, the management
/// listener, log files. Below that, new AMQP handshakes are the first to go unanswered.
pub(crate) const SPARE_HANDLES: u64 = 100;

/// The queues one node carries: those it leads (or holds, classic) and those it follows.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    pub leads: u64,
    /// The other members of the queues it leads, counted over them all.
    pub peers: u64,
    pub follows: u64,
}

impl Placement {
    /// The handles these queues take from the node's handle cache.
    pub(crate) fn handles(self) -> u64 {
        self.leads * HANDLES_PER_LEADER + self.peers * HANDLES_PER_PEER + self.follows * HANDLES_PER_MEMBER
    }

    fn add(self, o: Placement) -> Placement {
        Placement {
            leads: self.leads + o.leads,
            peers: self.peers + o.peers,
            follows: self.follows + o.follows,
        }
    }

    /// Where `queues` new queues go on each of `nodes` nodes, at worst: quorum queues' leaders
    /// balanced (the department queues' policy), a share each rounded up, every node a member
    /// of the rest; classic queues all on one node (the one a command reaches first).
    pub(crate) fn spread(queues: u64, nodes: usize, quorum: bool) -> Placement {
        if !quorum || nodes <= 1 {
            return Placement {
                leads: queues,
                ..Placement::default()
            };
        }
        let leads = queues.div_ceil(nodes as u64);
        Placement {
            leads,
            peers: leads * (nodes as u64 - 1),
            follows: queues - leads,
        }
    }
}

/// Why `node` cannot carry `placement` (the queues it has and those to come), or None when it
/// can: its handle cache must hold their handles ([`Placement::handles`]) and
/// [`SPARE_HANDLES`] more, and keep [`SPARE_HANDLES`] free now. A node that has not reported its
/// figures yet (just started) cannot tell, and is not short. `doctor` and `queues declare` judge
/// a node by this one rule.
pub(crate) fn short_of_handles(node: &NodeFiles, placement: Placement) -> Option<String> {
    let (used, total) = (node.fd_used?, node.fd_total?);
    let need = placement.handles();
    (total < need + SPARE_HANDLES || total.saturating_sub(used) < SPARE_HANDLES).then(|| {
        format!(
            "node {} has {total} file handles ({used} used); leading {} queue(s) and following {} needs about \
             {need} +{SPARE_HANDLES}",
            node.name, placement.leads, placement.follows
        )
    })
}

/// Every queue of the broker (all vhosts: a node's handles are shared by them all), as
/// `GET <url>/api/queues?columns=name,vhost,type,node,leader,members` lists it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct QueueSeat {
    pub name: String,
    #[serde(default)]
    pub vhost: String,
    /// A classic queue's node.
    #[serde(default)]
    pub node: Option<String>,
    /// A quorum queue's leader and members.
    #[serde(default)]
    pub leader: Option<String>,
    #[serde(default)]
    pub members: Option<Vec<String>>,
}

pub(crate) fn queue_seats(url: &str, timeout: Duration) -> Result<Vec<QueueSeat>> {
    let body = get(url, "api/queues?columns=name,vhost,type,node,leader,members", timeout)
        .with_context(|| format!("reading {}", redact(url)))?;
    serde_json::from_slice(&body).context("the management API's /api/queues is not the expected JSON")
}

/// The queues each node carries now: a quorum queue counts as led on its leader and followed
/// on its other members, a classic one as led on its node.
pub(crate) fn placement(seats: &[QueueSeat]) -> HashMap<String, Placement> {
    let mut by_node: HashMap<String, Placement> = HashMap::new();
    for q in seats {
        let Some(leader) = q.leader.as_ref().or(q.node.as_ref()) else {
            continue;
        };
        let others: Vec<&String> = q.members.iter().flatten().filter(|m| *m != leader).collect();
        let led = by_node.entry(leader.clone()).or_default();
        led.leads += 1;
        led.peers += others.len() as u64;
        for m in others {
            by_node.entry(m.clone()).or_default().follows += 1;
        }
    }
    by_node
}

/// Each node's placement now plus its share of `new` queues to come, judged by
/// [`short_of_handles`]: (node, its placement with the new ones, why it is short).
pub(crate) fn headroom(
    nodes: &[NodeFiles],
    now: &HashMap<String, Placement>,
    new: u64,
    quorum: bool,
) -> Vec<(String, Placement, Option<String>)> {
    let share = Placement::spread(new, nodes.len(), quorum);
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            // Classic queues all go to one node: the first.
            let add = if quorum || i == 0 { share } else { Placement::default() };
            let p = now.get(&n.name).copied().unwrap_or_default().add(add);
            (n.name.clone(), p, short_of_handles(n, p))
        })
        .collect()
}

/// `PUT <url>/api/policies/<vhost>/<name>` with `body` (a policy as the API takes it).
pub(crate) fn put_policy(
    url: &str,
    vhost: &str,
    name: &str,
    body: &serde_json::Value,
    timeout: Duration,
) -> Result<()> {
    let path = policy_path(vhost, name);
    let body = body.to_string();
    request(url, "PUT", &path, Some(&body), timeout, &["201", "204"])
        .map(drop)
        .with_context(|| format!("setting policy {name} through {}", redact(url)))
}

/// The definition of policy `name` of `vhost`, or None when there is no such policy.
pub(crate) fn policy_definition(
    url: &str,
    vhost: &str,
    name: &str,
    timeout: Duration,
) -> Result<Option<serde_json::Value>> {
    let body = request(url, "GET", &policy_path(vhost, name), None, timeout, &["200", "404"])
        .with_context(|| format!("reading policy {name} through {}", redact(url)))?;
    let policy: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    Ok(policy.get("definition").cloned())
}

/// `DELETE <url>/api/policies/<vhost>/<name>`; a policy that is not there is no error.
pub(crate) fn delete_policy(url: &str, vhost: &str, name: &str, timeout: Duration) -> Result<()> {
    request(url, "DELETE", &policy_path(vhost, name), None, timeout, &["204", "404"])
        .map(drop)
        .with_context(|| format!("removing policy {name} through {}", redact(url)))
}

fn policy_path(vhost: &str, name: &str) -> String {
    let enc = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("api/policies/{}/{}", enc(vhost), enc(name))
}

fn get(base: &str, path: &str, timeout: Duration) -> Result<Vec<u8>> {
    request(base, "GET", path, None, timeout, &["200"])
}

/// One request; an answer whose status is not in `ok` is an error naming it.
fn request(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    timeout: Duration,
    ok: &[&str],
) -> Result<Vec<u8>> {
    let url = url::Url::parse(base).context("amqp.management_url is not a URL")?;
    if url.scheme() != "http" {
        bail!("amqp.management_url: only http:// is supported");
    }
    let host = url.host_str().context("amqp.management_url names no host")?;
    let port = url.port().unwrap_or(15672);
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .context("the host name resolves to no address")?;
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let target = format!("{}/{path}", url.path().trim_end_matches('/'));
    let decode = |v: &str| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned();
    let user = if url.username().is_empty() {
        "guest".to_string()
    } else {
        decode(url.username())
    };
    let password = url.password().map_or_else(|| "guest".to_string(), decode);
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let body = body.unwrap_or_default();
    let typed = if body.is_empty() {
        String::new()
    } else {
        format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len())
    };
    write!(
        stream,
        "{method} {target} HTTP/1.0\r\nHost: {host}:{port}\r\nAuthorization: Basic {auth}\r\nAccept: application/json\r\n{typed}\r\n{body}"
    )?;
    // HTTP/1.0: the server closes the connection after the body, with no chunked encoding.
    let mut response = Vec::new();
    stream.take(16 << 20).read_to_end(&mut response)?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the answer is not HTTP")?;
    let head = String::from_utf8_lossy(&response[..split]);
    let status = head.lines().next().unwrap_or_default();
    if !status.split_whitespace().nth(1).is_some_and(|code| ok.contains(&code)) {
        bail!("the management API answered '{status}'");
    }
    Ok(response[split + 4..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(used: Option<u64>, total: Option<u64>) -> NodeFiles {
        NodeFiles {
            name: "rabbit@a".into(),
            fd_used: used,
            fd_total: total,
        }
    }

    #[test]
    fn a_node_is_judged_by_the_queues_it_leads_and_follows() {
        // The broker: 1,024 open files, 500 quorum queues to come on one node.
        let one = [node(Some(40), Some(1024))];
        let h = headroom(&one, &HashMap::new(), 500, true);
        let why = h[0].2.as_deref().unwrap();
        assert!(
            why.contains("leading 500 queue(s) and following 0 needs about 1500"),
            "{why}"
        );
        // A node alone leads with no peers (3 a queue): room for 308 and 100 more, not 309.
        assert_eq!(headroom(&one, &HashMap::new(), 308, true)[0].2, None);
        assert!(headroom(&one, &HashMap::new(), 309, true)[0].2.is_some());
        // A node without figures yet cannot tell.
        assert_eq!(headroom(&[node(None, None)], &HashMap::new(), 500, true)[0].2, None);
    }

    #[test]
    fn leaders_placed_on_one_node_cost_it_more_than_the_others() {
        let seats: Vec<QueueSeat> = (0..3)
            .map(|i| QueueSeat {
                name: format!("q{i}"),
                vhost: "/".into(),
                node: None,
                leader: Some("a".into()),
                members: Some(vec!["a".into(), "b".into(), "c".into()]),
            })
            .chain([QueueSeat {
                name: "classic".into(),
                vhost: "/".into(),
                node: Some("b".into()),
                leader: None,
                members: None,
            }])
            .collect();
        let p = placement(&seats);
        assert_eq!(
            p["a"],
            Placement {
                leads: 3,
                peers: 6,
                follows: 0
            }
        );
        assert_eq!(p["a"].handles(), 15, "5 a queue led with two other members");
        assert_eq!(
            p["b"],
            Placement {
                leads: 1,
                peers: 0,
                follows: 3
            }
        );
        assert_eq!(p["c"].handles(), 3 * HANDLES_PER_MEMBER);
        // 10 new quorum queues on 3 nodes: 4 led by each at worst, 6 followed.
        assert_eq!(
            Placement::spread(10, 3, true),
            Placement {
                leads: 4,
                peers: 8,
                follows: 6
            }
        );
        assert_eq!(
            Placement::spread(10, 3, false),
            Placement {
                leads: 10,
                peers: 0,
                follows: 0
            }
        );
        let nodes: Vec<NodeFiles> = ["a", "b", "c"]
            .iter()
            .map(|n| NodeFiles {
                name: (*n).into(),
                fd_used: Some(50),
                fd_total: Some(200),
            })
            .collect();
        let h = headroom(&nodes, &p, 10, true);
        // a: 7 led (with 14 peers), 6 followed = 47 handles; all three fit in 200.
        assert_eq!(
            h[0].1,
            Placement {
                leads: 7,
                peers: 14,
                follows: 6
            }
        );
        assert!(h.iter().all(|(_, _, short)| short.is_none()), "{h:?}");
        // 30 more: a leads 13 (26 peers) and follows 20, 105 handles +100 > 200; b, whose one
        // classic queue has no peers, 99 +100 fits, as does c.
        let h = headroom(&nodes, &p, 30, true);
        assert!(h[0].2.is_some() && h[1].2.is_none() && h[2].2.is_none(), "{h:?}");
    }
}
