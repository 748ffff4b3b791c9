//! Ctrl-C (SIGINT) and SIGTERM as a flag that long-running commands poll, so they can close
//! their connections cleanly (handing unacked messages back) instead of dying mid-way.
//! signal-hook installs the handler: it only sets the flag, which is async-signal-safe.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Install the handler (once per process) and return the flag it sets.
pub(crate) fn stop_flag() -> &'static AtomicBool {
    STOP.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            // Registering fails only for a signal that cannot be caught; these two can.
            signal_hook::flag::register(signal, Arc::clone(&flag)).expect("SIGINT and SIGTERM can be caught");
        }
        flag
    })
}

/// Run `f` with SIGINT and SIGTERM held back on this thread: a step that must not be cut in
/// the middle by the "interrupted system call" a signal makes of a read with a timeout (a
/// watcher's show, remember, ack). The kernel hands the signal to another thread of the
/// process, or keeps it pending until `f` is done; either way the flag is set then.
pub(crate) fn deferred<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: plain calls on a local, initialised signal set; only this thread's mask changes,
    // and it is put back as it was.
    unsafe {
        let mut held: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut held);
        libc::sigaddset(&mut held, SIGINT);
        libc::sigaddset(&mut held, SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &held, &mut before);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        r
    }
}

/// `r`, unless it failed because Ctrl-C or SIGTERM arrived meanwhile: then `None`, the stop
/// that was asked for rather than a failure. A read with a timeout (Redis's, the broker's) is
/// not restarted after a signal but fails with "interrupted system call"; any error while
/// `stop` is set is taken as that. An error with `stop` unset stands.
pub(crate) fn unless_stopped<T>(stop: &AtomicBool, r: anyhow::Result<T>) -> anyhow::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(_) if stop.load(Ordering::SeqCst) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The first wait after a failed attempt; it doubles up to [`LAST`].
const FIRST: Duration = Duration::from_millis(250);
/// A broker (or Redis) back after an outage is found within this long (plus one connect per node).
const LAST: Duration = Duration::from_secs(8);

/// The growing wait between reconnection attempts.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST }
    }
}

impl Backoff {
    /// Back to the shortest wait (a connection worked).
    pub(crate) fn reset(&mut self) {
        self.next = FIRST;
    }

    /// Wait the current delay, then double it; false if `stop` was set meanwhile.
    pub(crate) fn sleep(&mut self, stop: &AtomicBool) -> bool {
        let until = Instant::now() + self.next;
        self.next = (self.next * 2).min(LAST);
        while Instant::now() < until {
            if stop.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
        }
        !stop.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_up_to_its_cap_and_resets() {
        let stop = AtomicBool::new(false);
        let mut b = Backoff::default();
        assert!(b.sleep(&stop));
        assert_eq!(b.next, FIRST * 2);
        for _ in 0..10 {
            b.next = (b.next * 2).min(LAST);
        }
        assert_eq!(b.next, LAST);
        b.reset();
        assert_eq!(b.next, FIRST);
        stop.store(true, Ordering::SeqCst);
        assert!(!b.sleep(&stop), "Ctrl-C cuts the wait short");
    }
}
