//! The watchdog that bounds every wait on one AMQP connection.
//!
//! amiquip notices a broker that accepts the connection and then goes silent only through
//! heartbeats (two missed: twice `amqp.heartbeat_secs`), and its channel open, declares, gets
//! and `Connection::close` wait for the broker's answer with no timeout of their own. So each
//! connection gets a [`Guard`]: a thread holding a clone of the socket, which shuts the socket
//! down when an armed deadline passes. amiquip's I/O thread then sees the socket end, and every
//! call waiting on it returns an error at once; [`Guard::within`] turns that error into "the
//! broker did not answer within N ms".

use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::error::{Error, Service};

/// See [`Link::closing_bound`].
pub(crate) struct ClosingBound(pub(super) Guard, pub(super) Duration);

impl Drop for ClosingBound {
    fn drop(&mut self) {
        self.0.arm_within(self.1);
    }
}

/// The watchdog of one connection: shuts its socket down when an armed deadline passes.
#[derive(Clone)]
pub(crate) struct Guard(Arc<Watch>);

struct Watch {
    socket: TcpStream,
    state: Mutex<WatchState>,
    wake: Condvar,
}

#[derive(Default)]
struct WatchState {
    deadline: Option<Instant>,
    tripped: bool,
    done: bool,
}

impl Guard {
    pub(super) fn start(socket: TcpStream) -> Guard {
        let watch = Arc::new(Watch {
            socket,
            state: Mutex::new(WatchState::default()),
            wake: Condvar::new(),
        });
        let w = Arc::clone(&watch);
        std::thread::spawn(move || w.run());
        Guard(watch)
    }

    fn state(&self) -> MutexGuard<'_, WatchState> {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn arm_until(&self, at: Instant) {
        self.state().deadline = Some(at);
        self.0.wake.notify_one();
    }

    /// Push an armed deadline back to `at` (never earlier; a disarmed or tripped guard stays so).
    pub(super) fn extend_until(&self, at: Instant) {
        let mut st = self.state();
        if let Some(old) = st.deadline {
            st.deadline = Some(old.max(at));
        }
        drop(st);
        self.0.wake.notify_one();
    }

    /// Cut the socket if the broker has not answered within `d` from now (or sooner, if a
    /// deadline is already armed that comes first).
    pub(crate) fn arm_within(&self, d: Duration) {
        let at = Instant::now() + d;
        let mut st = self.state();
        st.deadline = Some(st.deadline.map_or(at, |old| old.min(at)));
        drop(st);
        self.0.wake.notify_one();
    }

    pub(crate) fn disarm(&self) {
        self.state().deadline = None;
    }

    /// Whether a deadline passed and the socket was cut.
    pub(crate) fn tripped(&self) -> bool {
        self.state().tripped
    }

    /// Give up on the broker now: a connection that missed a deadline is not worth a polite
    /// close (that would only wait `close_timeout_ms` more on a broker that does not answer).
    pub(crate) fn cut(&self) {
        self.state().tripped = true;
        self.0.socket.shutdown(Shutdown::Both).ok();
    }

    pub(super) fn stop(&self) {
        self.state().done = true;
        self.0.wake.notify_one();
    }

    /// Run `f`, cutting the connection if it takes longer than `d`.
    pub(crate) fn within<T>(&self, d: Duration, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.arm_within(d);
        let r = f();
        self.disarm();
        r.map_err(|e| self.explain(e, d, what))
    }

    /// The error of a call the guard cut short says why; any other error stays as it is.
    pub(super) fn explain(&self, e: impl Into<anyhow::Error>, d: Duration, what: &str) -> anyhow::Error {
        if self.tripped() {
            Error::service(
                Service::Rabbitmq,
                format!("the broker did not answer within {} ms ({what})", d.as_millis()),
            )
            .into()
        } else {
            let e: anyhow::Error = e.into();
            match e.downcast::<amiquip::Error>() {
                Ok(a) => Error::service(Service::Rabbitmq, a).into(),
                Err(e) => e,
            }
        }
    }
}

impl Watch {
    fn run(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if st.done {
                return;
            }
            st = match st.deadline {
                None => self.wake.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(at) => {
                    let now = Instant::now();
                    if now >= at {
                        st.tripped = true;
                        st.deadline = None;
                        self.socket.shutdown(Shutdown::Both).ok();
                        continue;
                    }
                    self.wake
                        .wait_timeout(st, at - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn a_deadline_that_passes_ends_a_read_that_would_wait_forever() {
        let (mut ours, _silent_peer) = pair();
        let guard = Guard::start(ours.try_clone().unwrap());
        let started = Instant::now();
        guard.arm_within(Duration::from_millis(100));
        let mut buf = [0u8; 16];
        assert_eq!(ours.read(&mut buf).unwrap(), 0, "the socket was shut down");
        assert!(guard.tripped());
        assert!(started.elapsed() < Duration::from_secs(5));
        guard.stop();
    }

    #[test]
    fn a_disarmed_or_later_deadline_leaves_the_socket_alone() {
        let (ours, mut peer) = pair();
        let guard = Guard::start(ours.try_clone().unwrap());
        // Margins of hundreds of milliseconds: under a loaded machine's scheduling, a 50 ms
        // deadline once passed between arming and disarming.
        guard.arm_within(Duration::from_millis(300));
        guard.disarm();
        // A later deadline never pushes an earlier one back.
        guard.arm_within(Duration::from_secs(60));
        guard.arm_within(Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(600));
        assert!(!guard.tripped());
        std::io::Write::write_all(&mut &ours, b"x").unwrap();
        let mut buf = [0u8; 1];
        peer.read_exact(&mut buf).unwrap();
        let e = guard
            .within(Duration::from_secs(5), "a test", || -> Result<()> {
                Err(anyhow::anyhow!("late"))
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "late", "an error the guard did not cause stays as it is");
        guard.stop();
    }
}
