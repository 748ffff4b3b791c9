//! Opening an AMQP connection on a socket of our own, and bounding every wait on it.
//!
//! amiquip's own `insecure_open` leaves Nagle's algorithm on, and the broker's delayed ACK then
//! holds the publish of a fresh connection for about 40 ms in one case out of two: most of a
//! check-in's time. So the socket is opened here (TCP_NODELAY) and handed to amiquip, and the
//! URL (credentials, vhost, query parameters) is read here the way amiquip reads it.
//!
//! `amqps://` (default port 5671) wraps the same socket in TLS (rustls, `tls.rs`): the broker's
//! certificate is checked against the system's CAs or `SSL_CERT_FILE`'s
//! file, and its name against the URL's host.
//!
//! Every connection comes with the [`Guard`] of `watchdog.rs`, which bounds each wait on it.
//! The handshake has two bounds: `amqp.connect_timeout_ms` until the broker first answers,
//! then `amqp.login_timeout_ms` for its verdict on the login, since RabbitMQ holds a refused
//! login about 3 s before closing the connection. So a broker that never answers (out of file
//! handles), one that refuses the login, and one that answers but gives no verdict are three
//! different lines.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use amiquip::{Auth, Connection, ConnectionOptions, ConnectionTuning};
use anyhow::Result;

use super::watchdog::{ClosingBound, Guard};
use crate::config::AmqpSettings;
use crate::error::{Error, Service};

/// What an `amqp://user:pass@host:port/vhost?heartbeat=N&connection_timeout=MS` URL says
/// (`amqps://` for TLS).
#[derive(Debug, PartialEq)]
pub(crate) struct Target {
    pub tls: bool,
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
    pub(crate) fn parse(s: &str) -> Result<Target, Error> {
        let url = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
        let tls = match url.scheme() {
            "amqp" => false,
            "amqps" => true,
            _ => return Err(bad("an amqp:// URL (amqps:// for TLS)")),
        };
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
            tls,
            host: url
                .host_str()
                .filter(|h| !h.is_empty())
                .unwrap_or("localhost")
                .to_string(),
            port: url.port().unwrap_or(if tls { 5671 } else { 5672 }),
            user,
            password,
            vhost: segments.first().map_or("/".to_string(), |v| decode(v)),
            heartbeat: None,
            timeout_ms: None,
        };
        for (k, v) in url.query_pairs() {
            match k.as_ref() {
                "heartbeat" => {
                    let h: u16 = v.parse().map_err(|_| bad("heartbeat must be a number"))?;
                    // 0 turns heartbeats off: a silent broker could then hold a live watcher forever.
                    if h == 0 {
                        return Err(bad(
                            "heartbeat=0 would let a silent broker hold a watcher forever: give 1 or more seconds",
                        ));
                    }
                    t.heartbeat = Some(h);
                }
                "connection_timeout" => {
                    t.timeout_ms = Some(v.parse().map_err(|_| bad("connection_timeout must be a number"))?)
                }
                _ => {}
            }
        }
        Ok(t)
    }
}

/// Connect to the first broker of `urls` that answers: TCP with a timeout and TCP_NODELAY, the
/// AMQP handshake, then the caller's `setup` (a channel, confirms, declarations), each broker
/// within its own `amqp.connect_timeout_ms` (or its URL's `connection_timeout`), so a dead or
/// silent first node costs one connect timeout, never a hang. None answers: exit 3, naming
/// every broker tried (host and port, never a password).
pub(crate) fn open<T>(
    urls: &[&str],
    s: &AmqpSettings,
    mut setup: impl FnMut(&mut Connection) -> Result<T>,
) -> Result<(Link, T)> {
    let mut failed: Vec<(String, anyhow::Error)> = Vec::new();
    for url in urls {
        let t = Target::parse(url)?;
        match open_one(url, s, &mut setup) {
            Ok(done) => return Ok(done),
            Err(e) => failed.push((format!("{}:{}", t.host, t.port), e)),
        }
    }
    if failed.len() == 1 {
        return Err(failed.remove(0).1);
    }
    let tried: Vec<String> = failed
        .iter()
        .map(|(at, e)| {
            let why = super::failure::one_line(e);
            let why = why.strip_prefix("RabbitMQ is unreachable or failing: ").unwrap_or(&why);
            let why = why.strip_prefix(&format!("{at}: ")).unwrap_or(why);
            format!("{at} ({why})")
        })
        .collect();
    Err(Error::service(
        Service::Rabbitmq,
        format!("no broker answered; tried {}", tried.join(", ")),
    )
    .into())
}

