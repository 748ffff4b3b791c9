//! The grammar of the store URLs the configuration accepts: a Redis Cluster's seed list, the
//! database a MySQL URL names and a MySQL URL's own TLS parameters. The configuration validates
//! them here, without reaching into a store; the stores read the same functions when they
//! connect.

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

/// The scheme of a cluster reached over TLS: `rediss+cluster://host:port,host:port`.
pub(crate) const REDIS_CLUSTER_TLS_SCHEME: &str = "rediss+cluster";

/// The seed nodes a cluster URL names, each as a plain `redis://` URL (`rediss://` for a
/// `rediss+cluster://` list) carrying the same credentials; `None` for anything else (a single
/// node's URL, or a malformed list).
pub fn redis_cluster_seeds(url: &str) -> Option<Vec<String>> {
    let (node_scheme, rest) = match url.strip_prefix("redis+cluster://") {
        Some(rest) => ("redis", rest),
        None => ("rediss", url.strip_prefix("rediss+cluster://")?),
    };
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
        nodes.push(format!("{node_scheme}://{auth}{host}:{port}/"));
    }
    Some(nodes)
}

/// A MySQL URL with the TLS parameters this program reads itself taken out (the mysql crate
/// refuses them as unknown), and whether they ask for TLS: `require_ssl=true|false` and
/// `ssl-mode=VERIFY_IDENTITY|DISABLED`. `Some(true)`: TLS, certificate and name verified;
/// `None`: as the crate's own parameters say (`root_cert_path=...` turns TLS on).
pub(crate) fn mysql_tls(url: &str) -> Result<(String, Option<bool>), String> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), None));
    };
    let mut tls = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let wanted = match k {
            "require_ssl" => match v {
                "true" => true,
                "false" => false,
                _ => return Err(format!("require_ssl={v}: true or false")),
            },
            "ssl-mode" | "ssl_mode" => match v.to_ascii_uppercase().as_str() {
                "VERIFY_IDENTITY" => true,
                "DISABLED" => false,
                _ => {
                    return Err(format!(
                        "{k}={v}: VERIFY_IDENTITY or DISABLED (a TLS connection here always checks the \
                         server's certificate and name)"
                    ))
                }
            },
            _ => {
                kept.push(pair);
                continue;
            }
        };
        if tls.is_some_and(|t| t != wanted) {
            return Err("require_ssl and ssl-mode disagree".to_string());
        }
        tls = Some(wanted);
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, tls))
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
        assert_eq!(
            redis_cluster_seeds("rediss+cluster://u:p@h1:7000,h2:7001").unwrap(),
            ["rediss://u:p@h1:7000/", "rediss://u:p@h2:7001/"]
        );
        for bad in [
            "redis://h1:7000/",
            "redis+cluster://h1",
            "redis+cluster://h1:7000,",
            "redis+cluster://h1:7000/2",
            "redis+cluster://h1:x",
            "redis+cluster://:7000",
            "rediss+cluster://h1",
            "redis+clusters://h1:7000",
        ] {
            assert_eq!(redis_cluster_seeds(bad), None, "{bad}");
        }
    }

    #[test]
    fn mysql_tls_parameters_are_read_and_taken_out() {
        assert_eq!(
            mysql_tls("mysql://h/db?require_ssl=true&pool_max=4").unwrap(),
            ("mysql://h/db?pool_max=4".to_string(), Some(true))
        );
        assert_eq!(
            mysql_tls("mysql://h/db?ssl-mode=disabled").unwrap(),
            ("mysql://h/db".to_string(), Some(false))
        );
        assert_eq!(
            mysql_tls("mysql://h/db?root_cert_path=/ca.pem").unwrap(),
            ("mysql://h/db?root_cert_path=/ca.pem".to_string(), None)
        );
        for bad in [
            "mysql://h/db?require_ssl=yes",
            "mysql://h/db?ssl-mode=REQUIRED",
            "mysql://h/db?require_ssl=true&ssl-mode=DISABLED",
        ] {
            assert!(mysql_tls(bad).is_err(), "{bad}");
        }
    }
}
