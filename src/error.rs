//! The errors a caller must tell apart, and the exit code each one maps to.
//!
//! Everything else travels as `anyhow::Error`; `main` walks the chain, finds the first
//! [`Error`] (or a raw client error of one of the three stores) and picks the exit code. This
//! module names no store: each store says what its own client errors mean ([`StoreCheck`]), and
//! `ops::exit` hands every store's check to the walk (it is the one layer that knows every store).

use std::fmt;

/// Exit codes, documented in the README. Keep the two in step.
pub mod exit {
    /// Done.
    pub const OK: i32 = 0;
    /// Refused by a rule: unknown employee, a punch in the future, a wrong supervisor, or a
    /// MySQL account without the privilege the command needs (a read-only account settling).
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
    /// A back-dated punch was held for a supervisor's review: stored, not applied (`review`).
    pub const HELD: i32 = 7;
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
    /// Done, with warnings the command already showed (`doctor`): said plainly as it is, not as
    /// an error (exit 4).
    #[error("{0}")]
    Warned(String),
    /// A health check failed (`doctor`); the command already said which (exit 3).
    #[error("{0}")]
    Unhealthy(String),
    /// An internal or I/O failure (exit 5).
    #[error("{0}")]
    Internal(String),
    /// A laid-out day has departments with no board in Redis: `recover` first (exit 6).
    #[error("{0}")]
    Lost(String),
    /// Punches were held for review, stored but not applied; the command already showed them
    /// (exit 7).
    #[error("{0}")]
    Held(String),
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
            Error::Partial(_) | Error::Warned(_) => exit::PARTIAL,
            Error::Unhealthy(_) => exit::SERVICE,
            Error::Internal(_) => exit::INTERNAL,
            Error::Lost(_) => exit::LOST,
            Error::Held(_) => exit::HELD,
        }
    }
}

/// What a store says of one of its own client errors (a raw `redis`, `mysql` or `amiquip`
/// error that travelled up unwrapped). Each store has its check; this module names none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreSays {
    /// The store failed (exit 3). `words`: the error in words, e.g. a timeout naming the
    /// setting that bounded it rather than the client's raw text.
    Failed { service: Service, words: String },
    /// The store refused for want of a privilege (exit 1). `message`: the whole line to show.
    Denied { message: String },
}

