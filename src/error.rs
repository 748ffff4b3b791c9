//! The errors a caller must tell apart, and the exit code each one maps to.
//!
//! Everything else travels as `anyhow::Error`; `main` walks the chain, finds the first
//! [`Error`] (or a raw client error of one of the three stores) and picks the exit code.

use std::fmt;

/// Exit codes, documented in the README. Keep the two in step.
pub mod exit {
    /// Done.
    pub const OK: i32 = 0;
    /// Refused by a rule: unknown employee, a punch in the future, a wrong supervisor.
    pub const REFUSED: i32 = 1;
    /// Bad usage or bad input: clap's own errors, a malformed date, a bad CSV, a bad config.
    pub const USAGE: i32 = 2;
    /// A service (Redis, MySQL, RabbitMQ) is unreachable or failing.
    pub const SERVICE: i32 = 3;
    /// The command ran to the end, but some items (rows, punches) were refused or failed.
    pub const PARTIAL: i32 = 4;
    /// An internal or I/O failure: a file that cannot be written, a value read back from a
    /// store that does not parse, a bug. Nothing the user typed was wrong.
    pub const INTERNAL: i32 = 5;
    /// The day looks lost in Redis (laid out, but departments have no board): recover first.
    pub const LOST: i32 = 6;
}

/// One of the three stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Redis,
    Mysql,
    Rabbitmq,
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Service::Redis => "Redis",
            Service::Mysql => "MySQL",
            Service::Rabbitmq => "RabbitMQ",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule said no (exit 1).
    #[error("{0}")]
    Refused(String),
    /// The input is malformed (exit 2).
    #[error("{0}")]
    Input(String),
    /// A service is unreachable or failing (exit 3). `detail` never holds a password.
    #[error("{service} is unreachable or failing: {detail}")]
    Service { service: Service, detail: String },
    /// Some items were refused or failed; the command already reported them (exit 4).
    #[error("{0}")]
    Partial(String),
    /// An internal or I/O failure (exit 5).
    #[error("{0}")]
    Internal(String),
    /// A laid-out day has departments with no board in Redis: `recover` first (exit 6).
    #[error("{0}")]
    Lost(String),
}

impl Error {
    pub fn refused(msg: impl Into<String>) -> Self {
        Error::Refused(msg.into())
    }
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }
    pub fn internal(msg: impl Into<String>) -> Self {
        Error::Internal(msg.into())
    }
    pub fn service(service: Service, err: impl fmt::Display) -> Self {
        Error::Service {
            service,
            detail: redact(&err.to_string()),
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Refused(_) => exit::REFUSED,
            Error::Input(_) => exit::USAGE,
            Error::Service { .. } => exit::SERVICE,
            Error::Partial(_) => exit::PARTIAL,
            Error::Internal(_) => exit::INTERNAL,
            Error::Lost(_) => exit::LOST,
        }
    }
}

/// The exit code for any error: the first [`Error`] in the chain decides; a raw client
/// error of a store means that store failed (exit 3); anything else (a file that cannot be
/// written, a value that does not parse where the code expected it to) is internal (exit 5).
/// Rules and input are always typed where they are checked, so nothing unclassified is the
/// user's fault.
pub fn exit_code_of(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Error>() {
            return e.exit_code();
        }
        if service_of(cause).is_some() {
            return exit::SERVICE;
        }
    }
    exit::INTERNAL
}

/// Whether the error is stdout's reader going away (`attendance report day | head -1`): the
/// command ends quietly with exit 0, as `cat` and `grep` do.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Which store a raw client error came from, if it came from one.
pub fn service_of(cause: &(dyn std::error::Error + 'static)) -> Option<Service> {
    if cause.downcast_ref::<redis::RedisError>().is_some() {
        Some(Service::Redis)
    } else if cause.downcast_ref::<mysql::Error>().is_some() {
        Some(Service::Mysql)
    } else if cause.downcast_ref::<amiquip::Error>().is_some() {
        Some(Service::Rabbitmq)
    } else {
        None
    }
}

/// One line for stderr: the error and its causes, joined, passwords redacted.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let mut s = cause.to_string().replace(['\n', '\r'], " ");
        if let Some(svc) = service_of(cause) {
            if !parts.iter().any(|p| p.contains(&svc.to_string())) {
                s = format!("{svc}: {s}");
            }
        }
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    redact(&parts.join(": "))
}

/// Replace the password of every `scheme://user:password@host` in `s` with `***`.
pub fn redact(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        // The authority ends at the first '/', whitespace or quote; a password sits before its last '@'.
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"' || c == '`')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon]);
                out.push_str(":***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_passwords_only() {
        assert_eq!(
            redact("cannot open amqp://guest:secret@127.0.0.1:5672/%2f now"),
            "cannot open amqp://guest:***@127.0.0.1:5672/%2f now"
        );
        assert_eq!(redact("mysql://root@127.0.0.1:3306/x"), "mysql://root@127.0.0.1:3306/x");
        assert_eq!(
            redact("redis://:pw@h:1 and redis://h:2"),
            "redis://:***@h:1 and redis://h:2"
        );
        assert_eq!(redact("no url here"), "no url here");
    }

    #[test]
    fn exit_code_follows_the_first_typed_error() {
        let e = anyhow::Error::new(Error::input("bad date")).context("checkin");
        assert_eq!(exit_code_of(&e), exit::USAGE);
        let e = anyhow::anyhow!("plain");
        assert_eq!(exit_code_of(&e), exit::INTERNAL);
        let e = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::PermissionDenied)).context("writing x");
        assert_eq!(exit_code_of(&e), exit::INTERNAL);
        assert!(!is_broken_pipe(&e));
        let e = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe)).context("printing");
        assert!(is_broken_pipe(&e));
    }
}
