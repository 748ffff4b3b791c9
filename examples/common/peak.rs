//! A process run to its end while its peak resident memory is watched (`VmHWM`, read every
//! 5 ms until it exits): the benchmarks' peak RSS figures.

use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Run `cmd` (stdout discarded, stderr kept): its exit status, wall time, peak RSS in MB and
/// what it wrote to stderr.
pub fn run_peak(mut cmd: Command) -> Result<(ExitStatus, Duration, f64, String)> {
    let t = Instant::now();
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn()?;
    // Read stderr meanwhile: a chatty child must not block on a full pipe.
    let mut stderr = child.stderr.take().context("stderr")?;
    let reading = std::thread::spawn(move || {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut err).map(|_| err)
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let status = loop {
        if let Some(hwm) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak_kb = peak_kb.max(hwm);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = t.elapsed();
    let err = reading.join().expect("the stderr reader")?;
    Ok((status, elapsed, peak_kb as f64 / 1024.0, err))
}
