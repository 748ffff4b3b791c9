//! Opening an AMQP connection on a socket of our own, and bounding every wait on it.
//!
//! amiquip's own `insecure_open` leaves Nagle's algorithm on, and the broker's delayed ACK then
//! holds the publish of a fresh connection for about 40 ms in one case out of two: most of a
//! check-in's time. So the socket is opened here (TCP_NODELAY) and handed to amiquip, and the
//! URL (credentials, vhost, query parameters) is read here the way amiquip reads it.
//!
//! amiquip notices a broker that accepts the connection and then goes silent only through
//! heartbeats (two missed: about two minutes), and its channel open, declares, gets and
//! `Connection::close` wait for the broker's answer with no timeout of their own. So each
//! connection gets a [`Guard`]: a watchdog thread that shuts the socket down when an armed
//! deadline passes. amiquip's I/O thread then sees the socket end, and every call waiting on
//! it returns an error at once; [`Guard::within`] turns that into "no answer within N ms".

use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use amiquip::{Auth, Connection, ConnectionOptions, ConnectionTuning};
use anyhow::Result;

use crate::config::AmqpSettings;
use crate::error::{Error, Service};

/// What an `amqp://user:pass@host:port/vhost?heartbeat=N&connection_timeout=MS` URL says.
#[derive(Debug, PartialEq)]
pub(crate) struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub vhost: String,
    pub heartbeat: Option<u16>,
    pub timeout_ms: Option<u64>,
}

fn bad(why: &str) -> Error {
    Error::input(format!("config: amqp_url: {why}"))
}

impl Target {
    pub fn parse(s: &str) -> Result<Target, Error> {
        let url = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
        if url.scheme() != "amqp" {
            return Err(bad("only amqp:// URLs are supported (this build has no TLS)"));
        }
        let decode = |v: &str| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned();
        let mut segments = url.path_segments().map(|p| p.collect::<Vec<_>>()).unwrap_or_default();
        segments.retain(|s| !s.is_empty());
        if segments.len() > 1 {
            return Err(bad("the path holds one vhost, as in /%2f"));
        }
        let (user, password) = if url.username().is_empty() {
            ("guest".to_string(), "guest".to_string())
        } else {
            (decode(url.username()), decode(url.password().unwrap_or("")))
        };
        let mut t = Target {
            host: url
                .host_str()
                .filter(|h| !h.is_empty())
                .unwrap_or("localhost")
                .to_string(),
            port: url.port().unwrap_or(5672),
            user,
            password,
            vhost: segments.first().map_or("/".to_string(), |v| decode(v)),
            heartbeat: None,
            timeout_ms: None,
        };
        for (k, v) in url.query_pairs() {
            match k.as_ref() {
                "heartbeat" => t.heartbeat = Some(v.parse().map_err(|_| bad("heartbeat must be a number"))?),
                "connection_timeout" => {
                    t.timeout_ms = Some(v.parse().map_err(|_| bad("connection_timeout must be a number"))?)
                }
                _ => {}
            }
        }
        Ok(t)
    }
}

