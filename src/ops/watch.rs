//! `watch-dept`: a supervisor's watch of one department queue, with the shown events remembered
//! on the department's board in Redis (dedup across restarts), and the live screen's view of
//! the department's board for a day.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use chrono::NaiveDate;

use crate::amqp::ShownEvents;
pub(crate) use crate::amqp::{WatchItem, WatchOptions, WatchReport};
use crate::config::Config;
use crate::domain::summary::{self, Summary};
use crate::redis::board::Board;

/// Watch the department's queue (see `amqp::watch_department`), handing each item to `show`.
pub(crate) fn department(
    cfg: &Config,
    dept: &str,
    opts: WatchOptions,
    stop: &AtomicBool,
    show: impl FnMut(WatchItem<'_>) -> Result<()>,
) -> Result<WatchReport> {
    let mut board = Board::open(cfg)?;
    crate::amqp::watch_department(cfg, &mut board, dept, opts, stop, show)
}

/// The watchers' dedup lives beside the department's board.
impl ShownEvents for Board {
    fn shown_before(&mut self, dept: &str, event_id: &str) -> Result<bool> {
        Board::shown_before(self, dept, event_id)
    }

    fn mark_shown(&mut self, dept: &str, event_id: &str) -> Result<()> {
        Board::mark_shown(self, dept, event_id)
    }
}

/// What the live screen draws: the department's day, and the names of the first employees of
/// its late, not-yet-in and early lists.
pub(crate) struct DepartmentView {
    pub summary: Summary,
    /// Employee id -> name (ids the roster cache does not know are left out).
    pub names: HashMap<String, String>,
}

/// The live screen's reader of a department's board, on a connection of its own (the watch
/// keeps another for its dedup).
pub(crate) struct Viewer {
    board: Board,
}

impl Viewer {
    pub(crate) fn open(cfg: &Config) -> Result<Viewer> {
        Ok(Viewer {
            board: Board::open(cfg)?,
        })
    }

    /// The department's board of `date` summed up under the policy, with the names of at most
    /// `named` employees of the late, not-yet-in and early lists (in that order).
    pub(crate) fn department_view(
        &mut self,
        cfg: &Config,
        dept: &str,
        date: NaiveDate,
        named: usize,
    ) -> Result<DepartmentView> {
        let b = self.board.department_board(dept, date)?;
        let summary = summary::summarize(&b, &cfg.policy, cfg.timezone, date);
        let ids: Vec<String> = [&summary.late, &summary.not_in, &summary.early]
            .into_iter()
            .flatten()
            .take(named)
            .cloned()
            .collect();
        let names = self.board.names(&ids)?;
        Ok(DepartmentView { summary, names })
    }
}
