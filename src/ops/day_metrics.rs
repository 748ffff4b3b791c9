//! `attendance metrics`: the day's figures read from the stores on demand, as a Prometheus
//! text exposition (node_exporter's textfile collector, or a scrape through a wrapper).
//!
//! Each store is read on its own: one that cannot be read gives `attendance_store_up 0` and
//! leaves its series out, rather than failing the others or writing zeros that look true.

use std::collections::HashMap;

use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::punch::Kind;
use crate::ops::metrics::Textfile;
use crate::redis::board::Board;

/// The label value that gathers every department queue past the `top` deepest: the series
/// stay bounded whatever the number of departments.
pub(crate) const OTHER: &str = "_other";

/// Read every store and write the figures: `top` department queues by depth get their own
/// series, the rest one series labelled [`OTHER`].
pub(crate) fn gather(cfg: &Config, top: usize) -> Textfile {
    let mut t = Textfile::default();
    t.gauge(
        "attendance_build_info",
        "The running build: its version and git commit (always 1).",
        &[
            ("version", env!("CARGO_PKG_VERSION")),
            ("commit", env!("BUILD_GIT_COMMIT")),
        ],
        1.0,
    );
    let departments = mysql(cfg, &mut t);
    let today = redis(cfg, departments.as_deref(), &mut t);
    held(cfg, today, &mut t);
    broker(cfg, departments.as_deref(), top, &mut t);
    t
}

fn up(t: &mut Textfile, store: &str, ok: bool) {
    t.gauge(
        "attendance_store_up",
        "1 if the store answered this reading; its series are left out otherwise.",
        &[("store", store)],
        f64::from(u8::from(ok)),
    );
}

/// The roster's departments, or `None` (MySQL down).
fn mysql(cfg: &Config, t: &mut Textfile) -> Option<Vec<String>> {
    let read = || -> anyhow::Result<Vec<String>> {
        let db = crate::mysql::Db::open_reports(cfg)?;
        let ids = crate::mysql::people::roster_rows::department_ids(&mut db.conn()?)?;
        Ok(ids.into_iter().map(|(d, _)| d).collect())
    };
    let depts = read().ok();
    up(t, "mysql", depts.is_some());
    depts
}

/// Today's boards (today by the Redis server's clock, in the company's zone) and the outboxes.
/// Returns today, when Redis answered.
fn redis(cfg: &Config, departments: Option<&[String]>, t: &mut Textfile) -> Option<NaiveDate> {
    let read = || -> anyhow::Result<(NaiveDate, Option<Punches>, (usize, usize))> {
        let mut board = Board::open(cfg)?;
        let today = board.read_clock()?.server.with_timezone(&cfg.timezone).date_naive();
        let punches = match departments {
            Some(d) => Some(Punches::of(board.department_boards(today, d)?)),
            None => None,
        };
        Ok((today, punches, board.outbox_backlog()?))
    };
    let Ok((today, punches, (outbox_depts, pending))) = read() else {
        up(t, "redis", false);
        return None;
    };
    up(t, "redis", true);
    if let Some(p) = punches {
        for (kind, n) in [("in", p.ins), ("out", p.outs)] {
            t.gauge(
                "attendance_checkins_recorded",
                "Punches recorded on today's boards, by kind (a repeat is one punch).",
                &[("kind", kind)],
                n as f64,
            );
        }
        t.gauge(
            "attendance_employees_checked_in",
            "Employees with a check-in on today's boards.",
            &[],
            p.employees_in as f64,
        );
    }
    t.gauge(
        "attendance_events_pending",
        "Notifications recorded but not yet confirmed by the broker (the Redis outboxes).",
        &[],
        pending as f64,
    );
    t.gauge(
        "attendance_events_pending_departments",
        "Departments whose outbox holds notifications not yet confirmed.",
        &[],
        outbox_depts as f64,
    );
    Some(today)
}

