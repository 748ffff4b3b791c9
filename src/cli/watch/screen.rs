//! The state of `watch-dept`'s live screen and what a key does to it: pure (no terminal, no
//! store), so that the drawing (`draw`) is a function of this state alone and both are
//! tested without a terminal. The terminal and its key loop are `live`.

use std::collections::VecDeque;

use chrono::NaiveDate;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::ops::watch::DepartmentView;

/// Event lines kept under the board.
const RECENT: usize = 50;

/// Which of the board's lists the screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filter {
    All,
    Late,
    NotIn,
    Out,
}

impl Filter {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Late => "late",
            Filter::NotIn => "not yet in",
            Filter::Out => "out",
        }
    }
}

/// One line of the latest events. `day` is the event's work date when it is not the screen's
/// day (yesterday's unread check-out, a back-dated punch): it is drawn in front, marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub day: Option<NaiveDate>,
    /// Inert text (every name and id in it came from a message or the roster).
    pub text: String,
}

/// The latest absence alert: who is still missing, who arrived late since (entries `ID Name`, inert).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AlertPanel {
    pub at: String,
    pub expected: u32,
    pub missing: Vec<String>,
    pub arrived: Vec<String>,
}

/// What the last drawing laid out: the key handler pages and clamps the scroll with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Drawn {
    /// Rows of the board's list (headings included) at the drawn width.
    pub rows: usize,
    /// Rows of the list that fit on the screen.
    pub height: usize,
}

/// What the loop does after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Quit,
    Redraw,
    Nothing,
}

pub(crate) struct ScreenState {
    pub dept: String,
    /// The board's day (today, by the company's clock).
    pub date: NaiveDate,
    /// The time of the last reading of the board, `HH:MM:SS`.
    pub clock: String,
    /// The board, or why Redis could not be read (one line; the screen says it reconnects).
    pub board: Result<DepartmentView, String>,
    /// Oldest first.
    pub recent: VecDeque<Entry>,
    pub alert: Option<AlertPanel>,
    /// The watch's latest word (reconnecting to the broker, a message refused), inert.
    pub notice: Option<String>,
    pub filter: Filter,
    /// First row of the list shown.
    pub scroll: usize,
    pub drawn: Drawn,
}

impl ScreenState {
    pub(crate) fn new(dept: &str, date: NaiveDate) -> ScreenState {
        ScreenState {
            dept: dept.to_string(),
            date,
            clock: String::new(),
            board: Err("not read yet".into()),
            recent: VecDeque::new(),
            alert: None,
            notice: None,
            filter: Filter::All,
            scroll: 0,
            drawn: Drawn::default(),
        }
    }

    pub(crate) fn push(&mut self, entry: Entry) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(entry);
    }

    /// The furthest the list scrolls: its last row at the bottom of the screen.
    fn last_scroll(&self) -> usize {
        self.drawn.rows.saturating_sub(self.drawn.height.max(1))
    }

    /// What `key` does: quit, filter (the list goes back to its top), scroll.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::Nothing;
        }
        let page = self.drawn.height.saturating_sub(1).max(1);
        if quits(&key) {
            return Action::Quit;
        }
        let scroll = match key.code {
            KeyCode::Char(c @ ('a' | 'l' | 'n' | 'o')) => {
                self.filter = match c {
                    'l' => Filter::Late,
                    'n' => Filter::NotIn,
                    'o' => Filter::Out,
                    _ => Filter::All,
                };
                self.scroll = 0;
                return Action::Redraw;
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll.saturating_add(1),
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll.saturating_add(page),
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => usize::MAX,
            _ => return Action::Nothing,
        };
        let scroll = scroll.min(self.last_scroll());
        if scroll == self.scroll {
            return Action::Nothing;
        }
        self.scroll = scroll;
        Action::Redraw
    }
}

/// q, Esc and Ctrl-C (in raw mode a key, not a signal) leave the screen.
pub(crate) fn quits(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
        && match key.code {
            KeyCode::Char('c') => key.modifiers.contains(KeyModifiers::CONTROL),
            KeyCode::Char('q') | KeyCode::Esc => true,
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn state(rows: usize, height: usize) -> ScreenState {
        let mut s = ScreenState::new("D1", NaiveDate::from_ymd_opt(2026, 12, 2).unwrap());
        s.drawn = Drawn { rows, height };
        s
    }

    #[test]
    fn q_esc_and_ctrl_c_quit() {
        let mut s = state(0, 0);
        assert_eq!(s.key(key(KeyCode::Char('q'))), Action::Quit);
        assert_eq!(s.key(key(KeyCode::Esc)), Action::Quit);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(s.key(ctrl_c), Action::Quit);
        assert_eq!(s.key(key(KeyCode::Char('c'))), Action::Nothing);
    }

    #[test]
    fn scrolling_stays_within_the_list_and_a_filter_goes_back_to_the_top() {
        let mut s = state(30, 10);
        assert_eq!(s.key(key(KeyCode::Up)), Action::Nothing, "already at the top");
        assert_eq!(s.key(key(KeyCode::Char('j'))), Action::Redraw);
        assert_eq!(s.scroll, 1);
        s.key(key(KeyCode::PageDown));
        assert_eq!(s.scroll, 10, "a page is the list's height less one row");
        s.key(key(KeyCode::PageDown));
        s.key(key(KeyCode::PageDown));
        assert_eq!(s.scroll, 20, "the last row at the bottom, no further");
        assert_eq!(s.key(key(KeyCode::Down)), Action::Nothing);
        s.key(key(KeyCode::Char('k')));
        s.key(key(KeyCode::PageUp));
        assert_eq!(s.scroll, 10);
        assert_eq!(s.key(key(KeyCode::Char('n'))), Action::Redraw);
        assert_eq!((s.filter, s.scroll), (Filter::NotIn, 0));
        s.key(key(KeyCode::Char('o')));
        assert_eq!(s.filter, Filter::Out);
        s.key(key(KeyCode::Char('l')));
        assert_eq!(s.filter, Filter::Late);
        s.key(key(KeyCode::Char('a')));
        assert_eq!(s.filter, Filter::All);
    }

    #[test]
    fn a_list_that_fits_does_not_scroll() {
        let mut s = state(5, 10);
        assert_eq!(s.key(key(KeyCode::PageDown)), Action::Nothing);
        assert_eq!(s.key(key(KeyCode::End)), Action::Nothing);
        assert_eq!(s.scroll, 0);
    }

    #[test]
    fn the_latest_events_keep_a_bounded_tail() {
        let mut s = state(0, 0);
        for i in 0..RECENT + 5 {
            s.push(Entry {
                day: None,
                text: i.to_string(),
            });
        }
        assert_eq!(s.recent.len(), RECENT);
        assert_eq!(s.recent.front().unwrap().text, "5");
    }
}