fn open_one<T>(url: &str, s: &AmqpSettings, setup: &mut impl FnMut(&mut Connection) -> Result<T>) -> Result<(Link, T)> {
    let mut link = connect(url, s)?;
    let done = setup(&mut link);
    link.guard.disarm();
    let t = done.map_err(|e| link.guard.explain(e, link.connect_timeout, "setting up the connection"))?;
    Ok((link, t))
}

/// TCP and the handshake; the returned link's guard stays armed with the connect deadline.
fn connect(url: &str, s: &AmqpSettings) -> Result<Link> {
    let t = Target::parse(url)?;
    let timeout = Duration::from_millis(t.timeout_ms.unwrap_or(u64::from(s.connect_timeout_ms)));
    let login = Duration::from_millis(u64::from(s.login_timeout_ms));
    let started = Instant::now();
    let where_ = format!("{}:{}", t.host, t.port);
    let unreachable = |e: &dyn std::fmt::Display| Error::service(Service::Rabbitmq, format!("{where_}: {e}"));
    let addrs: Vec<_> = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| unreachable(&e))?
        .collect();
    let tls = if t.tls {
        Some(super::tls::client_config()?)
    } else {
        None
    };
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                stream.set_nodelay(true).map_err(|e| unreachable(&e))?;
                let watched = stream.try_clone().map_err(|e| unreachable(&e))?;
                let guard = Guard::start(watched);
                guard.arm_until(started + timeout);
                let stream = Heard {
                    stream: mio::net::TcpStream::from_stream(stream).map_err(|e| unreachable(&e))?,
                    first: Some(Box::new({
                        let guard = guard.clone();
                        move || guard.extend_until(Instant::now() + login)
                    })),
                };
                let options = ConnectionOptions::default()
                    .auth(Auth::Plain {
                        username: t.user.clone(),
                        password: t.password.clone(),
                    })
                    .virtual_host(t.vhost.clone())
                    // The guard bounds the handshake (its two parts); amiquip's own timeout,
                    // on each quiet spell, only comes after it.
                    .connection_timeout(Some(timeout + login + Duration::from_secs(1)))
                    .heartbeat(t.heartbeat.unwrap_or(s.heartbeat_secs));
                let opened = match &tls {
                    Some(config) => {
                        let secured =
                            super::tls::Tls::new(config.clone(), &t.host, stream).inspect_err(|_| guard.stop())?;
                        Connection::insecure_open_stream(secured, options, ConnectionTuning::default())
                    }
                    None => Connection::insecure_open_stream(stream, options, ConnectionTuning::default()),
                };
                let conn = match opened {
                    Ok(conn) => {
                        // Logged in: what is left of the connect bound for the setup, or one
                        // connect timeout more when a slow login used it up.
                        guard.arm_until((started + timeout).max(Instant::now() + timeout));
                        conn
                    }
                    Err(e) => {
                        // amiquip says "invalid credentials" of any end of the connection after
                        // it sent them: the broker answered. Closed by the broker, that is
                        // RabbitMQ refusing the login; cut by the guard, no verdict came.
                        // Otherwise the socket is connected already: amiquip's own timeout can
                        // only mean the handshake went unanswered too.
                        let e = if let Some(said) = tls_refused(&e) {
                            Error::service(Service::Rabbitmq, format!("{where_}: {said}")).into()
                        } else if matches!(e, amiquip::Error::InvalidCredentials) {
                            login_failed(&where_, &t, !guard.tripped(), login)
                        } else if guard.tripped() || matches!(e, amiquip::Error::ConnectionTimeout) {
                            silent_handshake(&where_, timeout)
                        } else {
                            guard.explain(e, timeout, "connecting")
                        };
                        // No link will stop the watchdog: stop it here (`relay --follow` retries
                        // for days, and each leaked watchdog would keep a socket open).
                        guard.stop();
                        return Err(e);
                    }
                };
                return Ok(Link {
                    broker: where_,
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

/// A TLS failure of the handshake, in words (a refused certificate names it).
fn tls_refused(e: &amiquip::Error) -> Option<String> {
    let detail = super::tls::failure(e)?;
    Some(crate::config::refused_certificate(&detail).unwrap_or_else(|| format!("TLS: {detail}")))
}

/// A broker that took the TCP connection and never answered the AMQP handshake: what a broker
/// out of file handles does (it accepts connections it has no handle to serve), so say so.
fn silent_handshake(broker: &str, timeout: Duration) -> anyhow::Error {
    let ms = timeout.as_millis();
    Error::service(
        Service::Rabbitmq,
        format!(
            "the broker did not answer within {ms} ms (connecting): {broker} accepted the TCP connection but \
             did not answer the AMQP handshake within {ms} ms: a broker out of file handles does this; \
             see docs/operations.md (RabbitMQ's file handles)"
        ),
    )
    .into()
}

/// The broker refused the login (it closed the connection once it had the credentials), or
/// answered the handshake and then gave no verdict within `amqp.login_timeout_ms`. Names the
/// user and the vhost, never the password.
fn login_failed(broker: &str, t: &Target, refused: bool, login: Duration) -> anyhow::Error {
    let (user, vhost) = (&t.user, &t.vhost);
    let detail = if refused {
        format!(
            "{broker} refused the login of user '{user}' (vhost '{vhost}'): a wrong password, an unknown user, or a user without access to the vhost; check amqp_url's user and its password (amqp_password_file)"
        )
    } else {
        format!(
            "{broker} answered the AMQP handshake but neither accepted nor refused the login of user '{user}' within {} ms (amqp.login_timeout_ms): a broker overloaded, or a slow authentication backend",
            login.as_millis()
        )
    };
    Error::service(Service::Rabbitmq, detail).into()
}

/// The broker's socket as amiquip reads it, telling the guard when the broker first says
/// something (`first`): from then on the login has its own bound.
struct Heard {
    stream: mio::net::TcpStream,
    first: Option<Box<dyn FnOnce() + Send>>,
}

impl Read for Heard {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.stream.read(buf)?;
        if n > 0 {
            if let Some(first) = self.first.take() {
                first();
            }
        }
        Ok(n)
    }
}

impl std::os::fd::AsRawFd for Heard {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.stream.as_raw_fd()
    }
}

