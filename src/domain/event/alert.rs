//! The absence alert: what a department's supervisor is told at the start of a shift plus its
//! alert minutes (`domain::day::due`): who of those due has not arrived and is not on leave. A
//! message type of its own on the department's queue (`"type": "absence_alert"`), signed and
//! checked like a check-in's event, with one id per department, work date and shift, so that
//! however many relays send it a watcher shows it once (docs/notifications.md#absence-alerts).

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::domain::day::due::Due;
use crate::domain::event::message::ABSENCE_ALERT;
use crate::domain::event::signer::Signer;
use crate::domain::event::signing::{Keyring, Refusal};

/// Sent more than this long after its time, an alert says it is late (a relay that was down,
/// or that found it unsent when it started).
const LATE_AFTER_SECS: i64 = 60;

/// Someone due who had not arrived when the alert went out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Missing {
    pub employee_id: String,
    pub employee_name: String,
}

/// The absence alert on the wire (JSON); field names are documented in docs/notifications.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AbsenceAlert {
    /// Always [`ABSENCE_ALERT`].
    #[serde(rename = "type")]
    pub message_type: String,
    /// `absence:<department>:<work date>:<shift>`: the same from every relay; the AMQP
    /// `message_id`, and what watchers dedup on.
    pub event_id: String,
    pub department_id: String,
    pub work_date: NaiveDate,
    /// The shift whose start it reports (`default`: the company policy).
    pub shift: String,
    /// When the people were due, and when the alert was due (RFC 3339, the company's offset).
    pub due_at: String,
    pub alert_at: String,
    /// When it was sent (RFC 3339, UTC, milliseconds).
    pub sent_at: String,
    /// Sent more than a minute after `alert_at`, and by how many whole minutes.
    pub late: bool,
    pub late_minutes: u32,
    /// How many were due (not on leave, employed that day).
    pub expected: u32,
    /// Who of them had not arrived, by id.
    pub missing: Vec<Missing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
}

/// The one id of a department's alert for a work date and shift.
pub(crate) fn alert_id(dept: &str, date: NaiveDate, shift: &str) -> String {
    format!("absence:{dept}:{date}:{shift}")
}

impl AbsenceAlert {
    /// The alert of `due` sent at `now`, the people of `due` not in `arrived` listed as
    /// missing, signed with `signer` when there is one.
    pub(crate) fn new(
        due: &Due,
        date: NaiveDate,
        tz: Tz,
        now: DateTime<Utc>,
        arrived: impl Fn(&str) -> bool,
        signer: Option<&Signer>,
    ) -> AbsenceAlert {
        let local = |t: DateTime<Utc>| t.with_timezone(&tz).to_rfc3339_opts(SecondsFormat::Secs, false);
        let behind = (now - due.alert_at).num_seconds();
        let mut a = AbsenceAlert {
            message_type: ABSENCE_ALERT.to_string(),
            event_id: alert_id(&due.department_id, date, &due.shift),
            department_id: due.department_id.clone(),
            work_date: date,
            shift: due.shift.clone(),
            due_at: local(due.starts_at),
            alert_at: local(due.alert_at),
            sent_at: now.to_rfc3339_opts(SecondsFormat::Millis, true),
            late: behind > LATE_AFTER_SECS,
            late_minutes: u32::try_from(behind.max(0) / 60).unwrap_or(u32::MAX),
            expected: u32::try_from(due.people.len()).unwrap_or(u32::MAX),
            missing: due
                .people
                .iter()
                .filter(|(id, _)| !arrived(id))
                .map(|(id, name)| Missing {
                    employee_id: id.clone(),
                    employee_name: name.clone(),
                })
                .collect(),
            key_id: None,
            sig: None,
        };
        if let Some(s) = signer {
            // Freshly built: its times are RFC 3339, so the text always exists.
            let text = a.canonical(s.key_id()).expect("a new alert's times parse");
            a.sig = Some(s.sign(&text));
            a.key_id = Some(s.key_id().to_string());
        }
        a
    }

