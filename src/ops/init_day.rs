//! Laying out a day: every active department's board in Redis from the MySQL roster, the day's
//! department queues declared on the broker meanwhile, and the layout recorded in MySQL (settle
//! then refuses the day if its boards go missing).

use std::time::Instant;

use anyhow::Result;
use chrono::NaiveDate;

use super::queues::{declare_missing, Declared};
use crate::board::LayoutReport;
use crate::config::Config;
use crate::keys::Keys;
use crate::{board, db, layout, services};

/// What laying out a day did, and what the caller should tell the operator.
#[derive(Debug)]
pub struct Outcome {
    pub layout: LayoutReport,
    /// Redis keeps nothing on disk or may evict keys: the one-line warning.
    pub persistence: Option<String>,
    /// The department queues declared, or why none were (a broker away costs a warning,
    /// never the day's layout).
    pub queues: Result<Declared, String>,
    pub seconds: f64,
}

/// Lay out `date`. `started(employees)` is called once the work is known, `progress(n)` as
/// boards are laid out.
pub fn init_day(
    cfg: &Config,
    date: NaiveDate,
    started: impl FnOnce(u64),
    mut progress: impl FnMut(usize),
) -> Result<Outcome> {
    db::runs::check_storable(date)?;
    let pool = services::mysql(cfg)?;
    let mut conn = pool.get_conn().map_err(|e| services::mysql_error(cfg, e))?;
    let depts: Vec<String> = db::roster::department_ids(&mut conn)?
        .into_iter()
        .filter_map(|(d, active)| active.then_some(d))
        .collect();
    let mut con = services::redis(cfg)?;
    let persistence = board::health::warning(&mut con);
    // The progress bar's length: the roster as the cache last saw it (counting MySQL's active
    // employees would read the whole department index, a good part of a second at a million).
    let keys = Keys::new(&cfg.namespace);
    started(board::roster_cache_state(&mut con, &keys)?.held);
    let clock = Instant::now();
    // The day's queues are looked up on the broker (the missing ones declared) while the boards
    // are laid out in Redis: two services' work, overlapped.
    let (layout, queues) = std::thread::scope(|s| {
        let declaring = s.spawn(|| declare_missing(cfg, &depts));
        let layout = layout::lay_out(&pool, &mut con, &keys, date, &depts, &mut progress);
        let queues = declaring
            .join()
            .unwrap_or_else(|_| Err("the declaring thread panicked".into()));
        (layout, queues)
    });
    let layout = layout?;
    // Recorded once the boards exist: a layout cut off half-way is not claimed.
    db::runs::record_layout(&mut conn, date, layout.departments, layout.employees)?;
    Ok(Outcome {
        layout,
        persistence,
        queues,
        seconds: clock.elapsed().as_secs_f64(),
    })
}