impl Write for Heard {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

impl mio::Evented for Heard {
    fn register(
        &self,
        poll: &mio::Poll,
        token: mio::Token,
        interest: mio::Ready,
        opts: mio::PollOpt,
    ) -> std::io::Result<()> {
        self.stream.register(poll, token, interest, opts)
    }
    fn reregister(
        &self,
        poll: &mio::Poll,
        token: mio::Token,
        interest: mio::Ready,
        opts: mio::PollOpt,
    ) -> std::io::Result<()> {
        self.stream.reregister(poll, token, interest, opts)
    }
    fn deregister(&self, poll: &mio::Poll) -> std::io::Result<()> {
        self.stream.deregister(poll)
    }
}

impl amiquip::IoStream for Heard {}

/// An open connection and the guard that bounds every wait on it. Dropping it closes the
/// connection politely, waiting at most `amqp.close_timeout_ms` for the broker's Close-Ok.
pub(crate) struct Link {
    /// `host:port` of the broker this link reached.
    broker: String,
    conn: Option<Connection>,
    guard: Guard,
    connect_timeout: Duration,
    close_timeout: Duration,
}

impl Link {
    /// The guard, to bound the waits of this connection's channels.
    pub(crate) fn guard(&self) -> &Guard {
        &self.guard
    }

