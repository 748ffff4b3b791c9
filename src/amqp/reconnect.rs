//! What long-running consumers and relays need to survive a broker going away: telling a lost
//! broker from any other failure, and waiting between reconnection attempts (doubling, capped,
//! cut short by Ctrl-C).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Service};

/// The first wait after a failed attempt; it doubles up to [`LAST`].
const FIRST: Duration = Duration::from_millis(250);
/// A broker back after an outage is found within this long (plus one connect per node).
const LAST: Duration = Duration::from_secs(8);

/// Whether the error is the broker's (a closed connection, a refused or silent node), as
/// opposed to Redis, a closed stdout or a bug: only the broker's is worth reconnecting for.
pub(crate) fn broker_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<amiquip::Error>().is_some()
            || matches!(
                c.downcast_ref::<Error>(),
                Some(Error::Service {
                    service: Service::Rabbitmq,
                    ..
                })
            )
    })
}

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

    #[test]
    fn only_the_brokers_errors_call_for_a_reconnection() {
        let amqp: anyhow::Error = Error::service(Service::Rabbitmq, "gone").into();
        assert!(broker_gone(&amqp.context("consuming")));
        assert!(!broker_gone(&Error::service(Service::Redis, "gone").into()));
        assert!(!broker_gone(&anyhow::anyhow!("broken pipe")));
    }
}
