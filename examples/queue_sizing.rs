//! What N department queues cost the broker: real open files and memory of the RabbitMQ node
//! before and after the binary declares them (the way a day does: `checkin --file` of a
//! morning declares each department's quorum queue and publishes its punches), then every
//! queue, exchange, key and the database it made are deleted again. Figures for docs/sizing.md.
//!
//! cargo build --release --bins --examples && target/release/examples/queue_sizing --departments 500
//!
//! Needs `rabbitmqctl` on the broker's host (it asks the node for its own counts). At most
//! 1,000 departments: the broker is shared.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use attendance::config::{Config, Overrides};

/// The node's own view: (real open files of its process, erlang:memory(total) in bytes,
/// quorum queues).
fn broker() -> Result<(u64, u64, u64)> {
    let eval = |expr: &str| -> Result<u64> {
        let o = Command::new("rabbitmqctl").args(["eval", expr]).output()?;
        let s = String::from_utf8_lossy(&o.stdout);
        s.trim()
            .parse()
            .with_context(|| format!("rabbitmqctl eval {expr}: {s}"))
    };
    Ok((
        eval("length(element(2, file:list_dir(\"/proc/\" ++ os:getpid() ++ \"/fd\"))).")?,
        eval("erlang:memory(total).")?,
        eval("length([Q || Q <- rabbit_amqqueue:list(), amqqueue:get_type(Q) =:= rabbit_quorum_queue]).")?,
    ))
}

fn run(bin: &Path, cfg: &Config, args: &[&str]) -> Result<()> {
    let o = Command::new(bin)
        .env("ATTENDANCE_MYSQL_URL", &cfg.mysql_url)
        .env("ATTENDANCE_NAMESPACE", &cfg.namespace)
        .env_remove("ATTENDANCE_CONFIG")
        .args(args)
        .arg("-q")
        .output()?;
    if !o.status.success() {
        bail!("attendance {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let departments: u32 = args
        .windows(2)
        .find(|w| w[0] == "--departments")
        .map_or(Ok(500), |w| w[1].parse())?;
    if !(1..=1_000).contains(&departments) {
        bail!("--departments: 1 to 1000 (the broker is shared)");
    }
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .context("no target dir")?
        .join("attendance");
    let ns = format!("qsize{}", std::process::id());
    let mut cfg = Config::load(&Overrides {
        namespace: Some(ns.clone()),
        ..Default::default()
    })?;
    cfg.mysql_url = format!("{}att_{ns}", cfg.mysql_server_url());
    let dir = std::env::temp_dir().join(&ns);
    std::fs::create_dir_all(&dir)?;
    let before = broker()?;
    let measured = declare(&bin, &cfg, &dir, departments);
    let after = broker();
    // Whatever happened, leave nothing behind.
    let depts: Vec<String> = (1..=departments).map(|d| format!("D{d:03}")).collect();
    attendance::notify::teardown(&cfg, &depts)?;
    let mut con = attendance::services::redis(&cfg)?;
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{ns}:*")).query(&mut con)?;
    for chunk in keys.chunks(500) {
        redis::cmd("DEL").arg(chunk).query::<()>(&mut con)?;
    }
    let mut server = attendance::services::mysql_server(&cfg)?;
    mysql::prelude::Queryable::query_drop(&mut server, format!("DROP DATABASE IF EXISTS att_{ns}"))?;
    std::fs::remove_dir_all(&dir).ok();
    let cleaned = broker()?;
    measured?;
    let after = after?;
    println!("| departments | quorum queues | real open files | erlang memory |");
    println!("| --- | --- | --- | --- |");
    for (what, (fds, mem, q)) in [("before", before), ("after", after), ("after cleanup", cleaned)] {
        println!("| {what} | {q} | {fds} | {:.1} MB |", mem as f64 / 1e6);
    }
    let n = departments as f64;
    println!(
        "per department queue: {:.2} open files, {:.0} KB of memory",
        (after.0 as f64 - before.0 as f64) / n,
        (after.1 as f64 - before.1 as f64) / n / 1e3
    );
    Ok(())
}

/// A roster of two employees per department, and a morning of their check-ins.
fn declare(bin: &Path, cfg: &Config, dir: &Path, departments: u32) -> Result<()> {
    let p = |name: &str| -> PathBuf { dir.join(name) };
    let s = |p: &PathBuf| p.to_str().expect("utf-8 temp dir").to_string();
    let (roster, morning) = (p("roster.csv"), p("morning.csv"));
    run(bin, cfg, &["migrate"])?;
    let (e, d) = ((departments * 2).to_string(), departments.to_string());
    run(
        bin,
        cfg,
        &[
            "org",
            "generate",
            "--employees",
            &e,
            "--departments",
            &d,
            "-o",
            &s(&roster),
        ],
    )?;
    run(bin, cfg, &["org", "import", &s(&roster)])?;
    run(bin, cfg, &["init-day"])?;
    run(
        bin,
        cfg,
        &[
            "simulate",
            "--phase",
            "morning",
            "--absent-pct",
            "0",
            "-o",
            &s(&morning),
        ],
    )?;
    run(bin, cfg, &["checkin", "--file", &s(&morning)])
}
