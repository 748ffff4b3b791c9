//! A command run in a pseudo-terminal of its own, what it draws kept by a terminal emulator
//! (vt100): the screen a person at that terminal sees, keys typed into it, its window resized
//! (TIOCSWINSZ on the pty: the kernel sends the command SIGWINCH, as a terminal window does).

use std::fs::File;
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Pty {
    master: File,
    /// Our end of the terminal's slave side: its modes are read after the command ended.
    slave: File,
    child: Child,
    term: Arc<Mutex<vt100::Parser>>,
}

fn size(rows: u16, cols: u16) -> libc::winsize {
    libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).expect("a terminal has rows and columns")
}

impl Pty {
    /// Start `cmd` on a new pseudo-terminal of `rows` x `cols`, as its controlling terminal
    /// (a session of its own), stdin, stdout and stderr.
    pub fn spawn(mut cmd: Command, rows: u16, cols: u16) -> Pty {
        let (mut master, mut slave) = (0, 0);
        let ws = size(rows, cols);
        // SAFETY: openpty writes two descriptors into the given ints; no name, default modes.
        let r = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &ws) };
        assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned by nothing else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        let io = |f: &File| Stdio::from(f.try_clone().unwrap());
        cmd.stdin(io(&slave))
            .stdout(io(&slave))
            .stderr(io(&slave))
            .env("TERM", "xterm-256color");
        // SAFETY: only async-signal-safe calls (setsid, ioctl) between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start the command on the pty");
        let term = Arc::new(Mutex::new(vt100::Parser::new(nz(rows), nz(cols), 0)));
        let (mut from, to) = (master.try_clone().unwrap(), Arc::clone(&term));
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Ends when the pty is gone (EIO once no process holds the slave side).
            while let Ok(n @ 1..) = from.read(&mut buf) {
                to.lock().unwrap().process(&buf[..n]);
            }
        });
        Pty {
            master,
            slave,
            child,
            term,
        }
    }

    /// The screen now: its rows, trailing blanks cut.
    pub fn rows(&self) -> Vec<String> {
        let t = self.term.lock().unwrap();
        let cols = t.screen().size().1.get();
        t.screen().rows(0, cols).map(|r| r.trim_end().to_string()).collect()
    }

    /// Wait (up to 20 s) until the screen's rows satisfy `ok`; they are returned.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let rows = self.rows();
            if ok(&rows) {
                return rows;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not within 20 s; the screen:\n{}",
                rows.join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Type `keys` into the terminal.
    pub fn send(&mut self, keys: &[u8]) {
        self.master.write_all(keys).unwrap();
        self.master.flush().unwrap();
    }

    /// Resize the window: the emulator first, then the pty (which signals the command).
    pub fn resize(&self, rows: u16, cols: u16) {
        let mut t = self.term.lock().unwrap();
        t.set_size(nz(rows), nz(cols));
        // SAFETY: TIOCSWINSZ reads one winsize from the pointer.
        let r = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size(rows, cols)) };
        assert_eq!(r, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// Whether the emulator is on the alternate screen, and whether the cursor is hidden.
    pub fn alternate_and_hidden(&self) -> (bool, bool) {
        let t = self.term.lock().unwrap();
        (t.screen().alternate_screen(), t.screen().hide_cursor())
    }

    /// Whether the terminal is in its cooked mode (line editing, echo, Ctrl-C as a signal),
    /// as a shell expects it back, not raw.
    pub fn cooked(&self) -> bool {
        // SAFETY: tcgetattr fills the zeroed termios of an open terminal descriptor.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(self.slave.as_raw_fd(), &mut t) }, 0);
        let want = libc::ICANON | libc::ECHO | libc::ISIG;
        t.c_lflag & want == want
    }

    /// Wait (up to `within`) for the command to end.
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // What it wrote last (after leaving the screen) reaches the emulator.
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running after {within:?}; the screen:\n{}",
                self.rows().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Pty {
    /// A test that failed half-way leaves no command running.
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}
