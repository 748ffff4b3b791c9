//! Each timed step starts on an idle broker: a quorum queue confirms a message once it is in its
//! write-ahead log and writes its segment files afterwards, so after a bulk of a million events
//! RabbitMQ keeps one of this machine's two cores busy for about half a minute. A step timed in
//! that window (the next bulk, settle) shares the machine with the previous step's leftovers,
//! which in production come hours apart. Only a broker on this machine is watched.

use std::time::{Duration, Instant};

/// A broker under this share of one core is idle enough.
const QUIET: f64 = 0.15;

/// Wait (at most `max`) until the local RabbitMQ uses less than [`QUIET`] of a core over
/// half a second: how long it took, or `None` when no local broker process was found.
pub fn wait_for_quiet_broker(max: Duration) -> Option<Duration> {
    let pid = local_broker()?;
    let t = Instant::now();
    let window = Duration::from_millis(500);
    while t.elapsed() < max {
        let before = cpu_secs(pid)?;
        std::thread::sleep(window);
        let busy = (cpu_secs(pid)? - before) / window.as_secs_f64();
        if busy < QUIET {
            break;
        }
    }
    Some(t.elapsed())
}

/// CPU seconds the local RabbitMQ node has used so far, if one is found.
#[allow(dead_code)] // not every benchmark reads it
pub fn broker_cpu_secs() -> Option<f64> {
    cpu_secs(local_broker()?)
}

/// The pid of a local RabbitMQ node (its Erlang VM, `beam.smp`, running `rabbit`): the one
/// started first, the machine's own, when tests have started brokers of their own since.
fn local_broker() -> Option<u32> {
    let started = |pid: u32| -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 2..].split(' ').nth(19)?.parse().ok()
    };
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd);
            (cmd.contains("beam.smp") && cmd.contains("rabbit")).then_some((started(pid)?, pid))
        })
        .min()
        .map(|(_, pid)| pid)
}

/// The process's user and system CPU time so far, in seconds.
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: the fields counted after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}
