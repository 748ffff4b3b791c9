//! What a Redis client error means to the program: an ACL refusal (exit 1), Redis failing
//! (exit 3), and which of its errors are Redis gone (worth reconnecting for).

use crate::error::{Error, Service, StoreSays};

/// What the `redis` client's error `cause` says, if it is one (see [`crate::error::StoreCheck`]).
/// A refusal by the account's ACL (`NOPERM`) is a privilege refused (exit 1), as MySQL's are.
pub(crate) fn says(cause: &(dyn std::error::Error + 'static)) -> Option<StoreSays> {
    let e = cause.downcast_ref::<redis::RedisError>()?;
    Some(if e.code() == Some("NOPERM") {
        StoreSays::Denied {
            message: format!(
                "Redis refused: {e} (this Redis account's ACL denies it: see docs/security.md for the ACL each role needs)"
            ),
        }
    } else {
        StoreSays::Failed {
            service: Service::Redis,
            words: e.to_string(),
        }
    })
}

/// Whether the error is Redis gone (unreachable, the connection dropped or cut, a silent
/// server, a restarted one still loading its data, a cluster failing over or moving a slot:
/// CLUSTERDOWN, TRYAGAIN, MOVED or ASK left after the connection's own retries), as opposed to Redis refusing a command
/// (OOM, READONLY, a script's error) or any other failure: only a lost Redis is worth
/// reconnecting for.
pub(crate) fn gone(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        if let Some(r) = c.downcast_ref::<redis::RedisError>() {
            return r.is_io_error()
                || r.is_connection_dropped()
                || r.is_connection_refusal()
                || r.is_timeout()
                || r.is_cluster_error()
                || r.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::BusyLoading);
        }
        // Opening a connection failed (see `conn::single_redis`).
        matches!(
            c.downcast_ref::<Error>(),
            Some(Error::Service {
                service: Service::Redis,
                ..
            })
        )
    })
}

/// What Redis answered, when the error is its reply (OOM, READONLY, MISCONF: a store refusing,
/// not a store gone), in its own words.
pub(crate) fn answered(e: &anyhow::Error) -> Option<String> {
    e.chain()
        .filter_map(|c| c.downcast_ref::<redis::RedisError>())
        .find(|r| r.code().is_some())
        .map(ToString::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lost_redis_calls_for_a_reconnection() {
        let eof: anyhow::Error =
            redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)).into();
        let eof = eof.context("reading the board");
        assert!(gone(&eof));
        assert!(gone(&Error::service(Service::Redis, "Connection refused").into()));
        let oom: anyhow::Error =
            redis::RedisError::from((redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError), "OOM")).into();
        assert!(!gone(&oom));
        assert!(
            answered(&oom).is_some_and(|w| w.contains("OOM")),
            "{:?}",
            answered(&oom)
        );
        assert_eq!(answered(&eof), None);
        assert!(!gone(&Error::service(Service::Rabbitmq, "gone").into()));
        assert!(!gone(&anyhow::anyhow!("broken pipe")));
        let failing_over: anyhow::Error = redis::RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::ClusterDown),
            "CLUSTERDOWN",
        ))
        .into();
        assert!(gone(&failing_over));
    }
}
