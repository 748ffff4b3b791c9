//! Ctrl-C (SIGINT) and SIGTERM as a flag that long-running commands poll, so they can close
//! their connections cleanly (handing unacked messages back) instead of dying mid-way.
//! signal-hook installs the handler: it only sets the flag, which is async-signal-safe.

use std::sync::atomic::AtomicBool;
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
