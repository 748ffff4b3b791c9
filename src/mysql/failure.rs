//! What a MySQL client error means to the program: a privilege refused (exit 1), a timeout
//! named by its setting, a refusal of the data as opposed to a failing server (settle retries
//! only the latter), and MySQL failing (exit 3). The codes come from [`super::codes`].

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

/// A MySQL error in words: a timeout says which setting bounded it (the raw text is
/// "CodecError { IO error: Resource temporarily unavailable }").
pub(crate) fn detail(e: &mysql::Error) -> String {
    if timed_out(e) {
        "the server sent no reply within mysql.read_timeout_ms (or took no data within mysql.write_timeout_ms)".into()
    } else {
        e.to_string()
    }
}

/// A refusal of the data itself (a constraint, a bad value), as opposed to a failing server:
/// a server error whose code is not [`codes::TRANSIENT`]. Retrying it changes nothing.
pub(crate) fn is_data_error(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if !codes::TRANSIENT.contains(&me.code))
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
                words: server(codes::DEADLOCK).to_string()
            })
        );
        assert_eq!(says(&std::io::Error::other("x")), None);
    }
}
