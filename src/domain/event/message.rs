//! The one reader of what a queued message is: a department queue (and an outbox) carries a
//! punch's event (no `type`), an absence alert (`"type":"absence_alert"`) or a void's notice
//! (`"type":"void"`). Publishers (`event::render`) and consumers (`amqp::consume`) both ask
//! here, so they never disagree on what a body is.

use serde::Deserialize;

/// The `type` of an absence alert (`event::alert`).
pub(crate) const ABSENCE_ALERT: &str = "absence_alert";
/// The `type` of a void notice (`event::void_notice`).
pub(crate) const VOID: &str = "void";

/// What a message body says it is, by its `type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MessageType {
    /// No `type`: a check-in's event.
    Punch,
    AbsenceAlert,
    Void,
    /// A `type` this version does not know.
    Unknown(String),
}

impl MessageType {
    /// The body's type, before parsing it whole; a body that is no JSON object (or whose
    /// `type` is no string) is an error saying so.
    pub(crate) fn of(body: &[u8]) -> Result<MessageType, String> {
        #[derive(Deserialize)]
        struct Typed {
            #[serde(rename = "type")]
            message_type: Option<String>,
        }
        let typed: Typed = serde_json::from_slice(body).map_err(|e| format!("not an event: {e}"))?;
        Ok(match typed.message_type.as_deref() {
            None => MessageType::Punch,
            Some(ABSENCE_ALERT) => MessageType::AbsenceAlert,
            Some(VOID) => MessageType::Void,
            Some(other) => MessageType::Unknown(other.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_body_is_told_apart() {
        assert_eq!(
            MessageType::of(br#"{"event_id":"x","kind":"in"}"#),
            Ok(MessageType::Punch)
        );
        assert_eq!(
            MessageType::of(br#"{"type":"void","event_id":"void-1"}"#),
            Ok(MessageType::Void)
        );
        assert_eq!(
            MessageType::of(br#"{"type":"absence_alert"}"#),
            Ok(MessageType::AbsenceAlert)
        );
        assert_eq!(
            MessageType::of(br#"{"type":"v\u006fid"}"#),
            Ok(MessageType::Void),
            "escaped text too"
        );
        assert_eq!(
            MessageType::of(br#"{"type":"other"}"#),
            Ok(MessageType::Unknown("other".into()))
        );
        assert!(MessageType::of(b"[1,2]").is_err());
        assert!(MessageType::of(br#"{"type":7}"#).is_err());
    }
}
