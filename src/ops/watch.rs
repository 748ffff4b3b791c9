//! `watch-dept`: a supervisor's watch of one department queue, with the shown events remembered
//! on the department's board in Redis (dedup across restarts), and the live screen's view of
//! the department's board for a day.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use chrono::NaiveDate;

use crate::amqp::ShownEvents;
pub(crate) use crate::amqp::{WatchItem, WatchOptions, WatchReport};
use crate::config::Config;
use crate::domain::day::shifts::Shifts;
use crate::domain::event::membership::Membership;
use crate::domain::report::summary::{self, Summary};
use crate::ops::reopen::{board_again, redis_gone};
use crate::redis::board::Board;

/// Watch the department's queue (see `amqp::watch_department`), handing each item to `show`.
/// A live watch (not `--once`) whose Redis goes away waits for it to come back, saying so
/// through `say`, and carries on with the delivery it was showing (still unacked meanwhile).
pub(crate) fn department(
    cfg: &Config,
    dept: &str,
    opts: WatchOptions,
    stop: &AtomicBool,
    say: impl FnMut(String),
    show: impl FnMut(WatchItem<'_>) -> Result<()>,
) -> Result<WatchReport> {
    let mut board = Board::open(cfg)?;
    // Public keys only: a supervisor's machine holds nothing that signs.
    let ring = crate::ops::keys::verifiers(cfg, &mut board)?;
    let mut shown = Shown {
        cfg,
        board,
        reconnect: !opts.once,
        stop,
        say,
    };
    crate::amqp::watch_department(cfg, &mut shown, dept, (opts, ring), stop, show)
}

/// The watchers' dedup, beside the department's board, on a connection that a live watch
/// reopens when Redis restarts.
struct Shown<'a, S> {
    cfg: &'a Config,
    board: Board,
    reconnect: bool,
    stop: &'a AtomicBool,
    say: S,
}

impl<S: FnMut(String)> Shown<'_, S> {
    /// `op` on the board; again on a new connection after Redis came back, if it was gone.
    fn again<T>(&mut self, mut op: impl FnMut(&mut Board) -> Result<T>) -> Result<T> {
        loop {
            match op(&mut self.board) {
                Err(e) if self.reconnect && redis_gone(&e) && !self.stop.load(Ordering::SeqCst) => {
                    match board_again(self.cfg, &e, self.stop, &mut self.say)? {
                        Some(b) => self.board = b,
                        // Stopped meanwhile: the delivery stays unacked, handed back.
                        None => return Err(e),
                    }
                }
                r => return r,
            }
        }
    }
}

impl<S: FnMut(String)> ShownEvents for Shown<'_, S> {
    fn shown_before(&mut self, dept: &str, event_id: &str) -> Result<bool> {
        self.again(|b| b.shown_before(dept, event_id))
    }

    fn mark_shown(&mut self, dept: &str, event_id: &str) -> Result<()> {
        self.again(|b| b.mark_shown(dept, event_id))
    }

    fn refused(&mut self, class: &str) -> Result<()> {
        self.again(|b| b.count_refused(class, 1))
    }

    fn membership(&mut self, employee_id: &str, dept: &str) -> Result<Option<Membership>> {
        self.again(|b| b.membership(employee_id, dept))
    }

    fn shifts(&mut self, employee_id: &str) -> Result<Shifts> {
        let cfg = self.cfg;
        // A live screen's events are today's (a night shift's default shift never crosses midnight).
        let today = chrono::Utc::now().with_timezone(&cfg.timezone).date_naive();
        self.again(|b| crate::ops::lookup::shifts_on(cfg, b, &[employee_id], today))
    }
}

/// What the live screen draws: the department's day, and the names of its people.
#[derive(Debug, Clone)]
pub(crate) struct DepartmentView {
    pub summary: Summary,
    /// Employee id -> name (ids the roster cache does not know are left out).
    pub names: HashMap<String, String>,
}

/// The live screen's reader of a department's board, on a connection of its own (the watch
/// keeps another for its dedup). Redis gone is no failure here: the screen says so and the
/// next redraw tries again.
pub(crate) struct Viewer {
    board: Option<Board>,
    /// Names already looked up: a redraw asks the roster cache only for people new on the board.
    names: HashMap<String, String>,
}

impl Viewer {
    pub(crate) fn open(cfg: &Config) -> Result<Viewer> {
        Ok(Viewer {
            board: Some(Board::open(cfg)?),
            names: HashMap::new(),
        })
    }

    /// The department's board of `date` summed up under the policy, with the names of everyone
    /// on it. `Err` of `Ok`: Redis is gone, in one line (the board is read again on the next call).
    pub(crate) fn department_view(
        &mut self,
        cfg: &Config,
        dept: &str,
        date: NaiveDate,
    ) -> Result<Result<DepartmentView, String>> {
        let known = &mut self.names;
        let mut read = |board: &mut Board| -> Result<DepartmentView> {
            let b = board.department_board(dept, date)?;
            // Each employee judged by their own shift (one small read of the shift copy).
            let ids: Vec<&str> = b.keys().map(String::as_str).collect();
            let policy = crate::ops::lookup::policy_on(cfg, board, date)?;
            let shifts = crate::domain::day::shifts::Shifts::new(board.read_shifts(&ids)?, &policy);
            let mut clocks = crate::domain::day::shifts::Clocks::new(&shifts, cfg.timezone);
            let by_id: HashMap<&str, crate::domain::day::shift_clock::DayClock> =
                ids.iter().map(|id| (*id, clocks.on(id, dept, date))).collect();
            let summary = summary::summarize_by(&b, |id| by_id[id]);
            let new: Vec<String> = b.keys().filter(|id| !known.contains_key(*id)).cloned().collect();
            if !new.is_empty() {
                known.extend(board.names(&new)?);
            }
            let names = b
                .keys()
                .filter_map(|id| Some((id.clone(), known.get(id)?.clone())))
                .collect();
            Ok(DepartmentView { summary, names })
        };
        let viewed = match self.board.as_mut() {
            Some(b) => read(b),
            None => Board::open(cfg).and_then(|mut b| {
                let v = read(&mut b);
                self.board = Some(b);
                v
            }),
        };
        match viewed {
            Err(e) if redis_gone(&e) => {
                self.board = None;
                Ok(Err(crate::ops::exit::one_line(&e)))
            }
            r => r.map(Ok),
        }
    }
}