/// Punches held for review and still pending: today's (when today is known) and all.
fn held(cfg: &Config, today: Option<NaiveDate>, t: &mut Textfile) {
    let read = || -> anyhow::Result<(u64, Option<u64>)> {
        let db = crate::mysql::Db::open_reports(cfg)?;
        let mut conn = db.conn()?;
        let all = crate::mysql::held_punches::pending(&mut conn, None)?;
        let day = match today {
            Some(d) => Some(crate::mysql::held_punches::pending(&mut conn, Some(d))?),
            None => None,
        };
        Ok((all, day))
    };
    let Ok((all, day)) = read() else { return };
    t.gauge(
        "attendance_checkins_held",
        "Punches held for review, pending (back-dated past the replay window): all days.",
        &[],
        all as f64,
    );
    if let Some(n) = day {
        t.gauge(
            "attendance_checkins_held_today",
            "Punches held for review, pending, dated today.",
            &[],
            n as f64,
        );
    }
}

/// The department queues' depths (bounded: the `top` deepest and the rest together), their
/// total, and the parking queue.
fn broker(cfg: &Config, departments: Option<&[String]>, top: usize, t: &mut Textfile) {
    let Ok(state) = crate::amqp::inventory::broker_state(cfg, departments.unwrap_or(&[])) else {
        up(t, "rabbitmq", false);
        return;
    };
    up(t, "rabbitmq", true);
    t.gauge(
        "attendance_events_parked",
        "Notifications in the parking queue (failed or refused): `attendance dlq list`.",
        &[],
        state.parked.unwrap_or(0) as f64,
    );
    if departments.is_none() {
        return;
    }
    t.gauge(
        "attendance_queue_messages",
        "Notifications waiting, unread, in all department queues.",
        &[],
        state.messages as f64,
    );
    for (dept, n) in bounded(&state.depths, top) {
        t.gauge(
            "attendance_queue_depth",
            "Notifications waiting in a department's queue: the deepest by name, the rest as _other.",
            &[("department", &dept)],
            n as f64,
        );
    }
}

/// The `top` deepest queues by name (deepest first, ties by name), then the rest summed as
/// [`OTHER`] when there is any rest.
pub(crate) fn bounded(depths: &[(String, u64)], top: usize) -> Vec<(String, u64)> {
    let mut sorted: Vec<&(String, u64)> = depths.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out: Vec<(String, u64)> = sorted.iter().take(top).map(|(d, n)| (d.clone(), *n)).collect();
    if sorted.len() > top {
        out.push((OTHER.to_string(), sorted[top..].iter().map(|(_, n)| n).sum()));
    }
    out
}

/// Punches on a day's boards.
#[derive(Debug, Default, PartialEq, Eq)]
struct Punches {
    ins: u64,
    outs: u64,
    employees_in: u64,
}

impl Punches {
    fn of(boards: Vec<HashMap<String, crate::domain::day::record::DayRecord>>) -> Punches {
        let mut p = Punches::default();
        for rec in boards.iter().flat_map(|b| b.values()) {
            let ins = rec.punches.iter().filter(|(k, _)| *k == Kind::In).count() as u64;
            p.ins += ins;
            p.outs += rec.punches.len() as u64 - ins;
            p.employees_in += u64::from(ins > 0);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_top_queues_the_rest_is_one_series() {
        let d = |v: &[(&str, u64)]| v.iter().map(|(k, n)| (k.to_string(), *n)).collect::<Vec<_>>();
        let depths = d(&[("D1", 5), ("D2", 50), ("D3", 7), ("D4", 7)]);
        assert_eq!(bounded(&depths, 2), d(&[("D2", 50), ("D3", 7), (OTHER, 12)]));
        assert_eq!(bounded(&depths, 4), d(&[("D2", 50), ("D3", 7), ("D4", 7), ("D1", 5)]));
        assert_eq!(bounded(&depths, 0), d(&[(OTHER, 69)]));
        assert_eq!(bounded(&[], 3), vec![]);
    }
}
