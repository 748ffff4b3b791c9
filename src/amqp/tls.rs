//! `amqps://` through rustls, the TLS stack Redis and MySQL already use here, as a stream
//! amiquip drives like a plain socket (its `IoStream`: non-blocking, edge-triggered by mio).
//!
//! amiquip's own TLS is native-tls, that is OpenSSL: linking it made every process, a kiosk's
//! one-punch `checkin` included, load libssl and libcrypto and resolve their thousands of symbols
//! at start (three quarters of a check-in process's instructions, callgrind). With rustls no
//! process links OpenSSL.
//!
//! The handshake runs inside the stream: what amiquip writes first (the AMQP protocol header) is
//! held by rustls until the handshake is done. Nothing is ever left held when a call returns
//! (amiquip would not call again, and the bytes would wait for the next frame): a write the
//! socket cannot take whole waits for the socket, bounded by the connection's own guard, which
//! shuts the socket down when a bound passes, and by [`SEND_BOUND`] when no guard is armed.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use rustls::pki_types::ServerName;

use crate::error::Error;

/// A TLS failure (a refused certificate, a bad record), told apart from the socket's own errors
/// when amiquip hands it back (`failure`).
#[derive(Debug)]
pub(super) struct TlsFailure(pub(super) rustls::Error);

impl std::fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TLS: {}", self.0)
    }
}

impl std::error::Error for TlsFailure {}

/// The TLS failure inside an amiquip error, if that is what it is.
pub(super) fn failure(e: &amiquip::Error) -> Option<String> {
    let io = match e {
        amiquip::Error::IoErrorReadingSocket { source } | amiquip::Error::IoErrorWritingSocket { source } => source,
        _ => return None,
    };
    let tls = io.get_ref()?.downcast_ref::<TlsFailure>()?;
    Some(tls.0.to_string())
}

/// The client configuration of `amqps://`: the system's CAs and `SSL_CERT_FILE`'s (a bad file
/// is exit 2), as for Redis and MySQL.
pub(super) fn client_config() -> Result<Arc<rustls::ClientConfig>, Error> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = crate::config::ca_file()? {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(&path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| Error::input(format!("SSL_CERT_FILE: {}: {e}", path.display())))?;
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| Error::input(format!("SSL_CERT_FILE: {}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::input(format!("TLS: cannot set up the AMQP TLS client: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A socket with a TLS client session on it.
pub(super) struct Tls<S> {
    sock: S,
    conn: rustls::ClientConnection,
}

impl<S: Read + Write + AsRawFd> Tls<S> {
    pub(super) fn new(config: Arc<rustls::ClientConfig>, host: &str, sock: S) -> Result<Tls<S>, Error> {
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| Error::input(format!("TLS: '{host}' is not a server name: {e}")))?;
        let conn = rustls::ClientConnection::new(config, name)
            .map_err(|e| Error::input(format!("TLS: cannot start a session with {host}: {e}")))?;
        Ok(Tls { sock, conn })
    }

    /// Send what rustls holds for the socket, waiting for the socket when it is full: at most
    /// [`SEND_BOUND`] in all (the connection's guard, when armed, cuts the socket sooner).
    fn send_all(&mut self) -> io::Result<()> {
        let deadline = std::time::Instant::now() + SEND_BOUND;
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("the broker took no TLS data for {} s", SEND_BOUND.as_secs()),
                        ));
                    }
                    wait_writable(self.sock.as_raw_fd(), left)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// How long a full socket may hold up what rustls has to send. amiquip's I/O thread waits here
/// (its heartbeats wait with it), so a broker that stops reading fails the connection after this
/// at the latest, and the commands' own reconnects take over.
const SEND_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

/// Wait until the socket can take more, or `left` passes (a full send buffer is rare: the
/// broker reads).
fn wait_writable(fd: RawFd, left: std::time::Duration) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    let ms = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one pollfd of our own, for the socket this stream owns.
    match unsafe { libc::poll(&mut p, 1, ms) } {
        -1 => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            }
        }
        _ => Ok(()),
    }
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, TlsFailure(e))
}

impl<S: Read + Write + AsRawFd> Read for Tls<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // No plaintext yet: more records from the socket (WouldBlock when it has none).
            if self.conn.read_tls(&mut self.sock)? == 0 {
                // The peer closed the socket without a TLS close: the end of the stream.
                return Ok(0);
            }
            let state = self.conn.process_new_packets().map_err(|e| {
                // Tell the broker why (a refused certificate's alert), then fail.
                let _ = self.send_all();
                tls_error(e)
            })?;
            // The handshake's replies, a key update: sent now, not when amiquip next writes.
            self.send_all()?;
            if state.peer_has_closed() && state.plaintext_bytes_to_read() == 0 {
                return Ok(0);
            }
        }
    }
}

impl<S: Read + Write + AsRawFd> Write for Tls<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.conn.writer().write(buf)?;
        self.send_all()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.conn.writer().flush()?;
        self.send_all()?;
        self.sock.flush()
    }
}

impl<S: mio::Evented> mio::Evented for Tls<S> {
    fn register(
        &self,
        poll: &mio::Poll,
        token: mio::Token,
        interest: mio::Ready,
        opts: mio::PollOpt,
    ) -> io::Result<()> {
        self.sock.register(poll, token, interest, opts)
    }

    fn reregister(
        &self,
        poll: &mio::Poll,
        token: mio::Token,
        interest: mio::Ready,
        opts: mio::PollOpt,
    ) -> io::Result<()> {
        self.sock.reregister(poll, token, interest, opts)
    }

    fn deregister(&self, poll: &mio::Poll) -> io::Result<()> {
        self.sock.deregister(poll)
    }
}

impl<S: Read + Write + AsRawFd + mio::Evented + Send + 'static> amiquip::IoStream for Tls<S> {}
