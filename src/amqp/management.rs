//! The broker's management API, read for the one thing AMQP cannot tell: how many file
//! handles each node has and how many it uses (every quorum queue holds some, and a node out
//! of handles crashes queues instead of refusing them). A plain HTTP/1.0 GET, so that no HTTP
//! client with a TLS stack of its own comes into the build; `http://` only.

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

fn get(base: &str, path: &str, timeout: Duration) -> Result<Vec<u8>> {
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
    write!(
        stream,
        "GET {target} HTTP/1.0\r\nHost: {host}:{port}\r\nAuthorization: Basic {auth}\r\nAccept: application/json\r\n\r\n"
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
    if status.split_whitespace().nth(1) != Some("200") {
        bail!("the management API answered '{status}'");
    }
    Ok(response[split + 4..].to_vec())
}
