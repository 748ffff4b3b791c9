//! The live screen of `watch-dept` on a terminal: the department's board for today (who is
//! in, late, not yet in, out, early) above the latest events, redrawn in place.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::Ctx;
use crate::domain::text::inert;
use crate::ops::watch::Viewer;

/// Event lines kept under the board on the live screen.
const RECENT: usize = 15;
/// Names listed per state on the live screen before "and N more".
pub(crate) const NAMES: usize = 12;
/// The live screen's refresh: at most this often on events, and this often when idle.
pub(crate) const REDRAW: Duration = Duration::from_millis(500);

pub(crate) struct Screen {
    viewer: Viewer,
    recent: VecDeque<String>,
    pub drawn: Instant,
    /// The absence alert's panel (who is still missing, who arrived late), once one came.
    pub alert: Option<String>,
}

impl Screen {
    pub(crate) fn new(viewer: Viewer) -> Screen {
        Screen {
            viewer,
            recent: VecDeque::new(),
            drawn: Instant::now() - REDRAW,
            alert: None,
        }
    }

    pub(crate) fn push(&mut self, line: String) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(line);
    }

    pub(crate) fn draw(&mut self, ctx: &Ctx, dept: &str) -> Result<()> {
        let date = ctx.today();
        let view = match self.viewer.department_view(&ctx.cfg, dept, date, 3 * NAMES)? {
            Ok(v) => v,
            Err(why) => return self.draw_lost(dept, &why),
        };
        let (s, names) = (&view.summary, &view.names);
        let list = |v: &[String]| {
            let shown: Vec<String> = v
                .iter()
                .take(NAMES)
                .map(|id| match names.get(id) {
                    Some(n) => inert(&format!("{id} {n}")).into_owned(),
                    None => inert(id).into_owned(),
                })
                .collect();
            let more = v.len().saturating_sub(NAMES);
            format!(
                "{}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        };
        let now = chrono::Utc::now().with_timezone(&ctx.cfg.timezone);
        let mut out = String::from("\x1b[2J\x1b[H");
        out += &format!(
            "Department {dept}, {date}, {} (Ctrl-C to leave)\n\n",
            now.format("%H:%M:%S")
        );
        out += &format!(
            "in {} (late {}) | not yet in {} | out {} (early {})\n\n",
            s.on_time.len() + s.late.len(),
            s.late.len(),
            s.not_in.len(),
            s.out.len(),
            s.early.len()
        );
        if let Some(panel) = &self.alert {
            out += panel;
        }
        out += &format!(
            "Late:       {}\nNot yet in: {}\nEarly out:  {}\n\nLatest events:\n",
            list(&s.late),
            list(&s.not_in),
            list(&s.early)
        );
        self.finish(out)
    }

    /// Redis is gone: the latest events under a line saying so, until the board is back.
    fn draw_lost(&mut self, dept: &str, why: &str) -> Result<()> {
        let mut out = String::from("\x1b[2J\x1b[H");
        out += &format!("Department {dept} (Ctrl-C to leave)\n\n");
        out += &format!("Redis lost: {}; reconnecting\n\nLatest events:\n", inert(why));
        self.finish(out)
    }

    fn finish(&mut self, mut out: String) -> Result<()> {
        // The screen's own escapes above are the only ones written: every name, id and event
        // line is inert (`Screen::push` is given inert lines).
        for l in &self.recent {
            out += &inert(l);
            out.push('\n');
        }
        crate::output::data(&out)?;
        self.drawn = Instant::now();
        Ok(())
    }
}
