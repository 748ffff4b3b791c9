//! Ctrl-C (SIGINT) and SIGTERM as a flag that long-running commands poll, so they can close
//! their connections cleanly (handing unacked messages back) instead of dying mid-way.
//! signal-hook installs the handler: it only sets the flag, which is async-signal-safe.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Install the handler (once per process) and return the flag it sets.
pub fn stop_flag() -> &'static AtomicBool {
    STOP.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            // Registering fails only for a signal that cannot be caught; these two can.
            signal_hook::flag::register(signal, Arc::clone(&flag)).expect("SIGINT and SIGTERM can be caught");
        }
        flag
    })
}

/// `r`, unless it failed because Ctrl-C or SIGTERM arrived meanwhile: then `None`, the stop
/// that was asked for rather than a failure. A read with a timeout (Redis's, the broker's) is
/// not restarted after a signal but fails with "interrupted system call"; any error while
/// `stop` is set is taken as that. An error with `stop` unset stands.
pub fn unless_stopped<T>(stop: &AtomicBool, r: anyhow::Result<T>) -> anyhow::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(_) if stop.load(Ordering::SeqCst) => Ok(None),
        Err(e) => Err(e),
    }
}