    /// `host:port` of the broker this link reached (a cluster's node: say which).
    pub(crate) fn broker(&self) -> &str {
        &self.broker
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener that accepts one connection, reads whatever comes and never says a word,
    /// and settings that give it 300 ms.
    fn silent_listener() -> (std::net::SocketAddr, std::thread::JoinHandle<()>, AmqpSettings) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let silent = std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            let mut buf = [0u8; 512];
            while matches!(std::io::Read::read(&mut peer, &mut buf), Ok(n) if n > 0) {}
        });
        let settings = AmqpSettings {
            connect_timeout_ms: 300,
            ..AmqpSettings::default()
        };
        (at, silent, settings)
    }

    #[test]
    fn a_listener_that_never_answers_the_handshake_is_named_as_such() {
        // Accepts the connection, reads the protocol header, says nothing: a broker out of handles.
        let (at, silent, settings) = silent_listener();
        let url = format!("amqp://guest:secret@{at}/%2f");
        let started = Instant::now();
        let e = open(&[url.as_str()], &settings, |_| Ok(()))
            .err()
            .expect("no broker answered");
        assert!(started.elapsed() < Duration::from_secs(5));
        let line = super::super::failure::one_line(&e);
        assert!(
            line.contains(&format!(
                "{at} accepted the TCP connection but did not answer the AMQP handshake within 300 ms"
            )) && line.contains("a broker out of file handles does this; see docs/operations.md")
                && !line.contains("secret"),
            "{line}"
        );
        assert_eq!(crate::error::exit_code_with(&e, &[super::super::failure::says]), 3);
        silent.join().unwrap();
    }

    /// A listener that answers the protocol header with a Connection.Start (PLAIN), reads the
    /// credentials, then closes the connection (`refuse`), as RabbitMQ refuses a login, or
    /// says nothing more; and settings that give it 300 ms to answer and 300 ms to decide.
    fn start_then(refuse: bool) -> (std::net::SocketAddr, std::thread::JoinHandle<()>, AmqpSettings) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let broker = std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            let mut header = [0u8; 8];
            std::io::Read::read_exact(&mut peer, &mut header).unwrap();
            let mut payload = vec![0, 10, 0, 10, 0, 9, 0, 0, 0, 0];
            for s in ["PLAIN", "en_US"] {
                payload.extend((s.len() as u32).to_be_bytes());
                payload.extend(s.as_bytes());
            }
            let mut frame = vec![1, 0, 0];
            frame.extend((payload.len() as u32).to_be_bytes());
            frame.extend(payload);
            frame.push(0xCE);
            std::io::Write::write_all(&mut peer, &frame).unwrap();
            let mut buf = [0u8; 512];
            let _ = std::io::Read::read(&mut peer, &mut buf);
            if !refuse {
                while matches!(std::io::Read::read(&mut peer, &mut buf), Ok(n) if n > 0) {}
            }
        });
        let settings = AmqpSettings {
            connect_timeout_ms: 300,
            login_timeout_ms: 300,
            ..AmqpSettings::default()
        };
        (at, broker, settings)
    }

    #[test]
    fn a_login_the_broker_refuses_is_said_as_such_naming_the_user_only() {
        let (at, broker, settings) = start_then(true);
        let url = format!("amqp://ann:secret@{at}/%2f");
        let e = open(&[url.as_str()], &settings, |_| Ok(())).err().expect("refused");
        let line = super::super::failure::one_line(&e);
        assert!(
            line.contains(&format!("{at} refused the login of user 'ann' (vhost '/')"))
                && !line.contains("file handles")
                && !line.contains("secret"),
            "{line}"
        );
        assert_eq!(crate::error::exit_code_with(&e, &[super::super::failure::says]), 3);
        broker.join().unwrap();
    }

    #[test]
    fn a_broker_that_answers_and_then_gives_no_verdict_on_the_login_is_bounded_and_named() {
        let (at, broker, settings) = start_then(false);
        let url = format!("amqp://ann:secret@{at}/%2f");
        let started = Instant::now();
        let e = open(&[url.as_str()], &settings, |_| Ok(())).err().expect("no verdict");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        let line = super::super::failure::one_line(&e);
        assert!(
            line.contains(
                "answered the AMQP handshake but neither accepted nor refused the login of user 'ann' within 300 ms"
            ) && !line.contains("file handles")
                && !line.contains("secret"),
            "{line}"
        );
        broker.join().unwrap();
    }

    #[test]
    fn a_silent_listener_bounds_the_tls_handshake_too() {
        // amqps:// to a listener that takes the connection and never answers the TLS hello.
        let (at, silent, settings) = silent_listener();
        let url = format!("amqps://guest:secret@{at}/%2f");
        let started = Instant::now();
        let e = open(&[url.as_str()], &settings, |_| Ok(()))
            .err()
            .expect("no broker answered");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        let line = super::super::failure::one_line(&e);
        assert!(line.contains(&at.to_string()) && !line.contains("secret"), "{line}");
        assert_eq!(
            crate::error::exit_code_with(&e, &[super::super::failure::says]),
            3,
            "{line}"
        );
        silent.join().unwrap();
    }

    #[test]
    fn urls_read_as_amiquip_reads_them() {
        let t = Target::parse("amqp://ann:p%40ss@broker:5673/%2f?heartbeat=5&connection_timeout=250").unwrap();
        assert_eq!(
            t,
            Target {
                tls: false,
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
        let t = Target::parse("amqps://h/").unwrap();
        assert_eq!((t.tls, t.port), (true, 5671));
        assert!(Target::parse("http://h/").is_err());
        assert!(Target::parse("amqp://h/a/b").is_err());
        let e = Target::parse("amqp://u:secret@h/?heartbeat=x").unwrap_err().to_string();
        assert!(!e.contains("secret"), "{e}");
        let e = Target::parse("amqp://u:secret@h/?heartbeat=0").unwrap_err().to_string();
        assert!(e.contains("heartbeat=0") && !e.contains("secret"), "{e}");
    }
}
