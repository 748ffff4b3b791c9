//! The void notice: what a supervisor is told when a punch of their department is voided
//! (`punch void`). An event of its own type (`"type":"void"`) beside the punch's event: it is
//! signed over its own canonical text (never one a punch's signature could be taken for), it
//! travels the outbox and the department queue as a punch's event does, and it lacks a punch
//! event's fields (`late`, `changed`), so nothing that reads punches takes it for one.
//! Fields are documented in docs/notifications.md.

use chrono::{DateTime, NaiveDate};
use serde::{Deserialize, Serialize};

use crate::domain::event::membership::Membership;
use crate::domain::event::signer::Signer;
use crate::domain::event::signing::{Keyring, Refusal};
use crate::domain::punch::Kind;

/// A punch taken off its day before settle, as told to the department's supervisor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VoidNotice {
    /// Always `void`.
    #[serde(rename = "type")]
    pub notice_type: String,
    /// `void-<id>`: the id of the void's audit row; also the AMQP `message_id`.
    pub event_id: String,
    pub employee_id: String,
    pub employee_name: String,
    pub department_id: String,
    /// The voided punch's kind.
    pub kind: Kind,
    /// The voided punch's time, RFC 3339 with the company's UTC offset.
    pub at: String,
    pub work_date: NaiveDate,
    /// The employee who voided it (a supervisor or HR).
    pub voided_by: String,
    pub reason: String,
    /// When it was voided (RFC 3339, UTC, milliseconds).
    pub voided_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
}

impl VoidNotice {
    /// Sign it with the recording process's key (none: it goes unsigned).
    pub(crate) fn sign(&mut self, signer: Option<&Signer>) {
        let Some(signer) = signer else { return };
        self.key_id = Some(signer.key_id().to_string());
        self.sig = Some(signer.sign(&self.canonical(signer.key_id())));
    }

    /// The canonical text its signature covers: its own version tag, then the fields one per
    /// line, free texts JSON-escaped.
    fn canonical(&self, key_id: &str) -> String {
        let esc = |t: &str| serde_json::to_string(t).expect("a string always serialises");
        format!(
            "attendance-void-v1\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            esc(&self.event_id),
            esc(&self.employee_id),
            esc(&self.employee_name),
            esc(&self.department_id),
            self.work_date,
            esc(&self.at),
            self.kind,
            esc(&self.voided_by),
            esc(&self.reason),
            esc(&self.voided_at),
            esc(key_id),
        )
    }

    /// Its signature, through `ring` (the roster is the caller's to check).
    pub(crate) fn verify(&self, ring: &Keyring) -> Result<(), Refusal> {
        ring.verify_text(
            self.key_id.as_deref(),
            self.sig.as_deref(),
            (self.work_date, crate::domain::event::signing::millis(&self.voided_at)),
            |k| Ok(self.canonical(k)),
        )
    }

    /// Its signature through `ring`, then the roster as for a punch: the employee was in its
    /// department on its work date, and it came on that department's queue.
    pub(crate) fn check(
        &self,
        ring: &Keyring,
        tz: chrono_tz::Tz,
        roster: Option<&Membership>,
        expected_department: &str,
    ) -> Result<(), Refusal> {
        self.verify(ring)?;
        let clip = crate::domain::text::clip;
        match roster {
            None => Err(Refusal::Roster(format!(
                "unknown employee {:?}",
                clip(&self.employee_id)
            ))),
            Some(m) if !m.was_in(&self.department_id, tz, self.work_date) => Err(Refusal::Roster(format!(
                "employee {} was not in {:?} on {}",
                clip(&self.employee_id),
                clip(&self.department_id),
                self.work_date
            ))),
            Some(_) if self.department_id != expected_department => Err(Refusal::Roster(format!(
                "a void of {:?} on {expected_department}'s queue",
                clip(&self.department_id)
            ))),
            Some(_) => Ok(()),
        }
    }

    /// When it was voided, for the outbox's age checks.
    pub(crate) fn voided_at(&self) -> Option<DateTime<chrono::Utc>> {
        DateTime::parse_from_rfc3339(&self.voided_at)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

    fn notice() -> VoidNotice {
        VoidNotice {
            notice_type: crate::domain::event::message::VOID.into(),
            event_id: "void-7".into(),
            employee_id: "E7".into(),
            employee_name: "Zoë".into(),
            department_id: "D042".into(),
            kind: Kind::In,
            at: "2026-11-30T08:04:00+01:00".into(),
            work_date: NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
            voided_by: "E1".into(),
            reason: "badge lent".into(),
            voided_at: "2026-11-30T09:00:00.000Z".into(),
            key_id: None,
            sig: None,
        }
    }

    #[test]
    fn a_signed_notice_verifies_and_a_changed_one_does_not() {
        let signer = Signer::new("hq", S1).unwrap();
        let mut ring = Keyring::default();
        ring.add("hq", S1).unwrap();
        let tz = chrono_tz::Europe::Berlin;
        let member = Membership::now("D042");
        let mut n = notice();
        n.sign(Some(&signer));
        assert_eq!(n.check(&ring, tz, Some(&member), "D042"), Ok(()));
        let mut forged = n.clone();
        forged.kind = Kind::Out;
        assert!(matches!(
            forged.check(&ring, tz, Some(&member), "D042"),
            Err(Refusal::BadSignature(_))
        ));
        assert!(matches!(
            notice().check(&ring, tz, Some(&member), "D042"),
            Err(Refusal::Unsigned)
        ));
        assert!(matches!(
            n.check(&ring, tz, Some(&member), "D043"),
            Err(Refusal::Roster(_))
        ));
    }

    #[test]
    fn a_notice_is_told_from_a_punch_and_is_never_one() {
        let json = serde_json::to_vec(&notice()).unwrap();
        use crate::domain::event::message::MessageType;
        assert_eq!(MessageType::of(&json), Ok(MessageType::Void));
        assert!(serde_json::from_slice::<crate::domain::event::record::Event>(&json).is_err());
    }
}
