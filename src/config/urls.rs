//! The grammar of the store URLs the configuration accepts: a Redis Cluster's seed list and the
//! database a MySQL URL names. The configuration validates them here, without reaching into a
//! store; the stores read the same functions when they connect.

/// The database named in a MySQL URL.
pub(crate) fn database_of(url: &str) -> Option<String> {
    let after = url.split("://").nth(1)?;
    let path = after.split_once('/')?.1;
    let name = path.split('?').next()?;
    (!name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .then(|| name.to_string())
}

/// The scheme of a cluster URL: `redis+cluster://[user:password@]host:port,host:port[/]`.
pub(crate) const REDIS_CLUSTER_SCHEME: &str = "redis+cluster";

/// The seed nodes a cluster URL names, each as a plain `redis://` URL carrying the same
/// credentials; `None` for anything else (a single node's URL, or a malformed list).
pub fn redis_cluster_seeds(url: &str) -> Option<Vec<String>> {
    let rest = url.strip_prefix("redis+cluster://")?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (auth, hosts) = match rest.rsplit_once('@') {
        Some((a, h)) => (format!("{a}@"), h),
        None => (String::new(), rest),
    };
    let mut nodes = Vec::new();
    for node in hosts.split(',') {
        let (host, port) = node.trim().rsplit_once(':')?;
        if host.is_empty() || host.contains(['/', '?', '@']) || port.parse::<u16>().ok()? == 0 {
            return None;
        }
        nodes.push(format!("redis://{auth}{host}:{port}/"));
    }
    Some(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_url_gives_one_seed_url_per_node_with_the_credentials() {
        assert_eq!(
            redis_cluster_seeds("redis+cluster://h1:7000,h2:7001/").unwrap(),
            ["redis://h1:7000/", "redis://h2:7001/"]
        );
        assert_eq!(
            redis_cluster_seeds("redis+cluster://u:p%40ss@10.0.0.1:7000").unwrap(),
            ["redis://u:p%40ss@10.0.0.1:7000/"]
        );
        for bad in [
            "redis://h1:7000/",
            "redis+cluster://h1",
            "redis+cluster://h1:7000,",
            "redis+cluster://h1:7000/2",
            "redis+cluster://h1:x",
            "redis+cluster://:7000",
        ] {
            assert_eq!(redis_cluster_seeds(bad), None, "{bad}");
        }
    }
}
