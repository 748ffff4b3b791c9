//! A TCP proxy in front of a real service that goes silent on cue: it forwards both ways
//! until the client sends a chosen byte pattern (its `nth` occurrence), then stops answering
//! without closing, optionally after passing a few more bytes of the server's reply. Once
//! tripped, every connection (and every new one, which it still accepts) is silent: a server
//! that accepts the connection and then stops answering, as a hung broker or database does.
//!
//! Or, with [`Stall::then_drop`], it drops that connection instead, as a server that dies does.
//!
//! Or, with [`Stall::then_lose_replies`], it still forwards everything the client sends but
//! none of the server's replies: a broker that takes every publish while its confirms are lost.
//!
//! Or, with [`StallProxy::cut`], it closes every connection and drops each new one at once until
//! [`StallProxy::restore`] (a node that died, then came back on the same port).
//!
//! When a client goes away, the proxy closes its upstream connection too, as a real server
//! would notice a closed peer: a MySQL session holding a lock then ends and frees it.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// When and how the proxy goes silent.
#[derive(Debug, Clone)]
pub struct Stall {
    pattern: Vec<u8>,
    nth: usize,
    forward_trigger: bool,
    pass_server_bytes: usize,
    drop_on_trip: bool,
    lose_replies: bool,
}

impl Stall {
    /// Go silent once the client has sent `pattern`; the bytes that hold it still reach the
    /// server (a publish that the broker gets but never confirms).
    pub fn when_client_sends(pattern: &[u8]) -> Stall {
        Stall {
            pattern: pattern.to_vec(),
            nth: 1,
            forward_trigger: true,
            pass_server_bytes: 0,
            drop_on_trip: false,
            lose_replies: false,
        }
    }

    /// Instead of going silent, drop the connection that sent the trigger (a server that dies).
    pub fn then_drop(mut self) -> Stall {
        self.drop_on_trip = true;
        self
    }

    /// Once tripped, still forward what the client sends (the server gets every publish), but
    /// none of the server's replies (no confirm comes back).
    pub fn then_lose_replies(mut self) -> Stall {
        self.lose_replies = true;
        self
    }

    /// Trip on the `n`th occurrence instead of the first (counted over all connections).
    pub fn nth(mut self, n: usize) -> Stall {
        self.nth = n;
        self
    }

    /// Never go silent on its own (a proxy the test cuts and restores).
    pub fn never() -> Stall {
        Stall::when_client_sends(&[])
    }

    /// Keep the trigger from the server: only the bytes before it are forwarded.
    pub fn hold_trigger(mut self) -> Stall {
        self.forward_trigger = false;
        self
    }

    /// After tripping, still pass this many bytes of the server's replies (a reply cut mid-way).
    pub fn then_pass_server_bytes(mut self, n: usize) -> Stall {
        self.pass_server_bytes = n;
        self
    }
}

struct Shared {
    stall: Stall,
    seen: Mutex<usize>,
    tripped: AtomicBool,
    /// Cut: connections are dropped as they come.
    down: AtomicBool,
    accepted: AtomicUsize,
    budget: AtomicUsize,
    stop: AtomicBool,
    sockets: Mutex<Vec<TcpStream>>,
}

