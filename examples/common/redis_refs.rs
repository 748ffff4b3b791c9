//! Redis references and readings shared by the benchmarks: `redis-benchmark -t hset`, the
//! EVALSHA time Redis counted (INFO commandstats), and deleting a run's keys.

use std::process::Command;

use anyhow::{Context, Result};
use attendance::Config;

/// The `redis-benchmark` options that aim it at the configured Redis: the first seed node of a
/// cluster (with `--cluster`), else the default local one.
#[allow(dead_code)] // not every benchmark has a Redis reference
pub fn benchmark_target(cfg: &Config) -> Vec<String> {
    match attendance::seed_urls(&cfg.redis_url) {
        Some(seeds) => {
            let hostport = seeds[0].trim_start_matches("redis://").trim_end_matches('/');
            let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
            let (host, port) = hostport.rsplit_once(':').expect("a seed has a port");
            vec!["-h".into(), host.into(), "-p".into(), port.into(), "--cluster".into()]
        }
        None => vec!["-h".into(), "127.0.0.1".into(), "-p".into(), "6379".into()],
    }
}

/// `redis-benchmark -t hset`: requests per second.
#[allow(dead_code)] // not every benchmark has a Redis reference
pub fn redis_benchmark(target: &[String], extra: &[&str]) -> Result<f64> {
    let o = Command::new("redis-benchmark")
        .args(target)
        .args(["-t", "hset", "-n", "200000", "-c", "50", "-q"])
        .args(extra)
        .output()
        .context("redis-benchmark is needed for the reference figures")?;
    let s = String::from_utf8_lossy(&o.stdout);
    let rps = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[1] == "requests")
        .and_then(|w| w[0].parse().ok())
        .with_context(|| format!("cannot read redis-benchmark's output: {s}"))?;
    Ok(rps)
}

/// Delete the keys of a pattern, one DEL per key (each its own slot on a cluster).
pub fn delete_pattern(con: &mut impl attendance::Keyspace, pattern: &str) -> Result<()> {
    let keys = con.scan_keys(pattern)?;
    for chunk in keys.chunks(500) {
        let mut pipe = redis::pipe();
        for k in chunk {
            pipe.del(k).ignore();
        }
        pipe.query::<()>(con)?;
    }
    Ok(())
}

/// EVALSHA calls and microseconds Redis counted since the last `CONFIG RESETSTAT` (summed over
/// the masters of a cluster). Counted server-wide: another client's EVALSHA counts too, which
/// the calls tell.
#[allow(dead_code)] // not every benchmark times scripts
pub fn evalsha_stats(con: &mut impl redis::ConnectionLike) -> Result<(u64, f64)> {
    command_stats(con, &["evalsha"])
}

/// The microseconds Redis counted in the given commands (lower case), summed over them and
/// over the masters of a cluster; server-wide, as [`evalsha_stats`].
#[allow(dead_code)] // not every benchmark times commands
pub fn command_usec(con: &mut impl redis::ConnectionLike, commands: &[&str]) -> Result<f64> {
    Ok(command_stats(con, commands)?.1)
}

/// Calls and microseconds of the given commands in INFO commandstats.
fn command_stats(con: &mut impl redis::ConnectionLike, commands: &[&str]) -> Result<(u64, f64)> {
    let mut total = (0u64, 0f64);
    for stats in attendance::info_texts(con, "commandstats")? {
        for cmd in commands {
            let prefix = format!("cmdstat_{cmd}:");
            let Some(line) = stats.lines().find_map(|l| l.strip_prefix(prefix.as_str())) else {
                continue;
            };
            for f in line.split(',') {
                if let Some(v) = f.strip_prefix("calls=") {
                    total.0 += v.parse::<u64>().unwrap_or(0);
                } else if let Some(v) = f.strip_prefix("usec=") {
                    total.1 += v.parse::<f64>().unwrap_or(0.0);
                }
            }
        }
    }
    Ok(total)
}
