//! `doctor`'s view of the department queues' backlog: a queue holding more than a day of its
//! department's events (a check-in and a check-out per employee) has a supervisor who reads
//! none of them, and grows until its bound (`amqp.queue_max_length`, `amqp.queue_max_age_hours`).

use std::collections::HashMap;

use super::verdict::{check, Check, Level};
use crate::amqp::limits::{self, InForce};
use crate::config::Config;

/// Events a department makes in a day: a check-in and a check-out per employee.
pub(crate) const EVENTS_PER_EMPLOYEE_DAY: u64 = 2;

/// Departments whose queue holds more than a day of events, worst first (by days held).
pub(crate) fn behind(depths: &[(String, u64)], headcounts: &HashMap<String, u64>) -> Vec<(String, u64, u64)> {
    let mut over: Vec<(String, u64, u64)> = depths
        .iter()
        .filter_map(|(dept, n)| {
            let day = headcounts.get(dept).copied().unwrap_or(0).max(1) * EVENTS_PER_EMPLOYEE_DAY;
            (*n > day).then(|| (dept.clone(), *n, day))
        })
        .collect();
    over.sort_by(|a, b| (b.1 * a.2).cmp(&(a.1 * b.2)).then_with(|| a.0.cmp(&b.0)));
    over
}

/// The verdict: a warning naming the departments behind (the first five), with the bound in
/// force and what to do; a warning too when the broker's policy is not the configuration's.
pub(crate) fn verdict(cfg: &Config, depths: &[(String, u64)], headcounts: &HashMap<String, u64>) -> Check {
    let mut c = backlog(cfg, depths, headcounts);
    match limits::in_force(cfg) {
        InForce::Same => {}
        InForce::Differs { on_broker, configured } => {
            c.status = Level::Warn;
            let shown = |v: &Option<serde_json::Value>| v.as_ref().map_or("none".to_string(), ToString::to_string);
            c.detail += &format!(
                "; the queues' policy on the broker ({}) is not the configuration's ({}): run `attendance queues declare`",
                shown(&on_broker),
                shown(&configured)
            );
        }
        InForce::Unknown(None) => {
            c.detail += " (if the policy was set: without amqp.management_url it is not read)";
        }
        InForce::Unknown(Some(e)) => {
            c.detail += &format!(" (the policy was not read: {})", crate::ops::exit::one_line(&e))
        }
    }
    c
}

fn backlog(cfg: &Config, depths: &[(String, u64)], headcounts: &HashMap<String, u64>) -> Check {
    let over = behind(depths, headcounts);
    let bound = match (cfg.amqp.queue_max_length, cfg.amqp.queue_max_age_hours) {
        (0, 0) => "no bound: they grow until read (set amqp.queue_max_length or amqp.queue_max_age_hours)".to_string(),
        (0, h) => format!("events older than {h} h are dropped"),
        (n, 0) => format!("past {n} events the oldest are dropped"),
        (n, h) => format!("past {n} events the oldest are dropped, and those older than {h} h"),
    };
    if over.is_empty() {
        return check(
            "queue backlog",
            Level::Ok,
            format!("no department queue holds more than a day of events; {bound}"),
        );
    }
    let shown: Vec<String> = over
        .iter()
        .take(5)
        .map(|(d, n, day)| format!("{d} {n} (a day: {day})"))
        .collect();
    let more = if over.len() > shown.len() {
        format!(" and {} more", over.len() - shown.len())
    } else {
        String::new()
    };
    check(
        "queue backlog",
        Level::Warn,
        format!(
            "{} of {} department queues hold more than a day of events, unread: {}{more}; {bound}; \
             their supervisors run `attendance watch-dept`, or `attendance queues purge --yes` empties them",
            over.len(),
            depths.len(),
            shown.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_past_a_day_of_its_department_is_behind() {
        let heads: HashMap<String, u64> = [("D1".to_string(), 10), ("D2".to_string(), 1)].into();
        let depths = vec![("D1".to_string(), 20), ("D2".to_string(), 9), ("D3".to_string(), 3)];
        // D1 holds exactly a day (not behind); D2 four and a half days; D3 has nobody active,
        // counted as one employee.
        assert_eq!(
            behind(&depths, &heads),
            vec![("D2".to_string(), 9, 2), ("D3".to_string(), 3, 2)]
        );
        let v = verdict(&Config::default(), &depths, &heads);
        assert_eq!(v.status, Level::Warn);
        assert!(v.detail.contains("2 of 3 department queues"), "{}", v.detail);
        assert!(v.detail.contains("D2 9 (a day: 2)"), "{}", v.detail);
        assert!(v.detail.contains("older than 48 h"), "{}", v.detail);
    }
}