/// The running proxy; dropped, it closes everything.
pub struct StallProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl StallProxy {
    /// Listen on 127.0.0.1:0 and forward to `upstream` (host:port).
    pub fn start(upstream: &str, stall: Stall) -> StallProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            budget: AtomicUsize::new(stall.pass_server_bytes),
            stall,
            seen: Mutex::new(0),
            tripped: AtomicBool::new(false),
            down: AtomicBool::new(false),
            accepted: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            sockets: Mutex::new(Vec::new()),
        });
        let upstream = upstream.to_string();
        let sh = Arc::clone(&shared);
        thread::spawn(move || {
            for client in listener.incoming() {
                if sh.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                if sh.down.load(Ordering::SeqCst) {
                    client.shutdown(Shutdown::Both).ok();
                    continue;
                }
                sh.accepted.fetch_add(1, Ordering::SeqCst);
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                client.set_nodelay(true).ok();
                server.set_nodelay(true).ok();
                {
                    let mut socks = sh.sockets.lock().unwrap();
                    socks.push(client.try_clone().unwrap());
                    socks.push(server.try_clone().unwrap());
                }
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let sh1 = Arc::clone(&sh);
                thread::spawn(move || client_to_server(&sh1, client, server));
                let sh2 = Arc::clone(&sh);
                thread::spawn(move || server_to_client(&sh2, s2, c2));
            }
        });
        StallProxy { addr, shared }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// An AMQP URL through this proxy.
    pub fn amqp_url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port())
    }

    /// Connections accepted and forwarded so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Close every connection and drop new ones until [`StallProxy::restore`].
    pub fn cut(&self) {
        self.shared.down.store(true, Ordering::SeqCst);
        for s in self.shared.sockets.lock().unwrap().drain(..) {
            s.shutdown(Shutdown::Both).ok();
        }
    }

    /// Forward new connections again.
    pub fn restore(&self) {
        self.shared.down.store(false, Ordering::SeqCst);
    }

    /// Whether the trigger was seen.
    pub fn tripped(&self) -> bool {
        self.shared.tripped.load(Ordering::SeqCst)
    }
}

impl Drop for StallProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        for s in self.shared.sockets.lock().unwrap().iter() {
            s.shutdown(Shutdown::Both).ok();
        }
    }
}

fn client_to_server(sh: &Shared, mut client: TcpStream, mut server: TcpStream) {
    let pat = sh.stall.pattern.clone();
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if sh.tripped.load(Ordering::SeqCst) {
            if sh.stall.lose_replies {
                if server.write_all(&buf[..n]).is_err() {
                    break;
                }
                continue;
            }
            continue; // silent: the bytes go nowhere
        }
        let chunk = &buf[..n];
        let mut hay = std::mem::take(&mut tail);
        let base = hay.len();
        hay.extend_from_slice(chunk);
        let mut forward = n;
        if !pat.is_empty() {
            let mut seen = sh.seen.lock().unwrap();
            let mut i = 0;
            while i + pat.len() <= hay.len() {
                // Count only occurrences that end in the new bytes (the tail's were counted).
                if hay[i..i + pat.len()] == pat[..] && i + pat.len() > base {
                    *seen += 1;
                    if *seen == sh.stall.nth {
                        sh.tripped.store(true, Ordering::SeqCst);
                        if !sh.stall.forward_trigger {
                            forward = i.saturating_sub(base);
                        }
                        break;
                    }
                }
                i += 1;
            }
            let keep = pat.len().saturating_sub(1).min(hay.len());
            tail = hay[hay.len() - keep..].to_vec();
        }
        if forward > 0 && server.write_all(&chunk[..forward]).is_err() {
            break;
        }
        if sh.stall.drop_on_trip && sh.tripped.load(Ordering::SeqCst) {
            client.shutdown(Shutdown::Both).ok();
            break;
        }
    }
    // The client went away: so does the server's session (a real server notices a closed peer).
    server.shutdown(Shutdown::Both).ok();
}

fn server_to_client(sh: &Shared, mut server: TcpStream, mut client: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let pass = if sh.tripped.load(Ordering::SeqCst) {
            let left = sh.budget.load(Ordering::SeqCst);
            let take = left.min(n);
            sh.budget.fetch_sub(take, Ordering::SeqCst);
            take
        } else {
            n
        };
        if pass > 0 && client.write_all(&buf[..pass]).is_err() {
            break;
        }
    }
    // A silent server never closes its side; one that was not silent did.
    if !sh.tripped.load(Ordering::SeqCst) {
        client.shutdown(Shutdown::Write).ok();
    }
}