/// A store's check: what it says of `cause`, or `None` when `cause` is not its client's error.
pub(crate) type StoreCheck = fn(&(dyn std::error::Error + 'static)) -> Option<StoreSays>;

fn said(stores: &[StoreCheck], cause: &(dyn std::error::Error + 'static)) -> Option<StoreSays> {
    stores.iter().find_map(|check| check(cause))
}

/// The exit code for any error: the first [`Error`] in the chain decides; a raw client
/// error of a store means that store failed (exit 3), or refused a privilege (exit 1); anything
/// else (a file that cannot be written, a value that does not parse where the code expected it
/// to) is internal (exit 5). Rules and input are always typed where they are checked, so
/// nothing unclassified is the user's fault. `stores`: every store's check.
pub(crate) fn exit_code_with(err: &anyhow::Error, stores: &[StoreCheck]) -> i32 {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Error>() {
            return e.exit_code();
        }
        match said(stores, cause) {
            Some(StoreSays::Denied { .. }) => return exit::REFUSED,
            Some(StoreSays::Failed { .. }) => return exit::SERVICE,
            None => {}
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

/// The most characters an error line has, `error: ` included: a server's huge message or a
/// long chain of causes cannot flood a log.
pub(crate) const MAX_LINE: usize = 300;

/// What `main` prints for an error: `error: ` and the message, on one line of at most
/// [`MAX_LINE`] characters (the message is redacted before it gets here).
/// Whether `err` is only warnings already shown ([`Error::Warned`]): its line is then printed as
/// it is, without `error: `.
pub fn only_warned(err: &anyhow::Error) -> bool {
    matches!(err.downcast_ref::<Error>(), Some(Error::Warned(_)))
}

pub fn error_line(message: &str) -> String {
    cut(&format!("error: {}", message.replace(['\n', '\r'], " ")), MAX_LINE)
}

/// `s` in at most `max` characters: cut at a character boundary, the cut marked with `…`.
pub(crate) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One line for stderr: the error and its causes, joined, passwords redacted, then cut so that
/// `error: ` and the line fit in [`MAX_LINE`] characters. A store's raw error is said in its
/// store's words, named by its service once. `stores`: the checks of the stores whose errors
/// may be in the chain.
pub(crate) fn one_line_with(err: &anyhow::Error, stores: &[StoreCheck]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let s = match said(stores, cause) {
            Some(StoreSays::Denied { message }) => message,
            Some(StoreSays::Failed { service, words }) => {
                let s = one_line_of(&words);
                let named = service.to_string();
                if s.starts_with(&named) || parts.iter().any(|p| p.contains(&named)) {
                    s
                } else {
                    format!("{service}: {s}")
                }
            }
            None => one_line_of(&cause.to_string()),
        };
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    cut(&redact(&parts.join(": ")), MAX_LINE - "error: ".len())
}

/// A message's line breaks as spaces (a client's multi-line message is one line). A lone CR
/// is left for the caller to make visible (`crate::ops::exit::one_line` passes the whole line
/// through `domain::text::inert`): it is more likely part of a value quoted in the message.
fn one_line_of(s: &str) -> String {
    s.replace("\r\n", " ").replace('\n', " ")
}

/// Replace every password of a URL in `s` with `***`: `scheme://user:password@host`, and also
/// what a user may mistype: no scheme (`user:password@host/db`), or a `/` in the password
/// (`mysql://root:pa/ss@host/db`, which a URL parser reads as a host `root` and a path). So the
/// authority is not cut at the first `/`: the password runs from the first `:` of the token to
/// its last `@`. A word with an `@` but no `:` before it (an e-mail address) is left alone.
pub(crate) fn redact(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut token = String::new();
    for c in s.chars() {
        if c.is_whitespace() || matches!(c, '\'' | '"' | '`') {
            out.push_str(&redact_token(&token));
            token.clear();
            out.push(c);
        } else {
            token.push(c);
        }
    }
    out.push_str(&redact_token(&token));
    out
}

/// One URL as a whole value (a config key's): its password hidden even where it holds a
/// space or a quote, which [`redact`] takes for the end of a word in free text.
pub(crate) fn redact_url(url: &str) -> String {
    redact_token(url)
}

/// One word: `[scheme://]user:password@rest` loses its password, and so does a query
/// parameter that carries one (`?password=...`, `&pass=...`: the MySQL URL takes them).
fn redact_token(t: &str) -> String {
    let (scheme, rest) = match t.find("://") {
        Some(i) => t.split_at(i + 3),
        None => ("", t),
    };
    let t = match (rest.rfind('@'), rest.find(':')) {
        (Some(at), Some(colon)) if colon < at => format!("{scheme}{}:***{}", &rest[..colon], &rest[at..]),
        _ => t.to_string(),
    };
    redact_query_passwords(&t)
}

/// The query parameters whose value is a password.
const SECRET_PARAMS: &[&str] = &["password", "pass", "passwd", "pwd"];

/// `?password=x&db=y` as `?password=***&db=y`.
fn redact_query_passwords(t: &str) -> String {
    let Some(q) = t.find('?') else {
        return t.to_string();
    };
    let (head, query) = t.split_at(q + 1);
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if SECRET_PARAMS.iter().any(|s| k.eq_ignore_ascii_case(s)) => format!("{k}=***"),
            _ => p.to_string(),
        })
        .collect();
    format!("{head}{}", params.join("&"))
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
        assert_eq!(
            redact("mysql://att@db:3306/x?password=hunter2&prefer_socket=false"),
            "mysql://att@db:3306/x?password=***&prefer_socket=false"
        );
        assert_eq!(redact("what?Pass=x"), "what?Pass=***");
        assert_eq!(redact("mail ann@example.com: done"), "mail ann@example.com: done");
        assert_eq!(redact("at 2026-11-30T08:00:00Z"), "at 2026-11-30T08:00:00Z");
    }

    #[test]
    fn redact_hides_passwords_of_malformed_urls() {
        // No scheme.
        assert_eq!(
            redact("invalid value 'root:PW@127.0.0.1/x' (a URL)"),
            "invalid value 'root:***@127.0.0.1/x' (a URL)"
        );
        // A '/' in the password (a URL parser reads `root` as the host).
        assert_eq!(
            redact("mysql://root:PW/x@127.0.0.1:1/x"),
            "mysql://root:***@127.0.0.1:1/x"
        );
        // An '@' or a ',' in the password.
        assert_eq!(redact("amqp://u:p@ss@h/%2f"), "amqp://u:***@h/%2f");
        assert_eq!(redact("mysql://u:a,b@h/d"), "mysql://u:***@h/d");
        for s in [
            "redis://:PW@h:1",
            "x root:PW@h y",
            "\"mysql://a:PW/b@h/d\"",
            "(amqp://g:PW@h:1/%2f)",
        ] {
            assert!(!redact(s).contains("PW"), "{s} -> {}", redact(s));
        }
    }

    /// A store whose client errors are `io::Error`s of kind `Other`: failed, or denied when
    /// the message says so.
    fn io_store(cause: &(dyn std::error::Error + 'static)) -> Option<StoreSays> {
        let io = cause.downcast_ref::<std::io::Error>()?;
        match io.to_string().as_str() {
            "denied" => Some(StoreSays::Denied {
                message: "refused: denied".into(),
            }),
            s => Some(StoreSays::Failed {
                service: Service::Redis,
                words: format!("{s}\nsecond line"),
            }),
        }
    }

    #[test]
    fn a_store_names_its_service_once_and_decides_the_exit_code() {
        let e = anyhow::Error::new(std::io::Error::other("down")).context("reading the board");
        assert_eq!(
            one_line_with(&e, &[io_store]),
            "reading the board: Redis: down second line"
        );
        assert_eq!(exit_code_with(&e, &[io_store]), exit::SERVICE);
        assert_eq!(one_line_with(&e, &[]), "reading the board: down");
        let e = anyhow::Error::new(std::io::Error::other("down")).context("Redis at h:1");
        assert_eq!(one_line_with(&e, &[io_store]), "Redis at h:1: down second line");
        let e = anyhow::Error::new(std::io::Error::other("denied")).context("settling");
        assert_eq!(one_line_with(&e, &[io_store]), "settling: refused: denied");
        assert_eq!(exit_code_with(&e, &[io_store]), exit::REFUSED);
    }

    #[test]
    fn an_error_line_is_cut_to_300_characters_at_a_char_boundary_after_redaction() {
        assert_eq!(cut("short", 300), "short");
        assert_eq!(cut("abcdef", 4), "abc…");
        // Multi-byte characters are cut whole.
        let wide = "é".repeat(400);
        let c = cut(&wide, MAX_LINE);
        assert_eq!(c.chars().count(), MAX_LINE);
        assert!(c.ends_with('…') && c.starts_with("éé"));
        // A huge server message in a chain of causes: one line, `error: ` included, redacted
        // before the cut (so a password at the end cannot survive half-cut either).
        let huge = format!("{}\n{} mysql://root:PW@h/db", "x".repeat(2_000), "ü".repeat(500));
        let e = anyhow::Error::new(std::io::Error::other(huge)).context("settling 2026-11-30");
        let line = error_line(&one_line_with(&e, &[io_store]));
        assert!(line.chars().count() <= MAX_LINE, "{}", line.chars().count());
        assert!(line.starts_with("error: settling 2026-11-30: Redis: xxx") && line.ends_with('…'));
        assert!(!line.contains('\n') && !line.contains("PW"));
        let at_end = format!("{} mysql://root:PW@h/db", "y".repeat(280));
        let line = one_line_with(&anyhow::anyhow!(at_end), &[]);
        assert!(!line.contains("PW") && line.chars().count() <= MAX_LINE - 7, "{line}");
        // A short line is left as it is.
        assert_eq!(error_line("bad date"), "error: bad date");
    }

    #[test]
    fn exit_code_follows_the_first_typed_error() {
        let e = anyhow::Error::new(Error::input("bad date")).context("checkin");
        assert_eq!(exit_code_with(&e, &[]), exit::USAGE);
        let e = anyhow::anyhow!("plain");
        assert_eq!(exit_code_with(&e, &[]), exit::INTERNAL);
        let e = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::PermissionDenied)).context("writing x");
        assert_eq!(exit_code_with(&e, &[]), exit::INTERNAL);
        assert!(!is_broken_pipe(&e));
        let e = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe)).context("printing");
        assert!(is_broken_pipe(&e));
    }
}