/// Connect to the broker: TCP with a timeout and TCP_NODELAY, then the AMQP handshake, all
/// within `amqp.connect_timeout_ms` (or the URL's `connection_timeout`). The returned link's
/// guard stays armed with that deadline so that the caller's own setup (a channel, confirms,
/// declarations) is bounded by it too: call [`Link::ready`] once set up. Unreachable, refused
/// or silent: exit 3, never showing the password.
pub(crate) fn open(url: &str, s: &AmqpSettings) -> Result<Link> {
    let t = Target::parse(url)?;
    let timeout = Duration::from_millis(t.timeout_ms.unwrap_or(u64::from(s.connect_timeout_ms)));
    let started = Instant::now();
    let where_ = format!("{}:{}", t.host, t.port);
    let unreachable = |e: &dyn std::fmt::Display| Error::service(Service::Rabbitmq, format!("{where_}: {e}"));
    let addrs: Vec<_> = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| unreachable(&e))?
        .collect();
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                stream.set_nodelay(true).map_err(|e| unreachable(&e))?;
                let watched = stream.try_clone().map_err(|e| unreachable(&e))?;
                let stream = mio::net::TcpStream::from_stream(stream).map_err(|e| unreachable(&e))?;
                let guard = Guard::start(watched);
                guard.arm_until(started + timeout);
                let mut options = ConnectionOptions::default()
                    .auth(Auth::Plain {
                        username: t.user.clone(),
                        password: t.password.clone(),
                    })
                    .virtual_host(t.vhost.clone())
                    .connection_timeout(Some(timeout));
                if let Some(h) = t.heartbeat {
                    options = options.heartbeat(h);
                }
                let conn = match Connection::insecure_open_stream(stream, options, ConnectionTuning::default()) {
                    Ok(conn) => conn,
                    Err(e) => {
                        let e = guard.explain(e, timeout, "connecting");
                        // No link will stop the watchdog: stop it here (`relay --follow` retries
                        // for days, and each leaked watchdog would keep a socket open).
                        guard.stop();
                        return Err(e);
                    }
                };
                return Ok(Link {
                    conn: Some(conn),
                    guard,
                    connect_timeout: timeout,
                    close_timeout: Duration::from_millis(u64::from(s.close_timeout_ms)),
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => unreachable(&e),
        None => unreachable(&"the host name resolves to no address"),
    }
    .into())
}

/// An open connection and the guard that bounds every wait on it. Dropping it closes the
/// connection politely, waiting at most `amqp.close_timeout_ms` for the broker's Close-Ok.
pub(crate) struct Link {
    conn: Option<Connection>,
    guard: Guard,
    connect_timeout: Duration,
    close_timeout: Duration,
}

impl Link {
    /// Setup is over: stop the connect deadline. If it already passed, the setup's waits
    /// were cut short: say so instead of amiquip's "connection closed".
    pub(crate) fn ready<T>(&self, setup: Result<T>) -> Result<T> {
        self.guard.disarm();
        setup.map_err(|e| self.guard.explain(e, self.connect_timeout, "setting up the connection"))
    }

    /// The guard, to bound the waits of this connection's channels.
    pub(crate) fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Close politely (bounded); the same as dropping the link.
    pub(crate) fn close(self) {}

    /// A value that, dropped, bounds what remains (channel closes, then the connection's): put
    /// it after the channels so that it drops first, also on an early return.
    pub(crate) fn closing_bound(&self) -> ClosingBound {
        ClosingBound(self.guard.clone(), self.close_timeout)
    }
}

impl Deref for Link {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("open until dropped")
    }
}

impl DerefMut for Link {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("open until dropped")
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.guard.arm_within(self.close_timeout);
            conn.close().ok();
        }
        self.guard.stop();
    }
}

/// See [`Link::closing_bound`].
pub(crate) struct ClosingBound(Guard, Duration);

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
    fn start(socket: TcpStream) -> Guard {
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

    fn arm_until(&self, at: Instant) {
        self.state().deadline = Some(at);
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

    fn stop(&self) {
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
    fn explain(&self, e: impl Into<anyhow::Error>, d: Duration, what: &str) -> anyhow::Error {
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

    #[test]
    fn urls_read_as_amiquip_reads_them() {
        let t = Target::parse("amqp://ann:p%40ss@broker:5673/%2f?heartbeat=5&connection_timeout=250").unwrap();
        assert_eq!(
            t,
            Target {
                host: "broker".into(),
                port: 5673,
                user: "ann".into(),
                password: "p@ss".into(),
                vhost: "/".into(),
                heartbeat: Some(5),
                timeout_ms: Some(250),
            }
        );
        let t = Target::parse("amqp://127.0.0.1").unwrap();
        assert_eq!((t.user.as_str(), t.port, t.vhost.as_str()), ("guest", 5672, "/"));
        assert_eq!(Target::parse("amqp://h/prod").unwrap().vhost, "prod");
        assert!(Target::parse("amqps://h/").is_err());
        assert!(Target::parse("amqp://h/a/b").is_err());
        let e = Target::parse("amqp://u:secret@h/?heartbeat=x").unwrap_err().to_string();
        assert!(!e.contains("secret"), "{e}");
    }
}
