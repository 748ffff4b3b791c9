//! What a MySQL client error means to the program: a privilege refused (exit 1), a timeout
//! named by its setting, a refusal of the data as opposed to a failing server (settle retries
//! only the latter), MySQL out of space (a failing service, never a refused row), and MySQL
//! failing (exit 3). The codes come from [`super::codes`].

use std::io;

use crate::error::{Service, StoreSays};

use super::codes;

/// What MySQL's client error `cause` says, if it is one (see [`crate::error::StoreCheck`]).
pub(crate) fn says(cause: &(dyn std::error::Error + 'static)) -> Option<StoreSays> {
    let e = cause.downcast_ref::<mysql::Error>()?;
    Some(match denied_message(e) {
        Some(message) => StoreSays::Denied { message },
        None => StoreSays::Failed {
            service: Service::Mysql,
            words: detail(e),
        },
    })
}

/// The server's own words for a privilege refusal, with where to look.
fn denied_message(e: &mysql::Error) -> Option<String> {
    match e {
        mysql::Error::MySqlError(me) if codes::DENIED.contains(&me.code) => Some(format!(
            "MySQL refused: {} (this MySQL account lacks the privilege: see docs/security.md for the grants each command needs)",
            me.message
        )),
        _ => None,
    }
}

/// Whether a MySQL error is the socket's timeout: the server accepted the connection and then
/// did not answer within `mysql.read_timeout_ms` (or took no data within the write timeout).
pub(crate) fn timed_out(e: &mysql::Error) -> bool {
    let io = match e {
        mysql::Error::IoError(io) => io,
        mysql::Error::CodecError(mysql::mysql_common::proto::codec::error::PacketCodecError::Io(io)) => io,
        _ => return false,
    };
    matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// Whether the server is out of space: a full disk or table ([`codes::OUT_OF_SPACE`]), or a
/// write that failed with errno 28, ENOSPC ([`codes::OUT_OF_SPACE_WITH_ERRNO`]). Not a row
/// that is wrong, and not briefly away either: nothing is retried, and nothing counted as a
/// failed row.
pub(crate) fn out_of_space(e: &mysql::Error) -> bool {
    match e {
        mysql::Error::MySqlError(me) => {
            codes::OUT_OF_SPACE.contains(&me.code)
                || (codes::OUT_OF_SPACE_WITH_ERRNO.contains(&me.code) && says_enospc(&me.message))
        }
        _ => false,
    }
}

/// Whether a server message carries errno 28 (MariaDB: `(errno: 28 "No space left on
/// device")`, older servers: `(Errcode: 28)`).
fn says_enospc(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("no space left") || m.contains("errno: 28") || m.contains("errcode: 28") || m.contains("error 28")
}

/// A MySQL error in words: a timeout says which setting bounded it (the raw text is
/// "CodecError { IO error: Resource temporarily unavailable }"); out of space says so first,
/// and what to do.
pub(crate) fn detail(e: &mysql::Error) -> String {
    if timed_out(e) {
        "the server sent no reply within mysql.read_timeout_ms (or took no data within mysql.write_timeout_ms)".into()
    } else if let (true, mysql::Error::MySqlError(me)) = (out_of_space(e), e) {
        format!(
            "MySQL is out of space (error {}: {}); free space on the MySQL server, then run again",
            me.code, me.message
        )
    } else {
        text(e)
    }
}

/// A MySQL error as text: the client's own words without its Rust wrapper (the mysql crate
/// writes `MySqlError { ERROR 1045 (28000): Access denied ... }`, `DriverError { ... }`).
pub(crate) fn text(e: &mysql::Error) -> String {
    unwrapped(&e.to_string())
}

/// `SomeError { words }` as `words`; any other text as it is.
fn unwrapped(s: &str) -> String {
    match s.split_once(" { ") {
        Some((name, rest))
            if name.ends_with("Error") && name.chars().all(char::is_alphanumeric) && rest.ends_with(" }") =>
        {
            rest[..rest.len() - 2].to_string()
        }
        _ => s.to_string(),
    }
}

/// A refusal of the data itself (a constraint, a bad value), as opposed to a failing server:
/// a server error whose code is not [`codes::TRANSIENT`] and not out of space. Retrying it
/// changes nothing.
pub(crate) fn is_data_error(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if !codes::TRANSIENT.contains(&me.code)) && !out_of_space(e)
}

/// Whether the error is the server's refusal of a statement (any code), as opposed to the
/// connection failing.
pub(crate) fn is_server_error(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(_))
}

/// Whether the server says the database does not exist.
pub(crate) fn is_unknown_database(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if me.code == codes::UNKNOWN_DATABASE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> mysql::Error {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: "42000".into(),
            message: "nope".into(),
            code,
        })
    }

    #[test]
    fn codes_decide_what_a_server_error_means() {
        assert!(!is_data_error(&server(codes::DEADLOCK)));
        assert!(is_data_error(&server(1062)), "a duplicate key refuses the row");
        assert!(is_unknown_database(&server(codes::UNKNOWN_DATABASE)));
        let denied = server(codes::TABLE_ACCESS_DENIED);
        assert!(
            matches!(says(&denied), Some(StoreSays::Denied { message }) if message.starts_with("MySQL refused: nope"))
        );
        assert_eq!(
            says(&server(codes::DEADLOCK)),
            Some(StoreSays::Failed {
                service: Service::Mysql,
                words: format!("ERROR {} (42000): nope", codes::DEADLOCK)
            })
        );
        assert_eq!(says(&std::io::Error::other("x")), None);
    }

    #[test]
    fn errors_are_text_not_the_crates_debug_form() {
        // Regression: `MySqlError { ERROR 1045 (28000): Access denied for user ... }`.
        let denied = said(1045, "Access denied for user 'att'@'localhost' (using password: YES)");
        assert_eq!(
            detail(&denied),
            "ERROR 1045 (HY000): Access denied for user 'att'@'localhost' (using password: YES)"
        );
        let io = mysql::Error::IoError(std::io::Error::other("Connection refused (os error 111)"));
        assert_eq!(detail(&io), "Connection refused (os error 111)");
        assert_eq!(unwrapped("a { b }"), "a { b }");
        assert_eq!(unwrapped("DriverError { Could not connect }"), "Could not connect");
    }

    fn said(code: u16, message: &str) -> mysql::Error {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: "HY000".into(),
            message: message.into(),
            code,
        })
    }

    #[test]
    fn out_of_space_is_the_server_failing_not_a_refused_row() {
        let full = said(codes::TABLE_FULL, "The table 'attendance' is full");
        let enospc = said(
            codes::ERROR_ON_WRITE,
            "Error writing file './x/attendance.ibd' (errno: 28 \"No space left on device\")",
        );
        for e in [&full, &said(codes::DISK_FULL, "Disk full (./x); waiting"), &enospc] {
            assert!(out_of_space(e), "{e}");
            assert!(!is_data_error(e), "{e}");
            assert!(detail(e).starts_with("MySQL is out of space (error "), "{}", detail(e));
        }
        // The same codes with another errno are something else.
        assert!(!out_of_space(&said(
            codes::ERROR_ON_WRITE,
            "Error writing file 'x' (errno: 13)"
        )));
        assert!(!out_of_space(&server(1062)));
    }
}
