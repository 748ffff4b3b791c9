//! Leave the shared services as a benchmark run found them: every key of its namespace, its
//! queues and exchanges, its database. Needs `redis_refs` beside it.

use anyhow::Result;
use attendance::Config;

/// Remove what a run under `tag` made for `departments` departments (`D001`...). A quorum
/// queue full of a day's events can take the busy broker seconds to delete: the wait is longer.
pub fn remove_run(cfg: &Config, tag: &str, departments: u32) -> Result<()> {
    let mut cfg = cfg.clone();
    cfg.amqp.confirm_timeout_ms = cfg.amqp.confirm_timeout_ms.max(60_000);
    crate::redis_refs::delete_pattern(&mut attendance::Redis::open(&cfg)?, &format!("{tag}:*"))?;
    let all: Vec<String> = (1..=departments).map(|d| format!("D{d:03}")).collect();
    let broker = attendance::teardown(&cfg, &all);
    let mut server = attendance::mysql_server(&cfg)?;
    mysql::prelude::Queryable::query_drop(&mut server, format!("DROP DATABASE IF EXISTS attendance_{tag}"))?;
    broker
}
