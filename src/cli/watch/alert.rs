//! How `watch-dept` shows an absence alert: one line (or its JSON) piped, a panel on the live
//! screen; and a check-in of someone it listed, marked "arrived late".

use std::collections::BTreeMap;

use super::screen::AlertPanel;
use crate::cli::Ctx;
use crate::domain::dates::{minutes_text, wall_clock};
use crate::domain::event::alert::AbsenceAlert;
use crate::domain::event::record::Event;
use crate::domain::punch::Kind;
use crate::domain::text::inert;

/// The latest alert's people, and whether each has arrived since.
#[derive(Default)]
pub(crate) struct Alerted {
    /// The alert's time (HH:MM) and work date.
    at: String,
    date: Option<chrono::NaiveDate>,
    expected: u32,
    /// Employee id -> (name, arrived since).
    people: BTreeMap<String, (String, bool)>,
}

/// A time of an alert (RFC 3339) on the company's clock, `HH:MM`.
fn hhmm(ctx: &Ctx, t: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|t| wall_clock(t.with_timezone(&ctx.cfg.timezone), "%H:%M"))
        .unwrap_or_else(|_| t.to_string())
}

/// One plain line: the alert's time, the department, who is missing; inert.
pub(crate) fn alert_line(ctx: &Ctx, a: &AbsenceAlert) -> String {
    let people: Vec<String> = a
        .missing
        .iter()
        .map(|m| format!("{} {}", m.employee_id, m.employee_name))
        .collect();
    let line = format!(
        "{} {} absence alert ({} shift, due {}): {} of {} not in{}{}",
        hhmm(ctx, &a.alert_at),
        a.department_id,
        a.shift,
        hhmm(ctx, &a.due_at),
        a.missing.len(),
        a.expected,
        if people.is_empty() {
            String::new()
        } else {
            format!(": {}", people.join(", "))
        },
        if a.late {
            format!(" (sent late, by {})", minutes_text(a.late_minutes))
        } else {
            String::new()
        }
    );
    inert(&line).into_owned()
}

impl Alerted {
    /// Remember the people of `a` (a later alert of another day replaces it; one of the same
    /// day, another shift's, adds its people).
    pub(crate) fn note(&mut self, ctx: &Ctx, a: &AbsenceAlert) {
        if self.date != Some(a.work_date) {
            *self = Alerted::default();
        }
        self.date = Some(a.work_date);
        self.at = hhmm(ctx, &a.alert_at);
        self.expected += a.expected;
        for m in &a.missing {
            self.people
                .insert(m.employee_id.clone(), (m.employee_name.clone(), false));
        }
    }

    /// For a first check-in of someone the alert listed as missing: the note that says they
    /// arrived late (once: a repeat is not marked again).
    pub(crate) fn arrived(&mut self, e: &Event) -> Option<String> {
        if e.kind != Kind::In || !e.changed || self.date != Some(e.work_date) {
            return None;
        }
        let (_, arrived) = self.people.get_mut(&e.employee_id).filter(|(_, a)| !*a)?;
        *arrived = true;
        Some(format!(" - arrived late (missing at the {} absence alert)", self.at))
    }

    /// The live screen's panel: who is still missing and who arrived late; `None` before any alert.
    pub(crate) fn panel(&self) -> Option<AlertPanel> {
        self.date?;
        let list = |arrived: bool| {
            self.people
                .iter()
                .filter(|(_, (_, a))| *a == arrived)
                .map(|(id, (name, _))| inert(&format!("{id} {name}")).into_owned())
                .collect()
        };
        Some(AlertPanel {
            at: self.at.clone(),
            expected: self.expected,
            missing: list(false),
            arrived: list(true),
        })
    }
}
