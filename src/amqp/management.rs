//! The broker's management API, for what AMQP cannot do: read how many file handles each node
//! has and uses (every quorum queue holds some, and a node out of handles crashes queues
//! instead of refusing them), and set the policy that bounds the department queues. Plain
//! HTTP/1.0, so that no HTTP client with a TLS stack of its own comes into the build;
//! `http://` only.

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

/// File handles a quorum queue takes on each node, about. Seen on RabbitMQ 3.10 (issue 26): a
/// broker at 1,024 open files went to 1,506 handles used with 500 department queues, 3 a queue,
/// and jammed; `doctor` judges the nodes by the same figures. Taken for every queue, classic ones included, so
/// the check errs on the side of refusing.
pub(crate) const HANDLES_PER_QUEUE: u64 = 3;
/// Handles a node must keep free beyond the queues: client connections, the management
/// listener, log files. Below that, new AMQP handshakes are the first to go unanswered.
pub(crate) const SPARE_HANDLES: u64 = 100;

/// The names of the queues of `vhost`, from `GET <url>/api/queues/<vhost>?columns=name`.
pub(crate) fn queue_names(url: &str, vhost: &str, timeout: Duration) -> Result<std::collections::HashSet<String>> {
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    let vhost = percent_encoding::utf8_percent_encode(vhost, percent_encoding::NON_ALPHANUMERIC);
    let body = get(url, &format!("api/queues/{vhost}?columns=name"), timeout)
        .with_context(|| format!("reading {}", redact(url)))?;
    let named: Vec<Named> =
        serde_json::from_slice(&body).context("the management API's /api/queues is not the expected JSON")?;
    Ok(named.into_iter().map(|q| q.name).collect())
}

/// Why `nodes` cannot hold `new_queues` more queues, or None when every node can: each node
/// needs [`HANDLES_PER_QUEUE`] per queue, with [`SPARE_HANDLES`] to spare. A node that has not
/// reported its figures yet (just started) cannot tell, and does not refuse.
pub(crate) fn shortfall(nodes: &[NodeFiles], new_queues: u64) -> Option<String> {
    if new_queues == 0 {
        return None;
    }
    let need = new_queues * HANDLES_PER_QUEUE;
    nodes.iter().find_map(|n| {
        let (used, total) = (n.fd_used?, n.fd_total?);
        let free = total.saturating_sub(used);
        (free < need + SPARE_HANDLES).then(|| {
            format!(
                "node {} has {free} of its {total} file handles free; {new_queues} new queues need about {need} \
                 ({HANDLES_PER_QUEUE} each) +{SPARE_HANDLES}",
                n.name
            )
        })
    })
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
    fn a_node_short_of_handles_for_the_new_queues_is_named() {
        // The broker: 1,024 open files, 500 quorum queues to come.
        let why = shortfall(&[node(Some(40), Some(1024))], 500).unwrap();
        assert!(why.contains("rabbit@a has 984 of its 1024 file handles free"), "{why}");
        assert!(why.contains("500 new queues need about 1500"), "{why}");
        // Room for them and 100 more.
        assert_eq!(shortfall(&[node(Some(40), Some(1024))], 294), None);
        assert!(shortfall(&[node(Some(40), Some(1024))], 295).is_some());
        // Nothing new: nothing to refuse, even on a full node.
        assert_eq!(shortfall(&[node(Some(1000), Some(1024))], 0), None);
        // A node without figures yet cannot tell; a second node short of handles still refuses.
        assert_eq!(shortfall(&[node(None, None)], 500), None);
        assert!(shortfall(&[node(None, None), node(Some(10), Some(200))], 50).is_some());
    }
}
