//! Ctrl-C (SIGINT) and SIGTERM as a flag that long-running commands poll, so they can close
//! their connections cleanly (handing unacked messages back) instead of dying mid-way.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: anything else is not async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

/// Install the handler (once per process) and return the flag it sets.
pub fn stop_flag() -> &'static AtomicBool {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: `on_signal` only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
    &STOP
}
