//! `watch-dept`'s live screen on a terminal (ratatui over crossterm): the alternate screen in
//! raw mode, restored when the screen is dropped (a normal end, an error) and by ratatui's
//! panic hook; a thread reading keys; the board read again at most every [`REDRAW`]. What is
//! drawn is [`ScreenState`], drawn by `draw`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{Receiver, Sender};
use ratatui::crossterm::event::{self, Event};
use ratatui::DefaultTerminal;

use super::draw::draw;
use super::screen::{quits, Action, Entry, ScreenState};
use crate::cli::Ctx;
use crate::ops::watch::Viewer;

/// The board is read again (and the clock moves) this often.
pub(crate) const REDRAW: Duration = Duration::from_millis(500);
/// How long a key may wait to be seen: the watch's idle tick on the live screen.
pub(crate) const KEYS: Duration = Duration::from_millis(100);
/// Events redraw at most this often (a backlog arrives in a burst); a key or a resize at once.
const FRAME: Duration = Duration::from_millis(100);

pub(crate) struct Live {
    term: DefaultTerminal,
    pub state: ScreenState,
    viewer: Viewer,
    keys: Receiver<Event>,
    /// Set when the screen goes: the key thread ends.
    gone: Arc<AtomicBool>,
    read: Option<Instant>,
    drawn: Option<Instant>,
    /// Something changed since the last frame; `now`: a key or a resize, drawn at once.
    dirty: bool,
    now: bool,
}

impl Live {
    /// Open the board's reader (a Redis that is down fails here, before the terminal is
    /// touched), then take the terminal and start reading keys: a quitting key sets `stop`.
    pub(crate) fn open(ctx: &Ctx, dept: &str, stop: &'static AtomicBool) -> Result<Live> {
        let viewer = Viewer::open(&ctx.cfg)?;
        let term = ratatui::try_init().context("could not set the terminal up for the live screen")?;
        let (tx, keys) = crossbeam_channel::unbounded();
        let gone = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&gone);
        std::thread::spawn(move || read_keys(stop, &done, &tx));
        Ok(Live {
            term,
            state: ScreenState::new(dept, ctx.today()),
            viewer,
            keys,
            gone,
            read: None,
            drawn: None,
            dirty: true,
            now: true,
        })
    }

    pub(crate) fn push(&mut self, entry: Entry) {
        self.state.push(entry);
        self.dirty = true;
    }

    /// The watch's latest word, on the screen instead of stderr (which is the same terminal).
    pub(crate) fn notice(&mut self, line: String) {
        self.state.notice = Some(crate::domain::text::inert(&line).into_owned());
        self.dirty = true;
    }

    /// Take the keys that came, read the board if it is due, redraw if anything changed.
    pub(crate) fn refresh(&mut self, ctx: &Ctx) -> Result<()> {
        while let Ok(ev) = self.keys.try_recv() {
            match ev {
                Event::Key(k) => self.now |= self.state.key(k) == Action::Redraw,
                Event::Resize(..) => self.now = true,
                _ => {}
            }
        }
        if self.read.is_none_or(|t| t.elapsed() >= REDRAW) {
            let date = ctx.today();
            self.state.board = self.viewer.department_view(&ctx.cfg, &self.state.dept, date)?;
            self.state.date = date;
            let now = chrono::Utc::now().with_timezone(&ctx.cfg.timezone);
            self.state.clock = now.format("%H:%M:%S").to_string();
            self.read = Some(Instant::now());
            self.dirty = true;
        }
        let due = self.drawn.is_none_or(|t| t.elapsed() >= FRAME);
        if self.now || (self.dirty && due) {
            let state = &self.state;
            let mut drawn = state.drawn;
            self.term.draw(|f| drawn = draw(f, state))?;
            self.state.drawn = drawn;
            self.drawn = Some(Instant::now());
            (self.dirty, self.now) = (false, false);
        }
        Ok(())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.gone.store(true, Ordering::SeqCst);
        self.term.show_cursor().ok();
        // Nowhere to report a terminal that cannot be put back: stderr is that terminal.
        ratatui::try_restore().ok();
    }
}

/// Keys and resizes to the screen; a quitting key (q, Esc, Ctrl-C: raw mode turns Ctrl-C
/// into a key) sets `stop`, which ends the watch wherever it waits.
fn read_keys(stop: &AtomicBool, gone: &AtomicBool, tx: &Sender<Event>) {
    while !stop.load(Ordering::SeqCst) && !gone.load(Ordering::SeqCst) {
        match event::poll(KEYS) {
            Ok(false) => {}
            Ok(true) => match event::read() {
                Ok(Event::Key(k)) if quits(&k) => stop.store(true, Ordering::SeqCst),
                Ok(ev) => {
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            // No terminal to read keys from: SIGINT and SIGTERM still stop the watch.
            Err(_) => return,
        }
    }
}