    /// The wire JSON.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an alert always serialises")
    }

    /// The text signed: a version tag, then every field but the signature one per line, the
    /// free texts JSON-escaped, the times as Unix seconds (milliseconds for `sent_at`).
    fn canonical(&self, key_id: &str) -> Result<String, Refusal> {
        let esc = |t: &str| serde_json::to_string(t).expect("a string always serialises");
        let secs = |what: &str, t: &str| {
            DateTime::parse_from_rfc3339(t)
                .map(|t| t.timestamp_millis())
                .map_err(|e| Refusal::Malformed(format!("{what}: {e}")))
        };
        let missing: Vec<[&str; 2]> = self
            .missing
            .iter()
            .map(|m| [m.employee_id.as_str(), m.employee_name.as_str()])
            .collect();
        Ok(format!(
            "attendance-absence-alert-v1\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            esc(&self.event_id),
            esc(&self.department_id),
            self.work_date,
            esc(&self.shift),
            secs("due_at", &self.due_at)? / 1000,
            secs("alert_at", &self.alert_at)? / 1000,
            secs("sent_at", &self.sent_at)?,
            self.late_minutes,
            self.expected,
            serde_json::to_string(&missing).expect("strings always serialise"),
            esc(&self.message_type),
            esc(key_id),
        ))
    }

    /// What a consumer of `expected_department`'s queue checks: the signature through `ring`,
    /// the department, and the id (an alert for another department, day or shift under this
    /// one's id would hide the real one from the dedup).
    pub(crate) fn check(&self, ring: &Keyring, expected_department: &str) -> Result<(), Refusal> {
        ring.verify_text(
            self.key_id.as_deref(),
            self.sig.as_deref(),
            (self.work_date, crate::domain::event::signing::millis(&self.sent_at)),
            |k| self.canonical(k),
        )?;
        let clip = crate::domain::text::clip;
        if self.department_id != expected_department {
            return Err(Refusal::Roster(format!(
                "an alert of {:?} on {expected_department}'s queue",
                clip(&self.department_id)
            )));
        }
        if self.event_id != alert_id(&self.department_id, self.work_date, &self.shift) {
            return Err(Refusal::Malformed(format!(
                "alert id {:?} is not its department's, day's and shift's",
                clip(&self.event_id)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

    fn due() -> Due {
        let t = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        Due {
            department_id: "D042".into(),
            shift: "default".into(),
            starts_at: t("2026-12-02T08:00:00Z"),
            alert_at: t("2026-12-02T08:15:00Z"),
            people: vec![
                ("E1".into(), "Zoë \"Z\"".into()),
                ("E2".into(), "Bo".into()),
                ("E3".into(), "Al".into()),
            ],
        }
    }

    fn alert(at: &str, signer: Option<&Signer>) -> AbsenceAlert {
        let now = DateTime::parse_from_rfc3339(at).unwrap().with_timezone(&Utc);
        let date = NaiveDate::from_ymd_opt(2026, 12, 2).unwrap();
        AbsenceAlert::new(&due(), date, chrono_tz::Europe::Paris, now, |e| e == "E2", signer)
    }

    #[test]
    fn it_lists_who_has_not_arrived_and_says_when_it_is_late() {
        let a = alert("2026-12-02T08:15:20Z", None);
        let ids: Vec<&str> = a.missing.iter().map(|m| m.employee_id.as_str()).collect();
        assert_eq!(ids, ["E1", "E3"]);
        assert_eq!((a.expected, a.late, a.late_minutes), (3, false, 0));
        assert_eq!(a.event_id, "absence:D042:2026-12-02:default");
        assert_eq!(a.alert_at, "2026-12-02T09:15:00+01:00");
        let late = alert("2026-12-02T10:00:59Z", None);
        assert_eq!((late.late, late.late_minutes), (true, 105));
        let back: AbsenceAlert = serde_json::from_str(&late.to_json()).unwrap();
        assert_eq!(back, late);
        assert!(late.to_json().starts_with(r#"{"type":"absence_alert","#));
    }

    #[test]
    fn a_signed_alert_verifies_and_any_change_breaks_it() {
        let s = Signer::new("relay-1", S1).unwrap();
        let mut ring = Keyring::default();
        ring.add("relay-1", S1).unwrap();
        let a = alert("2026-12-02T08:15:20Z", Some(&s));
        assert_eq!(a.check(&ring, "D042"), Ok(()));
        let mut fewer = a.clone();
        fewer.missing.pop();
        assert!(matches!(fewer.check(&ring, "D042"), Err(Refusal::BadSignature(_))));
        let mut renamed = a.clone();
        renamed.missing[0].employee_name = "Someone".into();
        assert!(matches!(renamed.check(&ring, "D042"), Err(Refusal::BadSignature(_))));
        assert!(matches!(a.check(&ring, "D043"), Err(Refusal::Roster(_))));
        assert_eq!(
            alert("2026-12-02T08:15:20Z", None).check(&ring, "D042"),
            Err(Refusal::Unsigned)
        );
        let mut other_id = alert("2026-12-02T08:15:20Z", None);
        other_id.event_id = "absence:D042:2026-12-03:default".into();
        ring.accept_unsigned_until = NaiveDate::from_ymd_opt(2026, 12, 31);
        assert!(matches!(other_id.check(&ring, "D042"), Err(Refusal::Malformed(_))));
    }
}
